/**
 * Web Worker: lays out DOT with Graphviz compiled to WebAssembly and returns SVG, so layout of large
 * graphs never blocks the JupyterLab UI. The WASM module (~0.8 MB) is loaded on the first request only.
 */

import { Graphviz } from '@hpcc-js/wasm-graphviz';
import type { LayoutReply, LayoutRequest } from './layoutTypes';

// The project's tsconfig uses the DOM lib; declare the two worker globals this file needs.
const scope = self as unknown as {
  onmessage: ((event: { data: LayoutRequest }) => void) | null;
  postMessage(reply: LayoutReply): void;
};

let graphviz: Promise<Graphviz> | null = null;

scope.onmessage = event => {
  const { id, dot } = event.data;
  const started = performance.now();
  graphviz ??= Graphviz.load();
  graphviz
    .then(engine => {
      const svg = engine.dot(dot, 'svg');
      scope.postMessage({ id, svg, ms: performance.now() - started });
    })
    .catch((error: unknown) => {
      scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    });
};
