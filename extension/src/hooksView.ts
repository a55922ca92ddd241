/**
 * The hook timeline: the events of each backward call in firing order, with sequence numbers and kinds.
 * Hovering an entry reports its node so the graph can highlight it.
 */

import { clear, h } from './dom';
import { formatShape } from './format';
import { HookEvent, HooksMessage } from './protocol';

export interface HooksViewOptions {
  onHoverNode?: (nodeId: string | null) => void;
  onSelectNode?: (nodeId: string) => void;
}

export class HooksView {
  readonly node: HTMLElement;
  private readonly _list: HTMLElement;
  private readonly _hooksOnly: HTMLInputElement;
  private _runs: HooksMessage[] = [];

  constructor(private readonly _options: HooksViewOptions = {}) {
    this._hooksOnly = h('input', { type: 'checkbox', class: 'tg-hooks-only' });
    this._hooksOnly.addEventListener('change', () => this._render());
    this._list = h('div', { class: 'tg-hooks-list' });
    this.node = h(
      'div',
      { class: 'tg-hooks' },
      h('label', { class: 'tg-hooks-filter' }, this._hooksOnly, ' hooks only (hide node executions and saved-tensor events)'),
      this._list
    );
    this._list.addEventListener('mouseover', event => this._hover(event));
    this._list.addEventListener('mouseleave', () => this._options.onHoverNode?.(null));
    this._list.addEventListener('click', event => {
      const node = (event.target as Element).closest<HTMLElement>('[data-node]')?.dataset.node;
      if (node) {
        this._options.onSelectNode?.(node);
      }
    });
    this._render();
  }

  setRuns(runs: HooksMessage[]): void {
    if (runs === this._runs) {
      return;
    }
    this._runs = runs;
    this._render();
  }

  private _hover(event: MouseEvent): void {
    const entry = (event.target as Element).closest<HTMLElement>('.tg-hook-entry');
    this._options.onHoverNode?.(entry?.dataset.node ?? null);
  }

  private _render(): void {
    clear(this._list);
    if (!this._runs.length) {
      this._list.append(h('div', { class: 'tg-empty' }, 'No backward pass yet. Hooks appear here in firing order.'));
      return;
    }
    const hooksOnly = this._hooksOnly.checked;
    this._runs.forEach((run, index) => {
      const events = [...run.events].sort((a, b) => a.seq - b.seq).filter(e => !hooksOnly || e.event === 'hook');
      const duration = run.duration_us ? ` · ${(run.duration_us / 1000).toFixed(2)} ms` : '';
      const header = h(
        'div',
        { class: 'tg-hooks-run-header' },
        `${run.call === 'grad' ? 'autograd.grad()' : 'backward()'} #${index + 1} · ${run.events.length} events${duration}` +
          (run.truncated ? ' · truncated' : '')
      );
      const list = h('ol', { class: 'tg-hooks-run' });
      for (const event of events) {
        list.append(this._entry(event));
      }
      this._list.append(h('section', { class: 'tg-hooks-section' }, header, list));
    });
  }

  private _entry(event: HookEvent): HTMLElement {
    const label = event.event === 'hook' ? event.kind ?? 'hook' : event.event.replace('_', ' ');
    const tensor = event.tensor ? formatShape(event.tensor.shape) : '';
    return h(
      'li',
      {
        class: `tg-hook-entry tg-event-${event.event}`,
        'data-node': event.node ?? undefined,
        'data-seq': event.seq
      },
      h('span', { class: 'tg-hook-seq' }, `#${event.seq}`),
      h('span', { class: `tg-hook-kind tg-hook-kind-${event.kind ?? event.event}` }, label),
      h('span', { class: 'tg-hook-node' }, event.node_name ?? event.module ?? ''),
      event.hook ? h('span', { class: 'tg-hook-name' }, event.hook) : null,
      tensor ? h('span', { class: 'tg-muted' }, tensor) : null
    );
  }
}
