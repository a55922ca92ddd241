/**
 * The tracegrad notebook protocol, version 1 (src/tracegrad/viz/protocol/ in the Python package).
 *
 * Types mirror the JSON Schemas; only the fields the extension reads are typed, and unknown fields are
 * kept untouched (a consumer ignores what it does not know). `parseMessage` is the one entry point that
 * turns an untrusted comm or MIME payload into a typed message.
 */

export const PROTOCOL_NAME = 'tracegrad';
export const PROTOCOL_VERSION = 1;
export const COMM_TARGET = 'tracegrad.inspector';

export const MIME_GRAPH = 'application/vnd.tracegrad.graph+json';
export const MIME_HOOKS = 'application/vnd.tracegrad.hooks+json';
export const MIME_SAVED = 'application/vnd.tracegrad.saved+json';

export interface Envelope {
  protocol: 'tracegrad';
  version: number;
  type: string;
}

export interface TensorMeta {
  shape: number[];
  dtype: string;
  device?: string;
}

export interface SavedTensor extends TensorMeta {
  name: string;
  bytes: number;
  role: 'input' | 'output';
  version_saved: number | null;
  version_now: number | null;
  state: 'alive' | 'freed';
  packed_by_hook: boolean;
  storage_id: string;
  error?: string | null;
}

export interface NodeHook {
  kind: string;
  name: string;
  output_nr?: number | null;
}

export interface SourceLocation {
  file: string;
  line: number;
  code?: string;
  cell_id?: string | null;
  execution_count?: number | null;
}

export interface GraphNode {
  id: string;
  name: string;
  kind: 'function' | 'accumulate' | 'custom' | 'other';
  seq: number | null;
  op?: string | null;
  source?: SourceLocation | null;
  outputs?: TensorMeta[];
  saved: SavedTensor[];
  hooks: NodeHook[];
  leaf?: { name?: string | null; shape: number[]; dtype: string; grad: TensorMeta | null } | null;
  group: string | null;
  depth?: number;
}

export interface GraphEdge {
  src: string;
  dst: string;
  input_nr: number;
  output_nr: number;
}

export interface GraphGroup {
  id: string;
  label: string;
  pattern: string[];
  repeats: number;
  members: string[];
  collapsed: boolean;
}

export interface MemoryTotals {
  saved_count: number;
  saved_bytes: number;
  unique_bytes: number;
  alive_bytes: number;
  freed_count: number;
  unique_storages: number;
  leaf_bytes: number;
  grad_bytes: number;
}

export interface HelloMessage extends Envelope {
  type: 'hello';
  tracegrad_version: string;
  live: boolean;
  capabilities: string[];
}

export interface CellMessage extends Envelope {
  type: 'cell_started' | 'cell_finished';
  cell_id: string | null;
  execution_count: number | null;
  ok?: boolean;
  error?: string | null;
  duration_ms?: number;
}

export interface GraphMessage extends Envelope {
  type: 'graph';
  graph_id: string;
  cell_id: string | null;
  roots: { node: string | null; label: string; tensor?: TensorMeta }[];
  nodes: GraphNode[];
  edges: GraphEdge[];
  groups: GraphGroup[];
  total_nodes: number;
  truncated: boolean;
  memory: MemoryTotals;
}

export interface HookEvent {
  seq: number;
  event: 'node_executed' | 'hook' | 'saved_packed' | 'saved_unpacked' | 'saved_freed' | string;
  kind: string | null;
  node: string | null;
  node_name: string | null;
  hook?: string | null;
  tensor?: TensorMeta | null;
  output_nr?: number | null;
  module?: string | null;
  t_us?: number;
}

export interface HooksMessage extends Envelope {
  type: 'hooks_fired';
  backward_id: string;
  cell_id: string | null;
  call: 'backward' | 'grad';
  roots: string[];
  events: HookEvent[];
  duration_us: number;
  truncated: boolean;
}

export interface SavedRow extends SavedTensor {
  node: string;
  node_name: string;
}

export interface SavedMessage extends Envelope {
  type: 'saved_tensors';
  graph_id: string;
  cell_id: string | null;
  rows: SavedRow[];
  memory: MemoryTotals;
}

export interface MemoryMessage extends Envelope, MemoryTotals {
  type: 'memory';
  graph_id: string;
  cell_id: string | null;
}

export interface ErrorMessage extends Envelope {
  type: 'error';
  cell_id?: string | null;
  message: string;
}

export interface BatchMessage extends Envelope {
  type: 'batch';
  messages: unknown[];
  dropped?: number;
}

/** Every kernel-to-frontend message the extension understands. */
export type KernelMessage =
  | HelloMessage
  | CellMessage
  | GraphMessage
  | HooksMessage
  | SavedMessage
  | MemoryMessage
  | ErrorMessage
  | BatchMessage;

export interface ClientMessage extends Envelope {
  type: 'set_live' | 'request_state';
  live?: boolean;
}

export type ParseResult =
  | { ok: true; message: KernelMessage }
  /** `newer` marks a message from a newer protocol: the UI says so once instead of failing silently. */
  | { ok: false; reason: string; newer?: boolean };

type Check = (value: Record<string, unknown>) => string | null;

const isArray = (key: string): Check => v => (Array.isArray(v[key]) ? null : `"${key}" must be an array`);
const isString = (key: string): Check => v => (typeof v[key] === 'string' ? null : `"${key}" must be a string`);
const isObject = (key: string): Check => v =>
  v[key] !== null && typeof v[key] === 'object' ? null : `"${key}" must be an object`;
const isNullableString = (key: string): Check => v =>
  v[key] === null || v[key] === undefined || typeof v[key] === 'string' ? null : `"${key}" must be a string or null`;

/**
 * The fields a renderer cannot do without, per message type. Deliberately looser than the JSON Schemas
 * (which the Python tests enforce): a missing optional detail must never blank the whole sidebar.
 */
const REQUIRED: Record<string, Check[]> = {
  hello: [],
  cell_started: [isNullableString('cell_id')],
  cell_finished: [isNullableString('cell_id')],
  graph: [isArray('nodes'), isArray('edges'), isNullableString('cell_id')],
  hooks_fired: [isArray('events'), isNullableString('cell_id')],
  saved_tensors: [isArray('rows'), isNullableString('cell_id')],
  memory: [],
  error: [isString('message')],
  batch: [isArray('messages')]
};

/** Parse one protocol message; never throws. */
export function parseMessage(raw: unknown): ParseResult {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return { ok: false, reason: 'not JSON' };
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const obj = value as Record<string, unknown>;
  if (obj.protocol !== PROTOCOL_NAME) {
    return { ok: false, reason: `not a tracegrad message (protocol: ${JSON.stringify(obj.protocol)})` };
  }
  if (typeof obj.version !== 'number' || !Number.isInteger(obj.version)) {
    return { ok: false, reason: 'missing protocol version' };
  }
  if (obj.version > PROTOCOL_VERSION) {
    return {
      ok: false,
      newer: true,
      reason:
        `The kernel speaks tracegrad protocol version ${obj.version}; this extension speaks ` +
        `version ${PROTOCOL_VERSION}. Update the JupyterLab extension (pip install -U tracegrad).`
    };
  }
  if (typeof obj.type !== 'string') {
    return { ok: false, reason: 'missing message type' };
  }
  const checks = REQUIRED[obj.type];
  if (!checks) {
    return { ok: false, reason: `unknown message type "${obj.type}"` };
  }
  for (const check of checks) {
    const problem = check(obj);
    if (problem) {
      return { ok: false, reason: `${obj.type}: ${problem}` };
    }
  }
  if (obj.type === 'graph') {
    normalizeGraph(obj);
  }
  if ((obj.type === 'graph' || obj.type === 'saved_tensors') && obj.memory !== undefined) {
    const problem = isObject('memory')(obj);
    if (problem) {
      return { ok: false, reason: `${obj.type}: ${problem}` };
    }
  }
  return { ok: true, message: obj as unknown as KernelMessage };
}

/** Fill optional collections with empty defaults so renderers need no null checks. */
function normalizeGraph(obj: Record<string, unknown>): void {
  if (!Array.isArray(obj.groups)) {
    obj.groups = [];
  }
  if (!Array.isArray(obj.roots)) {
    obj.roots = [];
  }
  for (const node of obj.nodes as Record<string, unknown>[]) {
    if (!Array.isArray(node.saved)) {
      node.saved = [];
    }
    if (!Array.isArray(node.hooks)) {
      node.hooks = [];
    }
    if (node.group === undefined) {
      node.group = null;
    }
  }
  if (typeof obj.total_nodes !== 'number') {
    obj.total_nodes = (obj.nodes as unknown[]).length;
  }
}

/**
 * Flatten a message into its leaves: a `batch` yields its inner messages in order (nested batches too);
 * inner messages that fail to parse are reported, not thrown.
 */
export function flattenBatch(message: KernelMessage): { messages: KernelMessage[]; rejected: string[]; dropped: number } {
  const out: KernelMessage[] = [];
  const rejected: string[] = [];
  let dropped = 0;
  const visit = (msg: KernelMessage): void => {
    if (msg.type !== 'batch') {
      out.push(msg);
      return;
    }
    dropped += (msg as BatchMessage).dropped ?? 0;
    for (const inner of (msg as BatchMessage).messages) {
      const parsed = parseMessage(inner);
      if (parsed.ok) {
        visit(parsed.message);
      } else {
        rejected.push(parsed.reason);
      }
    }
  };
  visit(message);
  return { messages: out, rejected, dropped };
}

export function clientMessage(type: ClientMessage['type'], extra: Partial<ClientMessage> = {}): ClientMessage {
  return { protocol: PROTOCOL_NAME, version: PROTOCOL_VERSION, type, ...extra };
}
