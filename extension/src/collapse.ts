/**
 * Turn a protocol graph into the graph that is actually drawn.
 *
 * Collapsing is data in the protocol: a node names its `group`, and a group says whether it starts
 * collapsed. A collapsed group is drawn as one node; edges that cross its border are redirected to it and
 * edges inside it disappear. Expanding stops doing that. Nodes are never dropped to collapse, only to
 * respect the visible-node budget, which keeps layout time bounded (Graphviz-WASM needs ~1 s for 2,000
 * nodes and overflows its stack near 8,000).
 */

import { GraphGroup, GraphMessage, GraphNode } from './protocol';

export const DEFAULT_NODE_BUDGET = 2000;

export interface VisibleNode {
  /** Node id, or `group:<group id>` for a collapsed group. */
  id: string;
  label: string;
  /** The protocol node, for ordinary nodes. */
  node?: GraphNode;
  /** The group, for a collapsed group. */
  group?: GraphGroup;
  /** How many protocol nodes this visible node stands for. */
  size: number;
}

export interface VisibleEdge {
  src: string;
  dst: string;
  /** How many protocol edges were merged into this one. */
  count: number;
}

export interface VisibleGraph {
  nodes: VisibleNode[];
  edges: VisibleEdge[];
  /** Visible ids of the roots, in root order. */
  roots: string[];
  /** Maps every protocol node id to the visible id that stands for it. */
  representative: Map<string, string>;
  /** Protocol nodes left out because the budget was exceeded (0 when everything fits). */
  hiddenByBudget: number;
}

export const groupVisibleId = (groupId: string): string => `group:${groupId}`;

/** Which groups are collapsed: the protocol default, overridden by what the user clicked. */
export function isCollapsed(group: GraphGroup, overrides: ReadonlyMap<string, boolean>): boolean {
  return overrides.get(group.id) ?? group.collapsed;
}

/** Collapse groups, redirect edges, then cut to `budget` visible nodes nearest the roots. */
export function buildVisibleGraph(
  graph: GraphMessage,
  overrides: ReadonlyMap<string, boolean> = new Map(),
  budget: number = DEFAULT_NODE_BUDGET
): VisibleGraph {
  const collapsedGroups = new Map<string, GraphGroup>();
  for (const group of graph.groups) {
    if (isCollapsed(group, overrides)) {
      collapsedGroups.set(group.id, group);
    }
  }
  // A group's membership comes from both sides of the protocol: group.members and node.group.
  const groupOfNode = new Map<string, string>();
  for (const group of collapsedGroups.values()) {
    for (const member of group.members) {
      groupOfNode.set(member, group.id);
    }
  }
  for (const node of graph.nodes) {
    if (node.group && collapsedGroups.has(node.group)) {
      groupOfNode.set(node.id, node.group);
    }
  }

  const representative = new Map<string, string>();
  const nodes: VisibleNode[] = [];
  const groupNodes = new Map<string, VisibleNode>();
  for (const node of graph.nodes) {
    const groupId = groupOfNode.get(node.id);
    if (groupId === undefined) {
      representative.set(node.id, node.id);
      nodes.push({ id: node.id, label: node.name, node, size: 1 });
      continue;
    }
    const visibleId = groupVisibleId(groupId);
    representative.set(node.id, visibleId);
    const existing = groupNodes.get(groupId);
    if (existing) {
      existing.size += 1;
    } else {
      const group = collapsedGroups.get(groupId)!;
      const groupNode: VisibleNode = { id: visibleId, label: group.label, group, size: 1 };
      groupNodes.set(groupId, groupNode);
      nodes.push(groupNode); // at the position of its first member, which keeps a stable order
    }
  }

  const edgeIndex = new Map<string, VisibleEdge>();
  for (const edge of graph.edges) {
    const src = representative.get(edge.src);
    const dst = representative.get(edge.dst);
    if (src === undefined || dst === undefined || src === dst) {
      continue; // an edge to a node the kernel did not send (truncated), or inside a collapsed group
    }
    const key = `${src}\u0000${dst}`;
    const existing = edgeIndex.get(key);
    if (existing) {
      existing.count += 1;
    } else {
      edgeIndex.set(key, { src, dst, count: 1 });
    }
  }

  const roots: string[] = [];
  for (const root of graph.roots) {
    const visible = root.node ? representative.get(root.node) : undefined;
    if (visible !== undefined && !roots.includes(visible)) {
      roots.push(visible);
    }
  }
  const full: VisibleGraph = {
    nodes,
    edges: [...edgeIndex.values()],
    roots,
    representative,
    hiddenByBudget: 0
  };
  return applyBudget(full, budget);
}

/**
 * Keep the `budget` visible nodes closest to the roots (breadth-first along gradient edges, then any
 * unreachable ones in protocol order) and the edges among them.
 */
export function applyBudget(graph: VisibleGraph, budget: number): VisibleGraph {
  if (graph.nodes.length <= budget) {
    return graph;
  }
  const children = new Map<string, string[]>();
  for (const edge of graph.edges) {
    const list = children.get(edge.src);
    if (list) {
      list.push(edge.dst);
    } else {
      children.set(edge.src, [edge.dst]);
    }
  }
  const kept = new Set<string>();
  const queue = [...graph.roots];
  for (let head = 0; head < queue.length && kept.size < budget; head++) {
    const id = queue[head];
    if (kept.has(id)) {
      continue;
    }
    kept.add(id);
    for (const child of children.get(id) ?? []) {
      if (!kept.has(child)) {
        queue.push(child);
      }
    }
  }
  for (const node of graph.nodes) {
    if (kept.size >= budget) {
      break;
    }
    kept.add(node.id);
  }
  const nodes = graph.nodes.filter(node => kept.has(node.id));
  const hidden = graph.nodes.filter(node => !kept.has(node.id)).reduce((sum, node) => sum + node.size, 0);
  return {
    ...graph,
    nodes,
    edges: graph.edges.filter(edge => kept.has(edge.src) && kept.has(edge.dst)),
    roots: graph.roots.filter(id => kept.has(id)),
    hiddenByBudget: hidden
  };
}

/** Toggle a group: the returned overrides expand a collapsed group, or collapse an expanded one. */
export function toggleGroup(
  graph: GraphMessage,
  overrides: ReadonlyMap<string, boolean>,
  groupId: string
): Map<string, boolean> {
  const group = graph.groups.find(g => g.id === groupId);
  const next = new Map(overrides);
  if (group) {
    next.set(groupId, !isCollapsed(group, overrides));
  }
  return next;
}
