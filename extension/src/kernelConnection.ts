/**
 * The comm between one kernel and its InspectorStore.
 *
 * The frontend opens the comm `tracegrad.inspector` on the notebook's own kernel connection; a kernel
 * with `%load_ext tracegrad` answers with `hello`. A kernel without the extension closes the comm at once
 * (ipykernel closes comms to unknown targets), which is shown as "unavailable"; the connection then tries
 * again after the next cell has run (the user may just have run `%load_ext tracegrad`) and after a
 * restart. Kernel status is used only to time these retries, never to decide that a cell has finished:
 * that comes from the kernel's own cell_started / cell_finished messages.
 */

import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { COMM_TARGET, clientMessage } from './protocol';
import { InspectorStore } from './store';

const RETRY_DELAY_MS = 250;
/** An open answered by neither hello nor close this long while the kernel is not busy was lost. */
const LOST_OPEN_MS = 2000;
const LOST_OPEN_RETRIES = 5;

export class KernelConnection {
  readonly store: InspectorStore;
  private _comm: Kernel.IComm | null = null;
  private _helloSeen = false;
  private _retryTimer: ReturnType<typeof setTimeout> | null = null;
  private _disposed = false;
  private _watchdog: ReturnType<typeof setTimeout> | null = null;
  private _retryWanted = false;
  private readonly _onCommOpen = (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): void =>
    this._adopt(comm, msg);

  constructor(private readonly _kernel: Kernel.IKernelConnection) {
    this.store = new InspectorStore();
    // The kernel may also open the comm itself (e.g. when the extension loads after the panel opened).
    this._kernel.registerCommTarget(COMM_TARGET, this._onCommOpen);
    this._kernel.statusChanged.connect(this._onStatus, this);
    this._kernel.iopubMessage.connect(this._onIopub, this);
    this._open();
  }

  get kernelId(): string {
    return this._kernel.id;
  }

  /** Start or pause the kernel's live feed. */
  setLive(live: boolean): void {
    this.store.setLive(live);
    this._send(clientMessage('set_live', { live }));
  }

  /** Try to (re)connect now, e.g. when the user asks. */
  reconnect(): void {
    if (!this._comm || !this._helloSeen) {
      this._open();
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this._retryTimer) {
      clearTimeout(this._retryTimer);
    }
    if (this._watchdog) {
      clearTimeout(this._watchdog);
    }
    this._kernel.statusChanged.disconnect(this._onStatus, this);
    this._kernel.iopubMessage.disconnect(this._onIopub, this);
    try {
      this._kernel.removeCommTarget(COMM_TARGET, this._onCommOpen);
    } catch {
      // the kernel connection may already be disposed
    }
    this._closeComm();
  }

  /** A cell ran: the user may just have loaded the extension, so try again when the kernel is idle. */
  private _onIopub(_: Kernel.IKernelConnection, msg: KernelMessage.IIOPubMessage): void {
    if (msg.header.msg_type === 'execute_input' && !this._helloSeen) {
      this._retryWanted = true;
    }
  }

  private _onStatus(_: Kernel.IKernelConnection, status: KernelMessage.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      // A new kernel process: everything shown so far is gone, and the comm with it.
      this._comm = null;
      this._helloSeen = false;
      this._retryWanted = true;
      this.store.reset('connecting');
      return;
    }
    if (status === 'dead') {
      this._comm = null;
      this.store.setStatus('no-kernel');
      return;
    }
    // Retry after a cell ran or the kernel restarted (never in a loop of our own comm opens), once the
    // previous attempt is over: one comm at a time.
    const settled = status === 'idle' || status === 'starting';
    if (settled && this._retryWanted && !this._helloSeen && this._comm === null) {
      this._retryWanted = false;
      this._scheduleRetry();
    }
  }

  private _scheduleRetry(): void {
    if (this._retryTimer || this._disposed) {
      return;
    }
    this._retryTimer = setTimeout(() => {
      this._retryTimer = null;
      if (this._helloSeen || this._comm !== null) {
        return;
      }
      if (this._kernel.connectionStatus !== 'connected') {
        this._scheduleRetry(); // mid-restart: a message sent now would be dropped
        return;
      }
      this._open();
    }, RETRY_DELAY_MS);
  }

  private _open(retriesLeft = LOST_OPEN_RETRIES): void {
    if (this._disposed || this._kernel.isDisposed) {
      return;
    }
    this._closeComm();
    if (this.store.state.status !== 'unavailable') {
      this.store.setStatus('connecting');
    }
    let comm: Kernel.IComm;
    try {
      comm = this._kernel.createComm(COMM_TARGET);
    } catch (error) {
      this.store.setStatus('unavailable');
      return;
    }
    this._attach(comm);
    this._watch(comm, retriesLeft);
    try {
      comm.open({});
    } catch {
      this._comm = null;
      this.store.setStatus('unavailable');
    }
  }

  /**
   * Safety net: an open that the kernel never answers (neither hello nor close) although it is idle was
   * lost; open again, a few times at most.
   */
  private _watch(comm: Kernel.IComm, retriesLeft: number): void {
    if (this._watchdog) {
      clearTimeout(this._watchdog);
    }
    this._watchdog = setTimeout(() => {
      this._watchdog = null;
      if (comm !== this._comm || this._helloSeen || this._disposed) {
        return;
      }
      if (this._kernel.status !== 'idle') {
        this._watch(comm, retriesLeft); // busy, or still restarting: the open is queued, not lost
      } else if (retriesLeft > 0) {
        this._open(retriesLeft - 1);
      }
    }, LOST_OPEN_MS);
  }

  private _adopt(comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): void {
    this._closeComm();
    this._attach(comm);
    const data = msg.content.data as unknown;
    if (data && typeof data === 'object' && Object.keys(data).length) {
      this._receive(data);
    }
  }

  private _attach(comm: Kernel.IComm): void {
    this._comm = comm;
    comm.onMsg = msg => {
      if (comm === this._comm) {
        this._receive(msg.content.data);
      }
    };
    comm.onClose = () => {
      if (comm !== this._comm) {
        return;
      }
      this._comm = null;
      // Closed before hello: the kernel has no tracegrad.inspector target (extension not loaded).
      this.store.setStatus(this._helloSeen ? 'connecting' : 'unavailable');
      this._helloSeen = false;
    };
  }

  private _receive(data: unknown): void {
    const wasConnected = this._helloSeen;
    this.store.receive(data);
    if (!wasConnected && this.store.state.status === 'connected') {
      this._helloSeen = true;
      // After a page reload the kernel holds state we have not seen; ask for it once.
      if (!this.store.state.graph && !this.store.state.hooks.length) {
        this._send(clientMessage('request_state'));
      }
    }
  }

  private _send(message: object): void {
    if (this._comm && !this._comm.isDisposed) {
      try {
        this._comm.send(message as never);
      } catch {
        // the kernel went away; the status handler will reset the state
      }
    }
  }

  private _closeComm(): void {
    const comm = this._comm;
    this._comm = null;
    if (comm && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // already closed by the kernel
      }
    }
  }
}
