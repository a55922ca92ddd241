"""Argument mistakes in the public functions torch writes in Python (``torch/functional.py``: einsum, tensordot,
cdist, meshgrid, unique, lu, norm, stft...) and in the tensor-from-data factories are refused as torch refuses them.

torch's Python does its own checks first (Python's errors, or its own texts: ``tensordot expects dims to be int
or ...``), then calls a C++ operator (``_VF.einsum(equation, operands)``, ``_VF.cdist(x1, x2, p, mode)``,
``torch._unique2(input, sorted=...)``) whose parser words the refusal. Each call below runs in both libraries;
the exception type and the whole message must be torch's, or both must accept the call.

Left out, where tracegrad still answers differently (see ``LEFT_OUT``): a negative device index, ``stft``
arguments torch's parser reads as its other overload (``onesided="a"`` taken as ``pad_mode``), the C++ printing of
a tensor inside a message, and "Could not infer dtype of" naming a class defined in a module.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import Unknown, raised_quietly, spoiled_calls, tg, torch


def _env(lib) -> dict:
    """The names the snippets use, made afresh for each run."""
    return {"torch": lib, "F": lib.nn.functional, "x": lib.ones(2, 3), "y": lib.ones(3, 4), "v": lib.ones(3),
            "m": lib.ones(3, 3) + lib.eye(3), "t": lib.tensor([1, 2, 2, 3]), "sig": lib.ones(64), "np": np,
            "U": Unknown}


def _outcome(lib, source: str):
    return raised_quietly(lib, source, _env(lib))


# ---- written mistakes ----------------------------------------------------------------------------------------

SNIPPETS = [
    # einsum: the three forms, then the C++ operator's parser (equation a str, operands tensors)
    "torch.einsum(3, x)", 'torch.einsum("ij")', "torch.einsum()", "torch.einsum(x)", 'torch.einsum("ij,jk", [x, y])',
    'torch.einsum("ij,jk", (x, y))', 'torch.einsum("ij,jk", [x, 3])', 'torch.einsum("ij,jk", x, [y])',
    'torch.einsum(["i", "j"], x)', 'torch.einsum(b"ij", x)', "torch.einsum(x, [0, 1], y, [1, 2])",
    "torch.einsum(x, [0, 1], y, [1, 2], [0, 2])", "torch.einsum(x, [0, 60])", 'torch.einsum(x, [0, "a"])',
    "torch.einsum(x, [0, 1.5])", 'torch.einsum(x, [0, 1], "a", [1, 2])', "torch.einsum(x, [0, 1], y)",
    "torch.einsum(x, 3)", "torch.einsum(x, [0, 1], [0, 1], [0])", 'torch.einsum("ij,jk->ik", x, y, path=None)',
    'torch.einsum("ij->ji", x, bogus=1)', 'torch.einsum("aA", x)', "torch.einsum(x, [26, 0])",
    # tensordot: dims read in Python (its RuntimeError texts), the two lists parsed by the C++ operator
    "torch.tensordot(x, y, (1, 0))", "torch.tensordot(x, y, [[1]])", "torch.tensordot(x, y, ([1], [0], [1]))",
    "torch.tensordot(x, y, ([1.5], [0]))", "torch.tensordot(x, y, ([1], [True]))", 'torch.tensordot(x, y, ([1], ["a"]))',
    "torch.tensordot(x, y, torch.tensor([[1], [0]]))", "torch.tensordot(x, y, torch.tensor(1))",
    "torch.tensordot(x, y, torch.tensor([1, 0, 1]))", "torch.tensordot(x, y, 5)", "torch.tensordot(x, y, -1)",
    "torch.tensordot(x, y, 1, out=1)", "torch.tensordot(x, y, 1, bogus=1)", 'torch.tensordot(x, y, dims="ab")',
    "torch.tensordot(x, y, dims={1: 2})", 'torch.tensordot(x, y, "a")', "torch.tensordot(x, y, 1.5)",
    # cdist: the mode compared in Python, then (x1, x2, p, mode) parsed
    "torch.cdist(x, 3)", 'torch.cdist(x, x, "a")', "torch.cdist(x, x, None)", "torch.cdist(x, x, -1.0)",
    "torch.cdist(x, x, True)", 'torch.cdist(x, x, compute_mode="bad")', "torch.cdist(x, x, compute_mode=3)",
    "torch.cdist(x, x, compute_mode=None)", "torch.cdist(x, x, compute_mode=[1])",
    'torch.cdist(x, x, 2, "use_mm_for_euclid_dist", 4)', "torch.cdist(x, x, p=2, bogus=1)", "torch.cdist(v, v)",
    "torch.cdist(x, torch.ones(2, 4))",
    # the functions passing their tensors on as one tuple
    "torch.broadcast_tensors([x, v[:1]])", "torch.broadcast_tensors()", "torch.broadcast_tensors(x, bogus=1)",
    "torch.broadcast_tensors(x, torch.ones(4))", "torch.cartesian_prod([v, v])", "torch.cartesian_prod()",
    "torch.cartesian_prod(v, x)", "torch.cartesian_prod(v, bogus=1)", 'torch.meshgrid(v, v, indexing="bad")',
    "torch.meshgrid(v, v, indexing=3)", "torch.meshgrid(v, v, indexing=None)", 'torch.meshgrid([v, v], indexing="xy")',
    'torch.meshgrid([v, 3], indexing="xy")', 'torch.meshgrid((v, v), v, indexing="xy")',
    'torch.meshgrid(indexing="xy")', "torch.meshgrid(v, v, bogus=1)", 'torch.meshgrid(v, "ij")',
    "torch.chain_matmul()", "torch.chain_matmul([x, y])", "torch.chain_matmul(x, y, out=3)",
    "torch.chain_matmul(x, y, bogus=1)", "torch.chain_matmul(x, v)", "torch.chain_matmul(x)", "torch.atleast_1d()",
    "torch.atleast_1d([x, v])", "torch.atleast_1d([x, 3])", "torch.atleast_1d((x,), v)", "torch.atleast_2d([])",
    "torch.atleast_3d(x, bogus=1)", "torch.atleast_2d(x, v)", "torch.atleast_3d([[x]])", "torch.block_diag([x])",
    "torch.block_diag(x, 3)", "torch.block_diag(x, bogus=1)", "torch.block_diag()",
    # broadcast_shapes and unravel_index: Python all through
    "torch.broadcast_shapes()", "torch.broadcast_shapes((2, 3), (2.5,))", "torch.broadcast_shapes((-1,), (3,))",
    "torch.broadcast_shapes((True,), (3,))", "torch.broadcast_shapes(torch.Size([2]), [2])",
    "torch.broadcast_shapes((2, 3), (4,))", "torch.broadcast_shapes(2, (2, 3))", 'torch.broadcast_shapes((2, "a"))',
    "torch.broadcast_shapes((2, 3), shape=1)", "torch.unravel_index(t, 5.0)", "torch.unravel_index(t, (2, 2.0))",
    "torch.unravel_index(t, (-2, 2))", "torch.unravel_index(torch.ones(2), (2, 2))", "torch.unravel_index(t)",
    # norm: the vector or matrix norm torch's Python picks answers
    'torch.norm(x, "abc")', 'torch.norm(x, dim="a")', 'torch.norm(x, 2, "a")', 'torch.norm(x, "fro", "a")',
    'torch.norm(x, "nuc", "a")', "torch.norm(x, None, 1.5)", 'torch.norm(x, 2, 1, "a")', 'torch.norm(x, 2, dtype="a")',
    'torch.norm(x, 2, 1, False, None, "a")', 'torch.norm(x, "fro", (0, 1, 2))', 'torch.norm(x, "nuc")',
    "torch.norm(x, [1])", "torch.norm(x, 2, 1, False, 3)", "torch.norm(x, bogus=1)", 'x.norm("abc")',
    'x.norm(2, 1, False, "a")', "x.norm(2, 1, False, None, 3)", "x.norm(bogus=1)",
    # unique, unique_consecutive, lu: torch dispatches on a flag to Python functions that Python's errors name
    "x.unique(1, 2, 3, 4, 5)", "x.unique(bogus=1)", "x.unique(U())", "x.unique_consecutive(1, 2, 3, 4)",
    "x.unique_consecutive(U())", "torch.unique(t, return_counts=1)", "torch.unique(t, dim=0, sorted=None)",
    "torch.unique(t, True, True, True, 0)", 'torch.unique(t, dim="a")', "m.lu(1, 2, 3)", "m.lu(U())",
    "m.lu(bogus=1)", "torch.lu(m, out=3)", "torch.lu(m, out=(m,))", "torch.lu(m, get_infos=True)",
    # split: the tensor's method, then split or split_with_sizes
    "x.split(True)", "x.split(1, 2, 3)", 'x.split("a")', "x.split(1.5)", "x.split([1, 1.5])",
    "torch.split(x, [1, 1.5])", "torch.split(x, torch.tensor(1))", 'torch.split(x, 1, "a")',
    "torch.split(x, 1, bogus=1)", "torch.split(x)",
    # stft: F.pad for a centred signal, then the operator's parser
    "x.stft(16, bogus=1)", "x.istft(16, bogus=1)", 'torch.istft(x, "a")', "torch.stft(sig, 16)", 'torch.stft(sig, 16, return_complex="a")',
    'torch.stft(sig, 16, window="a", return_complex=True)', 'torch.stft(sig, 16, pad_mode="bogus", return_complex=True)',
    'torch.stft(sig, 16, center=False, align_to_window="a", return_complex=True)',
    # the C++ F.logsigmoid (torch._C._nn.log_sigmoid)
    "F.logsigmoid(x, 1)", 'F.logsigmoid("a")', "F.logsigmoid(x, bogus=1)",
    # the tensor-from-data factories: their options are keyword-only, each of a parser type
    "torch.tensor([1, 2], 3)", "torch.tensor([1, 2], torch.float32)", "torch.tensor([1, 2], bogus=1)",
    'torch.tensor([1, 2], dtype="float32")', "torch.tensor([1, 2], dtype=3)", "torch.tensor([1, 2], dtype=None)",
    "torch.tensor([1, 2], dtype=float)", "torch.tensor([1, 2], requires_grad=1)",
    'torch.tensor([1.0, 2], requires_grad="yes")', "torch.tensor([1.0, 2], requires_grad=None)",
    'torch.tensor([1, 2], device="bogus")', "torch.tensor([1, 2], device=3.5)", "torch.tensor([1, 2], device=None)",
    'torch.tensor([1, 2], device="cpu")', 'torch.tensor([1, 2], pin_memory="a")', "torch.tensor([1, 2], pin_memory=1)",
    "torch.tensor(data=[1, 2])", 'torch.tensor("a")', "torch.tensor()", "torch.as_tensor()", "torch.asarray()",
    "torch.tensor(bogus=1)", "torch.as_tensor(dtype=torch.float32)", "torch.tensor([1, 2], names=None)",
    "torch.tensor(np.ones(2), np.ones(2))", "torch.asarray(np.ones(2), bogus=np.ones(2))", "torch.tensor(None)", "torch.as_tensor([1, 2], 3)",
    "torch.as_tensor([1, 2], torch.float32)", "torch.as_tensor([1, 2], dtype=torch.float32)",
    "torch.as_tensor([1, 2], bogus=1)", 'torch.as_tensor([1, 2], dtype="float32")', "torch.as_tensor([1, 2], dtype=3)",
    'torch.as_tensor([1, 2], device="bogus")', "torch.as_tensor([1, 2], device=3.5)",
    "torch.as_tensor([1, 2], requires_grad=True)", "torch.as_tensor(data=[1, 2])", 'torch.as_tensor(x, dtype="a")',
    'torch.as_tensor(np.ones(2), dtype="a")', "torch.as_tensor(np.ones(2), 3)", "torch.asarray([1, 2], 3)",
    "torch.asarray([1, 2], bogus=1)", 'torch.asarray([1, 2], dtype="float32")', "torch.asarray([1, 2], dtype=3)",
    'torch.asarray([1, 2], device="bogus")', "torch.asarray([1, 2], device=3.5)", 'torch.asarray([1, 2], copy="a")',
    "torch.asarray([1, 2], copy=1)", 'torch.asarray([1.0, 2], requires_grad="a")',
    "torch.asarray([1.0, 2], requires_grad=1)", "torch.asarray(obj=[1, 2])", 'torch.asarray(x, dtype="a")',
    'torch.asarray(np.ones(2), dtype="a")', 'torch.asarray(x, copy="a")', 'torch.asarray(x, requires_grad="a")',
    "torch.from_numpy([1, 2])", "torch.from_numpy(x)", "x.new_tensor([1, 2], 3)", "x.new_tensor([1, 2], bogus=1)",
    'x.new_tensor([1, 2], dtype="a")', "x.new_tensor([1, 2], dtype=3)", 'x.new_tensor([1, 2], device="bogus")',
    'x.new_tensor([1.0, 2], requires_grad="a")', "x.new_tensor([1.0, 2], requires_grad=1)", "x.new_tensor()",
    "x.new_tensor(data=[1, 2])", 'x.new_tensor("a")',
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_snippet_refused_as_torch(snippet):
    assert _outcome(tg, snippet) == _outcome(torch, snippet)


# ---- generated mistakes: each function's valid call, spoiled ------------------------------------------------------
#
# One extra positional object, an unknown keyword, nine extra positional objects, and each positional argument
# replaced by a string, None, 1.5 and True.

VALID = {
    "einsum": "'ij,jk->ik', x, y", "tensordot": "x, y, 1", "cdist": "x, x", "cartesian_prod": "v, v",
    "block_diag": "x, y", "broadcast_tensors": "x, v[:1]", "meshgrid": "v, v", "chain_matmul": "x, y",
    "atleast_1d": "x", "atleast_2d": "v", "atleast_3d": "x", "split": "x, 1", "norm": "x", "unique": "t",
    "unique_consecutive": "t", "lu": "m", "broadcast_shapes": "(2, 3), (3,)", "unravel_index": "t, (2, 2)",
    "stft": "sig, 16, 4, 16, None, True, 'reflect', False, None, True", "tensor": "[1, 2]",
    "as_tensor": "[1, 2]", "asarray": "[1, 2]", "from_numpy": "np.ones(2)",
}

# Spoiled calls not compared: the message prints the object's address (the same in both only by chance)
# Spoiled calls left out, and why (each still answered differently by tracegrad)
LEFT_OUT = {
    # torch's parser takes the call as stft's other overload (onesided as pad_mode), which then fails in C++
    "torch.stft(sig, 16, 4, 16, None, True, 'reflect', False, \"a\", True)",
}


def _spoiled() -> list[str]:
    return [call for call in spoiled_calls("torch.", VALID) if call not in LEFT_OUT]


@pytest.mark.parametrize("call", _spoiled())
def test_spoiled_call_refused_as_torch(call):
    assert _outcome(tg, call) == _outcome(torch, call)


def test_left_out_calls_still_differ():
    """The calls left out above, still answered differently: a fix shows here (then move them back in)."""
    for call in sorted(LEFT_OUT):
        assert _outcome(tg, call) != _outcome(torch, call), call


def test_python_functions_of_torch_are_listed():
    """Every public function torch writes in Python that tracegrad has is swept above (or is no function of
    tensors: seeds, defaults, printing, saving)."""
    import inspect

    not_of_tensors = {
        "are_deterministic_algorithms_enabled", "from_dlpack", "get_default_device", "get_deterministic_debug_mode",
        "get_float32_matmul_precision", "get_rng_state", "initial_seed", "is_deterministic_algorithms_warn_only_enabled",
        "is_storage", "is_tensor", "is_warn_always_enabled", "load", "manual_seed", "save", "seed",
        "set_default_device", "set_default_dtype", "set_default_tensor_type", "set_deterministic_debug_mode",
        "set_float32_matmul_precision", "set_printoptions", "set_rng_state", "set_warn_always", "typename",
        "use_deterministic_algorithms",
        # torch's deprecated stubs that only raise, and the low-rank helpers (see the report)
        "eig", "lstsq", "matrix_rank", "solve", "symeig", "pca_lowrank", "svd_lowrank",
    }
    python_functions = {name for name in dir(torch) if not name.startswith("_") and hasattr(tg, name)
                        and inspect.isfunction(getattr(torch, name))}
    assert python_functions - not_of_tensors - set(VALID) == set()
