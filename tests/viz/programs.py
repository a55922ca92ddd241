"""Small tracegrad programs shared by the viz tests: each returns the tensors to snapshot."""

from __future__ import annotations

import tracegrad as torch


def mlp_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    loss = model(torch.randn(5, 3)).pow(2).mean()
    return loss, model


def views_and_inplace():
    a = torch.randn(4, 3, requires_grad=True)
    b = a * 2
    v = b[1:3]
    v.mul_(3)
    return (b.sum() + v.exp().sum(),)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x ** 3
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, _ = ctx.saved_tensors
        return grad * 3 * x ** 2


def custom_function():
    x = torch.randn(3, requires_grad=True)
    return (Cube.apply(x).sin().sum(),)


def hooks_of_every_kind():
    x = torch.randn(3, requires_grad=True)
    y = x.sin()
    y.register_hook(lambda g: None)
    y.retain_grad()
    z = (y * 2).sum()
    z.grad_fn.register_prehook(lambda gs: None)
    z.grad_fn.register_hook(lambda gi, go: None)
    x.register_hook(lambda g: None)
    x.register_post_accumulate_grad_hook(lambda p: None)
    return (z,)


def saved_tensors_hooks():
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = (x.exp() * x).sum()
    return (y,)


PROGRAMS = {"mlp": lambda: (mlp_step()[0],), "views": views_and_inplace, "custom": custom_function,
            "hooks": hooks_of_every_kind, "saved_hooks": saved_tensors_hooks}
