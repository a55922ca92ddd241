/**
 * Galata (Playwright) against a real JupyterLab from the project's venv, driving Debian's Chromium
 * (/usr/bin/chromium): no browser is ever downloaded (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 at install).
 */
const { execFileSync } = require('child_process');
const path = require('path');
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// One free loopback port for the whole run. Workers re-read this file, so the port travels in the env.
if (!process.env.TRACEGRAD_GALATA_PORT) {
  process.env.TRACEGRAD_GALATA_PORT = execFileSync(process.execPath, [
    '-e',
    "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})"
  ]).toString();
}
const port = process.env.TRACEGRAD_GALATA_PORT;
const sandbox = process.env.TRACEGRAD_GALATA_HOME || path.join(__dirname, '.jupyter-sandbox');
const jupyter = process.env.JUPYTER || 'jupyter';

module.exports = {
  ...baseConfig,
  workers: 1,
  retries: 0,
  timeout: 180 * 1000,
  expect: { timeout: 30 * 1000 },
  reporter: [['list']],
  outputDir: path.join(__dirname, 'test-results'),
  use: {
    ...baseConfig.use,
    baseURL: `http://127.0.0.1:${port}`,
    video: 'off',
    trace: 'off',
    viewport: { width: 1500, height: 950 },
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run'
      ]
    }
  },
  webServer: {
    command: `${jupyter} lab --config jupyter_server_test_config.py`,
    url: `http://127.0.0.1:${port}/lab`,
    timeout: 120 * 1000,
    reuseExistingServer: false,
    env: {
      ...process.env,
      JUPYTER_CONFIG_DIR: path.join(sandbox, 'config'),
      JUPYTER_DATA_DIR: path.join(sandbox, 'data'),
      JUPYTER_RUNTIME_DIR: path.join(sandbox, 'runtime'),
      IPYTHONDIR: path.join(sandbox, 'ipython')
    }
  }
};
