"""Differences that the programs of ``tests/test_user_programs6_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.optim.SparseAdam`` did not exist (AttributeError). Without a sparse layout every gradient is dense,
  which torch's SparseAdam refuses at ``step``; its constructor's checks (learning rate, betas, eps, complex
  parameters), defaults, repr and a step without gradients are torch's.
- ``torch.bucketize``/``torch.searchsorted`` of a non-contiguous value, boundary or sorter tensor (a column of a
  feature matrix, ``nums[:, 1]``) ran silently; torch warns once a process for each that it copies it to a
  contiguous tensor (not for an empty input, nor when its checks refuse the call).
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch, warning_texts


def _outcome(build, lib):
    """What ``build(lib)`` gives (a SparseAdam as its repr), or its error's type and message."""
    try:
        built = build(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return repr(built)


# ---- SparseAdam --------------------------------------------------------------------------------------------


def _sparse_adam_after_a_dense_backward(lib):
    lib.manual_seed(0)
    emb = lib.nn.Embedding(4, 2)
    opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
    before = (opt.step(), opt.step(lambda: 3.0), opt.defaults, repr(opt))
    emb(lib.tensor([1, 2])).sum().backward()
    try:
        opt.step()
    except RuntimeError as e:
        return before, str(e), len(opt.state), emb.weight.detach().numpy().tolist()
    return before, None


def test_sparse_adam_refuses_a_dense_gradient():
    assert _sparse_adam_after_a_dense_backward(tg) == _sparse_adam_after_a_dense_backward(torch)


@pytest.mark.parametrize("kwargs", [
    "lr=-1", "lr=0.0", "eps=0.0", "betas=(1.0, 0.5)", "betas=(0.9, 1.0)", "betas=(-0.1, 0.5)", "maximize=True",
    # (values that are no numbers: the TypeError names the operands in torch's order, ``0.0 < lr``)
    "lr='0.1'", "lr=None", "lr=1j", "eps='1e-8'", "lr=float('nan')", "eps=float('nan')",
])
def test_sparse_adam_checks_its_hyperparameters(kwargs):
    def build(lib):
        return eval(f"lib.optim.SparseAdam([lib.zeros(2, requires_grad=True)], {kwargs})").defaults

    assert _outcome(build, tg) == _outcome(build, torch)


def test_sparse_adam_refuses_complex_parameters():
    def build(lib):
        real, cplx = lib.zeros(2, requires_grad=True), lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        return lib.optim.SparseAdam([{"params": [real]}, {"params": [real.detach().requires_grad_(), cplx]}])

    assert _outcome(build, tg) == _outcome(build, torch)


# ---- searchsorted's warnings on non-contiguous inputs ------------------------------------------------------------

_CALLS = {
    "column of values": "lib.bucketize(m[:, 1], b)",
    "strided boundaries": "lib.bucketize(m, b2[::2])",
    "both": "lib.searchsorted(b2[::2], m[:, 1])",
    "a number into strided boundaries": "lib.bucketize(2.5, b2[::2])",
    "expanded values": "lib.searchsorted(b, lib.tensor(1.0).expand(3), right=True)",
    "strided sorter": "lib.searchsorted(b, m[:, 0].contiguous(), sorter=lib.tensor([0, 9, 1, 9, 2, 9, 3, 9])[::2])",
    "transposed 2-d boundaries": "lib.searchsorted(lib.arange(12.).reshape(4, 3).t(), m[:3])",
    "empty column": "lib.bucketize(m[:0, 1], b)",
    "refused side": "lib.searchsorted(b2[::2], m[:, 1], side='up')",
    "contiguous": "lib.bucketize(m, b, out_int32=True)",
    "bool, strided (refused after the warning)": "lib.searchsorted(lib.tensor([False, True, True])[::2], "
                                                 "lib.tensor([True, False]))",
    "complex values": "lib.bucketize(lib.tensor([1j, 2.0])[::2], b)",
    "complex boundaries": "lib.searchsorted(lib.tensor([1.0, 2.0], dtype=lib.complex128), m[:, 1])",
    "float with bool": "lib.searchsorted(b, lib.tensor([True, False]))",
    "half": "lib.searchsorted(b.half(), m[:, 1].half())",
}


def _warnings_of(lib, call: str) -> tuple:
    names = {"__name__": __name__, "lib": lib, "m": lib.arange(12.0).reshape(3, 4) / 3, "b": lib.tensor([1.0, 2.0, 3.0, 4.0]),
             "b2": lib.tensor([1.0, 9.0, 2.0, 9.0, 3.0, 9.0])}
    was = lib.is_warn_always_enabled()
    lib.set_warn_always(True)  # (torch warns once a process: show every call's warnings)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = eval(call, names).tolist()
            except (RuntimeError, NotImplementedError) as e:
                result = type(e).__name__, str(e)
    finally:
        lib.set_warn_always(was)
    return result, warning_texts(caught), [(w.category.__name__, w.filename) for w in caught]


@pytest.mark.parametrize("case", list(_CALLS))
def test_searchsorted_warns_about_non_contiguous_inputs(case):
    assert _warnings_of(tg, _CALLS[case]) == _warnings_of(torch, _CALLS[case])


def test_warning_at_the_caller_shown_for_code_run_without_a_module_name():
    """Code exec'd in globals without ``__name__`` (a notebook tool, ``eval(code, {"torch": ...})``) sees the
    warning torch's C++ code raises at its line, as in torch (tracegrad's warn_at_caller dropped it)."""
    code = compile("x = lib.arange(10.)[::2]\nlib.bucketize(x, lib.tensor([1., 2., 3.]))\n", "<cell>", "exec")
    shown = {}
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_warn_always(True)
            try:
                exec(code, {"lib": lib})
            finally:
                lib.set_warn_always(False)
        shown[lib.__name__] = [(w.category, text, w.filename, w.lineno) for w, text in zip(caught, warning_texts(caught))]
    assert shown["tracegrad"] == shown["torch"] and shown["torch"]


def test_searchsorted_with_batched_boundaries_and_no_values():
    """Rows of boundaries with no values each give an empty result (tracegrad failed reshaping them)."""
    def build(lib):
        out = lib.searchsorted(lib.arange(12.).reshape(4, 3).t(), lib.arange(12.).reshape(4, 3)[:3, :0])
        return out.dtype, tuple(out.shape)

    assert repr(build(tg)).replace("tracegrad", "torch") == repr(build(torch))


@pytest.mark.parametrize("call", ["lib.deg2rad(z)", "lib.rad2deg(z)", "z.deg2rad_()", "z.rad2deg()",
                                  "lib.deg2rad(z, out=lib.empty(1, dtype=lib.complex64))", "lib.deg2rad(r)"])
def test_degree_conversions_refuse_complex_tensors(call):
    """An angle in degrees is real: torch refuses a complex tensor (tracegrad scaled it)."""
    def outcome(lib):
        names = {"lib": lib, "z": lib.tensor([1 + 1j]), "r": lib.tensor([180.0])}
        try:
            return eval(call, names).tolist()
        except RuntimeError as e:
            return str(e)

    assert outcome(tg) == outcome(torch)
