/**
 * DOT source for the drawn graph. Graphviz (WASM, in a worker) lays it out and returns SVG; every node
 * and edge gets an SVG id (`tg-v<i>`, `tg-e<j>`) that the view maps back to the visible graph for clicks
 * and highlights, so no protocol id (which may contain any character) ends up in markup.
 */

import { VisibleGraph, VisibleNode } from './collapse';
import { formatShape } from './format';

export const nodeDomId = (index: number): string => `tg-v${index}`;
export const edgeDomId = (index: number): string => `tg-e${index}`;

/** Escape a string for a double-quoted DOT label. */
export function dotString(text: string): string {
  return '"' + text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') + '"';
}

function nodeLabel(visible: VisibleNode): string {
  if (visible.group) {
    return `${visible.group.label}\n(${visible.size} nodes, click to expand)`;
  }
  const node = visible.node!;
  const lines = [node.name];
  if (node.kind === 'accumulate' && node.leaf) {
    lines.push(`${node.leaf.name ?? 'leaf'} ${formatShape(node.leaf.shape)}`);
  } else if (node.outputs && node.outputs.length > 0) {
    lines.push(formatShape(node.outputs[0].shape));
  }
  const marks: string[] = [];
  if (node.saved.length > 0) {
    marks.push(`${node.saved.length} saved`);
  }
  if (node.hooks.length > 0) {
    marks.push(`${node.hooks.length} hook${node.hooks.length > 1 ? 's' : ''}`);
  }
  if (marks.length) {
    lines.push(marks.join(' · '));
  }
  return lines.join('\n');
}

function nodeClass(visible: VisibleNode): string {
  if (visible.group) {
    return 'tg-node tg-node-group';
  }
  const node = visible.node!;
  const classes = ['tg-node', `tg-kind-${node.kind}`];
  if (node.hooks.length) {
    classes.push('tg-has-hooks');
  }
  if (node.saved.some(s => s.error)) {
    classes.push('tg-has-error');
  }
  return classes.join(' ');
}

function nodeStyle(visible: VisibleNode): string {
  if (visible.group) {
    return 'shape=box3d, style="filled", fillcolor="#fde9c9"';
  }
  const node = visible.node!;
  if (node.kind === 'accumulate') {
    return 'shape=box, style="rounded,filled", fillcolor="#cfe8ff"';
  }
  if (node.saved.some(s => s.error)) {
    return 'shape=box, style="filled", fillcolor="#ffd6d6"';
  }
  return 'shape=box, style="filled", fillcolor="#eeeeee"';
}

export function toDot(graph: VisibleGraph): string {
  const index = new Map<string, number>();
  graph.nodes.forEach((node, i) => index.set(node.id, i));
  const roots = new Set(graph.roots);
  const lines = [
    'digraph autograd {',
    '  graph [rankdir=TB, nodesep=0.25, ranksep=0.35, bgcolor="transparent"];',
    '  node [fontname="Helvetica", fontsize=10, margin="0.08,0.04", height=0.3, penwidth=1];',
    '  edge [arrowsize=0.6, color="#666666"];'
  ];
  graph.nodes.forEach((node, i) => {
    const style = roots.has(node.id) ? nodeStyle(node) + ', penwidth=2' : nodeStyle(node);
    lines.push(
      `  v${i} [id=${dotString(nodeDomId(i))}, class=${dotString(nodeClass(node))}, ` +
        `label=${dotString(nodeLabel(node))}, ${style}];`
    );
  });
  graph.edges.forEach((edge, j) => {
    const label = edge.count > 1 ? `, label=${dotString('×' + edge.count)}, fontsize=8` : '';
    lines.push(`  v${index.get(edge.src)} -> v${index.get(edge.dst)} [id=${dotString(edgeDomId(j))}, class="tg-edge"${label}];`);
  });
  lines.push('}');
  return lines.join('\n');
}
