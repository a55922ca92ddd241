"""``pixel_shuffle`` / ``pixel_unshuffle``: channels to space and back (sub-pixel convolution). Each is the
other's gradient, as in PyTorch (PixelShuffleBackward0 / PixelUnshuffleBackward0)."""

from __future__ import annotations

import numpy as np

from ..registry import defop, defop_without_derivative


def _check(a, factor: int, name: str, kind: str) -> None:
    if a.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {a.ndim} "
                           "dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {kind}, but got {factor}")


def _shuffle_kernel(a, upscale_factor):
    r = upscale_factor
    _check(a, r, "pixel_shuffle", "upscale_factor")
    c, h, w = a.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = a.shape[:-3]
    n = len(lead)
    x = a.reshape(lead + (c // (r * r), r, r, h, w))
    order = tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)  # (C, H, r, W, r)
    return np.ascontiguousarray(x.transpose(order)).reshape(lead + (c // (r * r), h * r, w * r))


def _unshuffle_kernel(a, downscale_factor):
    r = downscale_factor
    _check(a, r, "pixel_unshuffle", "downscale_factor")
    c, h, w = a.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    lead = a.shape[:-3]
    n = len(lead)
    x = a.reshape(lead + (c, h // r, r, w // r, r))
    order = tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)  # (C, r, r, H, W)
    return np.ascontiguousarray(x.transpose(order)).reshape(lead + (c * r * r, h // r, w // r))


pixel_shuffle = defop("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", _shuffle_kernel,
                      vjp=lambda ctx, g: pixel_unshuffle(g, ctx.attrs[0]), attrs=("upscale_factor",),
                      jvp=lambda args, outs, ts: pixel_shuffle(ts[0], args[1]))
pixel_unshuffle = defop("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", _unshuffle_kernel,
                        vjp=lambda ctx, g: pixel_shuffle(g, ctx.attrs[0]), attrs=("downscale_factor",),
                        jvp=lambda args, outs, ts: pixel_unshuffle(ts[0], args[1]))


# ---- channel_shuffle ---------------------------------------------------------------------------------------


def _channel_shuffle_kernel(a, groups):
    if a.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(a.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = a.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    # (N, g, C/g, *) -> (N, C/g, g, *): channel k of group i moves to position k * g + i
    grouped = a.reshape((a.shape[0], groups, c // groups) + a.shape[2:])
    return np.ascontiguousarray(grouped.swapaxes(1, 2)).reshape(a.shape)


def _channel_shuffle_vjp(ctx, g):
    # the inverse permutation is the shuffle with C / groups groups (PyTorch's derivatives.yaml)
    return channel_shuffle(g, g.shape[1] // ctx.attrs[0])


channel_shuffle = defop("channel_shuffle(Tensor self, SymInt groups) -> Tensor", _channel_shuffle_kernel,
                        vjp=_channel_shuffle_vjp, attrs=("groups",),
                        jvp=lambda args, outs, ts: channel_shuffle(ts[0], args[1]))


# PyTorch's native kernel has no autograd formula: a NotImplemented node that raises on backward, and a tangent
# refused before the kernel's checks.
native_channel_shuffle = defop_without_derivative("native_channel_shuffle(Tensor self, SymInt groups) -> Tensor",
                                                  _channel_shuffle_kernel)
