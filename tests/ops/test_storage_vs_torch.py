"""Storages, the memory under tensors: ``untyped_storage()`` (bytes) and the deprecated ``storage()`` (elements),
their sizes, pointers, identity across views, contents, reprs and writes (which bump no version), as torch."""

from __future__ import annotations

import warnings

from _lib import tg, torch


def _storage_facts(lib) -> list:
    x = lib.arange(6.0).reshape(2, 3)
    view = x[1]
    raw = view.untyped_storage()
    facts = [type(raw).__name__, raw.nbytes(), raw.size(), len(raw), raw.data_ptr() == x.data_ptr(),
             raw.element_size(), str(raw.device), raw[0], raw.tolist()[:8], raw.is_shared(),
             x.untyped_storage() is x.untyped_storage(), x.untyped_storage() is view.untyped_storage()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the deprecation warning, once per process in both)
        typed = view.storage()
    facts += [type(typed).__name__, typed.size(), len(typed), str(typed.dtype), typed[0], typed.tolist(),
              typed.data_ptr() == x.data_ptr(), typed.nbytes(), typed.element_size(),
              typed.untyped() is x.untyped_storage()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        facts += [repr(lib.arange(3.0).untyped_storage()), repr(lib.arange(3.0).storage())]
    facts += [lib.is_storage(raw), lib.is_storage(typed), lib.is_storage(x), lib.zeros(0).untyped_storage().nbytes()]
    y = lib.ones(2)
    y.untyped_storage().fill_(0)
    facts += [y.tolist(), y._version]
    return facts


def test_storages_as_torch():
    assert _storage_facts(tg) == _storage_facts(torch)
