"""Review of the watched optimizer steps and clipping (tracegrad/optim/_watched.py, nn/utils/clip_grad.py), against
torch: what a mode sees of Adam's single-tensor update with a tensor ``lr`` (one ``_to_scalar`` per group) and with
amsgrad (the final ``is_complex``/``view_as_complex``; complex views in torch's order), the name in the refusal of
the profiler operators, the step hooks' arguments (``self`` first), and clip_grad_norm_'s bits without a mode."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch
from _tf_mode_lib import call_name_and_types, recorded_run


def _adam_run(lib, *, complex_: bool = False, tensor_lr: bool = False, **options):
    rng = np.random.default_rng(0)
    params = []
    for shape in [(2, 2), (3,)]:
        a = rng.standard_normal(shape).astype(np.float32)
        params.append(lib.nn.Parameter(lib.tensor(a * (1 + 1j) if complex_ else a)))
    grads = [lib.tensor(rng.standard_normal(p.shape).astype(np.float32) * (1 - 2j if complex_ else 1))
             for p in params]
    opt = lib.optim.Adam(params, lr=lib.tensor(0.01) if tensor_lr else 0.01, foreach=False, **options)

    def run():
        for _ in range(2):
            for p, g in zip(params, grads):
                p.grad = g.clone()
            opt.step()
    return run


def _with_arg_kinds(lib, func, types, args, kwargs) -> tuple:
    """The call's name and types, and the class of its first argument (which tensor ``view_as_real`` views)."""
    first = args[0] if args else None
    return (*call_name_and_types(lib, func, types), type(first).__name__ if isinstance(first, lib.Tensor) else None)


@pytest.mark.parametrize("options", [dict(tensor_lr=True), dict(tensor_lr=True, weight_decay=0.1, maximize=True),
                                     dict(amsgrad=True), dict(amsgrad=True, complex_=True),
                                     dict(complex_=True, weight_decay=0.1)], ids=str)
def test_adam_single_tensor_steps_seen_by_a_mode(options):
    assert (recorded_run(tg, _adam_run(tg, **options), _with_arg_kinds)
            == recorded_run(torch, _adam_run(torch, **options), _with_arg_kinds))


@pytest.mark.parametrize("returned_by", ["_record_function_enter_new", "_record_function_exit"])
def test_profiler_operator_refused_by_every_handler(returned_by):
    """torch names an operator of torch.ops in its refusal as ``torch.ops`` + ``profiler.<name>``, run together."""
    def refusal(lib) -> tuple:
        class Refusing(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func.__name__.startswith(returned_by):
                    return NotImplemented
                return func(*args, **(kwargs or {}))

        try:
            with Refusing(), lib.autograd.profiler.record_function("label"):
                pass
        except TypeError as error:
            return type(error), str(error).split(";")[0]
        return None

    assert refusal(tg) == refusal(torch)


@pytest.mark.parametrize("under_a_mode", [False, True])
def test_step_hooks_get_the_optimizer_among_the_arguments(under_a_mode):
    """torch's hooks get the step's ``*args``, the optimizer first; a pre-hook's replacement is the whole call's."""
    def seen(lib) -> list:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        opt = lib.optim.SGD([p], lr=0.1)
        log: list = []
        opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", [a is o for a in args], kwargs)))
        opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: lib.tensor(2.0)}))
        opt.register_step_post_hook(lambda o, args, kwargs: log.append(("post", [a is o for a in args],
                                                                         sorted(kwargs))))

        def run():
            log.append(("loss", float(opt.step())))
        if under_a_mode:
            recorded_run(lib, run)
        else:
            run()
        return log

    assert seen(tg) == seen(torch)


@pytest.mark.parametrize("norm_type", [1.0, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("size", [3, 100, 1000])
def test_clip_grad_norm_bits_without_a_mode(norm_type, size):
    """The NumPy path's norms in ATen's reduction order (they were NumPy's: an ulp off for most sizes)."""
    def clipped(lib) -> list:
        rng = np.random.default_rng(size)
        params = [lib.nn.Parameter(lib.zeros(size)) for _ in range(3)]
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(size).astype(np.float32))
        total = lib.nn.utils.clip_grad_norm_(params, 1.0, norm_type)
        alone = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type)
        return [t.numpy().tobytes() for t in (total, alone, *(p.grad for p in params))]

    assert clipped(tg) == clipped(torch)
