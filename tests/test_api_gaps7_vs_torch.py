"""API gaps against torch 2.13: Generator's clone_state and offsets, MultiheadAttention.merge_masks, the storages'
casts, moves, resizing, byte swaps and constructors from buffers and files."""

from __future__ import annotations

import collections
import copy
import warnings

import numpy as np
import pytest

from tests._lib import raised, tg, to_numpy, torch


def _outcome(lib, program):
    """What ``program(lib)`` gives (a storage as its kind, dtype and elements), or the error's type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    if lib.is_storage(result):
        return type(result).__name__, str(getattr(result, "dtype", None)).replace("tracegrad", "torch"), \
            result.tolist()
    return result


# ---- Generator -------------------------------------------------------------------------------------------------

def test_generator_clone_state_continues_the_same_stream_independently():
    draws = []
    for lib in (tg, torch):
        g = lib.Generator().manual_seed(5)
        lib.randn(3, generator=g)  # (leaves a cached normal in the state)
        clone = g.clone_state()
        first = [lib.rand(4, generator=g), lib.randn(3, generator=g)]
        second = [lib.rand(4, generator=clone), lib.randn(3, generator=clone)]
        draws.append((clone is g, clone.initial_seed(), str(clone.device), type(clone) is type(g),
                       [to_numpy(t).tolist() for t in first + second]))
    assert draws[0] == draws[1]


@pytest.mark.parametrize("call", ["g.get_offset()", "g.set_offset(3)", "g.set_offset(-1)", "g.set_offset(2**64 - 1)",
                                  "g.set_offset(2**64)", "g.set_offset(-2**63 - 1)", "g.set_offset(True)",
                                  "g.set_offset(None)", "g.set_offset(1.5)", "g.set_offset('a')",
                                  "g.set_offset(lib.tensor(3))", "g.set_offset(np.int64(3))",
                                  "g.set_offset(np.bool_(1))", "lib.default_generator.get_offset()"])
def test_generator_offsets_refused_on_the_cpu(call):
    def run(lib):
        g = lib.Generator()
        return eval(call, {"g": g, "lib": lib, "np": np})
    assert raised(tg, run) == raised(torch, run)


def test_generator_device_is_read_only():
    for lib in (tg, torch):
        g = lib.Generator()
        assert str(g.device) == "cpu"
        with pytest.raises(AttributeError):
            g.device = lib.device("cpu")


# ---- MultiheadAttention.merge_masks -----------------------------------------------------------------------------

def _masks(lib, attn: str | None, padding: str | None):
    rng = np.random.default_rng(0)
    shapes = {"2d": (5, 5), "3d": (2 * 3, 5, 5), "pad": (2, 5)}
    kinds = {"bool": lambda s: lib.from_numpy(rng.random(s) < 0.3), "float": lambda s: lib.from_numpy(rng.random(s))}
    attn_mask = None if attn is None else kinds[attn.split("-")[1]](shapes[attn.split("-")[0]])
    padding_mask = None if padding is None else kinds[padding](shapes["pad"])
    return attn_mask, padding_mask


@pytest.mark.parametrize("attn", [None, "2d-bool", "2d-float", "3d-bool", "3d-float"])
@pytest.mark.parametrize("padding", [None, "bool", "float"])
def test_merge_masks(attn, padding):
    outcomes = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        mha = lib.nn.MultiheadAttention(6, 3, batch_first=True)
        attn_mask, padding_mask = _masks(lib, attn, padding)
        query = lib.zeros(2, 5, 6)
        try:
            merged, kind = mha.merge_masks(attn_mask, padding_mask, query)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            outcomes.append((type(exc).__name__, str(exc)))
            continue
        outcomes.append((kind, None if merged is None else (str(merged.dtype).split(".")[1], tuple(merged.shape),
                                                              to_numpy(merged).tolist())))
    assert outcomes[0] == outcomes[1]


# ---- storages ----------------------------------------------------------------------------------------------------

_CASTS = ["float", "double", "half", "int", "long", "short", "char", "byte", "bool", "complex_float",
          "complex_double"]


@pytest.mark.parametrize("cast", _CASTS)
@pytest.mark.parametrize("kind", ["untyped_storage", "storage"])
def test_storage_casts_make_typed_storages(cast, kind):
    def run(lib):
        x = lib.tensor([0.0, -1.5, 2.75, 300.0, -0.0, 7.0])
        storage = getattr(x, kind)()
        result = getattr(storage, cast)()
        result[0] = 1  # (a copy: the tensor keeps its values)
        return result, x.tolist(), result.untyped() is storage.untyped()
    ours, theirs = _outcome(tg, lambda lib: run(lib)[0]), _outcome(torch, lambda lib: run(lib)[0])
    assert ours == theirs
    assert _outcome(tg, lambda lib: run(lib)[1:]) == _outcome(torch, lambda lib: run(lib)[1:])


def test_storage_casts_to_dtypes_tracegrad_lacks_are_refused_in_words():
    storage = tg.arange(3.0).untyped_storage()
    with pytest.raises(RuntimeError, match="tracegrad has no float8_e4m3fn dtype"):
        storage.float8_e4m3fn()


_QUESTIONS = ["s.get_device()", "s.is_cuda", "s.is_pinned()", "s.is_sparse", "s.filename", "s.pin_memory()",
              "s.to(device='cpu') is s", "s.to(device='cpu').tolist()", "s.to(device=lib.device('cpu')) is s",
              "s.to('cpu')", "s.cpu() is s", "s.cpu().tolist()", "copy.copy(s).tolist()", "copy.copy(s) is s",
              "copy.deepcopy([s, s])[1].tolist()", "(lambda c: c[0] is c[1])(copy.deepcopy([s, s]))"]


@pytest.mark.parametrize("question", _QUESTIONS + ["s.is_sparse_csr", "s.new().tolist()", "s.new().nbytes()",
                                                   "s.resizable()"])
def test_untyped_storage_questions(question):
    def run(lib):
        s = lib.arange(4, dtype=lib.int16).untyped_storage()
        return eval(question, {"s": s, "lib": lib, "copy": copy})
    assert _outcome(tg, run) == _outcome(torch, run)


@pytest.mark.parametrize("question", _QUESTIONS + ["s.resizable()", "s.share_memory_() is s",
                                                   "s.pickle_storage_type()", "s.to(device='cpu').dtype"])
def test_typed_storage_questions(question):
    def run(lib):
        s = lib.arange(4, dtype=lib.int16).storage()
        result = eval(question, {"s": s, "lib": lib, "copy": copy})
        return str(result).replace("tracegrad", "torch") if question.endswith("dtype") else result
    assert _outcome(tg, run) == _outcome(torch, run)


def test_copies_of_storages_do_not_share_memory():
    for lib in (tg, torch):
        x = lib.arange(4, dtype=lib.int16)
        copied = copy.copy(x.untyped_storage())
        copied[0] = 9
        assert x.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("objects", ["x, u", "u, x", "x, t", "t, x", "t, u", "u, t", "x[1:], t, u, x"])
def test_deepcopies_of_tensors_and_storages_share_one_new_storage(objects):
    """(review: a storage's deepcopy used a memo of its own, not the tensors', and took an untyped storage met
    after a typed one over the same bytes for that typed one)"""
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = lib.arange(4, dtype=lib.int16)
            copies = copy.deepcopy(eval(f"[{objects}]", {"x": x, "u": x.untyped_storage(), "t": x.storage()}))
            copies[0].fill_(7)
            stores = [c.untyped_storage() if lib.is_tensor(c) else c.untyped() for c in copies]
            return ([type(c).__name__ for c in copies], [c.data_ptr() - copies[-1].data_ptr() for c in copies],
                    [s is stores[-1] for s in stores],
                    [c.tolist() for c in copies], x.tolist())
    assert _outcome(tg, run) == _outcome(torch, run)


@pytest.mark.parametrize("program", [
    "s.resize_(12) is s", "[s.resize_(12), s.nbytes(), s.tolist()[:8]][1:]", "[s.resize_(3), s.tolist()][1]",
    "s.resize_(-1)", "lib.from_numpy(np.ones(3)).untyped_storage().resize_(30)",
    "lib.from_numpy(np.ones(3)).untyped_storage().resizable()",
    "[t.resize_(6), t.size(), len(t), t.tolist()[:4]]", "[t.resize_(1), t.tolist()]", "t.resize_(2)",
])
def test_storage_resize(program):
    def run(lib):
        x = lib.arange(4, dtype=lib.int16)
        return eval(program, {"s": x.untyped_storage(), "t": x.storage(), "lib": lib, "np": np})
    assert _outcome(tg, run) == _outcome(torch, run)


@pytest.mark.parametrize("dtype", ["float32", "complex128", "float16", "bool", "int16", "float64", "'a'"])
def test_untyped_storage_byteswap(dtype):
    def run(lib):
        s = lib.UntypedStorage.from_buffer(bytes(range(24)), dtype=lib.uint8)
        result = s.byteswap(eval(dtype, {}, vars(lib)))
        return result, s.tolist()
    assert _outcome(tg, run) == _outcome(torch, run)


@pytest.mark.parametrize("call", [
    "U.from_buffer(b'abcd')", "U.from_buffer(b'abcd', dtype=lib.uint8)", "U.from_buffer(b'abcd', 'little', dtype=lib.int16)",
    "U.from_buffer(b'abcd', 'big', dtype=lib.int16)", "U.from_buffer(b'abcd', dtype=lib.int16)",
    "U.from_buffer(b'abcd', dtype=lib.float16)", "U.from_buffer(b'abcde', 'little', dtype=lib.int16)",
    "U.from_buffer(b'abcdef', 'little', count=2, offset=1, dtype=lib.int16)",
    "U.from_buffer(b'abcdef', 'little', count=4, offset=1, dtype=lib.int16)",
    "U.from_buffer(b'abcdef', 'middle', dtype=lib.int16)", "U.from_buffer(b'abcd', 1, dtype=lib.int16)",
    "U.from_buffer(bytearray(b'abcd'), dtype=lib.float32, byte_order='native')",
    "U.from_buffer(b'abcd', dtype=lib.uint8, count=-2)", "U.from_buffer(b'abcd', dtype=lib.uint8, offset=-1)",
    "U.from_buffer(b'abcd', dtype=lib.uint8, offset=5)", "U.from_buffer(b'', dtype=lib.uint8)",
    "U.from_buffer(3, dtype=lib.uint8)", "U.from_buffer(3, dtype=lib.int16)",
    "U.from_buffer(b'abcd', 'bad', dtype=lib.int8)", "U.from_buffer(np.arange(3, dtype=np.int16), dtype=lib.uint8)",
    "U.from_buffer(b'abcdefgh', 'big', dtype=lib.complex64)", "U.from_buffer(b'abcd', 'little', dtype=lib.float16).resizable()",
    "T.from_buffer(b'abcd', 'little')", "T.from_buffer(b'abcd', 'little', dtype=lib.int16)",
    "T.from_buffer(b'abcd', dtype=lib.int16)", "lib.FloatStorage.from_buffer(b'abcd', 'big')",
    "lib.FloatStorage.from_buffer(b'abcd', 'little', dtype=lib.int16)", "T.from_buffer(b'ab', 'big', dtype=lib.int16, device='meta')",
])
def test_storage_from_buffer(call):
    def run(lib):
        return eval(call, {"U": lib.UntypedStorage, "T": lib.TypedStorage, "lib": lib, "np": np})
    assert _outcome(tg, run) == _outcome(torch, run)


@pytest.mark.parametrize("call", [
    "U.from_file(f, False, 10)", "U.from_file(f, False)", "U.from_file(f)", "U.from_file(f, shared=False, nbytes=4)",
    "U.from_file(f, False, 100)", "U.from_file(f, False, 0)", "U.from_file(f, False, 4).resizable()",
    "U.from_file(f, False, 4).filename", "U.from_file(f + 'x', False, 4)", "U.from_file(f, False, -1)",
    "lib.IntStorage.from_file(f, False, 3)", "T.from_file(f, False, 3)", "lib.IntStorage.from_file(f, False, 3).filename",
    "U.from_file(f, True, 4).filename == f", "U.from_file(f, True, 4).resizable()",
    "[U.from_file(f, False, 4).fill_(7), list(open(f, 'rb').read()[:5])][1]",
    "[U.from_file(f, True, 4).fill_(7), list(open(f, 'rb').read()[:5])][1]",
])
def test_storage_from_file(call, tmp_path):
    def run(lib):
        path = tmp_path / "data.bin"  # (written afresh for each library)
        path.write_bytes(bytes(range(40)))
        return eval(call, {"U": lib.UntypedStorage, "T": lib.TypedStorage, "lib": lib, "f": str(path), "open": open})
    assert _outcome(tg, run) == _outcome(torch, run)


# ---- custom sequences as sizes and dims --------------------------------------------------------------------------

class _Seq:
    """A sequence of the user's own: ``__len__`` and ``__getitem__``, not a list or tuple."""

    def __init__(self, *values):
        self.values = values

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]


_SEQUENCES = {"own": _Seq, "UserList": lambda *v: collections.UserList(v), "range": lambda *v: range(v[0], v[0] + 1),
              "set": lambda *v: set(v), "generator": lambda *v: (i for i in v), "dict": lambda *v: dict.fromkeys(v)}


@pytest.mark.parametrize("kind", sorted(_SEQUENCES))
@pytest.mark.parametrize("call", [
    "lib.zeros(S(2))", "x.view(S(6))", "x.reshape(S(6))", "x[:1].expand(S(1))", "x.permute(S(1))", "x.repeat(S(1))",
    "x.sum(S(0))", "lib.sum(x, S(0))", "x.sum(dim=S(0))", "x.sum(S(0), True)", "x.mean(S(0))", "x.amax(S(0))",
    "x.amin(S(0))", "x.std(S(0))", "x.var(S(0))", "lib.std_mean(x, S(0))", "lib.logsumexp(x, S(0))",
    "x.norm(dim=S(0))", "lib.linalg.vector_norm(x, dim=S(0))", "x.squeeze(S(0))", "x.nansum(S(0))",
    "x.count_nonzero(S(0))", "x.prod(S(0))", "x.any(S(0))", "x.all(S(0))", "x.flip(S(0))", "x.movedim(S(0), S(1))",
    "lib.tensordot(x, x, dims=(S(0), S(0)))",
    # (review: the fft functions read their dims and sizes themselves)
    "lib.fft.fftn(x, dim=S(0))", "lib.fft.ifftn(x, s=S(2), dim=(0,))", "lib.fft.rfftn(x, s=S(2))",
    "lib.fft.irfft2(x, dim=S(0))", "lib.fft.hfftn(x, dim=S(1))", "lib.fft.fftshift(x, dim=S(0))",
    "lib.fft.ifftshift(x, S(1))",
])
def test_custom_sequences_as_sizes_and_dims_are_refused(call, kind):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(call, {"lib": lib, "S": _SEQUENCES[kind], "x": lib.ones(2, 3)})
    assert raised(tg, run) == raised(torch, run)


@pytest.mark.parametrize("dims", ["[0.0]", "[True]", "(np.int32(1),)", "[lib.tensor(0)]", "lib.Size([1])"])
def test_fft_dims_elements_as_torch_reads_them(dims):
    def run(lib):
        x = lib.ones(2, 3)
        given = eval(dims, {"lib": lib, "np": np})
        return [to_numpy(f(x, dim=given)).tolist() for f in (lib.fft.fftn, lib.fft.fftshift)]
    assert _outcome(tg, run) == _outcome(torch, run)


def test_size_cannot_be_subclassed():
    def run(lib):
        type("SizeSub", (lib.Size,), {})
    assert raised(tg, run) == raised(torch, run)
