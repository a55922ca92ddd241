/**
 * The inspector's state for one kernel, and the pure reducer that folds protocol messages into it.
 *
 * Framework-free on purpose (no JupyterLab imports) so the jest tests exercise it directly. The
 * `InspectorStore` wraps the reducer, batches change notifications (one per animation frame, however
 * many messages arrived) and lets views subscribe.
 */

import {
  CellMessage,
  GraphMessage,
  HelloMessage,
  HooksMessage,
  KernelMessage,
  MemoryTotals,
  SavedMessage,
  flattenBatch,
  parseMessage
} from './protocol';

/** Where the comm to the kernel stands. */
export type ConnectionStatus =
  | 'no-kernel' // no notebook, or its kernel is not running
  | 'connecting' // comm opening, no hello yet
  | 'connected' // hello received
  | 'unavailable' // the kernel has no tracegrad.inspector target: %load_ext tracegrad not run
  | 'incompatible'; // the kernel speaks a newer protocol

export interface CellRef {
  cellId: string | null;
  executionCount: number | null;
}

export interface FinishedCell extends CellRef {
  ok: boolean;
  error: string | null;
  durationMs: number | null;
}

export interface InspectorState {
  status: ConnectionStatus;
  hello: HelloMessage | null;
  live: boolean;
  /** The cell running now, between cell_started and cell_finished. */
  runningCell: CellRef | null;
  lastFinishedCell: FinishedCell | null;
  graph: GraphMessage | null;
  /** Backward calls of the most recent cell that ran one, in order (each is one timeline). */
  hooks: HooksMessage[];
  saved: SavedMessage | null;
  memory: MemoryTotals | null;
  /** Kernel-side snapshot errors and rejected messages, newest last, capped. */
  errors: string[];
  /** Messages the kernel dropped while throttling, summed. */
  dropped: number;
  /** A one-line notice for the header (newer protocol, ...). */
  notice: string | null;
  /** Increases with every applied message; views use it to skip redundant renders. */
  revision: number;
}

export const MAX_ERRORS = 20;
export const MAX_BACKWARD_RUNS = 20;

export function initialState(status: ConnectionStatus = 'connecting'): InspectorState {
  return {
    status,
    hello: null,
    live: true,
    runningCell: null,
    lastFinishedCell: null,
    graph: null,
    hooks: [],
    saved: null,
    memory: null,
    errors: [],
    dropped: 0,
    notice: null,
    revision: 0
  };
}

function withError(state: InspectorState, message: string): InspectorState {
  return { ...state, errors: [...state.errors, message].slice(-MAX_ERRORS) };
}

function cellRef(msg: CellMessage): CellRef {
  return { cellId: msg.cell_id ?? null, executionCount: msg.execution_count ?? null };
}

const MEMORY_KEYS: (keyof MemoryTotals)[] = [
  'saved_count',
  'saved_bytes',
  'unique_bytes',
  'alive_bytes',
  'freed_count',
  'unique_storages',
  'leaf_bytes',
  'grad_bytes'
];

function pickMemory(source: MemoryTotals): MemoryTotals {
  const totals = {} as MemoryTotals;
  for (const key of MEMORY_KEYS) {
    totals[key] = source[key] ?? 0;
  }
  return totals;
}

function memoryOf(msg: { memory?: MemoryTotals }): MemoryTotals | null {
  return msg.memory ?? null;
}

/** Fold one (non-batch) message into the state. Pure: returns a new object, never mutates. */
export function reduce(state: InspectorState, msg: KernelMessage): InspectorState {
  const next = { ...state, revision: state.revision + 1 };
  switch (msg.type) {
    case 'hello':
      return { ...next, status: 'connected', hello: msg, live: msg.live ?? true, notice: null };
    case 'cell_started':
      // Only a live kernel announces cells, so this also catches `%tracegrad live on` run in a cell.
      return { ...next, runningCell: cellRef(msg), live: true };
    case 'cell_finished': {
      const finished: FinishedCell = {
        ...cellRef(msg),
        ok: msg.ok ?? true,
        error: msg.error ?? null,
        durationMs: msg.duration_ms ?? null
      };
      // Only the matching cell ends the running state; a stray finish of another cell must not.
      const running = state.runningCell;
      const stillRunning = running && running.cellId !== finished.cellId ? running : null;
      return { ...next, runningCell: stillRunning, lastFinishedCell: finished };
    }
    case 'graph': {
      // A graph from a new graph id replaces saved rows that belonged to the previous graph.
      const saved = state.saved && state.saved.graph_id === msg.graph_id ? state.saved : null;
      return { ...next, graph: msg, saved, memory: memoryOf(msg) ?? state.memory };
    }
    case 'hooks_fired': {
      // Keep the runs of one cell together; a run from another cell starts a new timeline.
      const sameCell = state.hooks.length > 0 && state.hooks[0].cell_id === msg.cell_id;
      const runs = sameCell ? [...state.hooks, msg] : [msg];
      return { ...next, hooks: runs.slice(-MAX_BACKWARD_RUNS) };
    }
    case 'saved_tensors':
      return { ...next, saved: msg, memory: memoryOf(msg) ?? state.memory };
    case 'memory':
      return { ...next, memory: pickMemory(msg) };
    case 'error':
      return withError(next, msg.message);
    case 'batch':
      return reduceAll(state, [msg]);
  }
  return state;
}

/** Fold many messages (batches flattened) in order. */
export function reduceAll(state: InspectorState, messages: KernelMessage[]): InspectorState {
  let current = state;
  for (const message of messages) {
    const { messages: leaves, rejected, dropped } = flattenBatch(message);
    for (const leaf of leaves) {
      current = reduce(current, leaf);
    }
    for (const reason of rejected) {
      current = withError(current, `ignored a message: ${reason}`);
    }
    if (dropped) {
      current = { ...current, dropped: current.dropped + dropped };
    }
  }
  return current;
}

/** Schedules a flush; the default coalesces to the next animation frame (or macrotask outside a browser). */
export type Scheduler = (flush: () => void) => void;

export const frameScheduler: Scheduler = flush => {
  if (typeof requestAnimationFrame === 'function') {
    requestAnimationFrame(() => flush());
  } else {
    setTimeout(flush, 0);
  }
};

export type Listener = (state: InspectorState) => void;

/**
 * Mutable holder of one kernel's state. Raw payloads go in through `receive`; listeners hear at most
 * once per scheduled flush.
 */
export class InspectorStore {
  private _state: InspectorState;
  private _listeners = new Set<Listener>();
  private _flushPending = false;

  constructor(
    private readonly _schedule: Scheduler = frameScheduler,
    status: ConnectionStatus = 'connecting'
  ) {
    this._state = initialState(status);
  }

  get state(): InspectorState {
    return this._state;
  }

  /** Parse and apply a raw comm payload. Returns false when it was rejected. */
  receive(raw: unknown): boolean {
    const parsed = parseMessage(raw);
    if (!parsed.ok) {
      if (parsed.newer) {
        this.update(s => ({ ...s, status: 'incompatible', notice: parsed.reason }));
      } else {
        this.update(s => withError(s, `ignored a message: ${parsed.reason}`));
      }
      return false;
    }
    this.update(s => reduceAll(s, [parsed.message]));
    return true;
  }

  /** Apply a state change and schedule one notification. */
  update(change: (state: InspectorState) => InspectorState): void {
    this._state = change(this._state);
    if (!this._flushPending) {
      this._flushPending = true;
      this._schedule(() => {
        this._flushPending = false;
        for (const listener of [...this._listeners]) {
          listener(this._state);
        }
      });
    }
  }

  setStatus(status: ConnectionStatus, notice: string | null = null): void {
    if (this._state.status !== status || this._state.notice !== notice) {
      this.update(s => ({ ...s, status, notice }));
    }
  }

  setLive(live: boolean): void {
    this.update(s => ({ ...s, live }));
  }

  /** Forget everything the kernel sent (kernel restart): the new kernel process knows none of it. */
  reset(status: ConnectionStatus = 'connecting'): void {
    this.update(() => initialState(status));
  }

  subscribe(listener: Listener): () => void {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }
}
