import { KernelConnection } from '../src/kernelConnection';
import { fixture } from './fixtures';

/** Just enough of a Lumino signal for KernelConnection. */
class FakeSignal<T> {
  private handlers: [(sender: unknown, value: T) => void, unknown][] = [];
  constructor(private readonly sender: unknown) {}
  connect(fn: (sender: unknown, value: T) => void, thisArg?: unknown): void {
    this.handlers.push([fn, thisArg]);
  }
  disconnect(fn: (sender: unknown, value: T) => void): void {
    this.handlers = this.handlers.filter(([f]) => f !== fn);
  }
  emit(value: T): void {
    for (const [fn, thisArg] of [...this.handlers]) {
      fn.call(thisArg, this.sender, value);
    }
  }
}

class FakeComm {
  onMsg: ((msg: any) => void) | null = null;
  onClose: ((msg: any) => void) | null = null;
  isDisposed = false;
  opened = false;
  closed = false;
  sent: any[] = [];
  constructor(readonly commId: string) {}
  open(): void {
    this.opened = true;
  }
  send(data: any): void {
    this.sent.push(data);
  }
  close(): void {
    this.closed = true;
  }
  /** The kernel sends a comm message. */
  receive(data: unknown): void {
    this.onMsg?.({ content: { data } });
  }
  /** The kernel closes the comm (e.g. no such target). */
  kernelCloses(): void {
    this.onClose?.({});
  }
}

class FakeKernel {
  id = 'kernel-1';
  isDisposed = false;
  status = 'idle';
  connectionStatus = 'connected';
  comms: FakeComm[] = [];
  statusChanged = new FakeSignal<string>(this);
  iopubMessage = new FakeSignal<any>(this);
  createComm(): FakeComm {
    const comm = new FakeComm(`comm-${this.comms.length}`);
    this.comms.push(comm);
    return comm;
  }
  registerCommTarget(): void {}
  removeCommTarget(): void {}
  get lastComm(): FakeComm {
    return this.comms[this.comms.length - 1];
  }
  setStatus(status: string): void {
    this.status = status;
    this.statusChanged.emit(status);
  }
  runCell(): void {
    this.iopubMessage.emit({ header: { msg_type: 'execute_input' } });
    this.setStatus('busy');
    this.setStatus('idle');
  }
}

function connect(): { kernel: FakeKernel; connection: KernelConnection } {
  const kernel = new FakeKernel();
  const connection = new KernelConnection(kernel as any);
  return { kernel, connection };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('KernelConnection', () => {
  it('opens the comm at once and is connected after hello', () => {
    const { kernel, connection } = connect();
    expect(kernel.comms).toHaveLength(1);
    expect(kernel.lastComm.opened).toBe(true);
    kernel.lastComm.receive(fixture('hello'));
    expect(connection.store.state.status).toBe('connected');
    // Nothing shown yet: ask the kernel for its latest state (e.g. after a page reload).
    expect(kernel.lastComm.sent.map(m => m.type)).toEqual(['request_state']);
  });

  it('a kernel without the extension closes the comm: unavailable, retried after the next cell only', () => {
    const { kernel, connection } = connect();
    kernel.lastComm.kernelCloses();
    expect(connection.store.state.status).toBe('unavailable');
    // Idle without a cell run (e.g. the kernel answering our own comm_open): no new attempt.
    kernel.setStatus('busy');
    kernel.setStatus('idle');
    jest.advanceTimersByTime(1000);
    expect(kernel.comms).toHaveLength(1);
    // The user runs a cell (%load_ext tracegrad): try again once the kernel is idle.
    kernel.runCell();
    jest.advanceTimersByTime(300);
    expect(kernel.comms).toHaveLength(2);
    kernel.lastComm.receive(fixture('hello'));
    expect(connection.store.state.status).toBe('connected');
  });

  it('a restart forgets the state and reconnects to the new kernel', () => {
    const { kernel, connection } = connect();
    kernel.lastComm.receive(fixture('hello'));
    kernel.lastComm.receive(fixture('batch'));
    expect(connection.store.state.graph).not.toBeNull();
    kernel.setStatus('restarting');
    expect(connection.store.state.graph).toBeNull();
    expect(connection.store.state.status).toBe('connecting');
    kernel.setStatus('starting');
    jest.advanceTimersByTime(300);
    expect(kernel.comms).toHaveLength(2);
    kernel.lastComm.receive(fixture('hello'));
    expect(connection.store.state.status).toBe('connected');
  });

  it('waits while the kernel is still reconnecting after a restart', () => {
    const { kernel } = connect();
    kernel.lastComm.receive(fixture('hello'));
    kernel.setStatus('restarting');
    kernel.connectionStatus = 'connecting';
    kernel.setStatus('starting');
    jest.advanceTimersByTime(1000);
    expect(kernel.comms).toHaveLength(1);
    kernel.connectionStatus = 'connected';
    jest.advanceTimersByTime(300);
    expect(kernel.comms).toHaveLength(2);
  });

  it('re-opens an open the idle kernel never answered, but waits for a busy one', () => {
    const { kernel } = connect();
    kernel.status = 'busy';
    jest.advanceTimersByTime(5000);
    expect(kernel.comms).toHaveLength(1); // a long cell is running: the open is queued, not lost
    kernel.status = 'idle';
    jest.advanceTimersByTime(2500);
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.comms[0].closed).toBe(true);
    jest.advanceTimersByTime(60000);
    expect(kernel.comms.length).toBeLessThanOrEqual(7); // bounded
  });

  it('the live toggle sends set_live', () => {
    const { kernel, connection } = connect();
    kernel.lastComm.receive(fixture('hello'));
    connection.setLive(false);
    expect(kernel.lastComm.sent.pop()).toEqual({ protocol: 'tracegrad', version: 1, type: 'set_live', live: false });
    expect(connection.store.state.live).toBe(false);
  });

  it('ignores messages from a comm it replaced', () => {
    const { kernel, connection } = connect();
    const first = kernel.lastComm;
    first.kernelCloses();
    kernel.runCell();
    jest.advanceTimersByTime(300);
    first.receive(fixture('graph'));
    expect(connection.store.state.graph).toBeNull();
  });

  it('dispose closes the comm and stops retrying', () => {
    const { kernel, connection } = connect();
    connection.dispose();
    expect(kernel.comms[0].closed).toBe(true);
    kernel.runCell();
    jest.advanceTimersByTime(5000);
    expect(kernel.comms).toHaveLength(1);
  });
});
