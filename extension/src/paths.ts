/**
 * Reachability on the drawn graph, for "highlight the paths to leaves and to root": from a node, the
 * nodes it sends gradient to (down to the leaves) and the nodes that send gradient to it (up to the roots).
 */

import { VisibleEdge } from './collapse';

export interface Highlight {
  /** Visible node ids on a path through the selected node (the node included). */
  nodes: Set<string>;
  /** Indices into the edge list of edges on those paths. */
  edges: Set<number>;
}

export function pathsThrough(edges: readonly VisibleEdge[], id: string): Highlight {
  const forward = new Map<string, number[]>();
  const backward = new Map<string, number[]>();
  edges.forEach((edge, index) => {
    (forward.get(edge.src) ?? forward.set(edge.src, []).get(edge.src)!).push(index);
    (backward.get(edge.dst) ?? backward.set(edge.dst, []).get(edge.dst)!).push(index);
  });
  const nodes = new Set<string>([id]);
  const used = new Set<number>();
  const walk = (adjacency: Map<string, number[]>, next: (edge: VisibleEdge) => string): void => {
    const seen = new Set<string>([id]);
    const stack = [id];
    while (stack.length) {
      const current = stack.pop()!;
      for (const index of adjacency.get(current) ?? []) {
        used.add(index);
        const target = next(edges[index]);
        if (!seen.has(target)) {
          seen.add(target);
          nodes.add(target);
          stack.push(target);
        }
      }
    }
  };
  walk(forward, edge => edge.dst); // towards the leaves
  walk(backward, edge => edge.src); // towards the roots
  return { nodes, edges: used };
}
