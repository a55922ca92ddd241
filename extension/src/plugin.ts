/**
 * The JupyterLab plugin: adds the Autograd Inspector to the right sidebar and points it at the active
 * notebook's kernel, keeping one KernelConnection (and store) per kernel.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';
import { inspectorIcon } from './icon';
import { InspectorPanel } from './inspectorPanel';
import { KernelConnection } from './kernelConnection';

const COMMAND_OPEN = 'tracegrad:open-inspector';

/** One connection per kernel, created on first use and dropped when the kernel goes away. */
class ConnectionRegistry {
  private _connections = new Map<string, KernelConnection>();

  get(kernel: Kernel.IKernelConnection): KernelConnection {
    let connection = this._connections.get(kernel.id);
    if (!connection) {
      connection = new KernelConnection(kernel);
      this._connections.set(kernel.id, connection);
      kernel.disposed.connect(() => {
        connection!.dispose();
        this._connections.delete(kernel.id);
      });
    }
    return connection;
  }
}

/** Scroll to and select the cell whose model id is `cellId`. */
function jumpToCell(panel: NotebookPanel | null, cellId: string): boolean {
  if (!panel) {
    return false;
  }
  const notebook = panel.content;
  const index = notebook.widgets.findIndex(cell => cell.model.id === cellId);
  if (index < 0) {
    return false;
  }
  notebook.deselectAll();
  notebook.activeCellIndex = index;
  void notebook.scrollToItem(index, 'center');
  return true;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'tracegrad-inspector:sidebar',
  description: 'Autograd Inspector sidebar: the live autograd graph, hook timeline and saved tensors.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILayoutRestorer],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, restorer: ILayoutRestorer | null) => {
    const registry = new ConnectionRegistry();
    const panel = new InspectorPanel({ onJumpToCell: cellId => jumpToCell(tracker.currentWidget, cellId) });
    panel.title.icon = inspectorIcon;
    app.shell.add(panel, 'right', { rank: 600 });
    restorer?.add(panel, panel.id);

    let followed: NotebookPanel | null = null;
    const show = (): void => {
      const kernel = followed?.sessionContext.session?.kernel ?? null;
      panel.setSource(kernel ? registry.get(kernel) : null, followed?.title.label ?? '');
    };
    const follow = (notebook: NotebookPanel | null): void => {
      if (followed) {
        followed.sessionContext.kernelChanged.disconnect(show);
        followed.sessionContext.statusChanged.disconnect(show);
        followed.title.changed.disconnect(show);
      }
      followed = notebook;
      if (notebook) {
        notebook.sessionContext.kernelChanged.connect(show);
        // Status only matters here until a kernel exists (the first 'idle' after start-up).
        notebook.sessionContext.statusChanged.connect(show);
        notebook.title.changed.connect(show);
        void notebook.sessionContext.ready.then(show);
      }
      show();
    };
    tracker.currentChanged.connect((_, notebook) => follow(notebook));
    follow(tracker.currentWidget);

    app.commands.addCommand(COMMAND_OPEN, {
      label: 'Open Autograd Inspector',
      caption: 'Show the tracegrad Autograd Inspector sidebar',
      execute: () => app.shell.activateById(panel.id)
    });
  }
};

export default plugin;
