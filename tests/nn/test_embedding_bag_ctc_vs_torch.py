"""embedding_bag and ctc_loss, by tracegrad and by torch: random cases with the same outputs, gradients (weight,
per_sample_weights, log_probs), recorded graphs and saved values; errors and warnings in torch's words; double
backward and forward-mode AD failing as torch's do; the EmbeddingBag and CTCLoss modules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, to_numpy, torch

# ---- embedding_bag: random cases ------------------------------------------------------------------------------


def _bag_case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    mode = ("sum", "mean", "max")[seed % 3]
    num, dim = int(rng.integers(3, 7)), int(rng.integers(1, 4))
    two_d = rng.random() < 0.3
    case = {"mode": mode, "weight": rng.standard_normal((num, dim)), "dtype": ("float64", "float32")[seed % 2 == 1],
            "padding_idx": int(rng.integers(-num, num)) if rng.random() < 0.4 else None,
            "scale_grad_by_freq": mode != "max" and rng.random() < 0.3}
    if two_d:
        case["input"] = rng.integers(0, num, (int(rng.integers(1, 4)), int(rng.integers(1, 4))))
        case["offsets"] = None
        case["include_last_offset"] = False
    else:
        n = int(rng.integers(0, 9))
        case["input"] = rng.integers(0, num, n)
        cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(0, 4))))
        case["include_last_offset"] = bool(rng.random() < 0.4)
        case["offsets"] = np.concatenate([[0], cuts] + ([[n]] if case["include_last_offset"] else [])).astype(np.int64)
    if mode == "sum" and rng.random() < 0.5:
        case["per_sample_weights"] = rng.standard_normal(case["input"].shape)
    case["int32"] = bool(rng.random() < 0.2)
    return case


def _run_bag(lib, case: dict, seed: int):
    dtype = getattr(lib, case["dtype"])
    weight = lib.tensor(case["weight"], dtype=dtype, requires_grad=True)
    index_dtype = lib.int32 if case["int32"] else lib.int64
    psw = case.get("per_sample_weights")
    psw = None if psw is None else lib.tensor(psw, dtype=dtype, requires_grad=True)
    offsets = None if case["offsets"] is None else lib.tensor(case["offsets"], dtype=index_dtype)
    out = lib.nn.functional.embedding_bag(
        lib.tensor(case["input"], dtype=index_dtype), weight, offsets, mode=case["mode"], per_sample_weights=psw,
        include_last_offset=case["include_last_offset"], padding_idx=case["padding_idx"],
        scale_grad_by_freq=case["scale_grad_by_freq"])
    fn = out.grad_fn
    saved = [to_numpy(getattr(fn, f"_saved_result{k}")) for k in (1, 2, 3)] + [fn._saved_padding_idx, fn._saved_mode]
    cotangent = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(cotangent, dtype=dtype))
    return out, weight.grad, None if psw is None else psw.grad, recorded_graph([out]), saved


@pytest.mark.parametrize("seed", range(90))
def test_embedding_bag_random_vs_torch(seed: int):
    case = _bag_case(seed)
    ours, theirs = _run_bag(tg, case, seed), _run_bag(torch, case, seed)
    tol = dict(rtol=1e-5, atol=1e-6) if case["dtype"] == "float32" else dict(rtol=1e-10, atol=1e-12)
    assert_close(ours[:3], theirs[:3], check_dtype=True, **tol)
    assert ours[3] == theirs[3]
    # (sum mode: torch leaves bag_size, and so max_indices, uninitialised: compare offset2bag and the attributes)
    checked = [0, 3, 4] if case["mode"] == "sum" else range(5)
    for a, b in ((ours[4][k], theirs[4][k]) for k in checked):
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        else:
            assert a == b


def test_embedding_bag_max_ties_and_nan_as_torch():
    """The first maximum wins a tie; a NaN counts only as a bag's first entry, as in torch's loop."""
    weight = [[1.0, float("nan")], [1.0, 2.0], [float("nan"), 3.0]]

    def run(lib):
        w = lib.tensor(weight, dtype=lib.float64, requires_grad=True)
        out, _, _, max_indices = lib.embedding_bag(w, lib.tensor([0, 1, 1, 2, 2, 0]), lib.tensor([0, 3]), False, 2)
        out.backward(lib.ones_like(out))
        return out, max_indices, w.grad

    ours, theirs = run(tg), run(torch)
    assert_close(ours[0], theirs[0])
    assert to_numpy(ours[1]).tolist() == to_numpy(theirs[1]).tolist()
    assert_close(ours[2], theirs[2])


def test_embedding_bag_max_norm_renormalises_weight_as_torch():
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((6, 3)) * 3

    def run(lib, norm_type):
        w = lib.tensor(weight, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor([1, 2, 2, 5]), w, lib.tensor([0, 2]), max_norm=1.5,
                                              norm_type=norm_type)
        out.sum().backward()
        return out, w.detach(), w.grad, w._version

    for norm_type in (2.0, 1.0):
        ours, theirs = run(tg, norm_type), run(torch, norm_type)
        assert_close(ours[:3], theirs[:3], rtol=1e-6, atol=1e-7)
        assert ours[3] == theirs[3]


def test_torch_embedding_bag_returns_four_tensors():
    def run(lib):
        w = lib.tensor(np.arange(12.0).reshape(4, 3))
        return lib.embedding_bag(w, lib.tensor([3, 1, 1, 0]), lib.tensor([0, 1, 1]), False, 1, False, None, False, -4)

    ours, theirs = run(tg), run(torch)
    assert len(ours) == 4
    assert_close(ours, theirs, check_dtype=True)


# ---- embedding_bag: errors, warnings, double backward, forward AD ---------------------------------------------

_W = np.arange(30.0).reshape(10, 3)
_I = [1, 2, 4, 5, 4, 3, 2, 9]


def _bag_call(lib, input=_I, weight=None, offsets=(0, 4), **kw):
    weight = lib.tensor(_W) if weight is None else weight
    offsets = None if offsets is None else lib.tensor(list(offsets))
    return lib.nn.functional.embedding_bag(lib.tensor(input), weight, offsets, **kw)


BAG_ERRORS = {
    "float_indices": lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1.0, 2.0]), lib.tensor(_W),
                                                                 lib.tensor([0])),
    "float_offsets": lambda lib: lib.nn.functional.embedding_bag(lib.tensor(_I), lib.tensor(_W),
                                                                 lib.tensor([0.0, 4.0])),
    "index_out_of_range": lambda lib: _bag_call(lib, [1, 10]),
    "negative_index_max": lambda lib: _bag_call(lib, [1, -1], mode="max"),
    "index_out_of_range_fast_path": lambda lib: _bag_call(lib, [1, 10], weight=lib.tensor(_W, dtype=lib.float32),
                                                          mode="sum"),
    "first_offset": lambda lib: _bag_call(lib, offsets=(1, 4)),
    "first_offset_int32": lambda lib: lib.nn.functional.embedding_bag(
        lib.tensor(_I, dtype=lib.int32), lib.tensor(_W), lib.tensor([2, 4], dtype=lib.int32)),
    "last_offset": lambda lib: _bag_call(lib, offsets=(0, 9)),
    "include_last_offset_no_offsets": lambda lib: _bag_call(lib, offsets=(), include_last_offset=True),
    "psw_mean": lambda lib: _bag_call(lib, per_sample_weights=lib.ones(8, dtype=lib.float64)),
    "psw_shape": lambda lib: _bag_call(lib, mode="sum", per_sample_weights=lib.ones(7, dtype=lib.float64)),
    "psw_dtype": lambda lib: _bag_call(lib, mode="sum", per_sample_weights=lib.ones(8, dtype=lib.float32)),
    "native_psw_mean": lambda lib: lib.embedding_bag(lib.tensor(_W), lib.tensor(_I), lib.tensor([0, 4]), False, 1,
                                                     False, lib.ones(8, dtype=lib.float64)),
    "native_psw_2d": lambda lib: lib.embedding_bag(lib.tensor(_W), lib.tensor(_I), lib.tensor([0, 4]), False, 0,
                                                   False, lib.ones(2, 4, dtype=lib.float64)),
    "weight_1d": lambda lib: _bag_call(lib, weight=lib.tensor(_W[0])),
    "native_weight_1d": lambda lib: lib.embedding_bag(lib.tensor(_W[0]), lib.tensor(_I), lib.tensor([0, 4])),
    "weight_long": lambda lib: _bag_call(lib, weight=lib.tensor(_W).long()),
    "2d_with_offsets": lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.tensor(_W),
                                                                   lib.tensor([0])),
    "1d_without_offsets": lambda lib: _bag_call(lib, offsets=None),
    "2d_offsets": lambda lib: lib.nn.functional.embedding_bag(lib.tensor(_I), lib.tensor(_W),
                                                              lib.tensor([[0], [4]])),
    "3d_input": lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[[1]]]), lib.tensor(_W)),
    "native_0d_input": lambda lib: lib.embedding_bag(lib.tensor(_W), lib.tensor(1), lib.tensor([0])),
    "native_2d_offsets": lambda lib: lib.embedding_bag(lib.tensor(_W), lib.tensor(_I), lib.tensor([[0], [4]])),
    "mode": lambda lib: _bag_call(lib, mode="median"),
    "native_mode": lambda lib: lib.embedding_bag(lib.tensor(_W), lib.tensor(_I), lib.tensor([0, 4]), False, 3),
    "max_scale_grad_by_freq": lambda lib: _bag_call(lib, mode="max", scale_grad_by_freq=True),
    "max_sparse": lambda lib: _bag_call(lib, mode="max", sparse=True),
    "padding_idx_high": lambda lib: _bag_call(lib, padding_idx=10),
    "padding_idx_low": lambda lib: _bag_call(lib, padding_idx=-11),
    "empty_2d_rows": lambda lib: lib.nn.functional.embedding_bag(lib.zeros(2, 0, dtype=lib.int64), lib.tensor(_W)),
}


@pytest.mark.parametrize("name", sorted(BAG_ERRORS))
def test_embedding_bag_errors_match_torch(name: str):
    ours, theirs = raised(tg, BAG_ERRORS[name]), raised(torch, BAG_ERRORS[name])
    assert theirs is not None
    # (the offsets' class is named in one message: the libraries' tensor classes differ in name only)
    assert (ours[0], ours[1].replace("tracegrad._tensor.Tensor", "torch.Tensor")) == theirs


def test_embedding_bag_swapped_arguments_warn_as_torch():
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.nn.functional.embedding_bag(lib.tensor(_W), lib.tensor(_I), lib.tensor([0, 4]))
        return out, [(w.category, str(w.message)) for w in caught]

    ours, theirs = run(tg), run(torch)
    assert_close(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_embedding_bag_double_backward_as_torch():
    """EmbeddingBagBackwardBackward0 raises when run; the per_sample_weights gradient records NotImplemented."""

    def run(lib):
        w = lib.tensor(_W, requires_grad=True)
        psw = lib.tensor(np.linspace(-1, 1, 8), requires_grad=True)
        out = _bag_call(lib, weight=w, mode="sum", per_sample_weights=psw)
        gw, gpsw = lib.autograd.grad(out.sum(), (w, psw), create_graph=True)
        return recorded_graph([gw, gpsw]), raised(lib, lambda _: gw.sum().backward()), \
            raised(lib, lambda _: gpsw.sum().backward())

    assert run(tg) == run(torch)


def test_embedding_bag_forward_ad_error_as_torch():
    def run(lib):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            w = fwad.make_dual(lib.tensor(_W), lib.ones(10, 3, dtype=lib.float64))
            return raised(lib, lambda _: _bag_call(lib, weight=w))

    assert run(tg) == run(torch)


# ---- ctc_loss: random cases -----------------------------------------------------------------------------------


def _ctc_case(seed: int) -> dict:
    rng = np.random.default_rng(1000 + seed)
    steps, batch, classes, longest = (int(rng.integers(1, 8)), int(rng.integers(1, 4)), int(rng.integers(2, 6)),
                                      int(rng.integers(0, 5)))
    log_probs = np.log(rng.dirichlet(np.ones(classes), size=(steps, batch)))
    blank = int(rng.integers(0, classes))
    labels = [c for c in range(classes) if c != blank]
    target_lengths = rng.integers(0, longest + 1, batch)
    concatenated = rng.random() < 0.5
    shape = (int(target_lengths.sum()),) if concatenated else (batch, longest)
    targets = rng.choice(labels, size=shape)
    if rng.random() < 0.3:
        targets[...] = labels[0]  # repeated labels need a blank between them
    unbatched = batch == 1 and concatenated and rng.random() < 0.5
    return {"log_probs": log_probs[:, 0] if unbatched else log_probs, "targets": targets,
            "input_lengths": rng.integers(0, steps + 1, batch), "target_lengths": target_lengths,
            "as_tensors": bool(rng.random() < 0.5), "dtype": ("float64", "float32")[seed % 4 == 3],
            "kw": {"blank": blank, "reduction": ("none", "mean", "sum")[seed % 3],
                   "zero_infinity": bool(rng.random() < 0.5)}}


def _run_ctc(lib, case: dict, seed: int):
    x = lib.tensor(case["log_probs"], dtype=getattr(lib, case["dtype"]), requires_grad=True)
    lengths = [lib.tensor(case[k]) if case["as_tensors"] else tuple(int(v) for v in case[k])
               for k in ("input_lengths", "target_lengths")]
    out = lib.nn.functional.ctc_loss(x, lib.tensor(case["targets"]), *lengths, **case["kw"])
    cotangent = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(cotangent, dtype=out.dtype))
    return out, x.grad, recorded_graph([out])


@pytest.mark.parametrize("seed", range(80))
def test_ctc_loss_random_vs_torch(seed: int):
    case = _ctc_case(seed)
    ours, theirs = _run_ctc(tg, case, seed), _run_ctc(torch, case, seed)
    tol = dict(rtol=1e-4, atol=1e-5) if case["dtype"] == "float32" else dict(rtol=1e-9, atol=1e-10)
    for a, b in zip(ours[:2], theirs[:2]):
        a, b = to_numpy(a), to_numpy(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, equal_nan=True, **tol)
    assert ours[2] == theirs[2]


def test_ctc_loss_saved_values_as_torch():
    rng = np.random.default_rng(5)

    def run(lib, lengths):
        x = lib.tensor(np.log(rng.dirichlet(np.ones(4), size=(5, 2))), requires_grad=True)
        out = lib.nn.functional.ctc_loss(x, lib.tensor([[1, 2], [3, 3]], dtype=lib.int32), *lengths,
                                         reduction="none")
        fn = out.grad_fn
        return [fn.name(), fn._saved_blank, fn._saved_zero_infinity, fn._saved_input_lengths,
                fn._saved_target_lengths, str(fn._saved_targets.dtype).split(".")[-1],
                to_numpy(fn._saved_result0), to_numpy(fn._saved_result1)]

    for lengths in (((5, 5), (2, 2)), ("tensors",)):
        state = rng.bit_generator.state
        got = run(tg, lengths if lengths[0] != "tensors" else (tg.tensor([5, 5]), tg.tensor([2, 2])))
        rng.bit_generator.state = state
        want = run(torch, lengths if lengths[0] != "tensors" else (torch.tensor([5, 5]), torch.tensor([2, 2])))
        assert got[:6] == want[:6]
        np.testing.assert_allclose(got[6], want[6], rtol=1e-12)
        np.testing.assert_allclose(got[7], want[7], rtol=1e-12)


def test_torch_ctc_loss_defaults_to_no_reduction_as_torch():
    """torch.ctc_loss's signature says reduction=Mean, yet its binding returns the unreduced losses."""

    def run(lib):
        x = lib.tensor(np.log(np.full((3, 2, 3), 1 / 3)))
        return lib.ctc_loss(x, lib.tensor([[1], [2]]), lib.tensor([3, 2]), lib.tensor([1, 1]))

    assert_close(run(tg), run(torch))


# ---- ctc_loss: errors, double backward, forward AD ---------------------------------------------------------------

_LP = np.log(np.full((6, 3, 5), 0.2))
_TG = [[1, 2, 3], [1, 1, 4], [2, 3, 4]]


def _ctc_call(lib, lp=None, targets=None, il=(6, 5, 4), tl=(3, 2, 1), **kw):
    lp = lib.tensor(_LP) if lp is None else lp
    targets = lib.tensor(_TG) if targets is None else targets
    il = lib.tensor(list(il)) if isinstance(il, tuple) else il
    tl = lib.tensor(list(tl)) if isinstance(tl, tuple) else tl
    return lib.nn.functional.ctc_loss(lp, targets, il, tl, **kw)


CTC_ERRORS = {
    "float_input_lengths": lambda lib: _ctc_call(lib, il=lib.tensor([6.0, 5.0, 4.0])),
    "bool_target_lengths": lambda lib: _ctc_call(lib, tl=lib.tensor([True, True, True])),
    "blank_high": lambda lib: _ctc_call(lib, blank=5),
    "blank_negative": lambda lib: _ctc_call(lib, blank=-1),
    "input_lengths_size": lambda lib: _ctc_call(lib, il=(6, 5)),
    "target_lengths_size": lambda lib: _ctc_call(lib, tl=(3, 2)),
    "negative_target_length": lambda lib: _ctc_call(lib, tl=(3, -1, 1)),
    "negative_input_length": lambda lib: _ctc_call(lib, il=(6, -1, 1)),
    "input_length_too_long": lambda lib: _ctc_call(lib, il=(7, 1, 1)),
    "targets_too_short": lambda lib: _ctc_call(lib, targets=lib.tensor(_TG)[:, :2]),
    "targets_batch": lambda lib: _ctc_call(lib, targets=lib.tensor(_TG)[:2]),
    "concatenated_size": lambda lib: _ctc_call(lib, targets=lib.tensor(_TG).reshape(-1)),
    "targets_3d": lambda lib: _ctc_call(lib, targets=lib.tensor(_TG).reshape(3, 3, 1)),
    "unbatched_target_size": lambda lib: _ctc_call(lib, lp=lib.tensor(_LP[:, 0]), targets=lib.tensor(_TG[0]),
                                                   il=lib.tensor(6), tl=lib.tensor(2)),
    "log_probs_4d": lambda lib: _ctc_call(lib, lp=lib.tensor(_LP[None])),
    "log_probs_long": lambda lib: _ctc_call(lib, lp=lib.tensor(_LP).long()),
    "reduction": lambda lib: _ctc_call(lib, reduction="average"),
}


@pytest.mark.parametrize("name", sorted(CTC_ERRORS))
def test_ctc_loss_errors_match_torch(name: str):
    ours, theirs = raised(tg, CTC_ERRORS[name]), raised(torch, CTC_ERRORS[name])
    assert theirs is not None
    assert ours == theirs


def test_ctc_loss_mixed_length_kinds_raise_type_error():
    ours, theirs = (raised(lib, lambda lib: _ctc_call(lib, tl=[3, 2, 1])) for lib in (tg, torch))
    assert ours[0] == theirs[0] == "TypeError"


def test_ctc_loss_double_backward_as_torch():
    def run(lib):
        x = lib.tensor(_LP, requires_grad=True)
        (g,) = lib.autograd.grad(_ctc_call(lib, x), (x,), create_graph=True)
        return recorded_graph([g]), raised(lib, lambda _: g.sum().backward())

    assert run(tg) == run(torch)


def test_ctc_loss_forward_ad_error_as_torch():
    def run(lib):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(_LP), lib.ones(6, 3, 5, dtype=lib.float64))
            return raised(lib, lambda _: _ctc_call(lib, x))

    assert run(tg) == run(torch)


# ---- modules ----------------------------------------------------------------------------------------------------


MODULES = {
    "bag_default": lambda lib: lib.nn.EmbeddingBag(5, 3),
    "bag_options": lambda lib: lib.nn.EmbeddingBag(5, 3, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True,
                                                   mode="sum", include_last_offset=True, padding_idx=-1),
    "bag_max": lambda lib: lib.nn.EmbeddingBag(4, 2, mode="max", padding_idx=1),
    "ctc_default": lambda lib: lib.nn.CTCLoss(),
    "ctc_options": lambda lib: lib.nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_repr_and_state_dict_as_torch(name: str):
    ours, theirs = MODULES[name](tg), MODULES[name](torch)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [(n, p.requires_grad) for n, p in ours.named_parameters()] == \
        [(n, p.requires_grad) for n, p in theirs.named_parameters()]
    if name.startswith("bag") and ours.padding_idx is not None:
        assert not to_numpy(ours.weight[ours.padding_idx]).any()


def test_embedding_bag_module_forward_and_from_pretrained_as_torch():
    weight = np.random.default_rng(7).standard_normal((6, 4))

    def run(lib, freeze):
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(weight), freeze=freeze, mode="sum", padding_idx=0)
        out = bag(lib.tensor([[1, 0, 2], [5, 5, 3]]), per_sample_weights=lib.tensor(np.linspace(0.5, 2, 6).reshape(2, 3)))
        if out.requires_grad:
            out.sum().backward()
        return repr(bag), bag.weight.requires_grad, out, bag.weight.grad

    for freeze in (True, False):
        ours, theirs = run(tg, freeze), run(torch, freeze)
        assert ours[:2] == theirs[:2]
        assert_close(ours[2:], theirs[2:])
    errors = [raised(lib, lambda lib: lib.nn.EmbeddingBag.from_pretrained(lib.zeros(3))) for lib in (tg, torch)]
    assert errors[0] == errors[1] is not None
    errors = [raised(lib, lambda lib: lib.nn.EmbeddingBag(3, 2, padding_idx=3)) for lib in (tg, torch)]
    assert errors[0] == errors[1] is not None


def test_ctc_loss_module_as_torch():
    rng = np.random.default_rng(11)
    lp = np.log(rng.dirichlet(np.ones(4), size=(5, 2)))

    def run(lib):
        x = lib.tensor(lp, requires_grad=True)
        out = lib.nn.CTCLoss(blank=3, zero_infinity=True)(x, lib.tensor([0, 1, 2]), (5, 1), (2, 1))
        out.backward()
        return out, x.grad, recorded_graph([out])

    ours, theirs = run(tg), run(torch)
    assert_close(ours[:2], theirs[:2], rtol=1e-10, atol=1e-12)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 0])
@pytest.mark.parametrize("offsets", [[0, 2, 4], [0, 2, 6], [0, 3, 3], [0, 1]])
def test_include_last_offset_short_of_the_input(offsets, padding_idx, mode, dtype):
    """A last offset short of the input's end: torch's fast sum and mean stop the last bag there (the mean still
    divides by the count to the end); max, and the path with a padding index, run to the end."""
    weight = np.arange(20, dtype=dtype).reshape(10, 2)
    indices = [1, 0, 3, 4, 5, 6] if padding_idx == 0 else [1, 2, 3, 4, 5, 6]
    outs = [lib.nn.functional.embedding_bag(lib.tensor(indices), lib.tensor(weight), lib.tensor(offsets), mode=mode,
                                            include_last_offset=True, padding_idx=padding_idx).tolist()
            for lib in (tg, torch)]
    assert outs[0] == outs[1]
