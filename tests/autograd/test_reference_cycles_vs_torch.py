"""Which tensors a program leaves alive once its names are deleted, with Python's cycle collector off (compared
with torch).

PyTorch frees a dropped graph, its saved tensors and its leaves by reference counting alone; a reference cycle in
tracegrad would keep them (and their memory) until the collector runs. Each program returns weak references to
the tensors it made, after deleting its own names; both libraries must leave the same ones alive. (Checkpointing
is left out: torch's own checkpoint code leaves reference cycles, which keep an input alive in some programs.)
"""

from __future__ import annotations

import weakref

import pytest
from _lib import collector_off, run_both


def _alive(refs: dict) -> dict:
    return {name: ref() is not None for name, ref in refs.items()}


# ---- a leaf saved under saved_tensors_hooks --------------------------------------------------------------------

def _saved_leaf_program(lib, *, graph_held_its_node: bool):
    """A custom Function saves a leaf it does not take as an input, under saved_tensors_hooks (the unpacked
    tensor is a new one, rewrapped with the leaf's history). PyTorch's SavedVariable holds a saved leaf's grad
    accumulator: the unpacked tensor sends its gradient to the leaf in a double backward, and the graph keeps the
    leaf alive. (tracegrad held the node weakly: once no graph held it, the gradient went to a node of the
    unpacked copy and was lost.)"""
    w = lib.full((3,), 2.0, requires_grad=True)

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(w)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (saved_w,) = ctx.saved_tensors
            return g * saved_w

    x = lib.ones(3, requires_grad=True)
    other = (w * 3).sum() if graph_held_its_node else None  # a graph holding w's node while the hook packs w
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = Scale.apply(x).sum()
    del other
    w_ref = weakref.ref(w)
    del w
    kept = w_ref() is not None
    (gx,) = lib.autograd.grad(y, x, create_graph=True)
    gx.sum().backward()
    w = w_ref()
    return kept, None if w is None or w.grad is None else w.grad.tolist(), x.grad


@pytest.mark.parametrize("graph_held_its_node", [False, True])
def test_a_leaf_saved_under_hooks_keeps_its_node_and_gets_its_gradient(graph_held_its_node):
    with collector_off():
        ours, theirs = run_both(_saved_leaf_program, graph_held_its_node=graph_held_its_node)
    assert ours == theirs == (True, [1.0, 1.0, 1.0], None)


# ---- typical programs: nothing left alive that torch frees ----------------------------------------------------

def _views_and_copyslices(lib):
    x = lib.randn(4, requires_grad=True)
    b = x.clone()
    v = b[1:3]
    v.mul_(2)
    b.view(2, 2).add_(1)
    b.sum().backward()
    _ = v.grad_fn  # (regenerated after the in-place on its base)
    refs = {"x": weakref.ref(x), "b": weakref.ref(b), "v": weakref.ref(v), "x.grad": weakref.ref(x.grad)}
    del x, b, v, _
    return refs


def _retain_grad_and_hooks(lib):
    x = lib.randn(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y.sin()
    y.register_hook(lambda g: g * 2)
    x.register_hook(lambda g: None)
    x.register_post_accumulate_grad_hook(lambda t: None)
    z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
    z.grad_fn.register_prehook(lambda grad_outputs: None)
    z.sum().backward()
    refs = {"x": weakref.ref(x), "y": weakref.ref(y), "z": weakref.ref(z), "y.grad": weakref.ref(y.grad)}
    del x, y, z
    return refs


def _saved_tensors_hooks(lib):
    x = lib.randn(3, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = x.sin() * x
        z = y.exp()
    refs = {"x": weakref.ref(x), "y": weakref.ref(y), "z": weakref.ref(z)}
    z.sum().backward()
    del x, y, z
    return refs


def _custom_function(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.scale, ctx.shape = 3, a.shape  # (attributes that are not tensors)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b * ctx.scale, g * a

    x, w = lib.randn(3, requires_grad=True), lib.randn(3, requires_grad=True)
    y = Mul.apply(x, w)
    y.sum().backward()
    refs = {"x": weakref.ref(x), "w": weakref.ref(w), "y": weakref.ref(y)}
    del x, w, y
    return refs, Mul  # (the class itself is a cycle, in both libraries: kept out of the check)


def _double_backward_and_anomaly(lib):
    with lib.autograd.detect_anomaly(check_nan=False):
        x = lib.randn(3, requires_grad=True)
        y = (x.exp() * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    refs = {"x": weakref.ref(x), "y": weakref.ref(y), "g": weakref.ref(g), "x.grad": weakref.ref(x.grad)}
    del x, y, g
    return refs


def _forward_ad(lib):
    from importlib import import_module

    fwAD = import_module(lib.__name__ + ".autograd.forward_ad")
    x, t = lib.randn(3, requires_grad=True), lib.randn(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        y = (d.sin() * d).sum()
        tangent = fwAD.unpack_dual(y).tangent
    y.backward()
    refs = {"x": weakref.ref(x), "t": weakref.ref(t), "d": weakref.ref(d), "y": weakref.ref(y),
            "tangent": weakref.ref(tangent)}
    del x, t, d, y, tangent
    return refs


def _module_hooks_and_norm_layers(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 2))
    model[4].register_forward_hook(lambda module, args, out: None)
    model[4].register_full_backward_hook(lambda module, grad_in, grad_out: None)
    model[4].register_full_backward_pre_hook(lambda module, grad_out: None)
    out = model(lib.tensor([[1, 2], [3, 1], [0, 4]]))
    out.sum().backward()
    refs = {f"param {i}": weakref.ref(p) for i, p in enumerate(model.parameters())}
    refs.update(running_mean=weakref.ref(model[2].running_mean), model=weakref.ref(model), out=weakref.ref(out))
    del model, out
    return refs


def _optimizers_after_their_first_step(lib):
    """(After the first step: before it, torch's optimizers sit in a reference cycle of their own.)"""
    refs = {}
    for name, kwargs in (("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("RMSprop", {})):
        model = lib.nn.Linear(3, 2)
        opt = getattr(lib.optim, name)(model.parameters(), lr=0.1, **kwargs)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1)
        for _ in range(2):
            opt.zero_grad()
            model(lib.randn(4, 3)).sum().backward()
            opt.step()
            sched.step()
        refs[f"{name} weight"] = weakref.ref(model.weight)
        for key, value in opt.state[model.weight].items():
            if isinstance(value, lib.Tensor):
                refs[f"{name} state {key}"] = weakref.ref(value)
        refs[f"{name} optimizer"] = weakref.ref(opt)
        del model, opt, sched, key, value
    return refs


@pytest.mark.parametrize("program", [_views_and_copyslices, _retain_grad_and_hooks, _saved_tensors_hooks,
                                     _double_backward_and_anomaly, _forward_ad,
                                     _module_hooks_and_norm_layers, _optimizers_after_their_first_step])
def test_a_dropped_program_leaves_what_torch_leaves(program):
    run_both(program)  # (once first: a library's one-time set-up, torch's first optimizer's, may leave a cycle)
    with collector_off():
        ours, theirs = run_both(lambda lib: _alive(program(lib)))
    assert ours == theirs
    assert not any(ours.values())


def test_a_dropped_custom_function_graph_leaves_what_torch_leaves():
    with collector_off():
        ours, theirs = run_both(lambda lib: _alive(_custom_function(lib)[0]))
    assert ours == theirs == {"x": False, "w": False, "y": False}
