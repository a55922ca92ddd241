/**
 * The interactive autograd graph: Graphviz-WASM layout (in a worker) rendered as SVG, with pan and zoom,
 * search by node name, click to select (details + paths to leaves and root), click a collapsed group to
 * expand it, and an externally driven hover highlight (from the hook timeline).
 */

import { DEFAULT_NODE_BUDGET, VisibleGraph, buildVisibleGraph, toggleGroup } from './collapse';
import { clear, h } from './dom';
import { edgeDomId, nodeDomId, toDot } from './dot';
import { formatCount } from './format';
import { layoutClient } from './layoutClient';
import { NodeDetails } from './nodeDetails';
import { pathsThrough } from './paths';
import { GraphMessage } from './protocol';

const MIN_SCALE = 0.05;
const MAX_SCALE = 4;

export interface GraphViewOptions {
  /** Visible-node budget per layout. */
  budget?: number;
  /** Inline outputs get a fixed height; the sidebar lets CSS size the viewport. */
  inline?: boolean;
}

export class GraphView {
  readonly node: HTMLElement;
  private _graph: GraphMessage | null = null;
  private _visible: VisibleGraph | null = null;
  private _overrides = new Map<string, boolean>();
  private _selected: string | null = null; // protocol node id, or a group's visible id
  private _hovered: string | null = null;
  private _matches: string[] = []; // visible ids matching the search, in draw order
  private _matchCursor = -1;
  private _layoutToken = 0;
  private _scale = 1;
  private _tx = 0;
  private _ty = 0;
  private _fitPending = true;
  private readonly _budget: number;

  private readonly _search: HTMLInputElement;
  private readonly _searchCount: HTMLElement;
  private readonly _message: HTMLElement;
  private readonly _viewport: HTMLElement;
  private readonly _canvas: HTMLElement;
  private readonly _details: NodeDetails;

  constructor(options: GraphViewOptions = {}) {
    this._budget = options.budget ?? DEFAULT_NODE_BUDGET;
    this._search = h('input', {
      class: 'tg-graph-search jp-mod-styled',
      type: 'search',
      placeholder: 'Search nodes…',
      'aria-label': 'Search nodes by name'
    });
    this._searchCount = h('span', { class: 'tg-search-count' });
    const button = (label: string, title: string, action: () => void): HTMLButtonElement => {
      const b = h('button', { class: 'tg-icon-button', title, 'aria-label': title }, label);
      b.addEventListener('click', action);
      return b;
    };
    const toolbar = h(
      'div',
      { class: 'tg-graph-toolbar' },
      this._search,
      this._searchCount,
      button('−', 'Zoom out', () => this._zoomBy(1 / 1.25)),
      button('+', 'Zoom in', () => this._zoomBy(1.25)),
      button('⤢', 'Fit graph', () => this.fit())
    );
    this._message = h('div', { class: 'tg-graph-message' });
    this._canvas = h('div', { class: 'tg-graph-canvas' });
    this._viewport = h('div', { class: 'tg-graph-viewport', tabindex: 0 }, this._canvas);
    this._details = new NodeDetails({ onToggleGroup: id => this._toggleGroup(id) });
    this.node = h(
      'div',
      { class: 'tg-graph' + (options.inline ? ' tg-graph-inline' : '') },
      toolbar,
      this._message,
      this._viewport,
      this._details.node
    );
    this._search.addEventListener('input', () => this._runSearch());
    this._search.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this._nextMatch();
      }
    });
    this._installPanZoom();
    this._viewport.addEventListener('click', event => this._onClick(event));
    this._showEmpty();
  }

  get graph(): GraphMessage | null {
    return this._graph;
  }

  /** Show a new graph. The same graph id keeps the user's expand/collapse choices and selection. */
  setGraph(graph: GraphMessage | null): void {
    if (graph === this._graph) {
      return;
    }
    const sameGraph = graph !== null && this._graph !== null && graph.graph_id === this._graph.graph_id;
    this._graph = graph;
    if (!sameGraph) {
      this._overrides = new Map();
      this._selected = null;
      this._fitPending = true;
    }
    void this._relayout();
  }

  /** Highlight the node a hook timeline entry refers to (null clears). */
  hoverNode(nodeId: string | null): void {
    this._hovered = nodeId;
    this._applyClasses();
  }

  /** Select a node by protocol id, as a click on it would. */
  selectNode(nodeId: string | null): void {
    this._selected = nodeId;
    this._applyClasses();
    this._renderDetails();
  }

  fit(): void {
    const svg = this._canvas.querySelector('svg');
    if (!svg) {
      return;
    }
    const width = svg.width.baseVal.value || 1;
    const height = svg.height.baseVal.value || 1;
    const box = this._viewport.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) {
      this._fitPending = true; // not attached/visible yet; fit at the next render
      return;
    }
    this._scale = clamp(Math.min(box.width / width, box.height / height, 1.5) * 0.95);
    this._tx = (box.width - width * this._scale) / 2;
    this._ty = Math.max(4, (box.height - height * this._scale) / 2);
    this._applyTransform();
    this._fitPending = false;
  }

  private _showEmpty(): void {
    clear(this._canvas);
    this._canvas.append(
      h('div', { class: 'tg-empty' }, 'No autograd graph yet. Run a cell that computes a tensor with requires_grad=True.')
    );
  }

  private async _relayout(): Promise<void> {
    const token = ++this._layoutToken;
    const graph = this._graph;
    if (!graph) {
      this._visible = null;
      this._message.textContent = '';
      this._showEmpty();
      this._renderDetails();
      return;
    }
    const visible = buildVisibleGraph(graph, this._overrides, this._budget);
    this._setMessages(graph, visible);
    this.node.classList.add('tg-layout-running');
    let svg: string;
    try {
      svg = await layoutClient.layout(toDot(visible));
    } catch (error) {
      if (token === this._layoutToken) {
        this.node.classList.remove('tg-layout-running');
        this._message.append(h('div', { class: 'tg-error' }, `Layout failed: ${(error as Error).message}`));
      }
      return;
    }
    if (token !== this._layoutToken) {
      return; // a newer graph arrived while this one was laid out
    }
    this.node.classList.remove('tg-layout-running');
    this._visible = visible;
    this._insertSvg(svg);
    this._runSearch(false);
    this._applyClasses();
    this._renderDetails();
    if (this._fitPending) {
      this.fit();
    }
  }

  private _setMessages(graph: GraphMessage, visible: VisibleGraph): void {
    clear(this._message);
    const lines: string[] = [];
    if (graph.truncated) {
      lines.push(`The kernel sent ${formatCount(graph.nodes.length)} of ${formatCount(graph.total_nodes)} nodes.`);
    }
    if (visible.hiddenByBudget > 0) {
      lines.push(
        `Showing the ${formatCount(visible.nodes.length)} nodes nearest the output; ` +
          `${formatCount(visible.hiddenByBudget)} more are hidden to keep layout fast. ` +
          'Collapse groups or search to find a node.'
      );
    }
    for (const line of lines) {
      this._message.append(h('div', { class: 'tg-warning' }, line));
    }
  }

  private _insertSvg(markup: string): void {
    const doc = new DOMParser().parseFromString(markup, 'image/svg+xml');
    const svg = doc.documentElement as unknown as SVGSVGElement;
    // Graphviz sizes in points; draw one layout unit as one CSS pixel and zoom with a transform.
    const viewBox = svg.viewBox?.baseVal;
    if (viewBox && viewBox.width) {
      svg.setAttribute('width', String(viewBox.width));
      svg.setAttribute('height', String(viewBox.height));
    }
    // Graphviz's <title>s would show internal DOT names as native tooltips.
    svg.querySelectorAll('title').forEach(title => title.remove());
    clear(this._canvas);
    this._canvas.append(document.importNode(svg, true));
    this._applyTransform();
  }

  private _visibleIndex(visibleId: string): number {
    return this._visible ? this._visible.nodes.findIndex(n => n.id === visibleId) : -1;
  }

  private _domNode(visibleId: string): SVGGElement | null {
    const index = this._visibleIndex(visibleId);
    return index < 0 ? null : (this._canvas.querySelector(`#${nodeDomId(index)}`) as SVGGElement | null);
  }

  private _representative(nodeId: string | null): string | null {
    if (nodeId === null || !this._visible) {
      return null;
    }
    return this._visible.representative.get(nodeId) ?? (this._visibleIndex(nodeId) >= 0 ? nodeId : null);
  }

  /** Re-apply selection, path, hover and search classes to the drawn SVG. */
  private _applyClasses(): void {
    const visible = this._visible;
    if (!visible) {
      return;
    }
    this._canvas.querySelectorAll('.tg-selected, .tg-on-path, .tg-hovered, .tg-match').forEach(el => {
      el.classList.remove('tg-selected', 'tg-on-path', 'tg-hovered', 'tg-match');
    });
    const selected = this._representative(this._selected);
    this.node.classList.toggle('tg-has-selection', selected !== null);
    if (selected) {
      const paths = pathsThrough(visible.edges, selected);
      for (const id of paths.nodes) {
        this._domNode(id)?.classList.add('tg-on-path');
      }
      for (const index of paths.edges) {
        this._canvas.querySelector(`#${edgeDomId(index)}`)?.classList.add('tg-on-path');
      }
      this._domNode(selected)?.classList.add('tg-selected');
    }
    for (const id of this._matches) {
      this._domNode(id)?.classList.add('tg-match');
    }
    const hovered = this._representative(this._hovered);
    if (hovered) {
      this._domNode(hovered)?.classList.add('tg-hovered');
    }
  }

  private _renderDetails(): void {
    const graph = this._graph;
    if (!graph || this._selected === null) {
      this._details.show(null, graph);
      return;
    }
    this._details.show(this._selected, graph);
  }

  private _onClick(event: MouseEvent): void {
    if (this._dragged) {
      return; // the end of a pan, not a click
    }
    const target = (event.target as Element).closest('g.node');
    if (!target || !this._visible) {
      return;
    }
    const index = Number(target.id.replace('tg-v', ''));
    const visible = this._visible.nodes[index];
    if (!visible) {
      return;
    }
    if (visible.group) {
      this._toggleGroup(visible.group.id);
      return;
    }
    this.selectNode(visible.id);
  }

  private _toggleGroup(groupId: string): void {
    if (!this._graph) {
      return;
    }
    this._overrides = toggleGroup(this._graph, this._overrides, groupId);
    void this._relayout();
  }

  private _runSearch(center = true): void {
    const query = this._search.value.trim().toLowerCase();
    const graph = this._graph;
    this._matches = [];
    this._matchCursor = -1;
    if (query && graph && this._visible) {
      const hits = new Set<string>();
      for (const node of graph.nodes) {
        if (node.name.toLowerCase().includes(query) || node.id.toLowerCase() === query) {
          const rep = this._visible.representative.get(node.id);
          if (rep && this._visibleIndex(rep) >= 0) {
            hits.add(rep);
          }
        }
      }
      this._matches = this._visible.nodes.filter(n => hits.has(n.id)).map(n => n.id);
      this._searchCount.textContent = `${this._matches.length} match${this._matches.length === 1 ? '' : 'es'}`;
    } else {
      this._searchCount.textContent = '';
    }
    this._applyClasses();
    if (center && this._matches.length) {
      this._nextMatch();
    }
  }

  private _nextMatch(): void {
    if (!this._matches.length) {
      return;
    }
    this._matchCursor = (this._matchCursor + 1) % this._matches.length;
    this._centerOn(this._matches[this._matchCursor]);
  }

  private _centerOn(visibleId: string): void {
    const element = this._domNode(visibleId);
    if (!element) {
      return;
    }
    const box = element.getBBox();
    const svg = element.ownerSVGElement;
    const view = this._viewport.getBoundingClientRect();
    if (!svg || view.width === 0) {
      return;
    }
    // Graphviz puts the graph in a group translated by (4, height - 4); include it via getCTM.
    const ctm = (element as SVGGraphicsElement).getCTM();
    const svgCtm = svg.getCTM();
    const local = ctm && svgCtm ? svgCtm.inverse().multiply(ctm) : null;
    const cx = (local ? local.e : 0) + box.x + box.width / 2;
    const cy = (local ? local.f : 0) + box.y + box.height / 2;
    this._tx = view.width / 2 - cx * this._scale;
    this._ty = view.height / 2 - cy * this._scale;
    this._applyTransform();
  }

  private _dragged = false;

  private _installPanZoom(): void {
    let origin: { x: number; y: number; tx: number; ty: number } | null = null;
    this._viewport.addEventListener('pointerdown', event => {
      if (event.button !== 0) {
        return;
      }
      origin = { x: event.clientX, y: event.clientY, tx: this._tx, ty: this._ty };
      this._dragged = false;
    });
    this._viewport.addEventListener('pointermove', event => {
      if (!origin) {
        return;
      }
      const dx = event.clientX - origin.x;
      const dy = event.clientY - origin.y;
      if (!this._dragged && Math.hypot(dx, dy) < 4) {
        return;
      }
      if (!this._dragged) {
        this._dragged = true;
        this._viewport.setPointerCapture(event.pointerId);
        this._viewport.classList.add('tg-panning');
      }
      this._tx = origin.tx + dx;
      this._ty = origin.ty + dy;
      this._applyTransform();
    });
    const end = (event: PointerEvent): void => {
      if (origin && this._dragged && this._viewport.hasPointerCapture(event.pointerId)) {
        this._viewport.releasePointerCapture(event.pointerId);
      }
      origin = null;
      this._viewport.classList.remove('tg-panning');
      // The click that ends a drag fires after pointerup; forget the drag once it has been seen.
      setTimeout(() => (this._dragged = false), 0);
    };
    this._viewport.addEventListener('pointerup', end);
    this._viewport.addEventListener('pointercancel', end);
    this._viewport.addEventListener(
      'wheel',
      event => {
        event.preventDefault();
        const rect = this._viewport.getBoundingClientRect();
        this._zoomBy(Math.exp(-event.deltaY * 0.0015), event.clientX - rect.left, event.clientY - rect.top);
      },
      { passive: false }
    );
  }

  private _zoomBy(factor: number, px?: number, py?: number): void {
    const rect = this._viewport.getBoundingClientRect();
    const x = px ?? rect.width / 2;
    const y = py ?? rect.height / 2;
    const scale = clamp(this._scale * factor);
    // Keep the point under the cursor fixed.
    this._tx = x - ((x - this._tx) * scale) / this._scale;
    this._ty = y - ((y - this._ty) * scale) / this._scale;
    this._scale = scale;
    this._applyTransform();
  }

  private _applyTransform(): void {
    this._canvas.style.transform = `translate(${this._tx}px, ${this._ty}px) scale(${this._scale})`;
  }

  /** Call when the view becomes visible or changes size. */
  onResize(): void {
    if (this._fitPending) {
      this.fit();
    }
  }
}

function clamp(scale: number): number {
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale));
}
