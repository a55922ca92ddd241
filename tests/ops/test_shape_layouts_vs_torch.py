"""The layouts shape and copy operators give their results, and ``Tensor.to``'s argument binding, as torch's.

- ``cat`` allocates in the memory format all its inputs suggest (empty ones count, and suggest contiguous);
  ``stack`` is that ``cat`` viewed with the new dim split off (or, for a new last dim, ``cat`` of the inputs
  unsqueezed); its ``out=`` is resized contiguously. ``hstack``, ``vstack``, ``dstack`` and ``column_stack`` are
  ``cat``s. ``roll`` is one ``cat`` per rolled dim; ``repeat``/``tile`` and ``repeat_interleave`` are contiguous.
- An empty tensor's channels-last contiguity reads its strides, and its channels-last strides multiply by the
  empty dim, as c10's do. ``nonzero``'s result is a transposed buffer; ``view`` gives dims of size 1 torch's
  strides.
- ``to()`` binds its arguments to torch's three signatures, so it refuses what torch refuses, in torch's words,
  reads a bool second as ``non_blocking``, and copies for ``cpu:0``.
"""

from __future__ import annotations

import pytest
from _lib import np, raised, tg, torch

# ------------------------------------------------------------------------------------------------ inputs


def _strided(lib, shape: tuple, strides: tuple, start: float = 0.0):
    """A view with these strides of a fresh buffer holding distinct values."""
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 1
    return lib.as_strided(lib.arange(start, start + extent, dtype=lib.float64), shape, strides)


def _layouts(lib, shape: tuple) -> dict:
    """The same values of ``shape`` laid out contiguously, permuted, with a step, expanded and channels-last."""
    n = int(np.prod(shape))
    base = lib.arange(float(n), dtype=lib.float64).reshape(shape)
    nd = len(shape)
    out = {"contiguous": base,
           "permuted": base.permute(*reversed(range(nd))).contiguous().permute(*reversed(range(nd))),
           "step": _strided(lib, shape, tuple(2 * s for s in base.stride())),
           "expanded": base.narrow(0, 0, 1).expand(*shape)}
    if nd in (4, 5):
        out["channels_last"] = base.contiguous(memory_format=lib.channels_last if nd == 4 else lib.channels_last_3d)
    return out


def _facts(t) -> tuple:
    return tuple(t.shape), t.stride(), t.is_contiguous(), t.storage_offset(), t.tolist()


def _same(program) -> None:
    ours, theirs = program(tg), program(torch)
    assert ours == theirs


# ------------------------------------------------------------------------------------------------ stack and cat


def test_stack_of_permuted_3d_inputs_is_contiguous():
    def program(lib):
        x = lib.arange(24.0).reshape(2, 3, 4)
        return [lib.stack([x.permute(2, 0, 1)] * 2, d).stride() for d in range(4)]

    assert program(tg) == program(torch) == [(24, 6, 3, 1), (12, 6, 3, 1), (12, 6, 3, 1), (12, 6, 2, 1)]


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5), (2, 1, 3, 2), (1, 2, 3, 2, 2)])
def test_stack_and_cat_of_every_pair_of_layouts(shape):
    """Every pair of layouts (channels-last pairs keep channels-last, mixed ones are contiguous), along every
    dim, through cat, stack and the *stack helpers."""
    def program(lib):
        layouts = _layouts(lib, shape)
        out = []
        for a in layouts.values():
            for b in layouts.values():
                for d in range(len(shape)):
                    out += [_facts(lib.cat([a, b], d)), _facts(lib.stack([a, b], d))]
                out += [_facts(lib.stack([a, b], len(shape))), _facts(lib.hstack([a, b])),
                        _facts(lib.vstack([a, b])), _facts(lib.dstack([a, b])), _facts(lib.column_stack([a, b]))]
        return out

    _same(program)


def test_cat_with_an_empty_or_one_element_input():
    """An empty input suggests contiguous, so the result is contiguous (legacy 1-d empty inputs too); a
    one-element channels-last input suggests contiguous."""
    def program(lib):
        last = lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        empty = lib.empty(0, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        one = last[:1, :1, :1, :1]
        return [lib.cat([last, empty]).stride(), lib.cat([empty, last]).stride(), lib.cat([last, lib.tensor([])]).stride(),
                lib.cat([one, one]).stride(), lib.stack([one, one]).stride(), lib.cat([last, last[:, :, :, :0]], 3).stride()]

    _same(program)


def test_stack_of_inputs_suggesting_channels_last_once_unsqueezed():
    """A new last dim: ``cat`` of the inputs unsqueezed, which may suggest channels-last where the inputs could
    not (a dim of size 1 with a stride of 1)."""
    def program(lib):
        t = _strided(lib, (2, 1, 3), (3, 1, 1))
        t5 = _strided(lib, (2, 1, 3, 4), (12, 1, 4, 1))
        return [lib.stack([t, t], d).stride() for d in range(4)] + [lib.stack([t5, t5], d).stride() for d in range(5)]

    _same(program)


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
def test_stack_out_is_resized_contiguously():
    """``stack_out`` resizes its out= contiguously (channels-last inputs notwithstanding); an out= of the right
    shape keeps its strides; cat's out= is resized in cat's format."""
    def program(lib):
        last = lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        calls = [(lambda o: lib.stack([last, last], out=o), lambda: lib.empty(0)),
                 (lambda o: lib.stack([last, last], 1, out=o), lambda: lib.empty(0)),
                 (lambda o: lib.stack([last, last], out=o), lambda: lib.empty(2, 2, 4, 5, 3).permute(0, 1, 4, 2, 3)),
                 (lambda o: lib.cat([last, last], out=o), lambda: lib.empty(0))]
        out = []
        for call, make in calls:
            given = make()
            result = call(given)
            out.append((result.stride(), result is given, result.tolist()))
        return out

    _same(program)


# ------------------------------------------------------------------------------------------------ the others


def test_roll_is_a_cat_per_rolled_dim():
    """A channels-last roll stays channels-last, unless a shift leaves an empty piece (a multiple of the size:
    then contiguous); a roll of the flattened tensor is contiguous."""
    def program(lib):
        last = lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        single = last[:1]
        permuted = lib.arange(60.0).reshape(3, 4, 5).permute(2, 0, 1)
        rolls = [last.roll(1, 2), last.roll(3, 2), last.roll(4, 2), last.roll(1), last.roll((1, 1), (1, 2)),
                 last.roll((2, 1), (0, 3)), single.roll(1, 0), single.roll(1, 1), permuted.roll(1, 0),
                 permuted.roll((1, 2), (0, 1))]
        return [_facts(r) for r in rolls]

    _same(program)


@pytest.mark.parametrize("layout", ["permuted", "step", "expanded", "channels_last"])
def test_repeat_tile_and_repeat_interleave_are_contiguous(layout):
    def program(lib):
        x = _layouts(lib, (2, 1, 3, 2))[layout]
        results = [x.repeat(1, 2, 1, 1), x.repeat(2, 1, 1, 1, 1), x.tile((2,)), lib.tile(x[0], (1, 1, 1, 1)),
                   x.repeat_interleave(2, 1), x.repeat_interleave(2, 3), x.repeat_interleave(lib.tensor([1, 2]), 0)]
        return [_facts(r) for r in results]

    _same(program)


def test_repeat_interleave_clones_contiguously_then_views():
    def program(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1).requires_grad_()
        y = x.repeat_interleave(2, 1)
        node = y.grad_fn
        return node.name(), node.next_functions[0][0].name(), node.next_functions[0][0].next_functions[0][0].name()

    _same(program)


def test_nonzero_is_a_transposed_buffer_whatever_the_count():
    """torch's nonzero fills an (ndim, count) buffer and returns it transposed: strides (1, count), for a count
    of 0 or 1 too."""
    def program(lib):
        out = []
        for shape in ((4,), (3, 2), (1, 3, 2), ()):
            for count in (0, 1, 2):
                x = lib.arange(float(max(int(np.prod(shape)), 1))).reshape(shape) < count
                out += [x.nonzero().stride(), lib.argwhere(x).stride(), x.nonzero().tolist()]
        return out

    _same(program)


def test_empty_tensors_in_channels_last():
    """c10 checks an empty tensor's channels-last contiguity on its strides (NumPy calls every empty array
    contiguous), and its channels-last strides multiply by the empty dim."""
    def program(lib):
        plain = lib.empty(0, 3, 4, 5)
        last = plain.contiguous(memory_format=lib.channels_last)
        return [plain.is_contiguous(memory_format=lib.channels_last), last.stride(),
                last.is_contiguous(memory_format=lib.channels_last),
                lib.empty(2, 0, 1, 3).is_contiguous(memory_format=lib.channels_last),
                lib.empty_like(lib.empty(4, 3, 0, 2), memory_format=lib.channels_last).stride(),
                lib.empty(4, 3, 0, 2).clone(memory_format=lib.channels_last).stride(),
                lib.empty(2, 3, 0, 2, 2).clone(memory_format=lib.channels_last_3d).stride(),
                lib.cat([lib.empty(2, 0, 4, 2), lib.empty(2, 0, 4, 2)], 3).is_contiguous(
                    memory_format=lib.channels_last)]

    _same(program)


def test_reshape_of_nothing_with_an_inferred_dim_is_ambiguous():
    def program(lib):
        return [raised(lib, lambda L: L.zeros(0, 1, 4).reshape(0, -1)), raised(lib, lambda L: L.zeros(0, 4).view(-1, 0)),
                raised(lib, lambda L: L.zeros(2, 3).reshape(0, -1))]

    _same(program)


def test_views_give_dims_of_size_1_torchs_strides():
    """``view`` (so reshape, flatten, unflatten, meshgrid) gives a dim of size 1 the stride of the elements after
    it in its run of dims (``computeStride``), where NumPy's reshape picks its own."""
    def program(lib):
        stepped = _strided(lib, (1,), (2,))
        permuted = lib.arange(12.0).reshape(1, 4, 3).permute(2, 1, 0)
        gapped = _strided(lib, (2, 1), (2, 5))
        results = [stepped.reshape(1, 1), stepped.view(1, 1, 1), stepped.unflatten(0, (1, 1)), permuted.flatten(0, 1),
                   permuted.view(3, 4, 1, 1), gapped.view(2, 1, 1), gapped.unflatten(0, (2, 1)),
                   *lib.meshgrid(stepped, lib.arange(3.0, dtype=lib.float64), indexing="ij"), lib.as_strided(lib.arange(6.0), (3, 1), (2, 1)).view(1, 3)]
        return [(tuple(r.shape), r.stride(), r.storage_offset(), r.tolist()) for r in results]

    _same(program)


# ------------------------------------------------------------------------------------------------ Tensor.to


def _to_outcome(lib, args: tuple, kwargs: dict, source: str = "permuted"):
    x = {"permuted": lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
         "channels_last": lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)}[source]
    x = x.detach().requires_grad_()
    names = {"f64": lib.float64, "f32": lib.float32, "i32": lib.int32, "cpu": "cpu", "cpu0": "cpu:0",
             "dev": lib.device("cpu"), "other": lib.zeros(1, dtype=lib.float64), "self": x, "cl": lib.channels_last,
             "pf": lib.preserve_format, "np64": np.float64, "float": float}
    value = lambda v: names.get(v, v) if isinstance(v, str) else v  # noqa: E731
    try:
        r = x.to(*[value(a) for a in args], **{k: value(v) for k, v in kwargs.items()})
    except Exception as exc:  # noqa: BLE001 - the error itself is the result
        return type(exc).__name__, str(exc)
    return (r is x, str(r.dtype), r.stride(), r.grad_fn.name() if r.grad_fn else None, r.tolist())


TO_REFUSED = [
    (("f64", "f64"), {}), (("f64",), {"dtype": "f64"}), (("f64",), {"dtype": None}), (("f64", None), {}),
    (("f64", "cpu"), {}), (("f32", "dev"), {}), (("cpu", True), {}), (("dev", "cpu"), {}), ((None, "dev"), {}),
    (("np64",), {}), (("cpu", "np64"), {}), (("float", None), {}), (("other", "f64"), {}),
    (("other",), {"dtype": "f64"}), (("f64",), {"device": "cpu"}), (("f64", True, True, True), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), TO_REFUSED)
def test_to_refuses_what_torch_refuses_in_its_words(args, kwargs):
    theirs = _to_outcome(torch, args, kwargs)
    assert theirs[0] == "TypeError" and "invalid combination of arguments" in theirs[1]
    assert _to_outcome(tg, args, kwargs) == theirs


TO_TAKEN = [
    (("cpu", "f64"), {}), (("dev", "f64", False, True), {}), ((None, "f64", True), {}), (("f64", True), {}),
    (("f32", True), {}), (("cpu", "f32", True), {}),
    (("f64", False, True), {}), (("self", True), {}), (("self", False, True), {}), (("other",), {}),
    (("cpu0",), {}), (("cpu",), {}), ((), {"copy": True}), ((), {"dtype": "f64", "device": "cpu", "copy": True}),
    (("float",), {}), ((1.5,), {}), ((True,), {}), (("f32",), {"copy": True}), (("f32",), {"memory_format": "pf"}),
    ((), {"memory_format": "cl"}), (("cpu",), {"non_blocking": True}), (("f64",), {"memory_format": None}),
]


@pytest.mark.parametrize(("args", "kwargs"), TO_TAKEN)
@pytest.mark.parametrize("source", ["permuted", "channels_last"])
def test_to_binds_its_arguments_as_torch(args, kwargs, source):
    """Whether the tensor itself comes back, the dtype, the strides (preserve_format), the node, the values:
    a bool second is ``non_blocking``, ``cpu:0`` is another device than the tensor's ``cpu`` (a copy)."""
    assert _to_outcome(tg, args, kwargs, source) == _to_outcome(torch, args, kwargs, source)
