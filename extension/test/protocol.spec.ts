import { PROTOCOL_VERSION, flattenBatch, parseMessage } from '../src/protocol';
import { fixture, kernelExamples } from './fixtures';

const TYPES = ['hello', 'cell_started', 'cell_finished', 'graph', 'hooks', 'saved', 'memory', 'error', 'batch'];

describe('parseMessage', () => {
  it.each(TYPES)('accepts the %s example', name => {
    const result = parseMessage(fixture(name));
    expect(result.ok).toBe(true);
  });

  const examples = kernelExamples();
  if (examples.length) {
    it.each(examples)("accepts the kernel side's example %s", (_file, message) => {
      const result = parseMessage(message);
      if (!result.ok) {
        throw new Error(result.reason);
      }
      // Batches must parse all the way down.
      expect(flattenBatch(result.message).rejected).toEqual([]);
    });
  }

  it('parses JSON strings', () => {
    const result = parseMessage(JSON.stringify(fixture('hello')));
    expect(result.ok && result.message.type).toBe('hello');
  });

  it('keeps unknown fields and ignores them', () => {
    const result = parseMessage({ ...fixture('hello'), shiny_new_field: [1, 2, 3] });
    expect(result.ok).toBe(true);
    const graph = parseMessage(fixture('graph'));
    expect(graph.ok && (graph.message as any).future_field).toEqual({ ignored: true });
  });

  it('rejects a newer protocol version with a message for the user', () => {
    const result = parseMessage({ ...fixture('graph'), version: PROTOCOL_VERSION + 1 });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.newer).toBe(true);
      expect(result.reason).toMatch(/protocol version 2/);
    }
  });

  it.each([
    [null, /not a JSON object/],
    ['{not json', /not JSON/],
    [[1, 2], /not a JSON object/],
    [{ protocol: 'other', version: 1, type: 'graph' }, /not a tracegrad message/],
    [{ protocol: 'tracegrad', type: 'graph' }, /version/],
    [{ protocol: 'tracegrad', version: 1, type: 'ir_future' }, /unknown message type/],
    [{ protocol: 'tracegrad', version: 1, type: 'graph', nodes: 'x', edges: [] }, /nodes/],
    [{ protocol: 'tracegrad', version: 1, type: 'error' }, /message/]
  ])('rejects %p', (raw, reason) => {
    const result = parseMessage(raw);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('fills optional graph collections so renderers need no null checks', () => {
    const minimal = {
      protocol: 'tracegrad',
      version: 1,
      type: 'graph',
      graph_id: 'g',
      cell_id: null,
      nodes: [{ id: 'a', name: 'MulBackward0', kind: 'function', seq: 0 }],
      edges: []
    };
    const result = parseMessage(minimal);
    expect(result.ok).toBe(true);
    if (result.ok && result.message.type === 'graph') {
      expect(result.message.groups).toEqual([]);
      expect(result.message.roots).toEqual([]);
      expect(result.message.nodes[0].saved).toEqual([]);
      expect(result.message.nodes[0].hooks).toEqual([]);
      expect(result.message.nodes[0].group).toBeNull();
      expect(result.message.total_nodes).toBe(1);
    }
  });
});

describe('flattenBatch', () => {
  it('yields inner messages in order and sums dropped counts', () => {
    const parsed = parseMessage(fixture('batch'));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      const { messages, rejected, dropped } = flattenBatch(parsed.message);
      expect(messages.map(m => m.type)).toEqual(['cell_started', 'graph', 'hooks_fired', 'saved_tensors', 'cell_finished']);
      expect(rejected).toEqual([]);
      expect(dropped).toBe(2);
    }
  });

  it('reports bad inner messages without losing the good ones', () => {
    const batch = { ...fixture('batch'), messages: [fixture('hello'), { protocol: 'tracegrad', version: 1, type: 'nope' }], dropped: 0 };
    const parsed = parseMessage(batch);
    if (!parsed.ok) {
      throw new Error(parsed.reason);
    }
    const { messages, rejected } = flattenBatch(parsed.message);
    expect(messages.map(m => m.type)).toEqual(['hello']);
    expect(rejected).toEqual(['unknown message type "nope"']);
  });
});
