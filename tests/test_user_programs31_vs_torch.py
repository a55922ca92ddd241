"""A thirty-first set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared: NumPy code ported to torch the way data scientists port it. Feature scaling written with NumPy's
keywords (``axis=``, ``keepdims=``, ``x1``/``x2``) and names (clip, absolute, arccos, multiply, true_divide,
greater_equal, negative, fix, ravel, concatenate, swapaxes, moveaxis); design matrices by column_stack,
row_stack, dstack, atleast_Nd and tensor_split; np.diff/cov/corrcoef/histogram/vander/kron ported; index helpers
(tril_indices, cartesian_prod, combinations, meshgrid, bucketize/searchsorted, unravel_index); what torch refuses
that NumPy takes (astype, the mean of an int tensor, ``reshape(-1, -1)``, a list of tensors to torch.tensor,
NumPy dtypes as torch dtypes); from_numpy/.numpy()/as_tensor/asarray sharing and refusals (negative strides,
big-endian, read-only arrays); NumPy scalars and 0-d arrays beside tensors; NumPy functions handed tensors (what
type comes back, np.testing on tensors); the numbers that differ from NumPy's (std's default, median's lower
middle, round half to even, ``//`` and ``%`` of negatives, stable argsort, unique); a least-squares fit by lstsq,
solve, pinv and gradient descent in NumPy's keywords; and a group-by in NumPy idioms (index_add, bincount,
scatter_reduce, where/nonzero, isin, repeat/tile, take, pad).

Differences these programs found, now fixed (``tests/ops/test_program31_findings_vs_torch.py``):
- NumPy's keyword spellings that torch's parser takes were refused ("got an unexpected keyword argument 'axis'")
  by ``diff``, ``sort``/``argsort`` with ``stable=``, ``trapezoid``/``trapz``/``cumulative_trapezoid``,
  ``linalg.norm``/``vector_norm``, ``aminmax``, ``linalg.cross`` and the unary functions (``exp(x=t)``);
- ``torch.asarray`` of a NumPy array skipped from_numpy's refusals when it cast, aliased a 0-d array, took a NumPy
  bool with ``copy=False`` and worded its aliasing refusal otherwise; a big-endian array was refused as an
  unsupported dtype (TypeError) where torch says its byte order differs (ValueError), and an array whose strides
  are not whole elements was taken (torch refuses it).

Left: calling a ``torch.Size`` (``x.shape(0)``) says "'Size' object is not callable" where torch names its C type
"'torch.Size' object is not callable"; ``torch.sin(self=x)`` is refused with "OpDef.__call__() got multiple
values for argument 'self'" (torch: missing "input"); float32 ``exp``/``sin`` differ from torch's vectorised
kernels in the last bit (compared to a tolerance here).
"""

from __future__ import annotations

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _keyword_aliases_feature_scaling(lib, show):
    """Feature scaling written with NumPy's keywords, which torch accepts: ``axis=``, ``keepdims=``, ``x1``/``x2``,
    and NumPy's function names (clip, absolute, multiply, true_divide, ...), with gradients."""
    torch = lib
    torch.manual_seed(310)
    X = torch.randn(6, 3, requires_grad=True)
    mu = X.mean(axis=0, keepdims=True)
    sd = torch.std(X, axis=0, keepdims=True)
    Z = torch.true_divide(X - mu, sd)
    show(mu, sd, Z)
    show(torch.sum(Z, axis=1), Z.sum(axis=(0, 1)), torch.amax(Z, axis=0), torch.max(Z, axis=1).indices)
    clipped = torch.clip(Z, -1.0, 1.0)
    mag = torch.absolute(clipped)
    prod = torch.multiply(mag, torch.negative(Z))
    show(clipped.grad_fn.name(), mag.grad_fn.name(), prod.grad_fn.name())
    ge = torch.greater_equal(Z, 0.5)
    show(ge, ge.dtype, torch.greater(Z, 0.0).sum(axis=0), torch.not_equal(Z, 0).all(axis=0))
    angles = torch.arccos(torch.clip(Z, -0.99, 0.99))
    show(angles, torch.arcsin(torch.tensor([0.5])), torch.arctan2(torch.tensor([1.0]), torch.tensor([-1.0])))
    show(torch.fix(Z * 3), torch.ravel(Z).shape, torch.ravel(Z).grad_fn.name())
    show(torch.maximum(input=torch.tensor([1.0, 5.0]), other=torch.tensor([3.0, 2.0])))
    show_outcome(show, lambda: torch.maximum(x1=torch.tensor([1.0]), x2=torch.tensor([2.0])))
    show(torch.concatenate([Z, Z], axis=1).shape, torch.concat((Z, Z), dim=0).shape)
    show(torch.swapaxes(Z, 0, 1).shape, torch.swapdims(Z, 0, 1).grad_fn.name(), Z.swapaxes(0, 1).is_contiguous())
    cube = torch.arange(24.0).reshape(2, 3, 4)
    show(torch.moveaxis(cube, 0, -1).shape, torch.moveaxis(cube, (0, 1), (2, 0)).shape, cube.moveaxis(2, 0).stride())
    loss = (prod.sum() + angles.mean() + torch.ravel(Z).pow(2).sum())
    loss.backward()
    show(X.grad)
    show(torch.cumsum(Z, axis=0)[-1], torch.prod(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1))
    show(torch.argmax(Z, axis=1), torch.logsumexp(Z, axis=1), torch.var(Z, axis=1, keepdims=True).shape)
    show_outcome(show, lambda: torch.sum(Z, axis=0, dim=1))
    show_outcome(show, lambda: torch.mean(Z, axis=0, keepdims=True, keepdim=True))
    show_outcome(show, lambda: torch.clip(Z, a_min=-1, a_max=1))


def _stacking_like_numpy(lib, show):
    """Building design matrices with NumPy's stacking helpers: column_stack, row_stack (deprecated alias),
    dstack, hstack/vstack of 1-d pieces, atleast_1d/2d/3d on scalars and vectors, and tensor_split for
    np.array_split; the refusals a NumPy user meets along the way."""
    torch = lib
    x = torch.linspace(0, 1, 5, requires_grad=True)
    ones = torch.ones(5)
    design = torch.column_stack((ones, x, x ** 2))
    show(design, design.grad_fn.name())
    rows = torch.row_stack([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])])
    show(rows, torch.vstack((torch.tensor([1, 2]), torch.tensor([3, 4]))).shape)
    show(torch.hstack([torch.tensor([1.0]), torch.tensor([2.0, 3.0])]), torch.hstack((design, design)).shape)
    show(torch.dstack((torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6]))).shape, torch.dstack([design, design]).shape)
    s = torch.tensor(3.5)
    show(torch.atleast_1d(s).shape, torch.atleast_2d(s).shape, torch.atleast_3d(s).shape)
    show(torch.atleast_2d(x).shape, torch.atleast_3d(x).shape, torch.atleast_3d(design).shape)
    pieces = torch.atleast_2d(s, x)
    show(type(pieces).__name__, [p.shape for p in pieces], torch.atleast_1d((s, s))[0].shape)
    show(torch.column_stack([torch.arange(3), torch.arange(3.0)]).dtype)
    splits = torch.tensor_split(torch.arange(10), 3)
    show([p.tolist() for p in splits], [p.tolist() for p in torch.tensor_split(torch.arange(10), [2, 5])])
    show([p.shape for p in torch.split(torch.arange(10), 4)], [p.shape for p in torch.hsplit(design, 3)])
    show([p.shape for p in torch.vsplit(design, [1, 3])], [p.shape for p in torch.dsplit(torch.zeros(2, 2, 4), 2)])
    show_outcome(show, lambda: torch.hsplit(design, 2))
    show_outcome(show, lambda: torch.column_stack([torch.ones(3), torch.ones(4)]))
    show_outcome(show, lambda: torch.vstack([]))
    show_outcome(show, lambda: torch.stack([torch.ones(2), torch.ones(3)]))
    show_outcome(show, lambda: torch.concatenate([torch.ones(2, 2), torch.ones(2)], axis=0))
    show_outcome(show, lambda: torch.row_stack(torch.ones(2, 2)))
    (design.sum() + rows.sum()).backward()
    show(x.grad)


def _statistics_port(lib, show):
    """np.diff, np.cov/np.corrcoef, np.histogram, np.vander and np.kron ported to torch: the same keywords
    where they exist (prepend/append, correction vs ddof, fweights/aweights, bins/range/weights/density,
    increasing), and what each returns."""
    torch = lib
    prices = torch.tensor([100.0, 101.5, 99.0, 103.0, 104.5, 102.0], dtype=torch.float64)
    show(torch.diff(prices), torch.diff(prices, n=2), torch.diff(prices, prepend=prices[:1]))
    show(torch.diff(torch.tensor([[1, 3, 6], [2, 2, 9]]), axis=0), torch.diff(torch.tensor([True, False, False])))
    show(torch.diff(prices, append=torch.tensor([0.0], dtype=torch.float64)).shape)
    returns = torch.diff(prices) / prices[:-1]
    show(returns)
    obs = torch.tensor([[1.0, 2.0, 4.0, 7.0], [2.0, 1.0, 0.5, 0.0], [3.0, 3.5, 5.0, 9.0]])
    show(torch.cov(obs), torch.cov(obs, correction=0), torch.corrcoef(obs))
    show(torch.cov(obs, fweights=torch.tensor([1, 2, 1, 1]), aweights=torch.tensor([0.5, 1.0, 1.0, 2.0])))
    show(torch.cov(obs[0]), torch.corrcoef(obs[:2]).dtype)
    show_outcome(show, lambda: torch.cov(obs, fweights=torch.tensor([1.0, 2.0, 1.0, 1.0])))
    show_outcome(show, lambda: torch.cov(obs, aweights=torch.tensor([-1.0, 1.0, 1.0, 1.0])))
    data = torch.tensor([0.1, 0.4, 0.4, 0.9, 1.3, 2.2, 2.8, 3.0])
    hist, edges = torch.histogram(data, bins=4)
    show(hist, edges, type(torch.histogram(data, 3)).__name__)
    show(torch.histogram(data, bins=3, range=(0.0, 3.0), density=True))
    show(torch.histogram(data, bins=torch.tensor([0.0, 1.0, 2.5, 3.0]), weight=torch.ones(8) * 2).hist)
    show(torch.histc(data, bins=4, min=0, max=4), torch.bincount(torch.tensor([0, 2, 2, 5])))
    show_outcome(show, lambda: torch.histogram(torch.tensor([1, 2, 3]), bins=2))
    show_outcome(show, lambda: torch.histogram(data, bins=2, range=(3.0, 1.0)))
    show(torch.vander(torch.tensor([1, 2, 3])), torch.vander(torch.tensor([1.0, 2.0, 3.0]), N=2, increasing=True))
    show(torch.kron(torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])), torch.kron(torch.tensor([1, 2]), torch.tensor([10, 20, 30])))
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    torch.kron(w, torch.tensor([2.0, 3.0])).pow(2).sum().backward()
    show(w.grad)


def _index_helpers(lib, show):
    """np.tril_indices / triu_indices (torch wants the row and column counts and returns one tensor),
    itertools.product as cartesian_prod, itertools.combinations as combinations, meshgrid's indexing,
    searchsorted/bucketize for np.digitize, and unravel_index."""
    torch = lib
    idx = torch.tril_indices(4, 4)
    show(idx, idx.dtype, torch.tril_indices(3, 4, offset=1), torch.triu_indices(3, 3, 1))
    m = torch.arange(16.0).reshape(4, 4)
    show(m[idx[0], idx[1]], m[tuple(torch.triu_indices(4, 4, 1))])
    show_outcome(show, lambda: torch.tril_indices(4))
    show(torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5])), torch.cartesian_prod(torch.tensor([7, 8])))
    items = torch.tensor([10.0, 20.0, 30.0, 40.0])
    show(torch.combinations(items), torch.combinations(items, r=3).shape)
    show(torch.combinations(items[:3], with_replacement=True), torch.combinations(items, r=0).shape)
    show_outcome(show, lambda: torch.combinations(torch.ones(2, 2)))
    gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="xy")
    show(gx, gy, torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")[0].shape)
    show_outcome(show, lambda: torch.meshgrid(torch.arange(3), indexing="yx"))
    bins = torch.tensor([0.0, 1.0, 2.5, 4.0])
    vals = torch.tensor([-1.0, 0.0, 1.0, 2.0, 4.0, 5.0])
    show(torch.bucketize(vals, bins), torch.bucketize(vals, bins, right=True), torch.searchsorted(bins, vals, side="right"))
    show(torch.searchsorted(bins, vals, right=False, out_int32=True).dtype)
    show_outcome(show, lambda: torch.searchsorted(bins, vals, side="middle"))
    show_outcome(show, lambda: torch.searchsorted(bins, vals, right=True, side="left"))
    flat = torch.tensor([0, 5, 11])
    show(torch.unravel_index(flat, (3, 4)), type(torch.unravel_index(flat, (3, 4))).__name__)
    show_outcome(show, lambda: torch.unravel_index(torch.tensor([12]), (3, 4)))
    show_outcome(show, lambda: torch.unravel_index(torch.tensor([1.0]), (3, 4)))
    show(torch.take_along_dim(m, torch.argsort(m, dim=1, descending=True), dim=1)[0])


def _what_torch_refuses(lib, show):
    """Habits from NumPy that torch refuses, and the errors a user reads: astype, the mean of an integer
    tensor, two -1s in reshape, a list of tensors to torch.tensor, ragged lists, np-style dtype strings."""
    torch = lib
    counts = torch.tensor([3, 1, 4, 1, 5])
    show_outcome(show, lambda: counts.astype("float32"))
    show_outcome(show, lambda: torch.mean(counts))
    show_outcome(show, lambda: counts.mean(axis=0))
    show(counts.float().mean(), torch.mean(counts, dtype=torch.float64), counts.sum().dtype)
    show_outcome(show, lambda: counts.reshape(-1, -1))
    show_outcome(show, lambda: counts.reshape(2, -1))
    show_outcome(show, lambda: counts.view(5, 1, -1).shape)
    rows = [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]
    show_outcome(show, lambda: torch.tensor(rows))
    show(torch.stack(rows), torch.tensor([t.tolist() for t in rows]))
    show_outcome(show, lambda: torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]))
    show_outcome(show, lambda: torch.tensor([[1, 2], [3]]))
    show_outcome(show, lambda: torch.zeros(3, dtype="float32"))
    show_outcome(show, lambda: torch.zeros(3, dtype=np.float32))
    show_outcome(show, lambda: torch.tensor([1, 2], dtype=float).dtype)
    show_outcome(show, lambda: torch.tensor([1, 2], dtype=int).dtype)
    show_outcome(show, lambda: torch.tensor([1, 2], dtype=bool).dtype)
    show_outcome(show, lambda: counts.size(axis=0))
    show_outcome(show, lambda: len(torch.tensor(3)))
    show_outcome(show, lambda: counts.copy())
    show_outcome(show, lambda: torch.arange(6).reshape((2, 3)).T.shape)
    show_outcome(show, lambda: torch.arange(24).reshape(2, 3, 4).T.shape)
    show_outcome(show, lambda: counts.max(axis=0))
    show_outcome(show, lambda: counts[[True, False]])
    show_outcome(show, lambda: counts + torch.ones(2))
    show_outcome(show, lambda: torch.sqrt(counts))
    show_outcome(show, lambda: counts.sqrt_())
    show_outcome(show, lambda: torch.ones(3).dot(torch.ones(3, dtype=torch.float64)))


def _from_numpy_interop(lib, show):
    """Handing arrays between NumPy and torch: from_numpy and .numpy() share memory, as_tensor copies only when
    the dtype changes, asarray's copy= flag, and from_numpy's refusals (negative strides, object arrays) and its
    warning for a read-only array."""
    torch = lib
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(arr)
    arr[0, 0] = 100.0
    t[1, 2] = -1.0
    show(t, arr.tolist(), t.dtype, t.is_contiguous())
    back = t.numpy()
    back[0, 1] = 7.0
    show(t[0], np.shares_memory(back, arr), type(np.asarray(t)).__name__, np.asarray(t).dtype)
    show(torch.from_numpy(np.arange(3)).dtype, torch.from_numpy(np.array([1.5])).dtype,
         torch.from_numpy(np.array([True])).dtype, torch.from_numpy(np.arange(3, dtype=np.uint8)).dtype)
    same = torch.as_tensor(arr)
    cast = torch.as_tensor(arr, dtype=torch.float64)
    arr[1, 0] = 55.0
    show(same[1, 0], cast[1, 0], cast.dtype)
    show(torch.asarray(arr, copy=True)[1, 1], torch.asarray(arr)[1, 1])
    arr[1, 1] = -5.0
    show(torch.asarray(arr, copy=False)[1, 1], torch.tensor(arr)[1, 1])
    show_outcome(show, lambda: torch.asarray(arr, dtype=torch.float64, copy=False))
    show_outcome(show, lambda: torch.from_numpy(arr[::-1]))
    show_outcome(show, lambda: torch.from_numpy(arr[:, ::-1]))
    show_outcome(show, lambda: torch.from_numpy(np.array(["a", "b"])))
    show_outcome(show, lambda: torch.from_numpy(np.array([1, "b"], dtype=object)))
    show_outcome(show, lambda: torch.from_numpy([1.0, 2.0]))
    show(torch.tensor(arr[::-1].copy()), torch.as_tensor(arr[::-1]).stride())
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    ro = torch.from_numpy(frozen)
    show(ro, ro.dtype)
    show(torch.as_tensor(frozen) + 1)
    show(torch.from_numpy(arr.T).stride(), torch.from_numpy(arr[:, 1]).stride(), torch.from_numpy(arr[:, 1]).shape)
    big_endian = np.arange(3, dtype=">f4")
    show_outcome(show, lambda: torch.from_numpy(big_endian))
    show(torch.tensor(big_endian), torch.tensor(big_endian).dtype)
    w = torch.tensor(arr, requires_grad=True)
    show_outcome(show, lambda: w.numpy())
    show_outcome(show, lambda: np.asarray(w))
    show(w.detach().numpy().sum(), w.numpy(force=True).shape)


def _numpy_scalars_beside_tensors(lib, show):
    """NumPy scalars and 0-d arrays met in tensor arithmetic (a mean computed by NumPy, a learning rate read from
    a config as np.float64): the result dtypes, which follow torch's rules, not NumPy's."""
    torch = lib
    t = torch.tensor([1.0, 2.0, 3.0])
    ti = torch.tensor([1, 2, 3])
    show(np.float64(2) * t, t * np.float32(2), t + np.int64(1), ti * np.float64(0.5))
    show(ti + np.int32(7), ti * np.bool_(True), (t > np.float64(1.5)).dtype, ti / np.int64(2))
    show(torch.tensor(np.float32(1.5)).dtype, torch.tensor(np.float64(1.5)).dtype, torch.tensor(np.int16(3)).dtype)
    show(torch.tensor([np.float32(1.0), np.float32(2.0)]).dtype, torch.tensor(np.array(2.5)).dtype)
    show(torch.full((2,), np.float64(1.0)).dtype, torch.full((2,), np.int64(4)).dtype)
    show(t[np.int64(1)], t[np.array(2)], t[np.array([0, 2])], ti[np.array([True, False, True])])
    show_outcome(show, lambda: t + np.array(2.0))
    show_outcome(show, lambda: t + np.array([1.0, 1.0, 1.0]))
    show_outcome(show, lambda: torch.add(t, np.float64(2)))
    show_outcome(show, lambda: torch.mul(ti, np.float32(1.5)))
    lr = np.float64(0.1)
    w = torch.tensor([0.5, -0.5], requires_grad=True)
    loss = (w * lr).pow(2).sum()
    loss.backward()
    show(loss, w.grad)
    with torch.no_grad():
        w -= lr * w.grad
    show(w, w.dtype)
    show_outcome(show, lambda: torch.zeros(np.int64(3)).shape)
    show_outcome(show, lambda: torch.ones((np.int32(2), 3)).shape)
    show_outcome(show, lambda: t.reshape(np.int64(3), 1).shape)
    show_outcome(show, lambda: t.sum(np.int64(0)))
    show_outcome(show, lambda: torch.zeros(np.float64(3)))
    show_outcome(show, lambda: torch.arange(np.float32(0.5), 2).dtype)
    show_outcome(show, lambda: torch.linspace(0, np.float64(1), 3).dtype)
    show_outcome(show, lambda: float(t.sum()) + np.float32(1))
    show_outcome(show, lambda: type(t.sum().item()).__name__)
    show_outcome(show, lambda: t.sum().item() == np.float32(6.0))


def _ufuncs_on_tensors(lib, show):
    """NumPy functions handed tensors, as ported code does halfway: ufuncs (np.exp, np.add) and what type comes
    back, np.testing.assert_allclose on tensors, np.mean/np.sum/np.argmax of a tensor, an array of tensors."""
    torch = lib
    t = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    e = np.exp(t)
    show(type(e).__name__, e)
    a = np.add(t, 1)
    show(type(a).__name__, a)
    show(type(np.sqrt(t)).__name__, np.sqrt(t))
    show(type(np.maximum(t, 1.5)).__name__, np.maximum(t, 1.5))
    show(type(np.sum(t)).__name__, np.sum(t))
    show(type(np.argmax(t)).__name__, np.argmax(t))
    show_outcome(show, lambda: np.mean(t))
    show_outcome(show, lambda: np.mean(t, axis=0))
    show_outcome(show, lambda: np.std(t))
    show_outcome(show, lambda: np.max(t, axis=1))
    show_outcome(show, lambda: np.clip(t, 0.5, 2.5))
    show_outcome(show, lambda: np.concatenate([t, t]).shape)
    show_outcome(show, lambda: type(np.array([t, t])).__name__)
    show_outcome(show, lambda: np.array([torch.tensor(1.0), torch.tensor(2.0)]).dtype)
    show_outcome(show, lambda: np.testing.assert_allclose(t, np.array([[0.0, 1.0], [2.0, 3.0]])))
    show_outcome(show, lambda: np.testing.assert_allclose(t, t + 1e-9))
    show_outcome(show, lambda: np.testing.assert_array_equal(t.long(), [[0, 1], [2, 3]]))
    show_outcome(show, lambda: np.allclose(t, t))
    show_outcome(show, lambda: np.isclose(t, 1.0).tolist())
    g = torch.tensor([1.0, 2.0], requires_grad=True)
    show_outcome(show, lambda: np.exp(g))
    show_outcome(show, lambda: np.sum(g))
    show_outcome(show, lambda: np.exp(g.detach()).dtype)
    show_outcome(show, lambda: np.dot(t, t))
    show_outcome(show, lambda: type(np.dot(t, t)).__name__)
    show_outcome(show, lambda: type(np.float32(2) + t).__name__)
    show_outcome(show, lambda: type(np.ones(2) + t).__name__)
    show_outcome(show, lambda: type(t.numpy() @ t.numpy()).__name__)


def _numerical_differences(lib, show):
    """The numbers a NumPy user finds different after porting: std/var's Bessel default (NumPy's ddof=0), median
    as the lower middle, round half to even (and decimals=), integer division and % of negatives, a stable
    argsort, unique sorted and its counts, NaN in sort and max."""
    torch = lib
    x = torch.tensor([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    show(x.std(), x.std(unbiased=False), x.std(correction=0), torch.var(x, correction=2), np.std(x.numpy()))
    show(torch.std_mean(x, correction=0), torch.var_mean(x))
    show_outcome(show, lambda: torch.tensor([3.0]).std())
    show(torch.median(torch.tensor([1.0, 3.0, 2.0, 4.0])), torch.quantile(torch.tensor([1.0, 3.0, 2.0, 4.0]), 0.5))
    show(torch.median(torch.tensor([[1, 5, 3, 2], [4, 4, 0, 8]]), dim=1))
    show(torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0, 2.0])), torch.median(torch.tensor([1.0, float("nan")])))
    halves = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5])
    show(torch.round(halves), torch.round(torch.tensor([1.005, 2.675, 0.125]), decimals=2), torch.round(halves * 10, decimals=-1))
    show_outcome(show, lambda: torch.round(torch.tensor([15, 25]), decimals=-1))
    a, b = torch.tensor([7, -7, 7, -7]), torch.tensor([2, 2, -2, -2])
    show(a // b, a % b, torch.fmod(a, b), torch.remainder(a, b), torch.div(a, b, rounding_mode="trunc"))
    show(torch.div(a, b), torch.div(a, b, rounding_mode="floor"), torch.floor_divide(a, b), a / b)
    show(torch.tensor([-7.5, 7.5]) // 2, torch.tensor([-7.5, 7.5]) % 2, np.float64(-7.5) // 2)
    show_outcome(show, lambda: torch.div(a, b, rounding_mode="round"))
    show_outcome(show, lambda: a // torch.tensor([0, 1, 1, 1]))
    show(torch.tensor([1.0, -1.0, 0.0]) // 0.0)
    ties = torch.tensor([3, 1, 2, 1, 3, 1])
    show(torch.argsort(ties, stable=True), torch.sort(ties, stable=True, descending=True))
    show(torch.unique(ties), torch.unique(ties, return_counts=True), torch.unique(ties, return_inverse=True))
    show(torch.unique(ties, sorted=False).sort().values, torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 1])))
    nan = torch.tensor([2.0, float("nan"), 1.0])
    show(torch.sort(nan), torch.max(nan), torch.argmax(nan), torch.nansum(nan), torch.nanmean(nan))
    show(torch.maximum(nan, torch.tensor(1.5)), torch.fmax(nan, torch.tensor(1.5)), torch.clamp(nan, 0, 1.5))
    show(torch.tensor([1e20], dtype=torch.float32).to(torch.int64).dtype, torch.tensor([300]).to(torch.uint8))
    show(torch.tensor([2**62]) * 4, torch.tensor([250], dtype=torch.uint8) + 10)
    show(torch.arange(0, 1, 0.1).shape, torch.arange(0, 1, 0.1).dtype, torch.arange(5).dtype)
    show(torch.linspace(0, 1, 5), torch.logspace(0, 2, 3), torch.logspace(0, 2, 3, base=2))


def _least_squares_port(lib, show):
    """A NumPy least-squares fit ported to torch (np.linalg.lstsq, np.polyfit by a Vandermonde matrix, the normal
    equations by solve, pinv), then the same fit by gradient descent with NumPy-style keywords."""
    torch = lib
    torch.manual_seed(311)
    xs = torch.linspace(-1, 1, 20, dtype=torch.float64)
    ys = 0.5 - 2.0 * xs + 3.0 * xs ** 2 + 0.05 * torch.randn(20, dtype=torch.float64)
    V = torch.vander(xs, N=3, increasing=True)
    sol = torch.linalg.lstsq(V, ys.unsqueeze(-1))
    show(type(sol).__name__, sol.solution.squeeze(-1), sol.rank, sol.residuals.shape, sol.singular_values.shape)
    show(torch.linalg.lstsq(V, ys.unsqueeze(-1), driver="gelsd").rank)
    show_outcome(show, lambda: torch.linalg.lstsq(V, ys))
    show_outcome(show, lambda: torch.linalg.lstsq(V.float(), ys.unsqueeze(-1)))
    normal = torch.linalg.solve(V.T @ V, V.T @ ys)
    show(normal, torch.linalg.pinv(V) @ ys, torch.allclose(normal, sol.solution.squeeze(-1)))
    show_outcome(show, lambda: torch.linalg.solve(torch.ones(2, 2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
    show(torch.linalg.matrix_rank(V), torch.linalg.cond(V.T @ V) > 1, torch.linalg.det(V.T @ V) > 0)
    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    for step in range(200):
        opt.zero_grad()
        pred = (V * w).sum(axis=1)
        loss = torch.square(torch.subtract(pred, ys)).mean(axis=0)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            show(step, round(loss.item(), 6))
    show(w.detach(), torch.linalg.norm(w.detach() - normal, ord=2), torch.linalg.vector_norm(V, axis=0))
    resid = ys - V @ w.detach()
    show(torch.diff(resid, axis=0).abs().max(), torch.trapezoid(ys, xs), torch.trapezoid(ys, dx=0.1, axis=0))
    show(torch.cumulative_trapezoid(ys, xs, axis=0)[-1], torch.sort(resid, axis=0, stable=True).indices[:3])
    show(torch.aminmax(V, axis=0), torch.linalg.cross(torch.eye(3), torch.ones(3, 3), axis=1))
    show(torch.exp(x=torch.tensor([0.0, 1.0])), torch.sin(a=torch.tensor([0.0])), torch.sqrt(x1=torch.tensor([4.0])))
    show_outcome(show, lambda: torch.exp(x=torch.tensor([0.0]), a=torch.tensor([1.0])))
    show_outcome(show, lambda: torch.exp(torch.tensor([0.0]), x=torch.tensor([1.0])))
    show_outcome(show, lambda: torch.diff(torch.tensor([1, 2]), axis=0, dim=0))


def _group_statistics_idioms(lib, show):
    """NumPy idioms of a group-by written in torch: np.add.at as index_add_/scatter_add, bincount with weights,
    np.where with one argument, np.nonzero/argwhere, np.isin, np.repeat/np.tile, np.take, np.pad, masks set."""
    torch = lib
    groups = torch.tensor([0, 2, 1, 2, 0, 2])
    values = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    sums = torch.zeros(3).index_add(0, groups, values)
    counts = torch.bincount(groups)
    show(sums, counts, sums / counts, torch.bincount(groups, weights=values.detach()))
    show(torch.zeros(3).scatter_add(0, groups, values), torch.zeros(3).scatter_reduce(0, groups, values, "amax", include_self=False))
    means = torch.zeros(3).scatter_reduce(0, groups, values, reduce="mean", include_self=False)
    means.sum().backward()
    show(means, values.grad)
    show_outcome(show, lambda: torch.bincount(torch.tensor([-1, 2])))
    show_outcome(show, lambda: torch.bincount(torch.tensor([1.0, 2.0])))
    mask = values.detach() > 2.5
    show(torch.where(mask), torch.nonzero(mask), torch.nonzero(mask, as_tuple=True), torch.argwhere(mask))
    show(torch.where(mask, values.detach(), torch.tensor(0.0)), torch.where(mask, 1, 0).dtype, torch.where(mask, 1.0, 0).dtype)
    show(torch.isin(groups, torch.tensor([0, 2])), torch.isin(groups, 2, invert=True), torch.isin(3, groups))
    show(torch.repeat_interleave(torch.tensor([1, 2, 3]), 2), torch.repeat_interleave(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 2])))
    show(torch.tile(torch.tensor([1, 2]), (2, 2)), torch.tensor([1, 2]).repeat(3), torch.repeat_interleave(torch.tensor(2)))
    show(torch.take(torch.arange(12).reshape(3, 4), torch.tensor([0, 5, 11])), torch.flip(torch.arange(4), dims=(0,)))
    show_outcome(show, lambda: torch.take(torch.arange(4), torch.tensor([4])))
    F = torch.nn.functional
    show(F.pad(torch.arange(3.0), (1, 2)), F.pad(torch.arange(3.0), (1, 1), mode="constant", value=-1.0))
    show(F.pad(torch.arange(6.0).reshape(1, 2, 3), (1, 1), mode="reflect"), F.pad(torch.arange(3.0).reshape(1, 3), (2, 0), mode="replicate"))
    show_outcome(show, lambda: F.pad(torch.arange(3.0).reshape(1, 3), (3, 0), mode="reflect"))
    data = torch.arange(6.0)
    data[data > 3] = -1.0
    data[torch.tensor([0, 0])] += 1
    show(data)
    filled = torch.arange(6.0).masked_fill(torch.arange(6) % 2 == 0, float("nan"))
    show(filled, torch.nan_to_num(filled, nan=0.0), torch.isnan(filled).sum(), filled.isnan().any())
    show(torch.roll(torch.arange(5), 2), torch.roll(torch.arange(6).reshape(2, 3), shifts=(1, 1), dims=(0, 1)))
    show(torch.cumsum(torch.tensor([1, 2, 3], dtype=torch.int32), 0).dtype, torch.sum(torch.tensor([1, 2], dtype=torch.uint8)).dtype)
    show(torch.prod(torch.tensor([True, True])).dtype, torch.mean(torch.tensor([1.0, 2.0], dtype=torch.float16)).dtype)


PROGRAMS = [
    _keyword_aliases_feature_scaling,
    _stacking_like_numpy,
    _statistics_port,
    _index_helpers,
    _what_torch_refuses,
    _from_numpy_interop,
    _numpy_scalars_beside_tensors,
    _ufuncs_on_tensors,
    _numerical_differences,
    _least_squares_port,
    _group_statistics_idioms,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
