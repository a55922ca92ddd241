"""torch.nn's compatibility layers against torch's CPU build: the deprecated Container and NLLLoss2d, Torch7's
CrossMapLRN2d (its autograd Function's forward and hand-written backward), SyncBatchNorm outside a distributed
run, DataParallel without GPUs, and nn.utils.stateless.functional_call."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch, warning_texts


def _caught(program, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = program(lib)
    return result, [(w.category, text) for w, text in zip(caught, warning_texts(caught))]


def _copy_parameters(ours, theirs):
    with tg.no_grad():
        for (name, p), (their_name, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert name == their_name
            p.copy_(tg.tensor(q.detach().numpy()))


# ---- Container, NLLLoss2d --------------------------------------------------------------------------------------


def test_container_warns_and_registers_children():
    def program(lib):
        container = lib.nn.Container(first=lib.nn.Linear(2, 3), second=lib.nn.ReLU())

        class Sub(lib.nn.Container):
            pass

        sub = Sub()
        return repr(container), [n for n, _ in container.named_parameters()], repr(sub)

    ours, theirs = _caught(program, tg), _caught(program, torch)
    assert ours == theirs
    assert len(theirs[1]) == 2 and theirs[1][0][0] is FutureWarning


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_2d_is_nll_loss(reduction):
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    target = rng.integers(0, 3, (2, 4, 5))
    weight = np.array([0.2, 1.0, 3.0], dtype=np.float32)

    def program(lib):
        x = lib.tensor(scores, requires_grad=True)
        loss_fn = lib.nn.NLLLoss2d(weight=lib.tensor(weight), ignore_index=1, reduction=reduction)
        loss = loss_fn(lib.log_softmax(x, 1), lib.tensor(target))
        loss.sum().backward()
        return loss.detach().numpy(), x.grad.numpy(), loss.grad_fn.name(), repr(loss_fn), isinstance(
            loss_fn, lib.nn.NLLLoss)

    (ours, our_warnings), (theirs, their_warnings) = _caught(program, tg), _caught(program, torch)
    assert our_warnings == their_warnings and len(their_warnings) == 1
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert ours[2:] == theirs[2:]


# ---- CrossMapLRN2d ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size,channels", [(2, 1), (2, 5), (3, 1), (3, 2), (3, 6), (4, 3), (5, 2), (5, 7), (7, 4)])
def test_cross_map_lrn2d_values_and_gradients(size, channels, dtype):
    rng = np.random.default_rng(size * 10 + channels)
    x = rng.standard_normal((2, channels, 3, 4)).astype(dtype)
    cotangent = rng.standard_normal(x.shape).astype(dtype)

    def program(lib):
        inp = lib.tensor(x, requires_grad=True)
        module = lib.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.8, k=1.5)
        out = module(inp)
        out.backward(lib.tensor(cotangent))
        return out.detach().numpy(), inp.grad.numpy(), out.grad_fn.name(), repr(module)

    ours, theirs = program(tg), program(torch)
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-13}
    np.testing.assert_allclose(ours[0], theirs[0], **tolerance)
    np.testing.assert_allclose(ours[1], theirs[1], **tolerance)
    assert ours[2:] == theirs[2:] and ours[2] == "CrossMapLRN2dBackward"
    assert ours[0].dtype == theirs[0].dtype


def test_cross_map_lrn2d_defaults_and_no_grad_input():
    x = np.random.default_rng(3).standard_normal((1, 4, 2, 2)).astype(np.float32)
    ours = tg.nn.CrossMapLRN2d(3)(tg.tensor(x))
    theirs = torch.nn.CrossMapLRN2d(3)(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    assert ours.grad_fn is None and theirs.grad_fn is None


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)),
    lambda lib: lib.nn.CrossMapLRN2d(1)(lib.ones(1, 2, 2, 2, requires_grad=True)).sum().backward(),
])
def test_cross_map_lrn2d_errors(program):
    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs


# ---- SyncBatchNorm ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 4), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("momentum,track", [(0.1, True), (None, True), (0.3, False)])
def test_sync_batch_norm_runs_as_batch_norm(shape, momentum, track):
    rng = np.random.default_rng(len(shape))
    data = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]

    def program(lib):
        bn = lib.nn.SyncBatchNorm(3, momentum=momentum, track_running_stats=track)
        with lib.no_grad():
            bn.weight.copy_(lib.tensor([0.5, 1.0, 2.0]))
            bn.bias.copy_(lib.tensor([0.1, -0.2, 0.3]))
        outs = []
        for i, d in enumerate(data):
            if i == 2:
                bn.eval()
            x = lib.tensor(d, requires_grad=True)
            y = bn(x)
            (y * y).sum().backward()
            outs += [y.detach().numpy(), x.grad.numpy()]
        buffers = {k: v.numpy().copy() for k, v in bn.state_dict().items()}
        return outs, buffers, y.grad_fn.name(), repr(bn), bn.process_group

    ours, theirs = program(tg), program(torch)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert list(ours[1]) == list(theirs[1])
    for key in ours[1]:
        np.testing.assert_allclose(ours[1][key], theirs[1][key], rtol=1e-5, atol=1e-6, err_msg=key)
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(3)),
    lambda lib: lib.nn.SyncBatchNorm(0)(lib.ones(2, 0, 3)),
    lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(2, 4)),
])
def test_sync_batch_norm_errors(program):
    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs


def test_convert_sync_batchnorm():
    def program(lib):
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3, momentum=0.2),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(4, affine=False), lib.nn.ReLU()),
                                lib.nn.BatchNorm3d(5, bias=False))
        net[1].qconfig = "q"
        net.eval()
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net, process_group="group")
        shared = (converted[1].weight is net[1].weight, converted[1].running_mean is net[1].running_mean,
                  converted[1].num_batches_tracked is net[1].num_batches_tracked)
        return (repr(converted), [type(m).__name__ for m in converted.modules()], shared, converted[1].qconfig,
                converted[1].process_group, converted[1].training, converted is net,
                converted[3].bias is None, converted[2][0].weight is None)

    assert program(tg) == program(torch)
    single = (lambda lib: type(lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.BatchNorm1d(2))).__name__)
    assert single(tg) == single(torch) == "SyncBatchNorm"


# ---- DataParallel -----------------------------------------------------------------------------------------------


def test_data_parallel_without_gpus_calls_the_module():
    if tg.cuda.is_available():
        pytest.skip("tracegrad sees a GPU")
    x = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)

    def program(lib):
        inner = lib.nn.Linear(2, 2)
        wrapped = lib.nn.DataParallel(inner, device_ids=[0, 1], dim=1)
        with lib.no_grad():
            inner.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            inner.bias.zero_()
        out = wrapped(lib.tensor(x))
        return (out.detach().numpy(), out.grad_fn.name(), wrapped.device_ids, hasattr(wrapped, "dim"),
                hasattr(wrapped, "output_device"), wrapped.module is inner, repr(wrapped),
                [n for n, _ in wrapped.named_parameters()], lib.nn.DataParallel is lib.nn.parallel.DataParallel)

    ours, theirs = program(tg), program(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1:] == theirs[1:]
    program = lambda lib: lib.nn.parallel.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2))  # noqa: E731
    assert raised(tg, program) == raised(torch, program)


def test_data_parallel_forward_is_profiled():
    model = tg.nn.DataParallel(tg.nn.Linear(2, 2))
    with tg.profiler.profile() as prof:
        model(tg.ones(1, 2))
    assert "DataParallel.forward" in [e.name for e in prof.events()]


# ---- nn.utils.stateless.functional_call ----------------------------------------------------------------------


class _Values:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.w1 = rng.standard_normal((4, 3)).astype(np.float32)
        self.b1 = rng.standard_normal(4).astype(np.float32)
        self.w2 = rng.standard_normal((2, 4)).astype(np.float32)
        self.x = rng.standard_normal((5, 3)).astype(np.float32)


def _net(lib):
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.fill_(0.1)
    return net


def test_functional_call_replaces_parameters_and_buffers():
    v = _Values(0)

    def program(lib):
        net = _net(lib)
        w1 = lib.tensor(v.w1, requires_grad=True)
        w2 = lib.tensor(v.w2, requires_grad=True)
        mean = lib.zeros(4)
        given = {"0.weight": w1, "0.bias": lib.tensor(v.b1), "3.weight": w2, "1.running_mean": mean}
        out = lib.nn.utils.stateless.functional_call(net, given, (lib.tensor(v.x),))
        out.pow(2).sum().backward()
        restored = (net[0].weight is not w1 and isinstance(net[0].weight, lib.nn.Parameter),
                    net[1].running_mean is not mean, net[0].weight.grad is None)
        return (out.detach().numpy(), w1.grad.numpy(), w2.grad.numpy(), mean.numpy(), restored,
                net[1].running_mean.numpy(), out.grad_fn.name())

    (ours, our_warnings), (theirs, their_warnings) = _caught(program, tg), _caught(program, torch)
    assert our_warnings == their_warnings and their_warnings[0][0] is FutureWarning
    for a, b in zip(ours[:4], theirs[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[4] == theirs[4] == (True, True, True)
    np.testing.assert_allclose(ours[5], theirs[5])
    assert ours[6] == theirs[6]


def test_functional_call_args_kwargs_and_restoring_after_errors():
    def program(lib):
        class Scale(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(lib.ones(2))

            def forward(self, x, *, shift=0.0, fail=False):
                if fail:
                    raise ValueError("inside")
                return x * self.weight + shift

        module = Scale()
        stateless = lib.nn.utils.stateless
        results = [stateless.functional_call(module, {"weight": lib.tensor([2.0, 3.0])}, lib.ones(2)).tolist(),
                   stateless.functional_call(module, {}, (lib.ones(2),), {"shift": 1.0}).tolist()]
        try:
            stateless.functional_call(module, {"weight": lib.zeros(2)}, lib.ones(2), {"fail": True})
        except ValueError as exc:
            results.append(str(exc))
        results.append(module.weight.tolist())
        return results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert program(tg) == program(torch)


class _Tied:
    @staticmethod
    def make(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight
                with lib.no_grad():
                    self.a.weight.copy_(lib.tensor([[0.5, -1.0], [2.0, 0.25]]))
                self.register_buffer("buf", lib.ones(2))

            def forward(self, x):
                return self.b(self.a(x)) + self.buf

        return Tied()


@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call_tied_weights(tie_weights):
    def program(lib):
        module = _Tied.make(lib)
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        out = lib.nn.utils.stateless.functional_call(module, {"a.weight": w}, lib.ones(1, 2),
                                                     tie_weights=tie_weights)
        out.sum().backward()
        return out.detach().tolist(), w.grad.tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = program(tg), program(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.stateless.functional_call(_Tied.make(lib), {"a.weight": lib.ones(2, 2),
                                                                          "b.weight": lib.zeros(2, 2)},
                                                       lib.ones(1, 2)),
    lambda lib: lib.nn.utils.stateless.functional_call(_Tied.make(lib), {"a.weight": lib.ones(2, 2)},
                                                       lib.ones(1, 2), strict=True),
    lambda lib: lib.nn.utils.stateless.functional_call(_Tied.make(lib), {"a.weight": lib.ones(2, 2),
                                                                          "c": lib.ones(1)},
                                                       lib.ones(1, 2), tie_weights=False, strict=True),
    lambda lib: lib.nn.utils.stateless.functional_call(_Tied.make(lib), {"a.nothing.weight": lib.ones(1)},
                                                       lib.ones(1, 2)),
    lambda lib: lib.nn.utils.stateless.functional_call(_Tied.make(lib), {"a.weight": 3.0}, lib.ones(1, 2)),
    lambda lib: lib.nn.utils.stateless.functional_call(lib.nn.DataParallel(lib.nn.Linear(2, 2)), {},
                                                       lib.ones(1, 2)),
])
def test_functional_call_errors(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = raised(torch, program)
        ours = raised(tg, program)
    assert theirs is not None
    if theirs[0] == "TypeError":  # the message prints the offending value (a float here): same text
        assert ours[0] == theirs[0] and ours[1] == theirs[1]
    else:
        assert ours == theirs


def test_functional_call_strict_with_every_name_and_new_attributes():
    def program(lib):
        module = _Tied.make(lib)
        full = {"a.weight": lib.eye(2), "b.weight": lib.eye(2), "buf": lib.zeros(2)}
        strict = lib.nn.utils.stateless.functional_call(module, full, lib.ones(1, 2), strict=True,
                                                        tie_weights=False).tolist()
        # a name the module lacks becomes an attribute for the call only
        extra = lib.nn.utils.stateless.functional_call(module, {"extra": lib.ones(1)}, lib.ones(1, 2))
        return strict, extra.shape == (1, 2), hasattr(module, "extra")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert program(tg) == program(torch)


def test_named_member_accessor():
    for lib in (tg, torch):
        from importlib import import_module

        accessor_module = import_module(f"{lib.__name__}.nn.utils._named_member_accessor")
        net = _net(lib)
        accessor = accessor_module.NamedMemberAccessor(net)
        assert accessor.get_tensor("0.weight") is net[0].weight
        new = lib.zeros(4, 3)
        old = accessor.swap_tensor("0.weight", new)
        assert net[0].weight is new and old is not new
        accessor.set_tensor("0.weight", old)
        assert accessor.check_keys(["0.weight", "zzz"])[1] == ["zzz"]
        assert accessor.get_submodule("3") is net[3]
