"""``torch.nn.utils.prune`` against torch: what pruning leaves on a module (the ``<name>_orig`` parameter, the
``<name>_mask`` buffer, ``<name>`` recomputed by the forward pre-hook, ``named_parameters``/``named_buffers``/
``state_dict`` order, the hooks), the masks bit for bit (l1 and ln-structured with ties, int and float amounts,
every norm and dim, global pruning over several modules, importance scores), the random methods under one seed
(and where they leave the generator), iterative pruning through a ``PruningContainer``, gradients through the
mask, ``remove``, ``is_pruned``, custom methods, the classes themselves and the refusals (types and messages).

Differences found here, now fixed:
- ``LnStructured`` with nothing to prune (``amount=0``) skipped the norms, so a norm torch refuses there
  (``n="fro"`` or ``"nuc"`` over a conv weight's three other dims, an unknown ``n``) was accepted;
- ``RandomUnstructured``/``L1Unstructured`` and ``RandomStructured``/``LnStructured`` shared private base classes,
  so their ``__mro__``/``__bases__`` were not torch's (``(BasePruningMethod,)``);
- ``RandomUnstructured`` pruned the bottom-k of ``-rand_like`` where torch prunes the top-k of ``rand_like``.
"""

from __future__ import annotations

import copy
import importlib
import io
import re

import numpy as np
import pytest
from _lib import assert_close, tg, torch


def _prune(lib):
    """The prune module (torch does not import it with ``import torch``: programs import it themselves)."""
    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


def _both(program) -> tuple:
    """``program(lib)`` for tracegrad and torch, each from the same global seed."""
    outcomes = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        outcomes.append(_attempt(program, lib))
    return tuple(outcomes)


def _attempt(function, *args, **kwargs):
    """What ``function(*args, **kwargs)`` returns, or the error it raises as (type, message)."""
    try:
        return function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, _spelt_as_torch(str(exc))


def _spelt_as_torch(text: str) -> str:
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text).replace("tracegrad", "torch")


def _linear(lib, n_out: int = 4, n_in: int = 6, seed: int = 0, ties: bool = False):
    """A Linear layer with the same weights in both libraries (small integers when ``ties``: many equal
    magnitudes and norms, so which of them topk picks shows)."""
    rng = np.random.default_rng(seed)
    draw = (lambda shape: rng.integers(-2, 3, shape)) if ties else rng.standard_normal
    m = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(draw((n_out, n_in)).astype(np.float32)))
        m.bias.copy_(lib.tensor(draw(n_out).astype(np.float32)))
    return m


def _conv(lib, seed: int = 0, ties: bool = False):
    """A Conv2d(3, 5, 3) with the same weights and biases in both libraries."""
    rng = np.random.default_rng(seed)
    draw = (lambda shape: rng.integers(-1, 2, shape)) if ties else rng.standard_normal
    m = lib.nn.Conv2d(3, 5, 3)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(draw((5, 3, 3, 3)).astype(np.float32)))
        m.bias.copy_(lib.tensor(draw(5).astype(np.float32)))
    return m


def _bits(t) -> tuple:
    t = t.detach()
    return str(t.dtype).replace("tracegrad", "torch"), tuple(t.shape), t.numpy().tobytes()


def _hooks(m) -> list:
    """The module's forward pre-hooks as (class, tensor name, the methods of a container)."""
    return [(type(h).__name__, getattr(h, "_tensor_name", None),
             [type(x).__name__ for x in h] if hasattr(h, "_pruning_methods") else None)
            for h in m._forward_pre_hooks.values()]


def _state(m) -> list:
    """Everything pruning leaves on ``m``: parameters, buffers (bits, types), state-dict keys, hooks, and each
    tensor attribute as a user reads it (its class, bits, grad_fn, and whether it is a parameter)."""
    state = [("param", n, type(p).__name__, p.requires_grad, _bits(p)) for n, p in m.named_parameters()]
    state += [("buffer", n, type(b).__name__, b.requires_grad, _bits(b)) for n, b in m.named_buffers()]
    state += [("state_dict", list(m.state_dict())), ("hooks", _hooks(m))]
    for name in ("weight", "bias"):
        value = getattr(m, name)
        state.append((name, type(value).__name__, _bits(value), value.grad_fn and value.grad_fn.name(),
                       name in m._parameters, value.requires_grad))
    return state


def test_the_methods_are_direct_subclasses_of_base_pruning_method():
    def program(lib):
        prune = _prune(lib)
        names = ("Identity", "RandomUnstructured", "L1Unstructured", "RandomStructured", "LnStructured",
                 "CustomFromMask", "PruningContainer")
        return ([[c.__name__ for c in getattr(prune, n).__mro__] for n in names],
                [getattr(prune, n).PRUNING_TYPE for n in names[:-1]],
                hasattr(prune.BasePruningMethod, "PRUNING_TYPE"), hasattr(prune.PruningContainer, "PRUNING_TYPE"))

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("amount", [0, 1, 7, 24, 0.0, 0.3, 0.5, 0.49, 1.0, True])
def test_l1_unstructured_with_ties(amount):
    def program(lib):
        m = _linear(lib, ties=True)
        returned = _prune(lib).l1_unstructured(m, "weight", amount=amount)
        _prune(lib).l1_unstructured(m, "bias", amount=min(amount, 4))
        return returned is m, _state(m)

    ours, theirs = _both(program)
    assert ours == theirs


_NORMS = [1, 2, float("inf"), float("-inf"), 0, 3, 0.5]


@pytest.mark.parametrize("n", _NORMS)
def test_ln_structured_every_dim_with_ties(n):
    def program(lib):
        outcomes = []
        for dim in (0, 1, 2, 3, -1, -4):
            for amount in (2, 0.4, 0):
                m = _conv(lib, ties=True)
                outcome = _attempt(_prune(lib).ln_structured, m, "weight", amount, n, dim)
                outcomes.append(outcome if isinstance(outcome, tuple) else _state(outcome))
        return outcomes

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("n", ["fro", "nuc", None])
def test_ln_structured_matrix_norms_of_a_linear_weight(n):
    def program(lib):
        return [_state(_prune(lib).ln_structured(_linear(lib, ties=True), "weight", amount, n, dim))
                for amount in (1, 0.5) for dim in (0, 1, -1)]

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("n", ["fro", "nuc", "abc"])
@pytest.mark.parametrize("amount", [0, 0.0, 2])
def test_ln_structured_refuses_a_norm_even_when_nothing_is_pruned(n, amount):
    def program(lib):
        m = _conv(lib)
        refusal = _attempt(_prune(lib).ln_structured, m, "weight", amount, n, 0)
        return refusal, _state(m)  # (the weight is a parameter again)

    ours, theirs = _both(program)
    assert ours == theirs
    assert ours[0][0] == "RuntimeError"


@pytest.mark.parametrize("amount", [0, 5, 0.3, 1.0])
def test_random_methods_under_one_seed(amount):
    """The same masks from the same seed, and the generator left at the same place (the draw after matches)."""
    def program(lib):
        prune = _prune(lib)
        m = _conv(lib)
        prune.random_unstructured(m, "weight", amount)
        prune.random_unstructured(m, "bias", amount)
        states = [_state(m)]
        for dim in (0, 1, -1):
            m = _conv(lib)
            prune.random_structured(m, "weight", min(amount, 3), dim)
            states.append(_state(m))
        return states, lib.rand(3).tolist()

    ours, theirs = _both(program)
    assert ours == theirs


_SEQUENCES = [
    [("random_unstructured", dict(amount=0.3)), ("l1_unstructured", dict(amount=0.3))],
    [("l1_unstructured", dict(amount=10)), ("ln_structured", dict(amount=0.4, n=2, dim=0)),
     ("random_structured", dict(amount=1, dim=1))],
    [("ln_structured", dict(amount=2, n=1, dim=0)), ("l1_unstructured", dict(amount=0.5)),
     ("ln_structured", dict(amount=1, n=float("inf"), dim=0))],
    [("ln_structured", dict(amount=2, n=1, dim=0)), ("ln_structured", dict(amount=4, n=1, dim=0))],
    [("identity", {}), ("random_unstructured", dict(amount=3)), ("identity", {})],
    [("l1_unstructured", dict(amount=0.5)), ("l1_unstructured", dict(amount=0.5)),
     ("l1_unstructured", dict(amount=1.0))],
    [("l1_unstructured", dict(amount=100)), ("l1_unstructured", dict(amount=100))],
    [("l1_unstructured", dict(amount=0.5)), ("custom_from_mask", "mask")],
]


@pytest.mark.parametrize("sequence", _SEQUENCES, ids=lambda s: "+".join(step[0] for step in s))
def test_iterative_pruning_through_a_container(sequence):
    """Pruning one weight again and again: the container's hooks and masks after each step (refusals included),
    then a forward and backward pass: the gradient reaches ``weight_orig`` through the mask."""
    def program(lib):
        prune = _prune(lib)
        m = _conv(lib, ties=True)
        steps = []
        for function, kwargs in sequence:
            if kwargs == "mask":
                kwargs = dict(mask=lib.arange(135).reshape(5, 3, 3, 3) % 3 != 0)
            outcome = _attempt(getattr(prune, function), m, "weight", **kwargs)
            steps.append(outcome if isinstance(outcome, tuple) else None)
            steps.append(_hooks(m))
        m(lib.ones(2, 3, 5, 5)).sum().backward()
        return steps, _state(m), _bits(m.weight_orig.grad)

    ours, theirs = _both(program)
    assert ours == theirs


def test_a_training_step_through_the_masks():
    def program(lib):
        prune = _prune(lib)
        m = _linear(lib)
        prune.ln_structured(m, "weight", 2, 1, 0)
        prune.l1_unstructured(m, "bias", 2)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            m(lib.linspace(-1, 1, 12).reshape(2, 6)).pow(2).sum().backward()
            opt.step()
        return ([n for n, _ in m.named_parameters()], m.weight_orig.grad, m.bias_orig.grad, m.weight_orig, m.weight,
                m.weight_mask.requires_grad)

    ours, theirs = _both(program)
    assert ours[0] == theirs[0] and ours[-1] == theirs[-1]
    for a, b in zip(ours[1:-1], theirs[1:-1]):
        assert_close(a.detach(), b.detach())  # (a matrix product: not bit for bit)


def test_global_unstructured_over_several_modules():
    """Global l1 and random pruning over weights and biases of three modules, one of them already pruned, with
    importance scores; each module ends with a container whose last method is a CustomFromMask."""
    def program(lib):
        prune = _prune(lib)
        ms = [_conv(lib, 1, ties=True), _linear(lib, 4, 6, 2, ties=True), _linear(lib, 3, 4, 3)]
        prune.l1_unstructured(ms[1], "weight", 5)
        params = [(ms[0], "weight"), (ms[1], "weight"), (ms[2], "bias"), (ms[2], "weight")]
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.4)
        prune.global_unstructured(params, pruning_method=prune.RandomUnstructured, amount=7)
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.2,
                                  importance_scores={(ms[2], "weight"): lib.ones(3, 4)})
        return [_state(m) for m in ms], lib.rand(2).tolist()

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("mistake", ["generator", "scores_list", "structured", "identity", "scores_shape",
                                     "not_iterable", "empty", "too_many", "instance", "no_amount"])
def test_global_unstructured_refusals(mistake):
    def program(lib):
        prune = _prune(lib)
        ms = [_conv(lib, 1), _linear(lib, 4, 6, 2)]
        params = [(ms[0], "weight"), (ms[1], "weight")]
        kwargs = dict(pruning_method=prune.L1Unstructured, amount=0.4)
        if mistake == "generator":  # (iterated once for the scores: the masks then see nothing)
            params = ((m, "weight") for m in ms)
        elif mistake == "scores_list":
            kwargs["importance_scores"] = [1]
        elif mistake == "structured":
            kwargs = dict(pruning_method=prune.LnStructured, amount=0.4, n=1)
        elif mistake == "identity":
            kwargs = dict(pruning_method=prune.Identity)
        elif mistake == "scores_shape":
            kwargs["importance_scores"] = {(ms[1], "weight"): lib.ones(3)}
        elif mistake == "not_iterable":
            params = 5
        elif mistake == "empty":
            params = []
        elif mistake == "too_many":
            kwargs["amount"] = 160
        elif mistake == "instance":
            kwargs["pruning_method"] = prune.L1Unstructured(0.5)
        else:
            del kwargs["amount"]
        refusal = _attempt(prune.global_unstructured, params, **kwargs)
        return refusal, [_state(m) for m in ms]

    ours, theirs = _both(program)
    assert ours == theirs


def test_importance_scores():
    def program(lib):
        prune = _prune(lib)
        scores = lib.arange(24.0).reshape(4, 6).flip(1)
        a = prune.l1_unstructured(_linear(lib), "weight", 0.5, importance_scores=scores)
        b = prune.ln_structured(_linear(lib), "weight", 2, 2, 1, importance_scores=scores)
        c = prune.l1_unstructured(_linear(lib), "weight", 4)
        prune.l1_unstructured(c, "weight", 0.5, importance_scores=scores.flip(0))
        return [_state(m) for m in (a, b, c)]

    ours, theirs = _both(program)
    assert ours == theirs


def test_remove_makes_the_pruned_weight_a_parameter_again():
    def program(lib):
        prune = _prune(lib)
        m = _linear(lib)
        prune.l1_unstructured(m, "weight", 3)
        prune.random_unstructured(m, "weight", 3)
        prune.l1_unstructured(m, "bias", 1)
        returned = prune.remove(m, "weight")
        pruned = prune.is_pruned(m)
        prune.remove(m, "bias")
        return returned is m, pruned, prune.is_pruned(m), m.weight.is_leaf, _state(m)

    ours, theirs = _both(program)
    assert ours == theirs


def test_is_pruned_looks_into_submodules():
    def program(lib):
        prune = _prune(lib)
        seq = lib.nn.Sequential(_linear(lib), lib.nn.Sequential(_linear(lib, 4, 4)))
        before = prune.is_pruned(seq)
        prune.l1_unstructured(seq[1][0], "bias", 1)
        return before, prune.is_pruned(seq), prune.is_pruned(seq[0]), prune.is_pruned(seq[1])

    ours, theirs = _both(program)
    assert ours == theirs


def test_pre_hooks_order_and_the_forward_recomputing_the_weight():
    """A re-pruned tensor's container is registered anew (after the other hooks); each forward recomputes
    ``weight`` from ``weight_orig`` and the mask."""
    def program(lib):
        prune = _prune(lib)
        m = _linear(lib)
        m.register_forward_pre_hook(lambda module, args: None)
        prune.l1_unstructured(m, "weight", 2)
        prune.l1_unstructured(m, "bias", 2)
        prune.random_unstructured(m, "weight", 2)
        order = [type(h).__name__ for h in m._forward_pre_hooks.values()]
        with lib.no_grad():
            m.weight_orig.mul_(2)
        stale = _bits(m.weight)
        m(lib.ones(1, 6))
        return order, stale, _bits(m.weight), m.weight.grad_fn.name()

    ours, theirs = _both(program)
    assert ours == theirs


def test_state_dict_round_trips_and_copies():
    def program(lib):
        prune = _prune(lib)
        m = prune.l1_unstructured(_linear(lib), "weight", 5)
        buffer = io.BytesIO()
        lib.save(m.state_dict(), buffer)
        buffer.seek(0)
        loaded = [(k, _bits(v)) for k, v in lib.load(buffer).items()]
        into_pruned = prune.identity(_linear(lib, seed=3), "weight")
        into_pruned.load_state_dict(m.state_dict())
        into_plain = _attempt(_linear(lib, seed=3).load_state_dict, m.state_dict())
        copied = copy.deepcopy(m)
        return loaded, _state(into_pruned), into_plain, _state(copied), _hooks(copied)

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_masks_follow_the_parameter_dtype(dtype):
    def program(lib):
        prune = _prune(lib)
        m = _linear(lib, ties=True).to(getattr(lib, dtype))
        prune.l1_unstructured(m, "weight", 0.3)
        prune.ln_structured(m, "weight", 1, 1, 0)
        prune.custom_from_mask(m, "bias", lib.tensor([True, False, True, True]))
        return _state(m)

    ours, theirs = _both(program)
    assert ours == theirs


def test_the_module_free_prune_method():
    def program(lib):
        prune = _prune(lib)
        t = lib.arange(-6.0, 6.0).reshape(3, 4)
        return [_bits(x) for x in (
            prune.L1Unstructured(0.5).prune(t),
            prune.LnStructured(1, n=2, dim=0).prune(t, default_mask=lib.ones(3, 4) * 2),
            prune.L1Unstructured(2).prune(t, importance_scores=lib.arange(12.0).reshape(3, 4)),
            prune.Identity().prune(lib.arange(3.0)),
            prune.CustomFromMask(lib.tensor([True, False, True])).prune(lib.arange(3.0)),
        )]

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("pruning_type", ["unstructured", "structured", "global", "weird"])
@pytest.mark.parametrize("with_dim", [False, True])
def test_a_custom_method_stacked_on_earlier_pruning(pruning_type, with_dim):
    """A user's method (the tutorial's FooBar) applied after l1 pruning: the container slices what earlier masks
    kept by the method's PRUNING_TYPE, or refuses it."""
    def program(lib):
        prune = _prune(lib)

        class EveryOther(prune.BasePruningMethod):
            PRUNING_TYPE = pruning_type
            if with_dim:
                dim = 0

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        m = prune.l1_unstructured(_linear(lib), "weight", 5)
        outcome = _attempt(EveryOther.apply, m, "weight")
        refusal = outcome if isinstance(outcome, tuple) else None
        return refusal, _state(m)

    ours, theirs = _both(program)
    assert ours == theirs


_MISTAKES = {
    "negative int": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", -1),
    "negative float": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", -0.1),
    "float above one": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", 1.5),
    "string amount": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", "0.5"),
    "None amount": lambda p, lib: p.RandomUnstructured(None),
    "tensor amount": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", lib.tensor(0.5)),
    "more than there are": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", 25),
    "more channels than there are": lambda p, lib: p.ln_structured(_linear(lib), "weight", 7, 1, 0),
    "structured 1-d": lambda p, lib: p.ln_structured(_linear(lib), "bias", 1, 2, 0),
    "random structured 1-d": lambda p, lib: p.random_structured(_linear(lib), "bias", 1, 0),
    "dim too big": lambda p, lib: p.ln_structured(_linear(lib), "weight", 1, 2, 2),
    "dim too negative": lambda p, lib: p.ln_structured(_linear(lib), "weight", 1, 2, -3),
    "random dim too negative": lambda p, lib: p.random_structured(_linear(lib), "weight", 1, -3),
    "scores of another shape": lambda p, lib: p.l1_unstructured(_linear(lib), "weight", 3,
                                                                 importance_scores=lib.ones(3)),
    "ln scores of another shape": lambda p, lib: p.ln_structured(_linear(lib), "weight", 3, 1, 0,
                                                                 importance_scores=lib.ones(6, 4)),
    "prune scores of another shape": lambda p, lib: p.L1Unstructured(0.5).prune(lib.ones(3, 4),
                                                                                importance_scores=lib.ones(4)),
    "mask of another shape": lambda p, lib: p.custom_from_mask(_linear(lib), "bias", lib.ones(3)),
    "no such attribute": lambda p, lib: p.l1_unstructured(_linear(lib), "nope", 1),
    "remove unpruned": lambda p, lib: p.remove(_linear(lib), "bias"),
    "remove twice": lambda p, lib: p.remove(p.remove(p.l1_unstructured(_linear(lib), "weight", 3), "weight"),
                                            "weight"),
    "method remove before apply": lambda p, lib: p.L1Unstructured(0.5).remove(_linear(lib)),
    "apply_mask before apply": lambda p, lib: p.L1Unstructured(0.5).apply_mask(_linear(lib)),
    "hook before apply": lambda p, lib: p.L1Unstructured(0.5)(_linear(lib), ()),
    "abstract base": lambda p, lib: p.BasePruningMethod(),
    "empty container's name": lambda p, lib: p.PruningContainer()._tensor_name,
    "container of two unnamed": lambda p, lib: p.PruningContainer(p.Identity(), p.Identity()),
    "container of a non-method": lambda p, lib: _container(p, lib).add_pruning_method(5),
    "container of another tensor's method": lambda p, lib: _container(p, lib).add_pruning_method(
        p.L1Unstructured.apply(_linear(lib), "bias", 1)),
    "two hooks on one tensor": lambda p, lib: _two_hooks(p, lib),
}


def _container(prune, lib):
    m = prune.identity(prune.identity(_linear(lib), "weight"), "weight")
    return next(iter(m._forward_pre_hooks.values()))


def _two_hooks(prune, lib):
    m = prune.l1_unstructured(_linear(lib), "weight", 1)
    extra = prune.L1Unstructured(1)
    extra._tensor_name = "weight"
    m.register_forward_pre_hook(extra)
    prune.l1_unstructured(m, "weight", 1)


@pytest.mark.parametrize("mistake", list(_MISTAKES))
def test_refusals(mistake):
    ours, theirs = _both(lambda lib: _MISTAKES[mistake](_prune(lib), lib))
    assert ours == theirs
    assert isinstance(theirs, tuple) and theirs[0].endswith("Error")


def test_a_refused_amount_leaves_the_module_as_it_was():
    def program(lib):
        prune = _prune(lib)
        first = _linear(lib)
        refusal = _attempt(prune.l1_unstructured, first, "weight", 25)
        again = prune.l1_unstructured(_linear(lib), "weight", 20)
        second = _attempt(prune.l1_unstructured, again, "weight", 5)
        return refusal, _state(first), second, _state(again)

    ours, theirs = _both(program)
    assert ours == theirs
