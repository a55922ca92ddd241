/**
 * The right-sidebar "Autograd Inspector": a header (kernel, connection, live/paused, current cell and a
 * link to the cell that produced what is shown) over three sections: Graph, Hooks, Saved tensors.
 *
 * It renders whichever store it is given; the plugin swaps stores as the active notebook or its kernel
 * changes (one store per kernel).
 */

import { Widget } from '@lumino/widgets';
import { clear, h } from './dom';
import { GraphView } from './graphView';
import { HooksView } from './hooksView';
import { KernelConnection } from './kernelConnection';
import { savedRowsOf } from './savedRows';
import { SavedView } from './savedView';
import { InspectorState } from './store';

export const LOAD_HINT = 'Run `%load_ext tracegrad` (or use the Python 3 (tracegrad) kernel)';

export interface InspectorPanelOptions {
  /** Scroll to and select the cell with this model id in the current notebook. */
  onJumpToCell: (cellId: string) => boolean;
}

type SectionName = 'graph' | 'hooks' | 'saved';

export class InspectorPanel extends Widget {
  private _connection: KernelConnection | null = null;
  private _unsubscribe: (() => void) | null = null;
  private _notebookLabel = '';
  private _lastRevision = -1;

  private readonly _kernelLine: HTMLElement;
  private readonly _liveButton: HTMLButtonElement;
  private readonly _cellLine: HTMLElement;
  private readonly _cellStatus: HTMLElement;
  private readonly _cellLink: HTMLButtonElement;
  private readonly _notice: HTMLElement;
  private readonly _graphView: GraphView;
  private readonly _hooksView: HooksView;
  private readonly _savedView: SavedView;

  constructor(private readonly _options: InspectorPanelOptions) {
    super();
    this.id = 'tracegrad-inspector';
    this.addClass('tg-inspector');
    this.title.caption = 'Autograd Inspector';

    this._kernelLine = h('div', { class: 'tg-kernel-line' });
    this._liveButton = h('button', { class: 'tg-live-toggle', 'aria-pressed': 'true' });
    this._liveButton.addEventListener('click', () => this._toggleLive());
    // Persistent elements, updated in place: re-creating them on every status change would swallow clicks.
    this._cellStatus = h('span', { class: 'tg-cell-status' });
    this._cellLink = h(
      'button',
      { class: 'tg-link-button tg-cell-link', title: 'Scroll to and select the cell that produced what is shown' },
      'Go to the cell shown ↗'
    );
    this._cellLink.addEventListener('click', () => {
      const cellId = this._cellLink.dataset.cellId;
      if (cellId && !this._options.onJumpToCell(cellId)) {
        this._cellStatus.textContent = 'The cell shown is no longer in this notebook.';
      }
    });
    this._cellLine = h('div', { class: 'tg-cell-line' }, this._cellStatus, this._cellLink);
    this._notice = h('div', { class: 'tg-notice' });

    this._graphView = new GraphView();
    this._hooksView = new HooksView({
      onHoverNode: id => this._graphView.hoverNode(id),
      onSelectNode: id => this._graphView.selectNode(id)
    });
    this._savedView = new SavedView({
      onHoverNode: id => this._graphView.hoverNode(id),
      onSelectNode: id => this._graphView.selectNode(id)
    });

    const header = h(
      'div',
      { class: 'tg-header' },
      h('div', { class: 'tg-title-row' }, h('h2', { class: 'tg-title' }, 'Autograd Inspector'), this._liveButton),
      this._kernelLine,
      this._cellLine,
      this._notice
    );
    this.node.append(
      header,
      this._section('graph', 'Graph', this._graphView.node),
      this._section('hooks', 'Hooks', this._hooksView.node),
      this._section('saved', 'Saved tensors', this._savedView.node)
    );
    this._render(null);
  }

  /** Show another kernel's store (or none). */
  setSource(connection: KernelConnection | null, notebookLabel: string): void {
    this._notebookLabel = notebookLabel;
    if (connection !== this._connection) {
      this._unsubscribe?.();
      this._unsubscribe = null;
      this._connection = connection;
      this._lastRevision = -1;
      if (connection) {
        this._unsubscribe = connection.store.subscribe(state => this._render(state));
      }
    }
    this._render(connection ? connection.store.state : null);
  }

  protected onAfterShow(): void {
    this._graphView.onResize();
  }

  protected onResize(): void {
    this._graphView.onResize();
  }

  dispose(): void {
    this._unsubscribe?.();
    super.dispose();
  }

  private _section(name: SectionName, title: string, body: HTMLElement): HTMLElement {
    const toggle = h('button', { class: 'tg-section-toggle', 'aria-expanded': 'true' }, title);
    const section = h('section', { class: `tg-section tg-section-${name}` }, h('h3', { class: 'tg-section-title' }, toggle), body);
    toggle.addEventListener('click', () => {
      const collapsed = section.classList.toggle('tg-collapsed');
      toggle.setAttribute('aria-expanded', String(!collapsed));
      if (!collapsed && name === 'graph') {
        requestAnimationFrame(() => this._graphView.onResize());
      }
    });
    return section;
  }

  private _toggleLive(): void {
    const connection = this._connection;
    if (connection && connection.store.state.status === 'connected') {
      connection.setLive(!connection.store.state.live);
    }
  }

  private _render(state: InspectorState | null): void {
    this._renderHeader(state);
    if (state && state.revision === this._lastRevision) {
      return; // header-only change (status, live); the sections are up to date
    }
    this._lastRevision = state ? state.revision : -1;
    this._graphView.setGraph(state?.graph ?? null);
    this._hooksView.setRuns(state?.hooks ?? []);
    this._savedView.setData(savedRowsOf(state?.saved ?? null, state?.graph ?? null), state?.memory ?? null);
  }

  private _renderHeader(state: InspectorState | null): void {
    const status = state?.status ?? 'no-kernel';
    this.node.dataset.status = status;
    const statusText: Record<string, string> = {
      'no-kernel': 'No running kernel',
      connecting: 'Connecting…',
      connected: `tracegrad ${state?.hello?.tracegrad_version ?? ''}`,
      unavailable: 'tracegrad is not loaded in this kernel',
      incompatible: 'Incompatible kernel'
    };
    clear(this._kernelLine);
    this._kernelLine.append(
      h('span', { class: 'tg-notebook-name' }, this._notebookLabel || 'No notebook'),
      h('span', { class: `tg-status tg-status-${status}` }, statusText[status])
    );

    const live = state?.live ?? false;
    const enabled = status === 'connected';
    this._liveButton.disabled = !enabled;
    this._liveButton.setAttribute('aria-pressed', String(enabled && live));
    this._liveButton.textContent = enabled && live ? '● Live' : '❚❚ Paused';
    this._liveButton.title = enabled
      ? live
        ? 'Updates as cells run. Click to pause.'
        : 'Paused. Click to resume live updates.'
      : 'Not connected';

    clear(this._notice);
    if (status === 'unavailable') {
      this._notice.append(h('div', { class: 'tg-load-hint' }, LOAD_HINT, ' to see the autograd graph here.'));
    } else if (state?.notice) {
      this._notice.append(h('div', { class: 'tg-warning' }, state.notice));
    }
    if (state?.errors.length) {
      this._notice.append(h('div', { class: 'tg-error', title: state.errors.join('\n') }, state.errors[state.errors.length - 1]));
    }

    const cellLabel = (count: number | null): string => (count === null ? 'cell' : `cell [${count}]`);
    let text = '';
    let cls = 'tg-cell-status';
    if (state?.runningCell) {
      text = `Running ${cellLabel(state.runningCell.executionCount)}…`;
      cls += ' tg-running';
    } else if (state?.lastFinishedCell) {
      const c = state.lastFinishedCell;
      const time = c.durationMs !== null ? ` in ${Math.round(c.durationMs)} ms` : '';
      text = `Last ${cellLabel(c.executionCount)} ${c.ok ? 'finished' : 'failed'}${time}`;
      cls += c.ok ? ' tg-ok' : ' tg-error';
    }
    this._cellStatus.textContent = text;
    this._cellStatus.className = cls;
    const shownCell = state ? (state.graph?.cell_id ?? state.hooks[0]?.cell_id ?? state.saved?.cell_id ?? null) : null;
    this._cellLink.classList.toggle('tg-hidden', !shownCell);
    if (shownCell) {
      this._cellLink.dataset.cellId = shownCell;
    } else {
      delete this._cellLink.dataset.cellId;
    }
  }
}
