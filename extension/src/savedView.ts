/**
 * Saved tensors as a sortable table, with the memory totals. A row whose tensor was modified in place
 * after being saved shows the error backward will raise.
 */

import { clear, h } from './dom';
import { formatBytes, formatCount, formatShape } from './format';
import { MemoryTotals, SavedRow } from './protocol';
import { hasVersionMismatch } from './savedRows';

interface Column {
  key: string;
  title: string;
  value: (row: SavedRow) => string | number;
  cell: (row: SavedRow) => Node | string;
  numeric?: boolean;
}

const versionText = (row: SavedRow): string =>
  row.version_saved === null ? '–' : `${row.version_saved} → ${row.version_now ?? '?'}`;

// A freed tensor whose shape no node metadata records comes with dtype "unknown": show a dash, not "[]".
const known = (row: SavedRow): boolean => row.dtype !== 'unknown';

const COLUMNS: Column[] = [
  { key: 'node', title: 'Node', value: r => r.node_name, cell: r => r.node_name },
  { key: 'name', title: 'Name', value: r => r.name, cell: r => h('code', {}, r.name) },
  {
    key: 'shape',
    title: 'Shape',
    value: r => r.shape.reduce((a, b) => a * b, 1),
    cell: r => (known(r) ? formatShape(r.shape) : '–')
  },
  { key: 'dtype', title: 'Dtype', value: r => r.dtype, cell: r => (known(r) ? r.dtype : '–') },
  {
    key: 'bytes',
    title: 'Bytes',
    value: r => r.bytes,
    cell: r => (known(r) ? formatBytes(r.bytes) : '–'),
    numeric: true
  },
  { key: 'state', title: 'State', value: r => r.state, cell: r => h('span', { class: `tg-state-${r.state}` }, r.state) },
  {
    key: 'version',
    title: 'Version saved → now',
    value: r => (hasVersionMismatch(r) ? 1 : 0),
    cell: r => versionText(r)
  }
];

export interface SavedViewOptions {
  onSelectNode?: (nodeId: string) => void;
  onHoverNode?: (nodeId: string | null) => void;
}

export class SavedView {
  readonly node: HTMLElement;
  private readonly _totals: HTMLElement;
  private readonly _table: HTMLTableElement;
  private _rows: SavedRow[] = [];
  private _sortKey = 'bytes';
  private _descending = true;

  constructor(private readonly _options: SavedViewOptions = {}) {
    this._totals = h('div', { class: 'tg-saved-totals' });
    this._table = h('table', { class: 'tg-saved-table' });
    this.node = h('div', { class: 'tg-saved' }, this._totals, h('div', { class: 'tg-saved-scroll' }, this._table));
    this._table.addEventListener('click', event => {
      const header = (event.target as Element).closest<HTMLElement>('th[data-key]');
      if (header) {
        this._sortBy(header.dataset.key!);
        return;
      }
      const node = (event.target as Element).closest<HTMLElement>('tr[data-node]')?.dataset.node;
      if (node) {
        this._options.onSelectNode?.(node);
      }
    });
    this._table.addEventListener('mouseover', event => {
      const node = (event.target as Element).closest<HTMLElement>('tr[data-node]')?.dataset.node;
      this._options.onHoverNode?.(node ?? null);
    });
    this._table.addEventListener('mouseleave', () => this._options.onHoverNode?.(null));
    this.setData([], null);
  }

  setData(rows: SavedRow[], memory: MemoryTotals | null): void {
    this._rows = rows;
    this._renderTotals(rows, memory);
    this._renderTable();
  }

  private _sortBy(key: string): void {
    this._descending = key === this._sortKey ? !this._descending : key === 'bytes' || key === 'version';
    this._sortKey = key;
    this._renderTable();
  }

  private _renderTotals(rows: SavedRow[], memory: MemoryTotals | null): void {
    clear(this._totals);
    const saved = memory?.saved_count ?? rows.length;
    const savedBytes = memory?.saved_bytes ?? rows.reduce((sum, r) => sum + r.bytes, 0);
    const parts: [string, string][] = [
      ['saved tensors', formatCount(saved)],
      ['saved bytes', formatBytes(savedBytes)]
    ];
    if (memory) {
      parts.push(
        ['alive, each storage once', formatBytes(memory.unique_bytes)],
        ['freed', formatCount(memory.freed_count)],
        ['leaves', formatBytes(memory.leaf_bytes)],
        ['grads', formatBytes(memory.grad_bytes)]
      );
    }
    for (const [label, value] of parts) {
      this._totals.append(h('span', { class: 'tg-total' }, h('strong', {}, value), ` ${label}`));
    }
  }

  private _renderTable(): void {
    clear(this._table);
    const headRow = h('tr');
    for (const column of COLUMNS) {
      const sorted = column.key === this._sortKey;
      headRow.append(
        h(
          'th',
          {
            'data-key': column.key,
            class: (column.numeric ? 'tg-numeric ' : '') + (sorted ? 'tg-sorted' : ''),
            'aria-sort': sorted ? (this._descending ? 'descending' : 'ascending') : 'none',
            title: 'Sort'
          },
          column.title + (sorted ? (this._descending ? ' ▾' : ' ▴') : '')
        )
      );
    }
    const body = h('tbody');
    const column = COLUMNS.find(c => c.key === this._sortKey) ?? COLUMNS[0];
    const sign = this._descending ? -1 : 1;
    const rows = [...this._rows].sort((a, b) => {
      const x = column.value(a);
      const y = column.value(b);
      return sign * (x < y ? -1 : x > y ? 1 : 0);
    });
    for (const row of rows) {
      const mismatch = hasVersionMismatch(row);
      const tr = h('tr', { 'data-node': row.node, class: mismatch ? 'tg-row-error' : '' });
      for (const c of COLUMNS) {
        tr.append(h('td', { class: c.numeric ? 'tg-numeric' : '' }, c.cell(row)));
      }
      body.append(tr);
      if (mismatch) {
        const message =
          row.error ??
          `modified by an inplace operation: saved at version ${row.version_saved}, now ${row.version_now}`;
        body.append(
          h('tr', { class: 'tg-row-error-detail', 'data-node': row.node }, h('td', { colspan: COLUMNS.length }, '⚠ ', message))
        );
      }
    }
    if (!rows.length) {
      body.append(h('tr', {}, h('td', { colspan: COLUMNS.length, class: 'tg-empty' }, 'No saved tensors.')));
    }
    this._table.append(h('thead', {}, headRow), body);
  }
}
