/**
 * End to end: a real JupyterLab and kernel, the tracegrad IPython extension, and the Autograd Inspector.
 * Screenshots for the README go to docs/images/.
 */
import { expect, galata, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import * as path from 'path';

const IMAGES = path.resolve(__dirname, '../../../docs/images');
const NOTEBOOK = 'inspector.ipynb';

/** A small network: Linear → ReLU → square → sum, with one hook on a leaf and one on an intermediate. */
const FORWARD = [
  'import tracegrad as torch',
  'torch.manual_seed(0)',
  'lin = torch.nn.Linear(4, 3)',
  'x = torch.randn(2, 4)',
  'fired = []',
  'h_w = lin.weight.register_hook(lambda g: fired.append("weight"))',
  'y = torch.relu(lin(x))',
  'h_y = y.register_hook(lambda g: fired.append("y"))',
  'loss = (y * y).sum()'
].join('\n');

const CELLS = [
  '%load_ext tracegrad',
  '%tracegrad live on',
  FORWARD,
  'loss.backward()\nfired',
  '%autograd_graph loss',
  // A saved tensor modified in place after it was saved: backward would fail.
  'a = torch.ones(3, requires_grad=True) * 2\nb = a.sin()\na.mul_(3)'
];

function notebookJson(cells: string[]): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' },
      language_info: { name: 'python' }
    },
    cells: cells.map((source, i) => ({
      id: `cell-${i}`,
      cell_type: 'code',
      metadata: {},
      execution_count: null,
      outputs: [],
      source
    }))
  });
}

/** Make the right sidebar wide enough to read (its default width is for narrow panels). */
async function widenRightSidebar(page: IJupyterLabPageFixture, fraction = 0.42): Promise<void> {
  await page.evaluate(f => {
    const split = (window as any).jupyterapp.shell._hsplitPanel;
    if (split && split.widgets.length === 3) {
      const left = split.widgets[0].isVisible ? 0.15 : 0;
      split.setRelativeSizes([left, 1 - left - f, f]);
    }
  }, fraction);
}

async function openInspector(page: IJupyterLabPageFixture): Promise<void> {
  await page.sidebar.openTab('tracegrad-inspector');
  await expect(page.locator('#tracegrad-inspector')).toBeVisible();
  await widenRightSidebar(page);
}

test.describe.serial('Autograd Inspector', () => {
  test.use({ autoGoto: true });

  test('follows the kernel: hint, then graph, hook order and saved tensors', async ({ page, tmpPath }) => {
    const file = `${tmpPath}/${NOTEBOOK}`;
    await page.contents.uploadContent(notebookJson(CELLS), 'text', file);
    await page.notebook.openByPath(file);
    await page.notebook.activate(NOTEBOOK);
    await openInspector(page);
    const inspector = page.locator('#tracegrad-inspector');

    // Before %load_ext the kernel has no tracegrad.inspector comm target.
    await expect(inspector.locator('.tg-load-hint')).toContainText('%load_ext tracegrad');

    await page.notebook.runCell(0);
    await expect(inspector.locator('.tg-status-connected')).toBeVisible();
    // Loading the extension prints nothing (no warnings from the comm set-up either).
    expect((await page.notebook.getCellTextOutput(0)) ?? []).toEqual([]);
    await expect(inspector.locator('.tg-live-toggle')).toHaveText(/Paused/);
    await page.notebook.runCell(1);

    // Forward pass: the graph appears with the backward node names.
    await page.notebook.runCell(2);
    await expect(inspector.locator('.tg-live-toggle')).toHaveText(/Live/);
    const nodes = inspector.locator('.tg-graph g.node');
    for (const name of ['SumBackward0', 'MulBackward0', 'ReluBackward0', 'AddmmBackward0', 'TBackward0', 'AccumulateGrad']) {
      await expect(nodes.filter({ hasText: name }).first()).toBeVisible();
    }
    await expect(inspector.locator('.tg-cell-line')).toContainText('Last cell [3] finished');

    // The cell link scrolls to and selects the cell that produced the graph (cell ids = cell model ids).
    const forwardCellId = await page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.content.widgets[2].model.id);
    await expect(inspector.locator('.tg-cell-link')).toHaveAttribute('data-cell-id', forwardCellId);
    await page.notebook.selectCells(0);
    await inspector.locator('.tg-cell-link').click();
    await expect
      .poll(() => page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.content.activeCellIndex))
      .toBe(2);

    // Saved tensors: the rows PyTorch's nodes would save.
    const saved = inspector.locator('.tg-saved-table tbody tr[data-node]:not(.tg-row-error-detail)');
    await expect(saved.filter({ hasText: 'AddmmBackward0' }).filter({ hasText: 'mat1' })).toHaveCount(1);
    // x does not require grad, so (as in PyTorch) addmm saves mat1 for the weight's gradient but not mat2.
    await expect(saved.filter({ hasText: 'AddmmBackward0' }).filter({ hasText: 'mat2' })).toHaveCount(0);
    await expect(saved.filter({ hasText: 'MulBackward0' })).toHaveCount(2);
    await expect(saved.filter({ hasText: 'ReluBackward0' }).filter({ hasText: 'result' })).toHaveCount(1);
    await expect(saved).toHaveCount(4);
    await expect(inspector.locator('.tg-saved-totals')).toContainText('saved tensors');

    // Sorting by bytes (descending by default, then ascending).
    await inspector.locator('.tg-saved-table th[data-key="bytes"]').click();
    await expect(inspector.locator('.tg-saved-table th[data-key="bytes"]')).toHaveAttribute('aria-sort', 'ascending');

    // Clicking a node highlights its paths to the root and to the leaves, and nothing else.
    const onPath = inspector.locator('.tg-graph g.node.tg-on-path');
    await nodes.filter({ hasText: 'TBackward0' }).first().click();
    await expect(onPath).toHaveCount(6); // Sum, Mul, Relu, Addmm, T, the weight's AccumulateGrad
    await expect(onPath.filter({ hasText: 'lin.weight' })).toHaveCount(1);
    await expect(onPath.filter({ hasText: 'lin.bias' })).toHaveCount(0);
    // ... and shows its saved tensors and hooks.
    await nodes.filter({ hasText: 'AddmmBackward0' }).first().click();
    const details = inspector.locator('.tg-details');
    await expect(details.locator('.tg-details-name')).toHaveText('AddmmBackward0');
    await expect(details).toContainText('mat1');
    await expect(onPath).toHaveCount(7);
    await inspector.locator('.tg-section-graph').screenshot({ path: path.join(IMAGES, 'inspector-graph.png') });
    await inspector.locator('.tg-section-saved').screenshot({ path: path.join(IMAGES, 'inspector-saved.png') });

    // Backward: the hook on y (an intermediate) fires before the hook on the weight (a leaf).
    await page.notebook.runCell(3);
    const hookEntries = inspector.locator('.tg-hook-entry.tg-event-hook');
    await expect(hookEntries).toHaveCount(2);
    await expect(hookEntries.nth(0).locator('.tg-hook-node')).toHaveText('ReluBackward0');
    await expect(hookEntries.nth(1).locator('.tg-hook-node')).toContainText('AccumulateGrad');
    const seqs = await hookEntries.evaluateAll(els => els.map(e => Number((e as HTMLElement).dataset.seq)));
    expect(seqs[0]).toBeLessThan(seqs[1]);
    expect(await page.notebook.getCellTextOutput(3)).toEqual([expect.stringContaining("['y', 'weight']")]);

    // Hovering a timeline entry highlights its node in the graph.
    await hookEntries.nth(0).hover();
    await expect(inspector.locator('.tg-graph g.node.tg-hovered')).toHaveCount(1);
    await expect(inspector.locator('.tg-graph g.node.tg-hovered')).toContainText('ReluBackward0');
    await inspector.locator('.tg-section-hooks').screenshot({ path: path.join(IMAGES, 'inspector-hooks.png') });
    await page.sidebar.close('left');
    await widenRightSidebar(page, 0.5);
    await hookEntries.nth(0).hover();
    await page.screenshot({ path: path.join(IMAGES, 'inspector-overview.png') });

    // Pause: the toggle tells the kernel, which confirms.
    await inspector.locator('.tg-live-toggle').click();
    await expect(inspector.locator('.tg-live-toggle')).toHaveText(/Paused/);
    await inspector.locator('.tg-live-toggle').click();
    await expect(inspector.locator('.tg-live-toggle')).toHaveText(/Live/);

    // A version mismatch is shown as the error backward will raise.
    await page.notebook.runCell(5);
    await expect(inspector.locator('.tg-row-error')).toHaveCount(1);
    await expect(inspector.locator('.tg-row-error')).toContainText('SinBackward0');
    await expect(inspector.locator('.tg-row-error-detail')).toContainText('modified by an inplace operation');
    await inspector.locator('.tg-section-saved').screenshot({ path: path.join(IMAGES, 'inspector-saved-error.png') });

    // Inline output of %autograd_graph is rendered by the MIME renderer, interactive.
    await page.sidebar.close('right');
    await page.notebook.runCell(4);
    const output = (await page.notebook.getCellOutputLocator(4))!;
    await expect(output.locator('.tg-mime-graph g.node').filter({ hasText: 'SumBackward0' })).toBeVisible();
    await output.locator('.tg-mime-graph g.node').filter({ hasText: 'TBackward0' }).first().click();
    await expect(output.locator('.tg-details-name')).toHaveText('TBackward0');
    await expect(output.locator('g.node.tg-on-path')).toHaveCount(6);
    await output.screenshot({ path: path.join(IMAGES, 'inline-graph.png') });

    await page.notebook.save();

    // Kernel restart: the panel forgets the old kernel's state at once. (Running a cell right after a
    // restart triggered this way hangs in this headless set-up even without the extension, so the
    // reconnection after a restart is left to the unit-level logic.)
    await page.sidebar.openTab('tracegrad-inspector');
    await page.evaluate(() => (window as any).jupyterapp.shell.currentWidget.sessionContext.restartKernel());
    await expect(inspector.locator('.tg-graph g.node')).toHaveCount(0);
    await expect(inspector.locator('.tg-hook-entry')).toHaveCount(0);
    await expect(inspector.locator('.tg-status-connected')).toHaveCount(0);
  });

  test('a collapsed group is one node and expands on click', async ({ page, tmpPath }) => {
    const cells = [
      '%load_ext tracegrad',
      'import tracegrad as torch\nx = torch.ones(3, requires_grad=True)\nz = x\nfor _ in range(30):\n    z = torch.sin(z) * 2',
      '%autograd_graph z'
    ];
    const file = `${tmpPath}/groups.ipynb`;
    await page.contents.uploadContent(notebookJson(cells), 'text', file);
    await page.notebook.openByPath(file);
    await page.notebook.run();
    const output = (await page.notebook.getCellOutputLocator(2))!;
    const groupNode = output.locator('g.node.tg-node-group');
    await expect(groupNode).toHaveCount(1);
    await expect(groupNode).toContainText('× 29');
    const collapsedCount = await output.locator('g.node').count();
    expect(collapsedCount).toBeLessThan(10);

    await groupNode.click();
    await expect(groupNode).toHaveCount(0);
    await expect(output.locator('g.node')).toHaveCount(collapsedCount - 1 + 58);

    // A member offers to collapse its group again.
    await output.locator('g.node').filter({ hasText: 'SinBackward0' }).nth(3).click();
    await output.locator('.tg-details button', { hasText: 'Collapse' }).click();
    await expect(groupNode).toHaveCount(1);
  });

  test('stays responsive while laying out a 5,000-node graph', async ({ page, tmpPath }) => {
    // A synthetic protocol graph from plain Python (no tracegrad needed): a chain with skip edges.
    const make = [
      'from IPython.display import display',
      'N = 5000',
      'nodes = [{"id": f"n{i}", "name": "AccumulateGrad" if i % 3 == 2 else "MulBackward0", "kind": "function", "seq": i, "saved": [], "hooks": [], "group": None} for i in range(N)]',
      'edges = [{"src": f"n{i-1}", "dst": f"n{i}", "input_nr": 0, "output_nr": 0} for i in range(1, N)]',
      'edges += [{"src": f"n{i-4}", "dst": f"n{i}", "input_nr": 1, "output_nr": 0} for i in range(4, N, 4)]',
      'mem = dict.fromkeys(["saved_count", "saved_bytes", "unique_bytes", "alive_bytes", "freed_count", "unique_storages", "leaf_bytes", "grad_bytes"], 0)',
      'g = {"protocol": "tracegrad", "version": 1, "type": "graph", "graph_id": "big", "cell_id": None, "roots": [{"node": "n0", "label": "out"}], "nodes": nodes, "edges": edges, "groups": [], "total_nodes": N, "truncated": False, "memory": mem}',
      'display({"application/vnd.tracegrad.graph+json": g, "text/plain": "big graph"}, raw=True)'
    ].join('\n');
    const file = `${tmpPath}/big.ipynb`;
    await page.contents.uploadContent(notebookJson([make]), 'text', file);
    await page.notebook.openByPath(file);

    // Measure the longest main-thread stall while the output renders and lays out.
    await page.evaluate(() => {
      const w = window as any;
      w.__tgMaxGap = 0;
      let last = performance.now();
      const tick = (): void => {
        const now = performance.now();
        w.__tgMaxGap = Math.max(w.__tgMaxGap, now - last);
        last = now;
        w.__tgRaf = requestAnimationFrame(tick);
      };
      w.__tgRaf = requestAnimationFrame(tick);
    });
    const started = Date.now();
    await page.notebook.runCell(0);
    const output = (await page.notebook.getCellOutputLocator(0))!;
    await expect(output.locator('.tg-warning')).toContainText('Showing the 2,000 nodes nearest the output', { timeout: 60000 });
    await expect(output.locator('.tg-graph g.node')).toHaveCount(2000, { timeout: 90000 });
    const elapsed = Date.now() - started;
    const maxGap = await page.evaluate(() => {
      const w = window as any;
      cancelAnimationFrame(w.__tgRaf);
      return w.__tgMaxGap as number;
    });
    console.log(`5,000-node graph: visible after ${elapsed} ms; longest main-thread stall ${Math.round(maxGap)} ms`);
    // Layout runs in the worker; the main thread only parses and inserts the SVG of 2,000 nodes.
    expect(page.workers().map(w => w.url()).some(url => url.includes('layoutWorker'))).toBe(true);
    expect(maxGap).toBeLessThan(2500);
    await output.locator('.tg-graph-search').fill('n4999');
    await expect(output.locator('.tg-search-count')).toHaveText('0 matches'); // hidden by the budget
    await output.locator('.tg-graph-search').fill('n10');
    await expect(output.locator('.tg-search-count')).toHaveText('1 match');
  });
});

void galata;
