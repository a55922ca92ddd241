"""``F.interpolate`` on integer, bool and uint8 images, as PyTorch's CPU kernels take them.

Each mode's kernel accepts the floating dtypes, and uint8 where PyTorch has an image path (nearest in any
dimension, bilinear and bicubic); any other dtype is refused in the dispatch words of the kernel, named after
the mode and the layout. uint8 results are rounded per pass as PyTorch's separable uint8 path rounds them;
its fixed-point weights can put a value 1 away (about 1 in 100 to 700 here), so uint8 values are compared within 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch

MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 2), ("linear", 1), ("bilinear", 2),
         ("bicubic", 2), ("trilinear", 3)]


LAYOUTS = [(mode, dims, channels_last) for mode, dims in MODES for channels_last in (False, True)
           if dims == 2 or not channels_last]  # (channels_last is a 4-d layout)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8", "complex64", "float16"])
@pytest.mark.parametrize("mode,dims,channels_last", LAYOUTS)
def test_dtypes_accepted_or_refused_as_in_torch(dtype, mode, dims, channels_last):
    def program(lib):
        x = lib.ones((1, 2) + (4,) * dims, dtype=getattr(lib, dtype))
        if channels_last:
            x = x.contiguous(memory_format=lib.channels_last)
        return str(lib.nn.functional.interpolate(x, scale_factor=2, mode=mode).dtype).rpartition(".")[2]

    assert raised(tg, program) == raised(torch, program)
    if raised(torch, program) is None:
        assert program(tg) == program(torch)


def test_uint8_images_as_in_torch():
    data = np.random.default_rng(0).integers(0, 256, (2, 3, 7, 9)).astype(np.uint8)

    def results(lib):
        x = lib.tensor(data)
        out = []
        for mode in ("bilinear", "bicubic", "nearest"):
            for kw in (dict(scale_factor=2), dict(size=(5, 4)), dict(size=(11, 13))):
                if mode != "nearest":
                    kw = dict(kw, align_corners=kw.get("size") == (11, 13))
                out.append(lib.nn.functional.interpolate(x, mode=mode, **kw).numpy().astype(int))
        return out

    for ours, theirs in zip(results(tg), results(torch), strict=True):
        assert ours.shape == theirs.shape
        assert np.abs(ours - theirs).max() <= 1
        assert (ours != theirs).mean() < 0.02
