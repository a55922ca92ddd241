"""Review of the RNG state checks (Generator.set_state / torch.set_rng_state), against torch: a state whose
mt19937 fields are out of range (``left`` outside 1..624, ``seeded`` 0, ``next`` over 624 as a uint32) is refused
before anything is set, and the Generator's C methods refuse arguments in CPython's words."""

from __future__ import annotations

import struct

import pytest
from _lib import raised, tg, torch

_FIELDS = {"left": (8, "<i"), "seeded": (12, "<i"), "next": (16, "<Q")}


def _restored(lib, field: str, value: int, via_generator: bool):
    lib.manual_seed(0)
    raw = bytearray(lib.get_rng_state().numpy().tobytes())
    offset, fmt = _FIELDS[field]
    struct.pack_into(fmt, raw, offset, value)
    state = lib.tensor(list(raw), dtype=lib.uint8)
    generator = lib.Generator() if via_generator else None
    lib.manual_seed(5)
    try:
        if generator is not None:
            generator.set_state(state)
        else:
            lib.set_rng_state(state)
    except RuntimeError as e:
        return "refused", str(e), lib.rand(2).tolist()  # (the state it had: nothing was set)
    return lib.rand(2, generator=generator).tolist()


@pytest.mark.parametrize(("field", "value"), [("left", 0), ("left", 625), ("left", -1), ("left", 624),
                                              ("seeded", 0), ("seeded", 2), ("next", 625), ("next", 624),
                                              ("next", 1 << 32)])
@pytest.mark.parametrize("via_generator", [False, True])
def test_invalid_mt19937_state(field, value, via_generator):
    outcome = _restored(tg, field, value, via_generator)
    expected = _restored(torch, field, value, via_generator)
    if field == "left" and value == 624:  # (valid; where its inconsistent next leads is not followed: its check only)
        assert type(outcome) is type(expected) is list
    else:
        assert outcome == expected


@pytest.mark.parametrize("call", ["get_state(1)", "get_state(x=1)", "initial_seed(1)", "seed(1)", "manual_seed()",
                                  "manual_seed(seed=3)", "manual_seed(1, 2)", "set_state()", "set_state(new_state=s)"])
def test_generator_c_method_arguments(call):
    def program(lib):
        g, s = lib.Generator(), lib.get_rng_state()  # noqa: F841 - the calls' names
        eval(f"g.{call}")  # noqa: S307 - the test's own snippets
    assert raised(tg, program) == raised(torch, program)
