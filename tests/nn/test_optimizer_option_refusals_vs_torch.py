"""The optimizer option combinations PyTorch refuses on CPU are refused here with its exception type and words, at
the same moment (construction or the first ``step``); where it accepts them, the parameters after two steps match
bitwise."""

import math

import pytest
import torch

import tracegrad


class T:
    """A hyper-parameter given as a tensor of this value (built with the library under test)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:  # (stable test ids: pytest-xdist workers must collect the same names)
        return f"T({self.value!r})"


# Adam and AdamW refuse the same combinations (AdamW is Adam with decoupled weight decay)
_ADAM_OPTIONS = [
    {"fused": True, "foreach": True},
    {"capturable": True},
    {"capturable": True, "foreach": True},
    {"differentiable": True},
    {"differentiable": True, "foreach": True},
    {"differentiable": True, "foreach": False},
    {"lr": T(0.01), "foreach": True},
    {"lr": T(0.01), "capturable": True},
    {"lr": T(0.01), "differentiable": True},
    {"lr": T([0.01, 0.02])},
    {"lr": T([0.01]), "foreach": True},
    {"betas": (0, 0.99)},
    {"fused": True, "differentiable": True},
    {"capturable": True, "differentiable": True},
    {"capturable": True, "differentiable": True, "foreach": True},
    {"betas": (T(0.9), T(0.999)), "foreach": True},
    {"betas": (T(0.9), 0.999)},
    {"betas": (T(0.9), T(0.999)), "capturable": True},
]

CASES = [
    ("SGD", {"fused": True, "foreach": True}),
    ("SGD", {"differentiable": True}),
    ("SGD", {"differentiable": True, "foreach": True}),
    ("SGD", {"differentiable": True, "foreach": False}),
    ("SGD", {"lr": T(0.01), "differentiable": True}),
    ("SGD", {"lr": T([0.01, 0.02])}),
    ("SGD", {"fused": True, "differentiable": True}),
    *[(name, options) for name in ("Adam", "AdamW") for options in _ADAM_OPTIONS],
    ("RMSprop", {"capturable": True}),
    ("RMSprop", {"capturable": True, "foreach": True}),
    ("RMSprop", {"differentiable": True}),
    ("RMSprop", {"differentiable": True, "foreach": True}),
    ("RMSprop", {"differentiable": True, "foreach": False}),
    ("RMSprop", {"lr": T(0.01), "capturable": True}),
    ("RMSprop", {"lr": T(0.01), "differentiable": True}),
    ("RMSprop", {"lr": T([0.01, 0.02])}),
    ("RMSprop", {"capturable": True, "differentiable": True}),
    ("RMSprop", {"capturable": True, "differentiable": True, "foreach": True}),
    ("Adagrad", {"fused": True, "foreach": True}),
    ("Adagrad", {"differentiable": True}),
    ("Adagrad", {"differentiable": True, "foreach": True}),
    ("Adagrad", {"differentiable": True, "foreach": False}),
    ("Adagrad", {"lr": T(0.01), "differentiable": True}),
    ("Adagrad", {"lr": T([0.01, 0.02])}),
    ("Adagrad", {"fused": True, "differentiable": True}),
    ("Adadelta", {"differentiable": True, "foreach": True}),
    ("Adadelta", {"lr": T([0.01, 0.02])}),
    ("Adadelta", {"capturable": True, "differentiable": True, "foreach": True}),
    ("Adamax", {"capturable": True, "foreach": True}),
    ("Adamax", {"differentiable": True, "foreach": True}),
    ("Adamax", {"lr": T([0.01, 0.02])}),
    ("Adamax", {"capturable": True, "differentiable": True, "foreach": True}),
    ("NAdam", {"capturable": True, "foreach": True}),
    ("NAdam", {"differentiable": True, "foreach": True}),
    ("NAdam", {"lr": T([0.01, 0.02])}),
    ("NAdam", {"capturable": True, "differentiable": True, "foreach": True}),
    ("RAdam", {"capturable": True, "foreach": True}),
    ("RAdam", {"differentiable": True, "foreach": True}),
    ("RAdam", {"lr": T([0.01, 0.02])}),
    ("RAdam", {"capturable": True, "differentiable": True, "foreach": True}),
    ("ASGD", {"capturable": True, "foreach": True}),
    ("ASGD", {"differentiable": True, "foreach": True}),
    ("ASGD", {"lr": T([0.01, 0.02])}),
    ("ASGD", {"capturable": True, "differentiable": True, "foreach": True}),
    ("Rprop", {"differentiable": True, "foreach": True}),
    ("Rprop", {"lr": T([0.01, 0.02])}),
    ("Rprop", {"capturable": True, "differentiable": True, "foreach": True}),
    ("LBFGS", {"lr": T([0.01, 0.02])}),
]


def _convert(value, lib):
    if isinstance(value, T):
        return lib.tensor(value.value)
    if isinstance(value, tuple):
        return tuple(_convert(v, lib) for v in value)
    return value


def _outcome(lib, name: str, kwargs: dict):
    """Where the optimizer raises (``ctor``, ``step0``, ``step1``), with the exception's type and text, or ``ok``
    with the parameters after two steps."""
    p = lib.nn.Parameter(lib.arange(1.0, 4.0))
    kwargs = {k: _convert(v, lib) for k, v in kwargs.items()}
    try:
        opt = getattr(lib.optim, name)([p], **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return ["ctor", type(e).__name__, str(e)]

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    for i in range(2):
        try:
            if name == "LBFGS":
                opt.step(closure)
            else:
                closure()
                opt.step()
        except Exception as e:  # noqa: BLE001
            return [f"step{i}", type(e).__name__, str(e)]
    return ["ok", p.detach().tolist()]


def _same(a, b) -> bool:
    if a[0] != "ok" or b[0] != "ok":
        return a == b
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a[1], b[1]))


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_option_refusals_match_torch(name, kwargs):
    expected = _outcome(torch, name, kwargs)
    got = _outcome(tracegrad, name, kwargs)
    assert _same(got, expected), (got, expected)


def test_refusal_leaves_other_groups_updated_like_torch():
    """PyTorch refuses a group when its update runs: the groups before it have been updated."""
    results = []
    for lib in (torch, tracegrad):
        a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.Adam([{"params": [a]}, {"params": [b], "capturable": True}], lr=0.1)
        (a * b).sum().backward()
        with pytest.raises(AssertionError, match="If capturable=True"):
            opt.step()
        results.append((a.tolist(), b.tolist()))
    assert results[0] == results[1]
