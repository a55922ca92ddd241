"""Differences that the programs of ``tests/test_user_programs43_vs_torch.py`` (parameter initialisation with
``torch.nn.init``) ran into, each reduced to the call that caused it and compared with torch bit for bit.

- ``nn.init.uniform_`` with ``a > b`` (or a bound out of the dtype's range) and ``nn.init.normal_`` (so
  ``xavier_normal_``) with a negative or NaN std filled the tensor where torch, whose init calls
  ``tensor.uniform_``/``tensor.normal_``, refuses them ("uniform_ expects to return a [from, to) range, ...",
  "normal expects std >= 0.0, ..."); ``nn.init.normal_`` of an integer tensor filled it where torch says
  '"normal_kernel_cpu" not implemented for 'Long'';
- init on a non-contiguous weight (a transposed or sliced view) drew its values in the view's index order where
  torch's fill walks the storage: ``uniform_``/``normal_``/``xavier_*``/``kaiming_*``/``trunc_normal_``/``sparse_``
  on such a view gave other values than torch under the same seed.
"""

from __future__ import annotations

import pytest
from _lib import bits_or_error, tg, torch

REFUSALS = {
    "uniform_from_above_to": lambda lib: lib.nn.init.uniform_(lib.empty(3), 1.0, 0.0),
    "uniform_half_out_of_range": lambda lib: lib.nn.init.uniform_(lib.empty(2, dtype=lib.float16), 0.0, 1e6),
    "normal_negative_std": lambda lib: lib.nn.init.normal_(lib.empty(3), std=-1.0),
    "normal_nan_std": lambda lib: lib.nn.init.normal_(lib.empty(3), std=float("nan")),
    "normal_long": lambda lib: lib.nn.init.normal_(lib.empty(2, dtype=lib.int64)),
    "xavier_normal_negative_gain": lambda lib: lib.nn.init.xavier_normal_(lib.empty(2, 2), gain=-1.0),
}

VIEWS = {
    "gapped_transpose": lambda lib: lib.zeros(4, 6).T[::2],
    "transpose": lambda lib: lib.zeros(20, 3).T,
    "strided_columns_transposed": lambda lib: lib.zeros(6, 40)[:, ::3].T,
}

FILLS = {
    "uniform_": lambda lib, w: lib.nn.init.uniform_(w, -1.0, 1.0),
    "normal_": lambda lib, w: lib.nn.init.normal_(w, 0.5, 2.0),
    "xavier_uniform_": lambda lib, w: lib.nn.init.xavier_uniform_(w),
    "xavier_normal_": lambda lib, w: lib.nn.init.xavier_normal_(w),
    "kaiming_uniform_": lambda lib, w: lib.nn.init.kaiming_uniform_(w, a=0.1),
    "kaiming_normal_": lambda lib, w: lib.nn.init.kaiming_normal_(w, mode="fan_out"),
    "trunc_normal_redrawn": lambda lib, w: lib.nn.init.trunc_normal_(w, std=0.5, a=-0.6, b=0.6),
    "trunc_normal_rejection": lambda lib, w: lib.nn.init.trunc_normal_(w, a=2.0, b=3.0),
    "sparse_": lambda lib, w: lib.nn.init.sparse_(w, 0.3, std=1.0),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_init_refuses_as_the_tensor_method(name):
    program = REFUSALS[name]
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("fill", FILLS)
def test_init_of_a_non_contiguous_view_draws_in_memory_order(fill, view):
    def program(lib):
        weight = VIEWS[view](lib)
        FILLS[fill](lib, weight)
        return weight

    assert bits_or_error(program, tg) == bits_or_error(program, torch)
