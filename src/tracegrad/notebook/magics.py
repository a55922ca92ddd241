"""The magics: %autograd_graph, %%backward_trace, %saved_tensors and %tracegrad.

Their argument parsers come from ``magic_arguments``, so ``%autograd_graph?`` prints the help and a bad option
is a one-line UsageError. EXPR is Python, which argparse would mangle (``x - y``, ``d["loss"]``), so options
are taken only from the start and the end of the line and everything between them is the expression.
"""

from __future__ import annotations

import ast
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from .._tensor import Tensor
from .expressions import evaluate_roots
from .live import LiveFeed
from .namespace import leaf_labels
from .views import GraphView, SavedView, TimelineView

# Options of %autograd_graph that take a value (the next token), for split_options.
_VALUED_OPTIONS = frozenset({"--depth"})


def split_options(line: str, valued: frozenset[str] = _VALUED_OPTIONS) -> tuple[str, str]:
    """Split a magic's line into (options, expression): options are the ``--`` tokens (and their values)
    leading or trailing the line; the expression keeps its exact spelling."""
    tokens = line.split()
    head: list[str] = []
    while tokens and tokens[0].startswith("--"):
        head.append(tokens.pop(0))
        if head[-1] in valued and tokens:
            head.append(tokens.pop(0))
    tail: list[str] = []
    while tokens:
        if tokens[-1].startswith("--"):
            tail.insert(0, tokens.pop())
        elif len(tokens) >= 2 and tokens[-2] in valued:
            tail[:0] = tokens[-2:]
            del tokens[-2:]
        else:
            break
    expr = line.strip()
    for token in head:
        expr = expr[len(token):].lstrip() if expr.startswith(token) else expr
    for token in reversed(tail):
        expr = expr[: -len(token)].rstrip() if expr.endswith(token) else expr
    return " ".join(head + tail), expr


def _nonnegative_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


@magics_class
class TracegradMagics(Magics):
    """tracegrad's magics; ``feed`` is the kernel's live feed (also used for the running cell's id)."""

    def __init__(self, shell: Any, feed: LiveFeed) -> None:
        super().__init__(shell)
        self.feed = feed

    @magic_arguments()
    @argument("expr", nargs="*", metavar="EXPR",
              help="a Python expression giving a tensor, its grad_fn, or a list or dict of tensors")
    @argument("--saved", action="store_true", help="show the tensors each node saved for backward")
    @argument("--hooks", action="store_true", help="show the hooks registered on tensors and nodes")
    @argument("--depth", type=_nonnegative_int, default=None, metavar="N",
              help="follow at most N edges from the roots (default: the whole graph)")
    @argument("--collapse", dest="collapse", action="store_true", default=True,
              help="fold repeated blocks and linear chains into groups (default)")
    @argument("--no-collapse", dest="collapse", action="store_false", help="show every node")
    @line_magic
    def autograd_graph(self, line: str) -> GraphView:
        """Show the backward graph of a tensor expression: the nodes backward() would run, their edges,
        and optionally saved tensors and hooks. Example: %autograd_graph loss --saved --depth 3"""
        from ..viz import graph_snapshot

        args, expr = self._parse(self.autograd_graph, line)
        roots = evaluate_roots(self.shell, expr, "autograd_graph")
        if isinstance(roots, Tensor):
            roots = {expr: roots}  # the root is labelled with its expression ("loss")
        message = graph_snapshot(roots, saved=args.saved, hooks=args.hooks, depth=args.depth,
                                 collapse=args.collapse, cell_id=self.feed.cell_id,
                                 labels=leaf_labels(self.shell.user_ns))
        return GraphView(message, collapse=args.collapse, depth=args.depth, saved=args.saved)

    @magic_arguments()
    @argument("expr", nargs="*", metavar="EXPR",
              help="a Python expression giving a tensor, its grad_fn, or a list or dict of tensors")
    @line_magic
    def saved_tensors(self, line: str) -> SavedView:
        """Show the tensors the graph of EXPR saved for backward: one row per saved tensor with its shape,
        dtype, bytes and version, and the memory totals. Example: %saved_tensors loss"""
        from ..viz import saved_snapshot

        _, expr = self._parse(self.saved_tensors, line)
        roots = evaluate_roots(self.shell, expr, "saved_tensors")
        return SavedView(saved_snapshot(roots, cell_id=self.feed.cell_id, labels=leaf_labels(self.shell.user_ns)))

    @magic_arguments()
    @cell_magic
    def backward_trace(self, line: str, cell: str) -> None:
        """Run the cell and record every backward() and autograd.grad() call in it, then show each call's
        hook timeline (tensor hooks, retain_grad, pre-hooks, nodes, post-accumulate hooks, post-hooks, in
        firing order) and the order in which the nodes ran."""
        __tracebackhide__ = True  # noqa: F841 - IPython hides this frame in the user's traceback
        from ..viz import record_backward

        self._parse(self.backward_trace, line, takes_expr=False)
        with record_backward(cell_id=self.feed.cell_id) as recorder:
            try:
                self._run_body(cell)
            finally:
                self._show_trace(recorder.timelines)

    @magic_arguments()
    @argument("command", choices=["live"], help="what to control: live, the sidebar feed")
    @argument("state", nargs="?", choices=["on", "off", "status"], default="status",
              help="on: send each cell's graphs, hook timelines and saved tensors to the Autograd Inspector "
                   "sidebar; off: stop recording; status (default): say which")
    @line_magic
    def tracegrad(self, line: str) -> None:
        """Control tracegrad in this kernel. %tracegrad live on|off|status turns the live feed of the
        Autograd Inspector sidebar on or off."""
        try:
            args = parse_argstring(self.tracegrad, line)
        except UsageError as exc:
            raise UsageError(f"%tracegrad: {exc} (usage: %tracegrad live on|off|status)") from None
        if args.state != "status":
            self.feed.set_live(args.state == "on")
        print(self.feed.status())

    # ---- helpers ------------------------------------------------------------------------------------------

    @staticmethod
    def _parse(magic: Any, line: str, *, takes_expr: bool = True) -> tuple[Any, str]:
        if not takes_expr:
            if line.strip():
                raise UsageError(f"%%{magic.__name__} takes no arguments, got {line.strip()!r}")
            return parse_argstring(magic, ""), ""
        options, expr = split_options(line)
        try:
            return parse_argstring(magic, options), expr
        except UsageError as exc:
            raise UsageError(f"%{magic.__name__}: {exc}") from None

    def _run_body(self, cell: str) -> None:
        """Run a cell body like IPython would: in the user namespace, the last expression's value displayed."""
        __tracebackhide__ = True  # noqa: F841
        shell = self.shell
        source = shell.transform_cell(cell)
        filename = shell.compile.cache(source, shell.execution_count, raw_code=cell)
        module = ast.parse(source, filename=filename)
        last = module.body.pop() if module.body and isinstance(module.body[-1], ast.Expr) else None
        exec(compile(module, filename, "exec"), shell.user_ns)  # noqa: S102 - the user's own cell
        if last is not None:
            code = compile(ast.Interactive(body=[last]), filename, "single")
            exec(code, shell.user_ns)  # noqa: S102 - "single" mode sends the value to the display hook

    @staticmethod
    def _show_trace(timelines: list[dict]) -> None:
        from IPython.display import display

        if timelines:
            display(TimelineView(tuple(timelines)))
        else:
            print("%%backward_trace: no backward() or autograd.grad() call ran in this cell")

