/**
 * Main-thread side of the layout worker: one shared worker, requests matched to replies by id.
 *
 * If the browser cannot start the worker (e.g. a strict CSP), layout falls back to the main thread with
 * the same WASM module, loaded lazily as its own chunk, so the graph still appears (slower).
 */

import type { LayoutReply, LayoutRequest } from './layoutTypes';

type Pending = { resolve: (svg: string) => void; reject: (error: Error) => void };

class LayoutClient {
  private _worker: Worker | null = null;
  private _workerFailed = false;
  private _nextId = 1;
  private _pending = new Map<number, Pending>();

  /** Lay out DOT source and resolve with SVG markup. */
  layout(dot: string): Promise<string> {
    const worker = this._ensureWorker();
    if (!worker) {
      return this._layoutOnMainThread(dot);
    }
    const id = this._nextId++;
    return new Promise<string>((resolve, reject) => {
      this._pending.set(id, { resolve, reject });
      const request: LayoutRequest = { id, dot };
      worker.postMessage(request);
    });
  }

  /** True when layout runs in a worker (shown in the UI, and checked by the UI tests). */
  get usesWorker(): boolean {
    return this._ensureWorker() !== null;
  }

  private _ensureWorker(): Worker | null {
    if (this._worker || this._workerFailed) {
      return this._worker;
    }
    try {
      // The bundler turns this into a separate worker chunk next to the extension's other assets.
      this._worker = new Worker(new URL('./layoutWorker.js', import.meta.url));
      this._worker.onmessage = (event: MessageEvent<LayoutReply>) => this._settle(event.data);
      this._worker.onerror = event => {
        // A worker that fails to load fails every request; fall back for this and later layouts.
        event.preventDefault?.();
        this._failWorker(new Error(event.message || 'layout worker failed to load'));
      };
    } catch (error) {
      this._workerFailed = true;
      this._worker = null;
    }
    return this._worker;
  }

  private _failWorker(error: Error): void {
    this._worker?.terminate();
    this._worker = null;
    this._workerFailed = true;
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const request of pending) {
      request.reject(error);
    }
  }

  private _settle(reply: LayoutReply): void {
    const pending = this._pending.get(reply.id);
    if (!pending) {
      return;
    }
    this._pending.delete(reply.id);
    if ('error' in reply) {
      pending.reject(new Error(reply.error));
    } else {
      pending.resolve(reply.svg);
    }
  }

  private async _layoutOnMainThread(dot: string): Promise<string> {
    const { Graphviz } = await import('@hpcc-js/wasm-graphviz');
    const engine = await Graphviz.load();
    return engine.dot(dot, 'svg');
  }
}

/** One worker for all graph views of the page. */
export const layoutClient = new LayoutClient();
