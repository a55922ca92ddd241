import { applyBudget, buildVisibleGraph, groupVisibleId, toggleGroup } from '../src/collapse';
import { toDot } from '../src/dot';
import { pathsThrough } from '../src/paths';
import { parseMessage } from '../src/protocol';
import { chainGraph, fixture, kernelExamples } from './fixtures';

function graphOf(raw: unknown): any {
  const parsed = parseMessage(raw);
  if (!parsed.ok) {
    throw new Error(parsed.reason);
  }
  return parsed.message;
}

describe('buildVisibleGraph', () => {
  it('draws every node when no group is collapsed', () => {
    const visible = buildVisibleGraph(graphOf(fixture('graph')));
    expect(visible.nodes.map(n => n.id)).toEqual(['n5', 'n4', 'n3', 'n2', 'n1', 'n0']);
    expect(visible.edges).toHaveLength(5);
    expect(visible.roots).toEqual(['n5']);
    expect(visible.hiddenByBudget).toBe(0);
  });

  it('draws a collapsed group as one node and redirects crossing edges', () => {
    const graph = graphOf(fixture('graph'));
    const overrides = toggleGroup(graph, new Map(), 'g1'); // g1 starts expanded: collapse it
    const visible = buildVisibleGraph(graph, overrides);
    const group = groupVisibleId('g1');
    expect(visible.nodes.map(n => n.id)).toEqual(['n5', 'n4', group, 'n1', 'n0']);
    expect(visible.nodes.find(n => n.id === group)?.size).toBe(2);
    const edges = visible.edges.map(e => `${e.src}->${e.dst}`).sort();
    // n4->n3 enters the group, n3->n0 and n2->n1 leave it, n3->n2 was inside and disappears.
    expect(edges).toEqual([`${group}->n0`, `${group}->n1`, `n4->${group}`, 'n5->n4'].sort());
    expect(visible.representative.get('n2')).toBe(group);
  });

  it('expands a group on toggle', () => {
    const graph = chainGraph(12, 4);
    const collapsed = buildVisibleGraph(graph);
    expect(collapsed.nodes).toHaveLength(3);
    const expanded = buildVisibleGraph(graph, toggleGroup(graph, new Map(), 'g1'));
    expect(expanded.nodes).toHaveLength(2 + 4);
    expect(expanded.nodes.map(n => n.id)).toContain('n5');
  });

  it('merges parallel edges between collapsed groups and counts them', () => {
    const visible = buildVisibleGraph(chainGraph(12, 4));
    const between = visible.edges.find(e => e.src === groupVisibleId('g0') && e.dst === groupVisibleId('g1'));
    // n3->n4 (chain) and n0->n4 (skip edge) both cross from g0 to g1
    expect(between?.count).toBe(2);
  });

  it('uses node.group even when the group lists no members', () => {
    const graph = graphOf(fixture('graph'));
    graph.groups[0].members = [];
    graph.groups[0].collapsed = true;
    const visible = buildVisibleGraph(graph);
    expect(visible.representative.get('n3')).toBe(groupVisibleId('g1'));
  });

  it('ignores edges to nodes the kernel did not send', () => {
    const graph = graphOf(fixture('graph'));
    graph.edges.push({ src: 'n5', dst: 'missing', input_nr: 1, output_nr: 0 });
    expect(buildVisibleGraph(graph).edges).toHaveLength(5);
  });
});

describe('budget', () => {
  it('keeps the nodes nearest the roots and reports how many are hidden', () => {
    const visible = buildVisibleGraph(chainGraph(5000), new Map(), 2000);
    expect(visible.nodes).toHaveLength(2000);
    expect(visible.hiddenByBudget).toBe(3000);
    expect(visible.nodes[0].id).toBe('n0');
    const kept = new Set(visible.nodes.map(n => n.id));
    expect(visible.edges.every(e => kept.has(e.src) && kept.has(e.dst))).toBe(true);
  });

  it('collapsing first brings a 5,000-node graph under the budget', () => {
    const started = Date.now();
    const visible = buildVisibleGraph(chainGraph(5000, 50));
    expect(visible.nodes).toHaveLength(100);
    expect(visible.hiddenByBudget).toBe(0);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('is a no-op under the budget', () => {
    const visible = buildVisibleGraph(chainGraph(10));
    expect(applyBudget(visible, 100)).toBe(visible);
  });
});

describe('pathsThrough', () => {
  it('highlights the path to the root and to the leaves, not side branches', () => {
    const visible = buildVisibleGraph(graphOf(fixture('graph')));
    const paths = pathsThrough(visible.edges, 'n2');
    expect([...paths.nodes].sort()).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
    expect(paths.nodes.has('n0')).toBe(false); // bias leaf hangs off n3, not on n2's paths
    expect(paths.edges.size).toBe(4);
  });
});

describe('toDot', () => {
  it('emits one DOT node per visible node with safe ids and escaped labels', () => {
    const graph = graphOf(fixture('graph'));
    graph.nodes[0].name = 'Weird"Name\\';
    const dot = toDot(buildVisibleGraph(graph));
    expect(dot.startsWith('digraph autograd {')).toBe(true);
    expect(dot).toContain('id="tg-v0"');
    expect(dot).toContain('Weird\\"Name\\\\');
    expect(dot.match(/ -> /g)).toHaveLength(5);
    expect(dot).toContain('2 saved'); // AddmmBackward0 has two saved tensors
  });
});

describe("the kernel side's example graph", () => {
  const examples = kernelExamples().filter(([, message]) => message.type === 'graph');
  if (!examples.length) {
    it.skip('src/tracegrad/viz/protocol/examples/graph.json is not there yet', () => undefined);
  }
  it.each(examples)('%s: every node is drawn or stands in a collapsed group, and DOT is generated', (_file, raw) => {
    const graph = graphOf(raw);
    const visible = buildVisibleGraph(graph);
    for (const node of graph.nodes) {
      expect(visible.representative.has(node.id)).toBe(true);
    }
    const expandAll = new Map<string, boolean>(graph.groups.map((g: any) => [g.id, false]));
    expect(buildVisibleGraph(graph, expandAll).nodes).toHaveLength(Math.min(graph.nodes.length, 2000));
    expect(toDot(visible).match(/^  v\d+ \[/gm)).toHaveLength(visible.nodes.length);
  });
});
