import { InspectorStore, MAX_ERRORS, initialState, reduce, reduceAll } from '../src/store';
import { fixture } from './fixtures';

/** A scheduler the test flushes by hand, to observe notification batching. */
function manualScheduler(): { schedule: (f: () => void) => void; flush: () => void; pending: () => number } {
  let queue: (() => void)[] = [];
  return {
    schedule: f => queue.push(f),
    flush: () => {
      const run = queue;
      queue = [];
      run.forEach(f => f());
    },
    pending: () => queue.length
  };
}

describe('reduce', () => {
  it('hello connects and takes the live flag', () => {
    const state = reduce(initialState(), { ...fixture('hello'), live: false });
    expect(state.status).toBe('connected');
    expect(state.live).toBe(false);
    expect(state.hello?.tracegrad_version).toBe('0.1.0');
  });

  it('tracks the running cell from cell_started to cell_finished', () => {
    let state = reduce(initialState(), fixture('cell_started'));
    expect(state.runningCell).toEqual({ cellId: 'cell-a', executionCount: 2 });
    state = reduce(state, fixture('cell_finished'));
    expect(state.runningCell).toBeNull();
    expect(state.lastFinishedCell).toEqual({ cellId: 'cell-a', executionCount: 2, ok: true, error: null, durationMs: 12.5 });
  });

  it('a cell_started means the kernel is live (e.g. after %tracegrad live on)', () => {
    let state = reduce(initialState(), { ...fixture('hello'), live: false });
    state = reduce(state, fixture('cell_started'));
    expect(state.live).toBe(true);
  });

  it("a finished message for another cell does not end the running one", () => {
    let state = reduce(initialState(), fixture('cell_started'));
    state = reduce(state, { ...fixture('cell_finished'), cell_id: 'other' });
    expect(state.runningCell?.cellId).toBe('cell-a');
  });

  it('records a failed cell with its error', () => {
    const state = reduce(initialState(), { ...fixture('cell_finished'), ok: false, error: 'RuntimeError: boom' });
    expect(state.lastFinishedCell?.ok).toBe(false);
    expect(state.lastFinishedCell?.error).toBe('RuntimeError: boom');
  });

  it('a graph sets the memory totals and drops saved rows of another graph', () => {
    let state = reduce(initialState(), fixture('saved'));
    expect(state.saved?.graph_id).toBe('g-1');
    state = reduce(state, { ...fixture('graph'), graph_id: 'g-2' });
    expect(state.graph?.graph_id).toBe('g-2');
    expect(state.saved).toBeNull();
    expect(state.memory?.saved_bytes).toBe(112);
  });

  it('keeps saved rows of the same graph', () => {
    let state = reduce(initialState(), fixture('saved'));
    state = reduce(state, fixture('graph'));
    expect(state.saved?.rows).toHaveLength(3);
  });

  it('groups backward runs by cell', () => {
    let state = reduce(initialState(), fixture('hooks'));
    state = reduce(state, { ...fixture('hooks'), backward_id: 'b-2' });
    expect(state.hooks.map(h => h.backward_id)).toEqual(['b-1', 'b-2']);
    state = reduce(state, { ...fixture('hooks'), backward_id: 'b-3', cell_id: 'cell-b' });
    expect(state.hooks.map(h => h.backward_id)).toEqual(['b-3']);
  });

  it('a memory message replaces the totals', () => {
    const state = reduce(initialState(), { ...fixture('memory'), saved_bytes: 999 });
    expect(state.memory?.saved_bytes).toBe(999);
    expect((state.memory as any).type).toBeUndefined();
  });

  it('collects kernel errors, capped', () => {
    let state = initialState();
    for (let i = 0; i < MAX_ERRORS + 5; i++) {
      state = reduce(state, { ...fixture('error'), message: `e${i}` });
    }
    expect(state.errors).toHaveLength(MAX_ERRORS);
    expect(state.errors[state.errors.length - 1]).toBe(`e${MAX_ERRORS + 4}`);
  });

  it('applies a batch in order and counts dropped messages', () => {
    const state = reduceAll(initialState(), [fixture('batch')]);
    expect(state.graph?.graph_id).toBe('g-1');
    expect(state.hooks).toHaveLength(1);
    expect(state.saved?.rows).toHaveLength(3);
    expect(state.runningCell).toBeNull(); // cell_finished came last
    expect(state.lastFinishedCell?.cellId).toBe('cell-a');
    expect(state.dropped).toBe(2);
  });

  it('never mutates the previous state', () => {
    const before = initialState();
    const frozen = JSON.stringify(before);
    reduceAll(before, [fixture('batch'), fixture('hello')]);
    expect(JSON.stringify(before)).toBe(frozen);
  });

  it('bumps the revision once per message', () => {
    const state = reduceAll(initialState(), [fixture('batch')]);
    expect(state.revision).toBe(5);
  });
});

describe('InspectorStore', () => {
  it('notifies once per flush however many messages arrive', () => {
    const scheduler = manualScheduler();
    const store = new InspectorStore(scheduler.schedule);
    const seen: number[] = [];
    store.subscribe(state => seen.push(state.revision));
    store.receive(fixture('hello'));
    store.receive(fixture('cell_started'));
    store.receive(fixture('graph'));
    expect(seen).toEqual([]);
    expect(scheduler.pending()).toBe(1);
    scheduler.flush();
    expect(seen).toEqual([3]);
  });

  it('keeps separate state per kernel', () => {
    const sync = (f: () => void): void => f();
    const a = new InspectorStore(sync);
    const b = new InspectorStore(sync);
    a.receive(fixture('graph'));
    b.receive(fixture('hello'));
    expect(a.state.graph).not.toBeNull();
    expect(b.state.graph).toBeNull();
    expect(b.state.status).toBe('connected');
    expect(a.state.status).toBe('connecting');
  });

  it('marks a newer protocol as incompatible with a notice', () => {
    const store = new InspectorStore(f => f());
    expect(store.receive({ ...fixture('hello'), version: 99 })).toBe(false);
    expect(store.state.status).toBe('incompatible');
    expect(store.state.notice).toMatch(/version 99/);
  });

  it('records malformed messages as errors instead of throwing', () => {
    const store = new InspectorStore(f => f());
    expect(store.receive('garbage')).toBe(false);
    expect(store.state.errors[0]).toMatch(/ignored a message/);
  });

  it('reset forgets the kernel state (restart)', () => {
    const store = new InspectorStore(f => f());
    store.receive(fixture('batch'));
    store.reset();
    expect(store.state.graph).toBeNull();
    expect(store.state.status).toBe('connecting');
  });

  it('unsubscribe stops notifications', () => {
    const store = new InspectorStore(f => f());
    const listener = jest.fn();
    const off = store.subscribe(listener);
    store.receive(fixture('hello'));
    off();
    store.receive(fixture('graph'));
    expect(listener).toHaveBeenCalledTimes(1);
  });
});
