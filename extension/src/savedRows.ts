/** Saved-tensor table rows, from a saved_tensors message or, when only a graph arrived, from its nodes. */

import { GraphMessage, SavedMessage, SavedRow } from './protocol';

export function savedRowsOf(saved: SavedMessage | null, graph: GraphMessage | null): SavedRow[] {
  if (saved) {
    return saved.rows;
  }
  if (!graph) {
    return [];
  }
  const rows: SavedRow[] = [];
  for (const node of graph.nodes) {
    for (const tensor of node.saved) {
      rows.push({ ...tensor, node: node.id, node_name: node.name });
    }
  }
  return rows;
}

/** True when backward will fail on this row: the tensor was modified in place after it was saved. */
export function hasVersionMismatch(row: SavedRow): boolean {
  return (
    Boolean(row.error) ||
    (row.version_saved !== null && row.version_now !== null && row.version_saved !== row.version_now)
  );
}
