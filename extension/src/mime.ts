/**
 * MIME renderers for the magics' inline outputs (application/vnd.tracegrad.{graph,hooks,saved}+json).
 * They reuse the sidebar's views, so an inline %autograd_graph is as interactive as the sidebar.
 * Outputs keep their image/svg+xml or text fallbacks for frontends without this extension.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import { h } from './dom';
import { GraphView } from './graphView';
import { HooksView } from './hooksView';
import {
  GraphMessage,
  HooksMessage,
  KernelMessage,
  MIME_GRAPH,
  MIME_HOOKS,
  MIME_SAVED,
  SavedMessage,
  flattenBatch,
  parseMessage
} from './protocol';
import { savedRowsOf } from './savedRows';
import { SavedView } from './savedView';

/** Base class: parse the payload, show a one-line error instead of throwing on bad data. */
abstract class ProtocolRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly _mimeType: string) {
    super();
    this.addClass('tg-mime');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const parsed = parseMessage(model.data[this._mimeType]);
    this.node.textContent = '';
    if (!parsed.ok) {
      this.node.append(h('div', { class: 'tg-error' }, `tracegrad: cannot show this output (${parsed.reason})`));
      return;
    }
    const { messages } = flattenBatch(parsed.message);
    this.showMessages(messages);
  }

  protected abstract showMessages(messages: KernelMessage[]): void;
}

class GraphRenderer extends ProtocolRenderer {
  private _view = new GraphView({ inline: true });

  constructor() {
    super(MIME_GRAPH);
    this.addClass('tg-mime-graph');
  }

  protected showMessages(messages: KernelMessage[]): void {
    const graph = messages.find((m): m is GraphMessage => m.type === 'graph') ?? null;
    this.node.append(this._view.node);
    this._view.setGraph(graph);
  }

  protected onAfterAttach(): void {
    requestAnimationFrame(() => this._view.onResize());
  }
}

class HooksRenderer extends ProtocolRenderer {
  private _view = new HooksView();

  constructor() {
    super(MIME_HOOKS);
    this.addClass('tg-mime-hooks');
  }

  protected showMessages(messages: KernelMessage[]): void {
    this.node.append(this._view.node);
    this._view.setRuns(messages.filter((m): m is HooksMessage => m.type === 'hooks_fired'));
  }
}

class SavedRenderer extends ProtocolRenderer {
  private _view = new SavedView();

  constructor() {
    super(MIME_SAVED);
    this.addClass('tg-mime-saved');
  }

  protected showMessages(messages: KernelMessage[]): void {
    const saved = messages.find((m): m is SavedMessage => m.type === 'saved_tensors') ?? null;
    this.node.append(this._view.node);
    this._view.setData(savedRowsOf(saved, null), saved?.memory ?? null);
  }
}

const factory = (mimeType: string, create: () => IRenderMime.IRenderer): IRenderMime.IRendererFactory => ({
  safe: true, // renders data only, never executes code from the output
  mimeTypes: [mimeType],
  defaultRank: 0, // ahead of the image/svg+xml and text fallbacks in the same bundle
  createRenderer: () => create()
});

const extensions: IRenderMime.IExtension[] = [
  {
    id: 'tracegrad-inspector:graph-renderer',
    rendererFactory: factory(MIME_GRAPH, () => new GraphRenderer()),
    rank: 0,
    dataType: 'json'
  },
  {
    id: 'tracegrad-inspector:hooks-renderer',
    rendererFactory: factory(MIME_HOOKS, () => new HooksRenderer()),
    rank: 0,
    dataType: 'json'
  },
  {
    id: 'tracegrad-inspector:saved-renderer',
    rendererFactory: factory(MIME_SAVED, () => new SavedRenderer()),
    rank: 0,
    dataType: 'json'
  }
];

export default extensions;
