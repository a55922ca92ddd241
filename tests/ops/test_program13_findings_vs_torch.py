"""Differences that the programs of ``tests/test_user_programs13_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.save`` of something C pickle cannot name (a whole agent holding a lambda epsilon schedule, a model class
  defined inside a notebook function) failed as the Python-level pickler words it (``PicklingError: Can't pickle
  <function ...>: it's not found as ...``) where torch, which pickles with C pickle, raises ``AttributeError: Can't
  pickle local object '...'`` (or ``PicklingError: ... attribute lookup ... failed``).
"""

from __future__ import annotations

import io

import pytest
from _lib import tg, torch


def _local_module_class(lib):
    class Policy(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 2)

    return Policy()


_UNNAMEABLE = {
    "local_module_class": _local_module_class,
    "lambda_in_checkpoint": lambda lib: {"q": lib.ones(2), "epsilon": lambda step: max(0.1, 1 - step / 20)},
    "class_missing_from_its_module": lambda lib: type("Ghost", (), {})(),
    "nested_in_a_list": lambda lib: [lib.zeros(1), {"schedule": (lambda: 0,)}],
}


def _save_failure(lib, make, **options) -> tuple[str, str]:
    try:
        lib.save(make(lib), io.BytesIO(), **options)
    except Exception as error:  # noqa: BLE001 - the failure is what is compared
        return type(error).__name__, str(error).split(" at 0x")[0]
    return "saved", ""


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("make", _UNNAMEABLE.values(), ids=_UNNAMEABLE.keys())
def test_save_of_what_pickle_cannot_name_fails_as_torch(make, legacy):
    options = {"_use_new_zipfile_serialization": False} if legacy else {}
    ours, theirs = _save_failure(tg, make, **options), _save_failure(torch, make, **options)
    assert theirs[0] != "saved"
    assert ours == theirs


def test_a_user_pickle_module_keeps_its_own_words():
    """A Python-level pickle module the user passes speaks for itself (torch uses its Pickler too)."""
    import pickle

    class PythonPickle:
        Pickler = pickle._Pickler

    for lib in (tg, torch):
        with pytest.raises(pickle.PicklingError, match="it's not found as"):
            lib.save({"f": lambda: 0}, io.BytesIO(), pickle_module=PythonPickle)


@pytest.mark.parametrize("weights_only", [True, False])
def test_load_of_an_empty_file_fails_as_torch(weights_only, tmp_path):
    empty = tmp_path / "agent.pt"
    empty.write_bytes(b"")
    outcomes = []
    for lib in (tg, torch):
        with pytest.raises(EOFError) as failure:
            lib.load(empty, weights_only=weights_only)
        outcomes.append(str(failure.value))
    assert outcomes[0] == outcomes[1]
