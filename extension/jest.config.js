/**
 * Unit tests of the framework-free modules (protocol, store, collapse, DOT), run by ts-jest in Node.
 * They import nothing from JupyterLab, so no ESM transpiling of @jupyterlab/* is needed.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testRegex: '.*\\.spec\\.ts$',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }]
  }
};
