"""Differences that the programs of ``tests/test_user_programs17_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.set_rng_state``/``Generator.set_state`` took any tensor's bytes (a float or int8 tensor, a
  non-contiguous one) and failed with ``AttributeError`` on a list or None; torch refuses a non-Tensor ("expected a
  torch.ByteTensor, but got list"), a tensor that is not a CPU uint8 one ("RNG state must be a torch.ByteTensor")
  and a non-contiguous one, and its size refusal no longer mentions the legacy THGeneratorState;
  ``Generator.set_state`` took keywords (torch's C method takes none) and ``set_rng_state``'s parameter is
  ``new_state``;
- an optimizer's step pre/post hooks (its own and the global ones) got the step's arguments without the
  optimizer, and a pre hook's replacement arguments were passed after it; torch's hooks get the whole call's
  ``args`` (the optimizer first) and the step runs on what a pre hook returns;
- ``torch.save`` to something with no ``write`` (a number, None) failed in the middle of writing, with
  AttributeError's own words (and a ZipFile's complaint at exit); torch refuses it first: "expected 'f' to be
  string, path, or a file-like object with a 'write' attribute";
- ``torch.load(stream, mmap=True)`` refused the stream before looking at it; torch refuses a file that is no zip
  archive first ("mmap can only be used with files saved with ..."), and a stream only when it is an archive;
- ``torch.nn.modules.utils`` did not exist (``consume_prefix_in_state_dict_if_present`` for a DataParallel
  checkpoint's ``module.`` keys, ``_pair``/``_single``/``_triple``/``_quadruple``/``_reverse_repeat_tuple``).
"""

from __future__ import annotations

import io

import pytest
from _lib import tg, torch


def _outcome(program, lib) -> tuple:
    """What ``program(lib)`` returns (its repr, normalised) or its error's type and message."""
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return "ok", repr(result).replace("tracegrad", "torch")


_RNG_STATES = {
    "set_rng_float": lambda lib: lib.set_rng_state(lib.get_rng_state().float()),
    "set_rng_int8": lambda lib: lib.set_rng_state(lib.get_rng_state().to(lib.int8)),
    "set_rng_list": lambda lib: lib.set_rng_state(lib.get_rng_state().tolist()),
    "set_rng_legacy_size": lambda lib: lib.set_rng_state(lib.get_rng_state()[:5048]),
    "set_rng_2d": lambda lib: lib.set_rng_state(lib.get_rng_state().reshape(2, -1)),
    "set_rng_strided": lambda lib: lib.set_rng_state(lib.get_rng_state().repeat(2)[::2]),
    "set_rng_keyword": lambda lib: lib.set_rng_state(new_state=lib.get_rng_state()),
    "generator_none": lambda lib: lib.Generator().set_state(None),
    "generator_float": lambda lib: lib.Generator().set_state(lib.Generator().get_state().double()),
    "generator_short": lambda lib: lib.Generator().set_state(lib.Generator().get_state()[:10]),
    "generator_empty": lambda lib: lib.Generator().set_state(lib.zeros(0, dtype=lib.uint8)),
    "generator_strided": lambda lib: lib.Generator().set_state(lib.stack([lib.get_rng_state()] * 2, 1)[:, 0]),
    "generator_keyword": lambda lib: lib.Generator().set_state(new_state=lib.get_rng_state()),
    "generator_no_argument": lambda lib: lib.Generator().set_state(),
    "generator_round_trip": lambda lib: lib.rand(3, generator=lib.Generator().set_state(
        lib.Generator().manual_seed(5).get_state())),
}


@pytest.mark.parametrize("case", _RNG_STATES, ids=str)
def test_rng_state_checks_as_torch(case):
    state = torch.get_rng_state()  # (a passing case restores the state it read)
    try:
        assert _outcome(_RNG_STATES[case], tg) == _outcome(_RNG_STATES[case], torch)
    finally:
        torch.set_rng_state(state)


def _wrapped_state_dict(lib):
    """The state dict of a module holding the model as ``module`` (what DataParallel saves)."""
    lib.manual_seed(3)
    wrapper = lib.nn.Module()
    wrapper.module = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
    return wrapper.state_dict()


def _stripped(lib, prefix: str) -> tuple:
    state = _wrapped_state_dict(lib)
    lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, prefix)
    return list(state), dict(state._metadata), [v.tolist() for v in state.values()]


@pytest.mark.parametrize("prefix", ["module.", "module", "1.", "other."])
def test_consume_prefix_in_state_dict_as_torch(prefix):
    assert _stripped(tg, prefix) == _stripped(torch, prefix)


def test_consumed_state_dict_loads_into_the_bare_model():
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present  # (the import users write)

    state = _wrapped_state_dict(torch)
    consume_prefix_in_state_dict_if_present(state, "module.")
    ours = {k: tg.tensor(v.numpy()) for k, v in state.items()}
    tg.nn.modules.utils.consume_prefix_in_state_dict_if_present(ours, "module.")
    model = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.BatchNorm1d(3))
    assert str(model.load_state_dict(ours)) == "<All keys matched successfully>"


@pytest.mark.parametrize("helper", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", [3, (1, 2), [4], "ab", None])
def test_ntuple_helpers_as_torch(helper, value):
    assert getattr(tg.nn.modules.utils, helper)(value) == getattr(torch.nn.modules.utils, helper)(value)
    assert getattr(tg.nn.modules.utils, helper).__name__ == helper


def test_reverse_repeat_tuple_and_list_with_default_as_torch():
    for lib_utils in (tg.nn.modules.utils, torch.nn.modules.utils):
        assert lib_utils._reverse_repeat_tuple((1, 2, 3), 2) == (3, 3, 2, 2, 1, 1)
        assert lib_utils._list_with_default([None, 4], [1, 2, 7, 8]) == [7, 4]
        assert lib_utils.__all__ == ["consume_prefix_in_state_dict_if_present"]


def _step_hook_calls(lib, replace=None, closure=False, watched=False) -> list:
    """What step pre/post hooks see (the number of positional arguments, whether the first is the optimizer, the
    keyword names) for ``step()`` or ``step(closure)``; ``replace`` is what the pre hook returns."""
    param = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([param], lr=0.5)
    seen: list = []

    def describe(kind, optimizer, args, kwargs):
        seen.append((kind, len(args), bool(args) and args[0] is optimizer, sorted(kwargs)))

    opt.register_step_pre_hook(lambda o, a, k: describe("pre", o, a, k) or (replace(o, a, k) if replace else None))
    opt.register_step_post_hook(lambda o, a, k: describe("post", o, a, k))
    param.grad = lib.ones(2)
    mode = lib.overrides.TorchFunctionMode() if watched else None
    try:
        if mode is not None:
            mode.__enter__()
        result = opt.step((lambda: lib.tensor(3.0)) if closure else None) if closure else opt.step()
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return [*seen, (type(exc).__name__, str(exc).replace("tracegrad", "torch"))]
    finally:
        if mode is not None:
            mode.__exit__(None, None, None)
    return [*seen, repr(result).replace("tracegrad", "torch"), param.tolist()]


_REPLACEMENTS = {
    "none": None,
    "same": lambda o, a, k: (a, k),
    "closure_by_keyword": lambda o, a, k: ((o,), {"closure": lambda: 7.0}),
    "closure_added": lambda o, a, k: ((o, lambda: 5.0), {}),
}


@pytest.mark.parametrize("watched", [False, True], ids=["plain", "under_a_mode"])
@pytest.mark.parametrize("closure", [False, True], ids=["step", "step_closure"])
@pytest.mark.parametrize("replace", _REPLACEMENTS, ids=str)
def test_step_hooks_see_the_optimizer_among_the_arguments(replace, closure, watched):
    assert (_step_hook_calls(tg, _REPLACEMENTS[replace], closure, watched)
            == _step_hook_calls(torch, _REPLACEMENTS[replace], closure, watched))


def test_global_step_hooks_see_the_optimizer_among_the_arguments():
    def calls(lib):
        from importlib import import_module

        module = import_module(f"{lib.__name__}.optim.optimizer")
        seen: list = []
        handles = [module.register_optimizer_step_pre_hook(lambda o, a, k: seen.append(("pre", len(a), a[0] is o))),
                   module.register_optimizer_step_post_hook(lambda o, a, k: seen.append(("post", len(a), a[0] is o)))]
        try:
            param = lib.nn.Parameter(lib.ones(1))
            param.grad = lib.ones(1)
            lib.optim.Adam([param]).step()
        finally:
            for handle in handles:
                handle.remove()
        return seen

    assert calls(tg) == calls(torch)


@pytest.mark.parametrize("target", [42, None, [1], b"bytes"], ids=["int", "none", "list", "bytes"])
def test_save_refuses_a_target_without_write_first(target):
    assert _outcome(lambda lib: lib.save(lib.ones(2), target), tg) == _outcome(
        lambda lib: lib.save(lib.ones(2), target), torch)


def _saved(lib, new_format: bool) -> bytes:
    buffer = io.BytesIO()
    lib.save({"w": lib.arange(3.0)}, buffer, _use_new_zipfile_serialization=new_format)
    return buffer.getvalue()


_MAPPED_LOADS = {
    "empty_stream": lambda lib, path: lib.load(io.BytesIO(), mmap=True),
    "archive_stream": lambda lib, path: lib.load(io.BytesIO(_saved(lib, True)), mmap=True),
    "legacy_stream": lambda lib, path: lib.load(io.BytesIO(_saved(lib, False)), mmap=True),
    "legacy_path": lambda lib, path: path.write_bytes(_saved(lib, False)) and lib.load(str(path), mmap=True),
    "archive_path": lambda lib, path: path.write_bytes(_saved(lib, True)) and lib.load(str(path), mmap=True)["w"],
}


@pytest.mark.parametrize("case", _MAPPED_LOADS, ids=str)
def test_mapped_load_refusals_in_torch_order(case, tmp_path):
    ours = _outcome(lambda lib: _MAPPED_LOADS[case](lib, tmp_path / "ours.pt"), tg)
    theirs = _outcome(lambda lib: _MAPPED_LOADS[case](lib, tmp_path / "theirs.pt"), torch)
    assert ours == tuple(part.replace("theirs.pt", "ours.pt") for part in theirs)
