/**
 * Example protocol messages for the tests. The kernel side's own examples
 * (src/tracegrad/viz/protocol/examples/*.json, generated from real snapshots) are used when present;
 * the fixtures here (validated against the same JSON Schemas) cover every message type regardless.
 */

import * as fs from 'fs';
import * as path from 'path';

export const EXAMPLES_DIR = path.resolve(__dirname, '../../src/tracegrad/viz/protocol/examples');

export function fixture(name: string): any {
  return JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', `${name}.json`), 'utf8'));
}

/** The kernel side's example messages: [file name, parsed JSON]. Empty until they exist. */
export function kernelExamples(): [string, any][] {
  if (!fs.existsSync(EXAMPLES_DIR)) {
    return [];
  }
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter(file => file.endsWith('.json'))
    .sort()
    .map(file => [file, JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8'))]);
}

/** An autograd-like chain of `n` nodes with skip edges and a leaf every third node. */
export function chainGraph(n: number, groupSize = 0): any {
  const nodes: any[] = [];
  const edges: any[] = [];
  const groups: any[] = [];
  for (let i = 0; i < n; i++) {
    const group = groupSize ? `g${Math.floor(i / groupSize)}` : null;
    nodes.push({ id: `n${i}`, name: i % 3 === 2 ? 'AccumulateGrad' : 'MulBackward0', kind: 'function', seq: i, saved: [], hooks: [], group });
    if (i > 0) {
      edges.push({ src: `n${i - 1}`, dst: `n${i}`, input_nr: 0, output_nr: 0 });
    }
    if (i > 3 && i % 4 === 0) {
      edges.push({ src: `n${i - 4}`, dst: `n${i}`, input_nr: 1, output_nr: 0 });
    }
  }
  if (groupSize) {
    for (let g = 0; g * groupSize < n; g++) {
      const members = nodes.slice(g * groupSize, (g + 1) * groupSize).map(node => node.id);
      groups.push({ id: `g${g}`, label: `block × ${members.length}`, pattern: ['MulBackward0'], repeats: 2, members, collapsed: true });
    }
  }
  return {
    protocol: 'tracegrad',
    version: 1,
    type: 'graph',
    graph_id: `chain-${n}`,
    cell_id: null,
    roots: [{ node: 'n0', label: 'out' }],
    nodes,
    edges,
    groups,
    total_nodes: n,
    truncated: false,
    memory: { saved_count: 0, saved_bytes: 0, unique_bytes: 0, alive_bytes: 0, freed_count: 0, unique_storages: 0, leaf_bytes: 0, grad_bytes: 0 }
  };
}
