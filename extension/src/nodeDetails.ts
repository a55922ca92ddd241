/** The panel under the graph describing the selected node: its saved tensors, hooks and source. */

import { clear, h } from './dom';
import { formatBytes, formatShape } from './format';
import { GraphMessage, GraphNode } from './protocol';

export interface NodeDetailsOptions {
  onToggleGroup: (groupId: string) => void;
}

export class NodeDetails {
  readonly node: HTMLElement = h('div', { class: 'tg-details' });

  constructor(private readonly _options: NodeDetailsOptions) {}

  show(nodeId: string | null, graph: GraphMessage | null): void {
    clear(this.node);
    const node = nodeId && graph ? graph.nodes.find(n => n.id === nodeId) : undefined;
    this.node.classList.toggle('tg-hidden', !node);
    if (!node || !graph) {
      return;
    }
    this.node.append(
      h(
        'div',
        { class: 'tg-details-title' },
        h('strong', { class: 'tg-details-name' }, node.name),
        h('span', { class: 'tg-muted' }, ` ${node.id}${node.seq !== null ? ` · seq ${node.seq}` : ''}`)
      )
    );
    if (node.source) {
      const where = `${node.source.execution_count ? `cell [${node.source.execution_count}]` : node.source.file}:${node.source.line}`;
      this.node.append(
        h('div', { class: 'tg-details-source' }, h('span', { class: 'tg-muted' }, where + '  '), h('code', {}, node.source.code ?? ''))
      );
    }
    if (node.leaf) {
      const grad = node.leaf.grad ? `grad ${formatShape(node.leaf.grad.shape)}` : 'no grad yet';
      this.node.append(
        h('div', {}, `Leaf ${node.leaf.name ?? ''} ${formatShape(node.leaf.shape)} ${node.leaf.dtype} · ${grad}`)
      );
    }
    this.node.append(this._saved(node), this._hooks(node));
    if (node.group) {
      const group = graph.groups.find(g => g.id === node.group);
      if (group) {
        const button = h('button', { class: 'tg-link-button' }, `Collapse “${group.label}”`);
        button.addEventListener('click', () => this._options.onToggleGroup(group.id));
        this.node.append(h('div', {}, 'In group ', button));
      }
    }
  }

  private _saved(node: GraphNode): HTMLElement {
    if (!node.saved.length) {
      return h('div', { class: 'tg-muted' }, 'No saved tensors.');
    }
    const list = h('ul', { class: 'tg-details-saved' });
    for (const tensor of node.saved) {
      const versions =
        tensor.version_saved !== null ? ` · v${tensor.version_saved}→v${tensor.version_now ?? '?'}` : '';
      list.append(
        h(
          'li',
          { class: tensor.error ? 'tg-error' : '' },
          h('code', {}, tensor.name),
          ` ${formatShape(tensor.shape)} ${tensor.dtype} · ${formatBytes(tensor.bytes)} · ${tensor.state}${versions}`,
          tensor.error ? h('div', { class: 'tg-error-text' }, tensor.error) : null
        )
      );
    }
    return h('div', {}, h('div', { class: 'tg-details-heading' }, 'Saved tensors'), list);
  }

  private _hooks(node: GraphNode): HTMLElement {
    if (!node.hooks.length) {
      return h('div', { class: 'tg-muted' }, 'No hooks.');
    }
    const list = h('ul', { class: 'tg-details-hooks' });
    for (const hook of node.hooks) {
      list.append(h('li', {}, h('span', { class: `tg-hook-kind tg-hook-kind-${hook.kind}` }, hook.kind), ' ', hook.name));
    }
    return h('div', {}, h('div', { class: 'tg-details-heading' }, 'Hooks'), list);
  }
}
