"""``repr`` where the random repr test does not reach: complex dtypes (empty ones show their dtype), the default
complex dtype under another default float dtype, ``set_printoptions(edgeitems=0)`` (a size suffix, ``[...]``
summaries), the ``printoptions`` context manager, and forward-mode dual tensors (a ``tangent=`` suffix).
Each case is the same program on tracegrad and torch, and the text must be the same character for character.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

import tracegrad._tensor_str as tg_tensor_str


@pytest.fixture(autouse=True)
def _default_print_state():
    yield
    for lib in (tg, torch):
        lib.set_printoptions(profile="default")
        lib.set_default_dtype(lib.float32)


def _both(program) -> tuple[str, str]:
    return program(torch), program(tg)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(0,), (0, 2), (3, 0, 1)])
def test_empty_complex_tensors_show_their_dtype(dtype, shape):
    expected, got = _both(lambda lib: repr(lib.zeros(shape, dtype=getattr(lib, dtype))))
    assert got == expected
    assert "dtype=torch.complex" in got


@pytest.mark.parametrize("default", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("empty", [False, True])
def test_default_complex_dtype_follows_the_default_float_dtype(default, dtype, empty):
    def program(lib):
        lib.set_default_dtype(getattr(lib, default))
        return repr(lib.ones(0 if empty else 2, dtype=getattr(lib, dtype)))

    expected, got = _both(program)
    assert got == expected


@pytest.mark.parametrize("seed", range(40))
def test_random_complex_tensors(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(0, 3))))
    if seed % 8 == 0:
        shape = (int(rng.integers(1001, 1200)),)  # (summarized)
    scale = 10.0 ** rng.integers(-6, 9, 2)
    values = rng.standard_normal(shape) * scale[0] + 1j * rng.standard_normal(shape) * scale[1]
    if seed % 5 == 0:
        values = np.round(values.real) + 1j * np.round(values.imag)
    dtype = "complex64" if seed % 2 else "complex128"
    expected, got = _both(lambda lib: repr(lib.tensor(values, dtype=getattr(lib, dtype))))
    assert got == expected


_EDGE_PROGRAMS = {
    "small matrix": lambda lib: lib.arange(12.).reshape(3, 4) / 3,
    "summarized vector": lambda lib: lib.arange(2000.),
    "summarized matrix": lambda lib: lib.arange(3000).reshape(30, 100),
    "summarized bools": lambda lib: lib.tensor([[True, False]] * 600),
    "complex": lambda lib: lib.tensor([1 + 2j, 3.5 - 1e-5j]),
    "scalar": lambda lib: lib.tensor(3.25),
    "empty": lambda lib: lib.zeros(0, 3),
    "with grad_fn": lambda lib: lib.ones(2, requires_grad=True) * 2,
}


@pytest.mark.parametrize("options", [{"edgeitems": 0}, {"edgeitems": 0, "threshold": 0}, {"edgeitems": 1, "threshold": 5},
                                     {"precision": 0}, {"linewidth": 10}, {"threshold": 0}])
@pytest.mark.parametrize("name", list(_EDGE_PROGRAMS))
def test_print_options(options, name):
    def program(lib):
        lib.set_printoptions(**options)
        return repr(_EDGE_PROGRAMS[name](lib))

    expected, got = _both(program)
    assert got == expected


def test_no_edge_items_summarizes_to_an_ellipsis_and_shows_the_size():
    tg.set_printoptions(edgeitems=0)
    assert repr(tg.arange(2000.)) == "tensor([...], size=(2000,))"
    assert repr(tg.zeros(30, 100)) == "tensor([...], size=(30, 100))"


def test_printoptions_context_manager_restores_the_options():
    with torch._tensor_str.printoptions(precision=2, edgeitems=1), tg_tensor_str.printoptions(precision=2, edgeitems=1):
        inside = repr(torch.tensor([1.23456] * 5)), repr(tg.tensor([1.23456] * 5))
        assert tg_tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    assert inside[1] == inside[0]
    assert repr(tg.tensor([1.23456])) == repr(torch.tensor([1.23456])) == "tensor([1.2346])"
    assert tg_tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()


def _dual_reprs(lib) -> list[str]:
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        leaf = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        dual = fw.make_dual(leaf, lib.ones(2, 2) * 0.5)
        texts = [repr(dual), repr(dual[0]), repr(dual.t()), repr(dual.sin()), str(dual * dual),
                 repr(lib.arange(3)),  # (no tangent: no suffix)
                 repr(fw.make_dual(lib.zeros(0, 2), lib.zeros(0, 2))),
                 repr(fw.make_dual(lib.arange(2000.), lib.arange(2000.))),
                 repr(fw.make_dual(lib.nn.Parameter(lib.ones(2)), lib.ones(2)))]
    texts.append(repr(dual))  # (after the level: no tangent)
    return texts


def test_dual_tensors_show_their_tangent():
    expected, got = _both(_dual_reprs)
    assert got == expected
    assert "tangent=tensor([[0.5000, 0.5000]," in got[0] and "tangent" not in got[5] and "tangent" not in got[-1]


def _hand_written_node_reprs(lib) -> list[str]:
    copied = lib.ones(3, requires_grad=True) * 1
    copied.copy_(lib.zeros(3))
    assigned = lib.ones(3, requires_grad=True).clone()
    assigned[0] = 5  # (CopySlices: the most common in-place write in a notebook)
    scaled = lib.ones(3, requires_grad=True).clone()
    scaled[1:].mul_(2)
    shuffled = lib.native_channel_shuffle(lib.ones(2, 4, 1, 1, requires_grad=True), 2)
    return [repr(copied), repr(assigned), repr(scaled), repr(shuffled)]


def test_hand_written_nodes_show_their_type_name():
    """PyTorch's repr shows a C++ node's Python type name (``CopySlices``), not its ``name()``
    (``torch::autograd::CopySlices``)."""
    expected, got = _both(_hand_written_node_reprs)
    assert got == expected
    assert "grad_fn=<CopySlices>" in got[1] and "::" not in "".join(got)


def _parameter_with_tangent(lib) -> str:
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0, 3.0]))
        with lib.no_grad():
            p.mul_(fw.make_dual(lib.ones(3), lib.tensor([4.0, 5.0, 6.0])))
        return repr(p)


def test_parameter_shows_requires_grad_before_its_tangent():
    expected, got = _both(_parameter_with_tangent)
    assert got == expected
