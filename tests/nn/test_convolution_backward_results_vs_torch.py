"""``torch.ops.aten.convolution_backward``'s results against torch 2.13: None (ATen's undefined tensor) for each
gradient the output mask leaves out, where tracegrad returned an empty tensor; and a grad_output of more images than
the input, which torch's kernels read the first images of (its bias gradient sums them all), where tracegrad failed
in NumPy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _lib import tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _values(lib, *shape):
    return lib.tensor(np.random.RandomState(sum(shape)).randn(*shape))


def _described(results) -> list:
    return [None if t is None else (tuple(t.shape), t.stride(), np.asarray(t.tolist())) for t in results]


def _same(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-12)


# (grad_output, input, weight, transposed, groups)
CONVOLUTIONS = {
    "2d": ((1, 2, 3, 3), (1, 1, 4, 4), (2, 1, 2, 2), False, 1),
    "2d, two groups": ((1, 4, 3, 3), (1, 2, 4, 4), (4, 1, 2, 2), False, 2),
    "1d transposed": ((1, 2, 5), (1, 1, 4), (1, 2, 2), True, 1),
}


@pytest.mark.parametrize("mask", list(itertools.product((False, True), repeat=3)), ids=str)
@pytest.mark.parametrize("case", list(CONVOLUTIONS))
def test_gradients_left_out_are_none_as_torch(case, mask):
    g, x, w, transposed, groups = CONVOLUTIONS[case]
    nd = len(x) - 2

    def program(lib):
        return lib.ops.aten.convolution_backward(_values(lib, *g), _values(lib, *x), _values(lib, *w), None,
                                                 [1] * nd, [0] * nd, [1] * nd, transposed, [0] * nd, groups,
                                                 list(mask))
    _same(_described(program(tg)), _described(program(torch)))


@pytest.mark.parametrize("batch", [2, 3])
@pytest.mark.parametrize("case", list(CONVOLUTIONS))
def test_more_images_of_grad_output_than_of_input_as_torch(case, batch):
    g, x, w, transposed, groups = CONVOLUTIONS[case]
    nd = len(x) - 2

    def program(lib):
        return lib.ops.aten.convolution_backward(_values(lib, batch, *g[1:]), _values(lib, *x), _values(lib, *w),
                                                 [g[1]], [1] * nd, [0] * nd, [1] * nd, transposed, [0] * nd, groups,
                                                 [True, True, True])
    _same(_described(program(tg)), _described(program(torch)))
