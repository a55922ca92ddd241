"""Differences from PyTorch a fuzzer found, compared with torch.

Storages of tensors whose memory is not a C-contiguous NumPy array of its own (a channels-last or transposed
result of an elementwise op, ``unfold``'s strided view); the storage API around them (slices, ``copy_``, typed
storages, ``Tensor.set_`` on a storage); optimizer updates of a float32 parameter by a float64 gradient (allowed
by ``grad_dtype = None``), computed in float64 and rounded once, as PyTorch's TensorIterator does; and
``_to_copy``'s backward, which casts the gradient back to the input's dtype itself, so that it holds when
``grad_dtype = None`` turns the engine's cast off.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

_VALUES = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)

# How a tensor is made: each in the same way in both libraries.
LAYOUTS = {
    "channels_last": lambda lib: lib.tensor(_VALUES).contiguous(memory_format=lib.channels_last),
    "ones_channels_last": lambda lib: lib.ones(2, 3, 2, 2).contiguous(memory_format=lib.channels_last),
    "channels_last_times_two": lambda lib: lib.tensor(_VALUES).contiguous(memory_format=lib.channels_last) * 2,
    "channels_last_relu": lambda lib: lib.relu(lib.tensor(_VALUES).contiguous(memory_format=lib.channels_last)),
    "permuted_neg": lambda lib: lib.tensor(_VALUES[0]).permute(2, 0, 1).neg(),
    "transposed": lambda lib: lib.tensor(np.arange(12.0).reshape(3, 4)).t(),
    "sliced_with_step": lambda lib: lib.tensor(np.arange(12.0)).view(3, 4)[:, ::2],
    "offset_step": lambda lib: lib.tensor(np.arange(12.0))[1::3],
    "expanded": lambda lib: lib.tensor([1.0, 2.0, 3.0]).expand(4, 3),
    "unfolded": lambda lib: lib.tensor(np.arange(10.0)).unfold(0, 3, 2),
    "as_strided": lambda lib: lib.tensor(np.arange(10.0)).as_strided((3, 3), (1, 2), 1),
    "zero_dim": lambda lib: lib.tensor(3.5),
    "selected_zero_dim": lambda lib: lib.tensor([1.0, 2.0, 3.0])[2],
    "empty": lambda lib: lib.empty(0),
    "empty_2d": lambda lib: lib.zeros(2, 0, 3),
    "complex_real_view": lambda lib: lib.view_as_real(lib.tensor(np.arange(4.0) + 1j)),
}


def _storage_facts(t) -> tuple:
    untyped = t.untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = t.storage()
    return (untyped.nbytes(), len(untyped), untyped.tolist(), untyped.data_ptr() == 0,
            t.data_ptr() - untyped.data_ptr(), t.storage_offset(), untyped.is_shared(),
            typed.size(), typed.tolist(), typed.nbytes(), str(typed.dtype), typed.data_ptr() == untyped.data_ptr())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_storage_of_every_layout(layout):
    make = LAYOUTS[layout]
    assert _storage_facts(make(tg)) == _storage_facts(make(torch))


@pytest.mark.parametrize("layout", [k for k in LAYOUTS if not k.startswith("empty")])
def test_writes_through_the_storage_show_in_the_tensor(layout):
    def written(lib):
        t = LAYOUTS[layout](lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = t.storage()
        typed[typed.size() - 1] = -7.0
        t.untyped_storage()[0] = 64  # (the first byte of the first element)
        return t.tolist(), t._version

    assert written(tg) == written(torch)


def test_storage_is_one_object_per_buffer():
    for lib_name, lib in (("tg", tg), ("torch", torch)):
        x = lib.tensor(np.arange(10.0)).unfold(0, 3, 2) * 1
        assert x.untyped_storage() is x.t().untyped_storage(), lib_name
        base = lib.arange(10.0)
        assert base.unfold(0, 3, 2).untyped_storage() is base.untyped_storage(), lib_name


def test_typed_storage_warns_as_torch():
    from tracegrad import _warnings

    def messages(lib, forget_the_first_warning) -> list:
        forget_the_first_warning()  # (each warns once per process)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.ones(2, 3, 2, 2).contiguous(memory_format=lib.channels_last).storage()
        return [(w.category.__name__, str(w.message)) for w in caught]

    ours = messages(tg, lambda: _warnings._SEEN.discard("typed_storage"))
    theirs = messages(torch, lambda: torch.storage._warn_typed_storage_removal.__dict__.pop("has_warned", None))
    assert ours == theirs


def _storage_api(lib) -> list:
    def attempt(program):
        try:
            return program()
        except Exception as e:  # noqa: BLE001 - the error is the observation
            return type(e).__name__, str(e)

    x = lib.arange(12.0).view(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = lib.tensor([1.0, 2.0]).storage()
        other = lib.tensor([3.0, 4.0]).storage()
    return [
        attempt(lambda: x.untyped_storage()[3:9].tolist()),
        attempt(lambda: typed[0:1]),
        attempt(lambda: lib.zeros(3).untyped_storage().copy_(x.untyped_storage())),
        attempt(lambda: typed.clone().tolist()),
        attempt(lambda: typed.copy_(other).tolist()),
        attempt(lambda: typed.type()),
        attempt(lambda: x.untyped_storage().resizable()),
        attempt(lambda: x.untyped_storage()[0:8:2]),
        attempt(lambda: x.untyped_storage()[2.5]),
        *(attempt(lambda i=i: x.untyped_storage()[i]) for i in (-1, -100, 48)),
        *(attempt(lambda i=i: x.untyped_storage().__setitem__(i, 7)) for i in (-1, 48)),
        *(attempt(lambda i=i: typed[i]) for i in (-1, -3, 2)),
        *(attempt(lambda i=i: typed.__setitem__(i, 5.0)) for i in (-1, 2)),
        x.tolist(), typed.tolist(),
    ]


def test_storage_api():
    assert _storage_api(tg) == _storage_api(torch)


def _set_onto_storage(lib) -> list:
    source = lib.arange(10.0)
    outcomes = []
    for args in ((1, (2, 2)), (2, (2, 3), (1, 2)), ()):
        z = lib.zeros(1)
        z.set_(source.untyped_storage(), *args)
        outcomes.append((z.tolist(), z.stride(), z.storage_offset(), z._version,
                         z.untyped_storage() is source.untyped_storage()))
    z = lib.empty(0)
    z.set_(source, 1, (3,), (3,))
    z[0] = 100.0
    outcomes.append((z.tolist(), z.storage_offset(), source[1].item()))
    return outcomes


def test_set_onto_a_storage_with_offset_size_and_stride():
    assert _set_onto_storage(tg) == _set_onto_storage(torch)


# ---- optimizers: a float64 gradient on a float32 parameter ----------------------------------------------------

SGD_SETTINGS = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, weight_decay=0.1),
    dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True),
]


def _sgd_trajectory(lib, settings: dict, shape: tuple, grad_dtype) -> list:
    rng = np.random.default_rng(3)
    p = lib.tensor(rng.standard_normal(shape, dtype=np.float32)).requires_grad_()
    p.grad_dtype = None
    optimizer = lib.optim.SGD([p], **settings)
    states = []
    for step in range(3):
        p.grad = lib.tensor(rng.standard_normal(shape) * (step + 1), dtype=grad_dtype(lib))
        optimizer.step()
        buffer = optimizer.state[p].get("momentum_buffer")
        states.append((p.detach().numpy().tobytes(), str(p.dtype),
                       None if buffer is None else (str(buffer.dtype), buffer.numpy().tobytes())))
    return states


@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=lambda s: ",".join(s))
@pytest.mark.parametrize("shape", [(5, 7), (300, 300)])
def test_sgd_with_a_float64_gradient(settings, shape):
    def float64(lib):
        return lib.float64

    assert _sgd_trajectory(tg, settings, shape, float64) == _sgd_trajectory(torch, settings, shape, float64)


@pytest.mark.parametrize("settings", SGD_SETTINGS[:2], ids=lambda s: ",".join(s))
def test_sgd_float32_bits_unchanged(settings):
    def float32(lib):
        return lib.float32

    assert _sgd_trajectory(tg, settings, (40, 30), float32) == _sgd_trajectory(torch, settings, (40, 30), float32)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "RAdam", "Adamax"])
def test_adam_family_refuses_a_float64_gradient_as_torch(name):
    def outcome(lib):
        p = lib.tensor([1.0, 2.0, 3.0]).requires_grad_()
        p.grad_dtype = None
        optimizer = getattr(lib.optim, name)([p], lr=0.1)
        p.grad = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        with pytest.raises(RuntimeError) as error:
            optimizer.step()
        return str(error.value), p.tolist(), {k: v.tolist() for k, v in optimizer.state[p].items()}

    assert outcome(tg) == outcome(torch)


def test_addcmul_in_float64_rounded_once():
    """RMSprop's and Adagrad's accumulators: ``v.addcmul_(g, g, value=c)`` with a float64 ``g`` (the operation their
    single-tensor step runs for a gradient of another dtype)."""
    rng = np.random.default_rng(5)
    acc, grad = rng.random(1000, dtype=np.float32), rng.standard_normal(1000)
    ours, theirs = (lib.tensor(acc).addcmul_(lib.tensor(grad), lib.tensor(grad), value=0.01).numpy()
                    for lib in (tg, torch))
    assert ours.tobytes() == theirs.tobytes()


# ---- _to_copy's backward casts the gradient itself ----------------------------------------------------------

CONVERSIONS = {
    "double": lambda lib, x: x.double(),
    "half": lambda lib, x: x.half(),
    "float": lambda lib, x: x.float(),
    "to_float64": lambda lib, x: x.to(lib.float64),
    "to_dtype_keyword": lambda lib, x: x.to(dtype=lib.float64),
    "type_class": lambda lib, x: x.type(lib.DoubleTensor),
    "type_string": lambda lib, x: x.type("torch.DoubleTensor"),
    "to_like_tensor": lambda lib, x: x.to(lib.zeros(1, dtype=lib.float64)),
    "to_complex_real": lambda lib, x: x.to(lib.complex64).real,
    "to_complex_scaled_real": lambda lib, x: (x.to(lib.complex64) * (1 + 2j)).real,
}


@pytest.mark.parametrize("leaf_dtype", ["float32", "float64"])
@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_to_copy_backward_casts_with_grad_dtype_none(conversion, leaf_dtype):
    values = np.random.default_rng(1).standard_normal((3, 4))

    def gradient(lib):
        x = lib.tensor(values, dtype=getattr(lib, leaf_dtype)).t().detach().requires_grad_()
        x.grad_dtype = None
        y = CONVERSIONS[conversion](lib, x)
        (y * y + y * 0.75).sum().backward()  # (products and sums only: no kernel of a function's own)
        return str(x.grad.dtype), x.grad.stride(), x.grad.numpy().tobytes()

    assert gradient(tg) == gradient(torch)


def test_to_copy_double_backward_graph():
    values = np.random.default_rng(2).standard_normal(4).astype(np.float32)

    def observed(lib):
        x = lib.tensor(values).requires_grad_()
        h = x.half()
        (g,) = lib.autograd.grad((h * h).sum(), x, create_graph=True)
        g.sum().backward()
        return str(g.dtype), g.grad_fn.name(), g.detach().numpy().tobytes(), x.grad.numpy().tobytes()

    assert observed(tg) == observed(torch)
