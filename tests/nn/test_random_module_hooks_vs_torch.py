"""Random small models with module hooks of every kind, run by tracegrad and by torch: the same hooks fire in the
same order with the same tensors, and the gradients are the same.

Each model is a seeded ``nn.Sequential`` of Linear, ReLU, Tanh, Sigmoid and nested Sequential blocks. Hooks are
attached at random: forward pre-hooks and forward hooks (some returning a replacement), full backward pre-hooks
and full backward hooks (some returning replacements), tensor hooks and post-accumulate-grad hooks on parameters.
Then a loss (mean of squares, or a sum of two outputs of one module called twice) goes backward, sometimes with
``retain_graph`` and a second backward.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

N_MODELS = 300
_LAYERS = ("linear", "relu", "tanh", "sigmoid", "block")
_HOOKS = ("forward_pre", "forward_pre_replace", "forward", "forward_replace", "backward_pre", "backward_pre_replace",
          "backward", "backward_replace", "param_tensor", "param_post_accumulate")


def _spec(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    width = 3
    layers = []
    for _ in range(int(rng.integers(1, 5))):
        kind = str(rng.choice(_LAYERS))
        layers.append((kind, [str(rng.choice(["linear", "tanh"])) for _ in range(2)] if kind == "block" else None))
    hooks = [(str(rng.choice(_HOOKS)), int(rng.integers(len(layers) + 1))) for _ in range(int(rng.integers(1, 6)))]
    return {"width": width, "layers": layers, "hooks": hooks, "x": rng.uniform(-1, 1, (2, width)).tolist(),
            "weights": rng.uniform(-1, 1, 200).tolist(), "twice": bool(rng.integers(2)),
            "reuse": bool(rng.integers(2))}


def _build(lib, spec: dict):
    width, weights = spec["width"], iter(spec["weights"])

    def linear():
        layer = lib.nn.Linear(width, width).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([[next(weights) for _ in range(width)] for _ in range(width)],
                                          dtype=lib.float64))
            layer.bias.copy_(lib.tensor([next(weights) for _ in range(width)], dtype=lib.float64))
        return layer

    simple = {"linear": linear, "relu": lib.nn.ReLU, "tanh": lib.nn.Tanh, "sigmoid": lib.nn.Sigmoid}
    layers = [lib.nn.Sequential(*[simple[k]() for k in inner]) if kind == "block" else simple[kind]()
              for kind, inner in spec["layers"]]
    return lib.nn.Sequential(*layers)


def _summary(value):
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return [_summary(v) for v in value]
    return [round(float(v), 6) for v in value.detach().reshape(-1).tolist()]


def _run(lib, spec: dict) -> list:
    model = _build(lib, spec)
    modules = [model, *model.children()]
    log: list = []
    for n, (kind, where) in enumerate(spec["hooks"]):
        module = modules[where]
        name = f"{kind}#{n}@{where}"
        if kind.startswith("forward_pre"):
            replace = kind.endswith("replace")
            module.register_forward_pre_hook(
                lambda m, args, name=name, replace=replace: (log.append((name, _summary(args))),
                                                             (args[0] * 1.5,) if replace else None)[1])
        elif kind.startswith("forward"):
            replace = kind.endswith("replace")
            module.register_forward_hook(
                lambda m, args, out, name=name, replace=replace: (log.append((name, _summary(out))),
                                                                  out * 0.5 if replace else None)[1])
        elif kind.startswith("backward_pre"):
            replace = kind.endswith("replace")
            module.register_full_backward_pre_hook(
                lambda m, gout, name=name, replace=replace: (log.append((name, _summary(gout))),
                                                             tuple(g * 2 for g in gout) if replace else None)[1])
        elif kind.startswith("backward"):
            replace = kind.endswith("replace")
            module.register_full_backward_hook(
                lambda m, gin, gout, name=name, replace=replace: (
                    log.append((name, _summary(gin), _summary(gout))),
                    tuple(None if g is None else g * 3 for g in gin) if replace else None)[1])
        else:
            params = list(module.parameters())
            if not params:
                continue
            if kind == "param_tensor":
                params[0].register_hook(lambda g, name=name: log.append((name, _summary(g))))
            else:
                params[-1].register_post_accumulate_grad_hook(lambda p, name=name: log.append((name, _summary(p.grad))))
    x = lib.tensor(spec["x"], dtype=lib.float64, requires_grad=True)
    try:
        out = model(x)
        loss = (out * out).mean()
        if spec["reuse"]:
            loss = loss + model(x * 2).sum()
        loss.backward(retain_graph=spec["twice"])
        if spec["twice"]:
            log.append(("second backward",))
            loss.backward()
    except RuntimeError as exc:
        log.append(("error", str(exc).split("\n")[0]))
    log.append(("x.grad", _summary(x.grad)))
    log.append(("param grads", [_summary(p.grad) for p in model.parameters()]))
    return log


@pytest.mark.parametrize("seed", range(N_MODELS))
def test_random_model_hooks_fire_as_in_torch(seed):
    spec = _spec(seed)
    assert _run(tg, spec) == _run(torch, spec)
