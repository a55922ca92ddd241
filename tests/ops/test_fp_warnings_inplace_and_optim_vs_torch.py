"""In-place operators, optimizers and the training utilities stay silent under strict warning filters (vs torch).

PyTorch computes ``inf * 0``, ``log(0)`` or a float16 cast of ``1e38`` silently. NumPy warns, and a filter a
program installs after the import (``simplefilter("error")``, pytest's ``filterwarnings = error``) made that an
exception inside in-place operators (``x.mul_(0)``, ``x *= 0``, ``exp_``, ``copy_`` into float16,
``scatter_add_``...) and inside every optimizer's update but SGD's with an inf gradient. They now give torch's
values without a word; a closure's, a step hook's or a user's own optimizer's NumPy code still warns or raises as
the user set it to.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_same_bits, run_both, tg

INF, NAN = float("inf"), float("nan")
ROW = [INF, -INF, NAN, 1.0, 0.0, -1.0, 1e38, -1e38]


def _strict(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


def _ignoring(fn):
    """``fn()`` as without a strict filter, for the values tracegrad gave before (its warnings out of sight)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _x(lib):
    return lib.tensor([ROW] * 4)


def _idx(lib, *values):
    return lib.tensor(values, dtype=lib.int64)


INPLACE = {
    "x.mul_(0)": lambda lib, x: x.mul_(0),
    "x *= 0": lambda lib, x: x.__imul__(0),
    "x.sub_(x)": lambda lib, x: x.sub_(x),
    "x -= x.clone()": lambda lib, x: x.__isub__(x.clone()),
    "x.div_(0)": lambda lib, x: x.div_(0),
    "x /= x.clone()": lambda lib, x: x.__itruediv__(x.clone()),
    "x.add_(x, alpha=2)": lambda lib, x: x.add_(x.clone(), alpha=2),
    "x.pow_(2)": lambda lib, x: x.pow_(2),
    "x.exp_()": lambda lib, x: x.exp_(),
    "x.log_()": lambda lib, x: x.log_(),
    "x.sqrt_()": lambda lib, x: x.sqrt_(),
    "x.rsqrt_()": lambda lib, x: x.rsqrt_(),
    "x.reciprocal_()": lambda lib, x: x.reciprocal_(),
    "x.log1p_()": lambda lib, x: x.log1p_(),
    "x.expm1_()": lambda lib, x: x.expm1_(),
    "x.cosh_()": lambda lib, x: x.cosh_(),
    "x.atanh_()": lambda lib, x: x.atanh_(),
    "x.logit_()": lambda lib, x: x.logit_(),
    "x.fmod_(0)": lambda lib, x: x.fmod_(0),
    "x.remainder_(0)": lambda lib, x: x.remainder_(0),
    "x.hypot_(x)": lambda lib, x: x.hypot_(x.clone()),
    "x.xlogy_(x)": lambda lib, x: x.xlogy_(x.clone()),
    "x.addcmul_(x, x)": lambda lib, x: x.addcmul_(x.clone(), x.clone(), value=2),
    "x.addcdiv_(x, x)": lambda lib, x: x.addcdiv_(x.clone(), x.clone()),
    "x.lerp_(-x, 0.25)": lambda lib, x: x.lerp_(-x, 0.25),
    "x.clamp_(x, 1)": lambda lib, x: x.clamp_(x * 0, None),
    "x.abs_()": lambda lib, x: x.abs_(),
    "x.cumsum_(1)": lambda lib, x: x.cumsum_(1),
    "x.cumprod_(1)": lambda lib, x: x.cumprod_(1),
    "x.addmm_(x, x.T)": lambda lib, x: x[:, :4].addmm_(x[:, :3], x[:, :3].t()),
    "x.addr_(u, v)": lambda lib, x: x.addr_(x[0, :4].clone(), x[1].clone()),
    "x.index_add_": lambda lib, x: x.index_add_(0, _idx(lib, 0, 0), x[:2].clone(), alpha=3),
    "x.index_put_(accumulate=True)": lambda lib, x: x.index_put_((_idx(lib, 1, 1),), x[:2] * -1, accumulate=True),
    "x.put_(accumulate=True)": lambda lib, x: x.put_(_idx(lib, 0, 6, 6), x[0, :3] * -1, accumulate=True),
    "x.scatter_add_": lambda lib, x: x.scatter_add_(1, lib.zeros(4, 8, dtype=lib.int64), x.clone()),
    "x.scatter_(multiply)": lambda lib, x: x.scatter_(1, lib.zeros(4, 8, dtype=lib.int64), 0.0, reduce="multiply"),
    "x.scatter_reduce_(prod)": lambda lib, x: x.scatter_reduce_(1, lib.zeros(4, 8, dtype=lib.int64), x * 0, "prod"),
    "x.scatter_reduce_(mean)": lambda lib, x: x.scatter_reduce_(1, lib.zeros(4, 8, dtype=lib.int64), -x, "mean"),
    "x.masked_scatter_": lambda lib, x: x.masked_scatter_(x > 0, x * 0),
    "x.nan_to_num_()": lambda lib, x: x.nan_to_num_(),
    "x[0] = x[1] * 0": lambda lib, x: _set(x, 0, x[1] * 0),
    "x.copy_(x * 0)": lambda lib, x: x.copy_(x * 0),
    "mul(x, 0, out=x)": lambda lib, x: lib.mul(x, 0, out=x),
    "float16 copy_(1e38)": lambda lib, x: lib.zeros(4, 8, dtype=lib.float16).copy_(x),
    "float16 h[:] = 1e38": lambda lib, x: _set(lib.zeros(4, 8, dtype=lib.float16), slice(None), x),
    "float16 h[0] = tensor(1e38)": lambda lib, x: _set(lib.zeros(4, 8, dtype=lib.float16), 0, x[0, 6]),
    "float16 fill_(tensor(1e38))": lambda lib, x: lib.zeros(4, 8, dtype=lib.float16).fill_(x[0, 6]),
    "float16 mul_(1e4)": lambda lib, x: lib.full((4, 8), 1000.0, dtype=lib.float16).mul_(1e4),
    "float16 add_(h)": lambda lib, x: (lambda h: h.add_(h))(lib.full((4, 8), 60000.0, dtype=lib.float16)),
    "float16 add_(x) from float": lambda lib, x: lib.zeros(4, 8, dtype=lib.float16).add_(x[0, 6]),
    "x.clone().mul_(x), backward": lambda lib, x: _backward(lib, x, lambda y, x: y.mul_(x)),
    "x.clone().div_(x), backward": lambda lib, x: _backward(lib, x, lambda y, x: y.div_(x)),
    "x.clone().exp_(), backward": lambda lib, x: _backward(lib, x, lambda y, x: y.exp_()),
}


def _set(t, key, value):
    t[key] = value
    return t


def _backward(lib, x, write):
    x = x.detach().requires_grad_()
    y = x.clone()
    write(y, x)
    (y * lib.tensor(ROW)).sum().backward()
    return x.grad


# (NumPy's exp and PyTorch's vectorised one round a few results differently, with or without a filter)
CLOSE_TO_TORCH = {"x.exp_()", "x.clone().exp_(), backward"}


def _assert_matches(ours, theirs, plain, close: bool = False):
    """tracegrad's values under the strict filter are its values without it, bit for bit, and torch's (bit for bit
    too unless ``close``: then to float32's last bits, with the same NaNs and infinities)."""
    assert_same_bits(ours, plain)
    if close:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)
    else:
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_ops_give_torchs_values_under_simplefilter_error(name):
    ours, theirs = run_both(lambda lib: _strict(lambda: INPLACE[name](lib, _x(lib))))
    _assert_matches(ours, theirs, _ignoring(lambda: INPLACE[name](tg, _x(tg))), close=name in CLOSE_TO_TORCH)


def test_gradient_of_an_inplace_op_on_a_view_under_simplefilter_error():
    def program(lib):
        x = _x(lib).requires_grad_()
        y = x.clone()
        _strict(lambda: y[1:].mul_(0))
        _strict(lambda: (y * _x(lib)).sum().backward())
        return y.detach(), x.grad

    (y, g), (ty, tg_) = run_both(program)
    assert_same_bits(y, ty)
    assert_same_bits(g, tg_)


# ---- optimizers ----------------------------------------------------------------------------------------------

OPTIMIZERS = {
    "SGD(momentum, nesterov)": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    "Adam": ("Adam", {}),
    "Adam(amsgrad, weight_decay)": ("Adam", dict(amsgrad=True, weight_decay=0.1)),
    "Adam(maximize)": ("Adam", dict(maximize=True)),
    "AdamW": ("AdamW", {}),
    "RMSprop(centered, momentum)": ("RMSprop", dict(centered=True, momentum=0.9)),
    "Adagrad": ("Adagrad", {}),
    "Adadelta": ("Adadelta", {}),
    "Adamax": ("Adamax", {}),
    "NAdam": ("NAdam", {}),
    "NAdam(decoupled)": ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    "RAdam": ("RAdam", {}),
    "RAdam(decoupled)": ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    "ASGD": ("ASGD", {}),
    "Rprop": ("Rprop", {}),
}
FOREACH_LESS = {
    "LBFGS": ("LBFGS", {}),
    "LBFGS(strong_wolfe)": ("LBFGS", dict(line_search_fn="strong_wolfe")),
    "Adafactor": ("Adafactor", {}),
}
PARAM, GRADIENT_FACTORS = [1.0, 2.0, 1e38, -1e38], [INF, 1e38, 1e38, 0.0]
# (torch's strong-Wolfe line search fails on an inf gradient, IndexError: gradients whose dot products overflow)
OVERFLOWING = [1.0, 2.0, 3.0, 4.0], [1e20, 1e19, 1.0, 2.0]
VALUES = {"LBFGS(strong_wolfe)": OVERFLOWING}


def _param(lib, values=PARAM):
    return lib.nn.Parameter(lib.tensor(values))


def _closure(lib, opt, p, factors=GRADIENT_FACTORS):
    def closure():
        opt.zero_grad()
        loss = (p * lib.tensor(factors)).sum()
        loss.backward()
        return loss

    return closure


# Updates whose values differ from torch's with these gradients with or without a filter (RAdam's foreach update
# in the last bit, ASGD's foreach update -inf for NaN, Adafactor beyond 1e37): compared with tracegrad's own
# values without the filter only.
NOT_TORCHS_VALUES = {("RAdam", True), ("RAdam(decoupled)", True), ("ASGD", True), ("Adafactor", None)}


def _steps(lib, name, options, strict=True, values=(PARAM, GRADIENT_FACTORS), steps=3):
    p = _param(lib, values[0])
    opt = getattr(lib.optim, name)([p], **options)
    closure = _closure(lib, opt, p, values[1])
    for _ in range(steps):
        (_strict if strict else _ignoring)(lambda: opt.step(closure))
    return [p.detach(), *(v for v in opt.state[p].values() if isinstance(v, lib.Tensor))]


def _assert_same_steps(name, foreach, cls, options):
    values = VALUES.get(name, (PARAM, GRADIENT_FACTORS))
    ours, theirs = run_both(lambda lib: _steps(lib, cls, options, values=values))
    plain = _steps(tg, cls, options, strict=False, values=values)
    assert len(ours) == len(theirs) == len(plain)
    for a, b, c in zip(ours, theirs, plain):
        assert_same_bits(a, c)
        if (name, foreach) not in NOT_TORCHS_VALUES:
            assert_same_bits(a, b)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_step_with_inf_gradients_under_simplefilter_error(name, foreach):
    cls, options = OPTIMIZERS[name]
    _assert_same_steps(name, foreach, cls, {**options, "foreach": foreach})


@pytest.mark.parametrize("name", FOREACH_LESS)
def test_optimizer_without_foreach_with_inf_gradients_under_simplefilter_error(name):
    cls, options = FOREACH_LESS[name]
    _assert_same_steps(name, None, cls, options)


def test_muon_with_inf_gradients_under_simplefilter_error():
    def program(lib):
        p = lib.nn.Parameter(lib.tensor([[1.0, 2.0], [1e38, -1e38]]))
        opt = lib.optim.Muon([p])
        for _ in range(2):
            p.grad = lib.tensor([[INF, 1e38], [1e38, 0.0]])
            _strict(opt.step)
        return p.detach()

    assert_same_bits(*run_both(program))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Rprop"])
def test_differentiable_step_with_inf_gradients_under_simplefilter_error(name):
    def program(lib):
        w = lib.tensor([1.0, 2.0, 1e38, -1e38], requires_grad=True)
        p = w * 1
        p.retain_grad()
        opt = getattr(lib.optim, name)([p], differentiable=True)
        _strict(lambda: (p * lib.tensor(GRADIENT_FACTORS)).sum().backward(inputs=[p]))
        _strict(opt.step)
        return p.detach()

    assert_same_bits(*run_both(program))


# ---- training utilities --------------------------------------------------------------------------------------


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, INF])
def test_clip_grad_norm_with_inf_gradients_under_simplefilter_error(norm_type, foreach):
    def program(lib):
        p, q = _param(lib), lib.nn.Parameter(lib.ones(3))
        p.grad, q.grad = lib.tensor(GRADIENT_FACTORS), lib.tensor([1e38, 1.0, -1e38])
        total = _strict(lambda: lib.nn.utils.clip_grad_norm_([p, q], 1.0, norm_type, foreach=foreach))
        return total, p.grad, q.grad

    for a, b in zip(*run_both(program)):
        assert_same_bits(a, b)


def test_clip_grad_value_with_nan_gradients_under_simplefilter_error():
    def program(lib):
        p = _param(lib)
        p.grad = lib.tensor([NAN, INF, -1e38, 0.5])
        _strict(lambda: lib.nn.utils.clip_grad_value_([p], 1.0))
        return p.grad

    assert_same_bits(*run_both(program))


# inf gradients (the step skipped, the scale backed off); finite ones, with a scale that grows past float's range
# (torch's kernel keeps it where it was)
SCALER_VALUES = {"inf": (PARAM, GRADIENT_FACTORS), "growing": ([1.0, 2.0, 3.0, 4.0], [1e-38, 2e-38, 0.0, 1e-38])}


@pytest.mark.parametrize("values", SCALER_VALUES)
def test_grad_scaler_under_simplefilter_error(values):
    def program(lib):
        param, factors = SCALER_VALUES[values]
        p = _param(lib, param)
        opt = lib.optim.Adam([p])
        scaler = lib.amp.GradScaler("cpu", init_scale=3e38, growth_interval=1)
        scales = []
        for _ in range(3):
            opt.zero_grad()
            loss = _strict(lambda: (p * lib.tensor(factors)).sum())
            _strict(scaler.scale(loss).backward)
            _strict(lambda: scaler.unscale_(opt))
            _strict(lambda: scaler.step(opt))
            _strict(scaler.update)
            scales.append(scaler.get_scale())
        return p.detach(), p.grad, scales

    (p, g, scales), (tp, tg_, tscales) = run_both(program)
    assert_same_bits(p, tp)
    assert_same_bits(g, tg_)
    assert scales == tscales


def test_lr_schedulers_and_swa_with_inf_gradients_under_simplefilter_error():
    def program(lib):
        lib.manual_seed(0)
        p = _param(lib)
        opt = lib.optim.Adam([p], lr=lib.tensor(0.01))
        schedulers = [lib.optim.lr_scheduler.ExponentialLR(opt, gamma=1e-30),
                      lib.optim.lr_scheduler.ReduceLROnPlateau(opt)]
        averaged = lib.optim.swa_utils.AveragedModel(lib.nn.Linear(2, 2))
        model = lib.nn.Linear(2, 2)
        with lib.no_grad():
            model.weight.fill_(1e38)
            model.bias.fill_(-INF)
        for _ in range(3):
            _strict(lambda: opt.step(_closure(lib, opt, p)))
            _strict(schedulers[0].step)
            _strict(lambda: schedulers[1].step(NAN))
            _strict(lambda: averaged.update_parameters(model))
        return p.detach(), opt.param_groups[0]["lr"], *averaged.module.parameters()

    for a, b in zip(*run_both(program)):
        assert_same_bits(a, b)


INITS = {
    "normal_(std=inf)": lambda lib, t: lib.nn.init.normal_(t, 0.0, INF),
    "trunc_normal_(std=1e38)": lambda lib, t: lib.nn.init.trunc_normal_(t, 0.0, 1e38, -3e38, 3e38),
    "xavier_uniform_(gain=1e38)": lambda lib, t: lib.nn.init.xavier_uniform_(t, gain=1e38),
    "xavier_normal_(gain=inf)": lambda lib, t: lib.nn.init.xavier_normal_(t, gain=INF),
    "orthogonal_(gain=inf)": lambda lib, t: lib.nn.init.orthogonal_(t, gain=INF),
    "sparse_(std=inf)": lambda lib, t: lib.nn.init.sparse_(t, 0.5, std=INF),
    "Tensor.normal_(std=inf)": lambda lib, t: t.normal_(0.0, INF),
    "Tensor.cauchy_(sigma=1e38)": lambda lib, t: t.cauchy_(0.0, 1e38),
    "Tensor.log_normal_(mean=100)": lambda lib, t: t.log_normal_(100.0, 10.0),
    "Tensor.exponential_(1e-45)": lambda lib, t: t.exponential_(1e-45),
}


@pytest.mark.parametrize("name", INITS)
def test_initialisations_under_simplefilter_error(name):
    def program(lib):
        lib.manual_seed(0)
        return _strict(lambda: INITS[name](lib, lib.empty(4, 4)))

    assert_same_bits(*run_both(program))


# ---- the user's code is not silenced ------------------------------------------------------------------------

ALL_OPTIMIZERS = {**OPTIMIZERS, **FOREACH_LESS}


def _overflowing_closure(lib, opt, p):
    inner = _closure(lib, opt, p)

    def closure():
        np.float64(1e308) * 10.0  # the user's own NumPy overflow
        return inner()

    return closure


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_closures_numpy_warning_still_raises_under_simplefilter_error(name):
    def program(lib):
        cls, options = ALL_OPTIMIZERS[name]
        p = _param(lib)
        opt = getattr(lib.optim, cls)([p], **options)
        with pytest.raises(RuntimeWarning, match="overflow"):
            _strict(lambda: opt.step(_overflowing_closure(lib, opt, p)))
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
            opt.step(_overflowing_closure(lib, opt, p))
        return p.detach()

    run_both(program)


@pytest.mark.parametrize("name", ["Adam", "LBFGS"])
def test_closures_numpy_warning_only_warns_under_default_filters(name):
    def program(lib):
        cls, options = ALL_OPTIMIZERS[name]
        p = _param(lib, OVERFLOWING[0])
        opt = getattr(lib.optim, cls)([p], **options)
        inner = _closure(lib, opt, p, OVERFLOWING[1])

        def closure():
            np.float64(1e308) * 10.0
            return inner()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            opt.step(closure)
        return p.detach(), sorted({str(w.message) for w in caught})

    (p, ours), (tp, theirs) = run_both(program)
    assert_same_bits(p, tp)
    assert "overflow encountered in scalar multiply" in ours
    assert theirs == ["overflow encountered in scalar multiply"]


def test_step_hooks_numpy_warning_still_raises_under_simplefilter_error():
    def program(lib):
        p = _param(lib)
        opt = lib.optim.Adam([p])
        opt.register_step_pre_hook(lambda *args: np.float64(1e308) * 10.0)
        with pytest.raises(RuntimeWarning, match="overflow"):
            _strict(lambda: opt.step(_closure(lib, opt, p)))

    run_both(program)


def test_a_user_optimizers_own_numpy_arithmetic_still_raises_under_simplefilter_error():
    def program(lib):
        class Halving(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.5})

            def step(self, closure=None):
                for group in self.param_groups:
                    np.float32(3e38) * np.float32(10)  # the user's own NumPy overflow
                    with lib.no_grad():
                        for p in group["params"]:
                            p.mul_(group["lr"])

        class LoudAdam(lib.optim.Adam):
            def step(self, closure=None):
                np.float64(1e308) * 10.0
                return super().step(closure)

        class QuietAdam(lib.optim.Adam):
            def step(self, closure=None):
                with np.errstate(over="ignore"):  # (silenced by the user: then Adam's update runs)
                    np.float64(1e308) * 10.0
                return super().step(closure)

        params = []
        for cls in (Halving, LoudAdam, QuietAdam):
            p = _param(lib)
            p.grad = lib.tensor(GRADIENT_FACTORS)
            opt = cls([p])
            if cls is QuietAdam:
                _strict(opt.step)
            else:
                with pytest.raises(RuntimeWarning, match="overflow"):
                    _strict(opt.step)
            params.append(p.detach())
        return params

    for a, b in zip(*run_both(program)):
        assert_same_bits(a, b)
