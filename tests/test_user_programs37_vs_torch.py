"""A thirty-seventh set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared: tabular-data wrangling written in tensors, the way people avoid pandas.

These add what the other program files do not run: a group-by by a stable argsort and unique_consecutive's
inverse and counts, with per-group sums, means, maxima, minima and products by scatter_reduce (with and without
include_self, integer and bool columns) and index_reduce, checked against bincount means; a pivot table of revenue
and counts by ``index_put_(accumulate=True)`` with 0/0 cells, margins and the long form by nonzero; ordinal, min,
max, dense, average and within-group ranks with ties (argsort of argsort, searchsorted, unique, scatter_reduce);
percentiles under every interpolation, nanquantile with all-NaN rows, quantile's gradient and refusals; binning by
bucketize and searchsorted (right/side/sorter/out_int32, out-of-range values and NaN, per-row boundaries) and their
refusals; rolling windows by unfold with nanmean/nansum/std(correction=) and cumsum differences; missing values
(isnan/isinf/nan_to_num in every dtype, imputation by where, nanmean/nansum/nanmedian of all-NaN rows and their
gradients); forward and backward fill by cummax/cummin of indices, per column and per group; joins by searchsorted
(sorted, through sorter=, as-of) and isin; one-hot, multi-hot, frequency and smoothed target encodings with
one_hot's and bincount's refusals; a stratified split by per-class randperm from a Generator, folds and weighted
draws; dates in int64 seconds (floor_divide, remainder and div's rounding modes with negatives, by zero); and the
dtype surprises of tabular code (int / int, the mean of an int column, sums of bool masks, cumsum of int32, empty
reductions). Everything comes from seeded generators, which are torch's; nothing runs a matrix product, so values
are compared to a tight tolerance.

Differences these programs found, now fixed (``tests/ops/test_program37_findings_vs_torch.py``):
- ``scatter_reduce(reduce="mean")`` of an int32/int16/int8/uint8 column returned int64; torch keeps the dtype (and
  counts in it); a bool mean, ``index_reduce`` of a bool column and ``bincount`` of a bool column were computed
  where torch refuses them;
- ``nanmedian(dim)`` of an all-NaN row gave index 0 where torch gives the one its ``std::nth_element`` leaves;
- ``index_put_(accumulate=True)`` through a mask of the wrong length was refused as a value of the wrong shape
  (RuntimeError) where torch refuses the mask (IndexError), and ``index_put``/``index_put_`` did not warn of a byte
  mask.

Left: nothing these programs met.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _sales_table(torch, n=14):
    """A small sales table: store id, product id, quantity, price (a few NaN prices), day number."""
    g = torch.Generator().manual_seed(37)
    store = torch.randint(0, 4, (n,), generator=g)
    product = torch.randint(0, 5, (n,), generator=g)
    quantity = torch.randint(1, 6, (n,), generator=g)
    price = torch.rand(n, generator=g).mul(20).round(decimals=2)
    price[torch.tensor([2, 9])] = float("nan")
    return store, product, quantity, price


def _group_by_scatter_reduce(lib, show):
    """Group-by without pandas: sort by key (stable), unique_consecutive for the groups, then per-group sums, means,
    maxima, minima and products by scatter_reduce with and without include_self, index_reduce, and the mean
    checked against bincount."""
    torch = lib
    store, product, quantity, price = _sales_table(torch)
    order = torch.argsort(store, stable=True)
    keys, inverse, counts = torch.unique_consecutive(store[order], return_inverse=True, return_counts=True)
    show(order, keys, inverse, counts, counts.dtype, inverse.dtype)
    qty_sorted = quantity[order].float()
    for reduce in ("sum", "mean", "amax", "amin", "prod"):
        for include_self in (True, False):
            init = torch.ones(len(keys)) if reduce == "prod" else torch.zeros(len(keys))
            out = init.scatter_reduce(0, inverse, qty_sorted, reduce=reduce, include_self=include_self)
            show(reduce, include_self, out)
    by_bincount = torch.bincount(store, weights=quantity.float()) / torch.bincount(store)
    show(by_bincount, by_bincount.dtype)
    int_mean = torch.zeros(4, dtype=torch.long).scatter_reduce(0, store, quantity, "mean", include_self=False)
    show(int_mean, int_mean.dtype)
    qty32 = quantity.int()
    mean32 = torch.zeros(4, dtype=torch.int32).scatter_reduce(0, store, qty32, "mean", include_self=False)
    show(mean32, mean32.dtype, torch.zeros(4, dtype=torch.int8).scatter_reduce(0, store, qty32.to(torch.int8), "mean"))
    big_order = quantity > 3
    show(torch.zeros(4, dtype=torch.bool).scatter_reduce(0, store, big_order, "amax", include_self=False))
    show_outcome(show, lambda: torch.zeros(4, dtype=torch.bool).scatter_reduce(0, store, big_order, "mean"))
    show_outcome(show, lambda: torch.zeros(4, dtype=torch.bool).index_reduce(0, store, big_order, "amax"))
    show_outcome(show, lambda: torch.bincount(big_order))
    show(torch.bincount(big_order.long()), torch.bincount(store, weights=big_order.float()))
    revenue = (quantity * price).nan_to_num(0.0)
    table = torch.full((4, 2), float("nan"))
    show(table.index_reduce(0, store, torch.stack([revenue, price], 1), "amax", include_self=False))
    show(table.index_reduce(0, store, torch.stack([revenue, price], 1), "mean", include_self=True))
    weights = torch.ones(len(store), requires_grad=True)
    best = torch.zeros(4).scatter_reduce(0, store, weights * quantity, "amax", include_self=False)
    best.sum().backward()
    show(best, best.grad_fn.name(), weights.grad)
    show_outcome(show, lambda: torch.zeros(4).scatter_reduce(0, store, quantity.float(), "max"))
    show_outcome(show, lambda: torch.zeros(4).scatter_reduce(0, store, quantity, "sum"))
    show_outcome(show, lambda: torch.zeros(4).index_reduce(0, store.int(), quantity.float(), "sum"))


def _pivot_table(lib, show):
    """A pivot table (store x product) of revenue and of counts by index_put_ with accumulate, the mean per cell
    with empty cells 0/0, margins, and the same grid read back as a long table by nonzero."""
    torch = lib
    store, product, quantity, price = _sales_table(torch)
    revenue = torch.where(price.isnan(), 0.0, quantity * price)
    grid = torch.zeros(4, 5)
    grid.index_put_((store, product), revenue, accumulate=True)
    counts = torch.zeros(4, 5, dtype=torch.long)
    counts.index_put_((store, product), torch.ones_like(store), accumulate=True)
    show(grid, counts, counts.sum(), counts.dtype)
    mean_cell = grid / counts
    show(mean_cell, mean_cell.isnan().sum(), mean_cell.dtype)
    show(grid.sum(0), grid.sum(1), grid.sum(), grid.nansum(1))
    last = torch.zeros(4, 5)
    last.index_put_((store, product), revenue)
    show(last.count_nonzero(), (last != 0).sum(1))
    rows, cols = counts.nonzero(as_tuple=True)
    show(rows, cols, counts[rows, cols], grid[rows, cols])
    flat = torch.zeros(20).index_add_(0, store * 5 + product, revenue)
    show(torch.equal(flat.view(4, 5), grid), torch.allclose(flat.view(4, 5), grid))
    qty_grid = torch.zeros(4, 5, dtype=torch.int32)
    show_outcome(show, lambda: qty_grid.index_put_((store, product), quantity, accumulate=True))
    show_outcome(show, lambda: qty_grid.index_put_((store, product), quantity.int(), accumulate=True))
    show_outcome(show, lambda: grid.index_put_((store,), revenue[:3], accumulate=True))
    show_outcome(show, lambda: grid.index_put_((store.float(), product), revenue))
    has_price = ~price.isnan()
    show_outcome(show, lambda: torch.zeros(len(store) - 1).index_put_((has_price,), revenue, accumulate=True))
    show_outcome(show, lambda: torch.zeros(len(store)).index_put_((has_price,), revenue[has_price], accumulate=True))
    share = grid / grid.sum(1, keepdim=True)
    show(share, share.sum(1))
    w = torch.ones(len(store), requires_grad=True)
    pivot = torch.zeros(4, 5).index_put((store, product), w * revenue, accumulate=True)
    pivot.max().backward()
    show(pivot.grad_fn.name(), w.grad)


def _ranks_with_ties(lib, show):
    """Ranking columns with ties: ordinal ranks by argsort of argsort (stable), min and max ranks by searchsorted,
    dense ranks by unique's inverse, average ranks by scatter_reduce mean, percent ranks, and descending ranks."""
    torch = lib
    scores = torch.tensor([70.0, 85.0, 70.0, 92.0, 85.0, 60.0, 85.0, 100.0])
    ordinal = torch.argsort(torch.argsort(scores, stable=True), stable=True) + 1
    show(ordinal, ordinal.dtype)
    sorted_scores, _ = torch.sort(scores)
    min_rank = torch.searchsorted(sorted_scores, scores) + 1
    max_rank = torch.searchsorted(sorted_scores, scores, right=True)
    show(min_rank, max_rank, (min_rank + max_rank) / 2)
    uniq, dense, counts = torch.unique(scores, return_inverse=True, return_counts=True)
    show(uniq, dense + 1, counts)
    avg = torch.zeros(len(uniq)).scatter_reduce(0, dense, ordinal.float(), "mean", include_self=False)
    show(avg[dense])
    show((min_rank - 1) / (len(scores) - 1))
    desc = torch.argsort(torch.argsort(scores, descending=True, stable=True)) + 1
    show(desc, torch.sort(scores, descending=True, stable=True))
    top = torch.topk(scores, 3)
    show(top.values, top.indices)
    by_class = torch.tensor([0, 1, 0, 1, 1, 0, 0, 1])
    key = by_class * 1000 + scores
    within = torch.argsort(torch.argsort(key, stable=True), stable=True)
    starts = torch.cumsum(torch.bincount(by_class), 0) - torch.bincount(by_class)
    show(within - starts[by_class] + 1)
    show(torch.argsort(scores.int(), stable=True), torch.argsort(scores.bool(), stable=True))
    show_outcome(show, lambda: torch.argsort(scores, stable=True, dim=1))
    show_outcome(show, lambda: torch.sort(scores, stable=None))
    show(torch.sort(torch.tensor([2.0, float("nan"), -1.0, float("nan"), 2.0]), stable=True))
    show(torch.argsort(torch.tensor([2.0, float("nan"), -1.0, float("nan")]), descending=True, stable=True))


def _percentiles(lib, show):
    """Percentiles of a column under every interpolation, per group and along dims, nanquantile with all-NaN
    rows, the q tensors' shapes, and the refusals users meet (an int column, q out of range, q of another
    dtype, a wrong interpolation)."""
    torch = lib
    torch.manual_seed(37)
    incomes = torch.randn(3, 9, dtype=torch.float64).mul(10).add(50).round()
    qs = torch.tensor([0.0, 0.1, 0.25, 0.5, 0.9, 1.0], dtype=torch.float64)
    for how in ("linear", "lower", "higher", "midpoint", "nearest"):
        show(how, torch.quantile(incomes, qs, dim=1, interpolation=how))
    show(torch.quantile(incomes, 0.5), torch.quantile(incomes, 0.5, dim=0, keepdim=True).shape)
    show(torch.quantile(incomes, qs, dim=1, keepdim=True).shape, torch.quantile(incomes, qs).shape)
    holes = incomes.clone()
    holes[0, ::2] = float("nan")
    holes[2] = float("nan")
    for how in ("linear", "lower", "higher", "midpoint", "nearest"):
        show(how, torch.nanquantile(holes, torch.tensor([0.25, 0.5], dtype=torch.float64), dim=1,
                                    interpolation=how))
    show(torch.quantile(holes, 0.5, dim=1), torch.nanquantile(holes, 0.5))
    f32 = incomes.float()
    show(torch.quantile(f32, 0.3, dim=1), f32.quantile(torch.tensor(0.3)))
    x = incomes[1].clone().requires_grad_()
    q = torch.quantile(x, torch.tensor([0.25, 0.75], dtype=torch.float64))
    (q[1] - q[0]).backward()
    show(q, q.grad_fn.name(), x.grad)
    show_outcome(show, lambda: torch.quantile(incomes.long(), 0.5))
    show_outcome(show, lambda: torch.quantile(incomes, 1.5))
    show_outcome(show, lambda: torch.quantile(incomes, torch.tensor([0.5])))
    show_outcome(show, lambda: torch.quantile(incomes, 0.5, interpolation="cubic"))
    show_outcome(show, lambda: torch.quantile(incomes, torch.tensor([[0.5]], dtype=torch.float64)))
    show_outcome(show, lambda: torch.nanquantile(incomes, -0.1))
    show_outcome(show, lambda: torch.quantile(torch.tensor([], dtype=torch.float64), 0.5))
    show(torch.median(incomes, 1), torch.nanmedian(holes, 1))


def _binning(lib, show):
    """Binning a column: bucketize with right=False/True, searchsorted with side=, right=, sorter= and out_int32,
    values below, on and above the edges, NaN, the bin labels by bincount, and the refusals."""
    torch = lib
    ages = torch.tensor([0.0, 17.0, 18.0, 25.5, 34.0, 35.0, 64.9, 65.0, 90.0, -3.0, float("nan")])
    edges = torch.tensor([18.0, 35.0, 65.0])
    left = torch.bucketize(ages, edges)
    right = torch.bucketize(ages, edges, right=True)
    show(left, right, left.dtype, torch.bucketize(ages, edges, out_int32=True).dtype)
    show(torch.searchsorted(edges, ages), torch.searchsorted(edges, ages, side="right"))
    show(torch.searchsorted(edges, ages, right=True, side="right"))
    show_outcome(show, lambda: torch.searchsorted(edges, ages, right=False, side="right"))
    show_outcome(show, lambda: torch.searchsorted(edges, ages, side="middle"))
    show(torch.bincount(left[:-1], minlength=4), torch.histc(ages[:-1], bins=4, min=0, max=100))
    shuffled = torch.tensor([65.0, 18.0, 35.0])
    sorter = torch.argsort(shuffled)
    show(torch.searchsorted(shuffled, ages, sorter=sorter), torch.searchsorted(shuffled, 40.0, sorter=sorter))
    show(torch.bucketize(30, edges), torch.bucketize(torch.tensor(65), edges, right=True))
    per_row = torch.tensor([[0.0, 10.0, 20.0], [5.0, 6.0, 7.0]])
    show(torch.searchsorted(per_row, torch.tensor([[10.0, 25.0], [5.5, 4.0]])))
    show(torch.searchsorted(per_row, torch.tensor([[10.0, 25.0], [5.5, 4.0]]), out_int32=True, right=True))
    labels = ["child", "young", "adult", "senior"]
    show([labels[i] for i in left[:-1].tolist()])
    show_outcome(show, lambda: torch.bucketize(ages, edges.view(3, 1)))
    show_outcome(show, lambda: torch.searchsorted(per_row, ages))
    show_outcome(show, lambda: torch.searchsorted(shuffled, ages, sorter=sorter.int()))
    show_outcome(show, lambda: torch.searchsorted(shuffled, ages, sorter=torch.tensor([0, 1])))
    show_outcome(show, lambda: torch.searchsorted(edges.long(), ages))
    show(torch.searchsorted(edges, ages.double()).dtype, torch.bucketize(ages.long(), edges))


def _rolling_windows(lib, show):
    """Rolling statistics of a daily series with holes by unfold: a 3-day mean, nanmean, nansum, std with
    correction 0, 1 and 2 (a window too small for its correction), min/max, and the same sum by cumsum."""
    torch = lib
    sales = torch.tensor([5.0, 7.0, float("nan"), 6.0, 9.0, 4.0, float("nan"), float("nan"), float("nan"), 8.0])
    windows = sales.unfold(0, 3, 1)
    show(windows.shape, windows.stride(), windows.is_contiguous())
    show(windows.mean(1), windows.nanmean(1), windows.nansum(1))
    filled = sales.nan_to_num(0.0)
    for correction in (0, 1, 2):
        show(correction, filled.unfold(0, 3, 1).std(1, correction=correction),
             filled.unfold(0, 2, 1).var(1, correction=correction))
    show(filled.unfold(0, 1, 1).std(1))
    show(filled.unfold(0, 4, 2), filled.unfold(0, 4, 3).amax(1), filled.unfold(0, 3, 1).min(1))
    csum = torch.cat([torch.zeros(1), filled.cumsum(0)])
    show(csum[3:] - csum[:-3], filled.unfold(0, 3, 1).sum(1))
    valid = (~sales.isnan()).float().unfold(0, 3, 1).sum(1)
    show(valid, valid.dtype, torch.where(valid >= 2, windows.nanmean(1), float("nan")))
    show(torch.std_mean(filled.unfold(0, 5, 5), 1, correction=0), torch.var_mean(filled, unbiased=False))
    x = filled.clone().requires_grad_()
    roll = x.unfold(0, 3, 1).mean(1)
    roll.sum().backward()
    show(roll.grad_fn.name(), x.grad)
    show_outcome(show, lambda: sales.unfold(0, 11, 1))
    show_outcome(show, lambda: sales.unfold(0, 3, 0))
    show_outcome(show, lambda: sales.unfold(1, 3, 1))
    show(sales.unfold(0, 10, 1).shape, torch.tensor(3.0).unfold(0, 1, 1))
    show(sales.view(2, 5).unfold(1, 2, 2), sales.view(2, 5).unfold(1, 2, 2).nanmean(-1))


def _missing_values(lib, show):
    """Missing values: counting NaN/inf per column, nan_to_num with its defaults and with given fills, imputing a
    column mean by where, nanmean/nansum/nanmedian/nanquantile of all-NaN rows, and the gradients that reach the
    values that were present."""
    torch = lib
    t = torch.tensor([[1.0, float("nan"), 3.0, float("inf")],
                      [float("nan"), float("nan"), float("nan"), float("nan")],
                      [4.0, 5.0, float("-inf"), 2.0]])
    show(t.isnan().sum(0), t.isinf().sum(1), t.isfinite().all(1), t.isnan().any(), t.isnan().sum().dtype)
    show(torch.isposinf(t), torch.isneginf(t).nonzero())
    show(t.nan_to_num(), t.nan_to_num(nan=-1.0, posinf=99.0, neginf=-99.0), t.double().nan_to_num()[0, 3])
    show(t.half().nan_to_num()[0, 3], t.bfloat16().nan_to_num()[2, 2].float())
    show(t.nanmean(1), t.nanmean(0), t.nansum(1), t.nansum(), t.nanmean())
    show(t.nanmedian(), t.nanmedian(1), t.nanmedian(0))
    show(t.nanquantile(0.5, dim=1), torch.nanquantile(t[:, :3], 0.5, dim=0))
    finite = t.clone()
    finite[finite.isinf()] = float("nan")
    col_mean = finite.nanmean(0)
    imputed = torch.where(finite.isnan(), col_mean, finite)
    show(col_mean, imputed, imputed.isnan().sum())
    show(torch.where(t.isnan(), torch.zeros_like(t), t).sum(1), t.nan_to_num(0.0).sum(1))
    x = finite.clone().requires_grad_()
    loss = x.nanmean(1).nansum() + x.nansum()
    loss.backward()
    show(loss, loss.grad_fn.name(), x.grad)
    y = finite[2].clone().requires_grad_()
    med = y.nanmedian()
    med.backward()
    show(med, med.grad_fn.name(), y.grad)
    show(torch.tensor([1, 2, 3]).nan_to_num(), torch.tensor([True, False]).isnan())
    show_outcome(show, lambda: torch.tensor([1, 2, 3]).nanmean())
    show_outcome(show, lambda: torch.tensor([1, 2, 3]).nansum())
    show_outcome(show, lambda: torch.tensor([1, 2, 3]).nanmedian())
    show_outcome(show, lambda: t.nan_to_num(nan=float("nan")).isnan().sum())
    show(torch.fmax(t, torch.zeros(4)), torch.maximum(t, torch.zeros(4)), torch.fmin(t[0], t[2]))


def _forward_fill(lib, show):
    """Forward fill (and backward fill) of sensor readings with holes by cummax of the indices of present
    values, per column of a 2-D table, within groups, and with leading holes that stay NaN."""
    torch = lib
    readings = torch.tensor([float("nan"), 1.5, float("nan"), float("nan"), 2.0, float("nan"), 3.5, float("nan")])
    idx = torch.arange(len(readings))
    present = ~readings.isnan()
    last_seen = torch.where(present, idx, -1)
    filled_idx, where_from = last_seen.cummax(0)
    show(filled_idx, where_from, filled_idx.dtype)
    ffill = torch.where(filled_idx >= 0, readings[filled_idx.clamp(min=0)], float("nan"))
    show(ffill)
    flipped = torch.where(present, idx, len(readings)).flip(0).cummin(0).values.flip(0)
    bfill = torch.where(flipped < len(readings), readings[flipped.clamp(max=len(readings) - 1)], float("nan"))
    show(flipped, bfill)
    table = torch.stack([readings, readings.roll(3), readings.flip(0)], 1)
    rows = torch.arange(table.shape[0]).unsqueeze(1).expand_as(table)
    marks = torch.where(table.isnan(), -1, rows)
    filled_rows = marks.cummax(0).values
    show(filled_rows)
    show(torch.where(filled_rows >= 0, table.gather(0, filled_rows.clamp(min=0)), float("nan")))
    group = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2])
    starts = torch.cat([torch.tensor([True]), group[1:] != group[:-1]])
    group_start_idx = torch.where(starts, idx, 0).cummax(0).values
    within = torch.where(filled_idx >= group_start_idx, filled_idx, -1)
    show(group_start_idx, within, torch.where(within >= 0, readings[within.clamp(min=0)], float("nan")))
    ties = torch.tensor([3, 1, 3, 2, 3])
    show(ties.cummax(0), ties.float().cummin(0), torch.tensor([[1, 5], [5, 1]]).cummax(1))
    show(readings.cummax(0), torch.tensor([1.0, float("nan"), 0.5]).cummin(0))
    x = torch.tensor([1.0, 3.0, 2.0, 3.0, 5.0], requires_grad=True)
    run_max = x.cummax(0).values
    run_max.sum().backward()
    show(run_max, run_max.grad_fn.name(), x.grad)
    show_outcome(show, lambda: torch.tensor([True, False, True]).cummax(0))
    show_outcome(show, lambda: readings.cummax(1))
    show(torch.tensor([], dtype=torch.long).cummax(0), torch.tensor(4.0).cummax(0))


def _joins_by_searchsorted(lib, show):
    """Joins: a left join of orders to a sorted customer table by searchsorted (missing keys found by a check), a
    join against an unsorted table through sorter=, an as-of join (the last rate at or before each time) and
    semi/anti joins by isin."""
    torch = lib
    cust_id = torch.tensor([101, 104, 107, 110, 115])
    cust_tier = torch.tensor([1, 3, 2, 1, 2])
    orders = torch.tensor([107, 101, 120, 104, 99, 110, 107])
    pos = torch.searchsorted(cust_id, orders)
    show(pos, pos.dtype)
    safe = pos.clamp(max=len(cust_id) - 1)
    matched = cust_id[safe] == orders
    tier = torch.where(matched, cust_tier[safe], -1)
    show(matched, tier, matched.sum(), (~matched).nonzero().squeeze(1))
    shuffled_ids = torch.tensor([110, 101, 115, 107, 104])
    shuffled_tier = torch.tensor([1, 1, 2, 2, 3])
    sorter = torch.argsort(shuffled_ids)
    p = torch.searchsorted(shuffled_ids, orders, sorter=sorter).clamp(max=4)
    hit = shuffled_ids[sorter[p]] == orders
    show(sorter, p, torch.where(hit, shuffled_tier[sorter[p]], -1))
    rate_time = torch.tensor([0, 10, 20, 30], dtype=torch.int64)
    rate = torch.tensor([1.00, 1.10, 1.05, 1.20], dtype=torch.float64)
    trade_time = torch.tensor([-5, 0, 5, 10, 19, 20, 45])
    j = torch.searchsorted(rate_time, trade_time, right=True) - 1
    show(j, torch.where(j >= 0, rate[j.clamp(min=0)], float("nan")))
    show(torch.isin(orders, cust_id), orders[torch.isin(orders, cust_id, invert=True)])
    show(torch.isin(orders, 107), torch.isin(107, cust_id), torch.isin(orders.float(), cust_id))
    keys, counts = torch.unique(orders, return_counts=True)
    show(keys, counts, keys[counts > 1])
    amounts = torch.tensor([20.0, 35.5, 12.0, 8.25, 3.0, 40.0, 9.5])
    spent = torch.zeros(len(cust_id)).index_add_(0, safe[matched], amounts[matched])
    show(spent, spent.dtype)
    show_outcome(show, lambda: torch.searchsorted(cust_id, orders.float()))
    show_outcome(show, lambda: torch.searchsorted(rate_time.float(), trade_time))
    show(torch.searchsorted(rate_time, torch.tensor(20)), torch.searchsorted(rate_time, 20, right=True))


def _encodings(lib, show):
    """Categorical encodings: one_hot with num_classes=-1 and given, multi-hot rows by scatter_ and index_put_,
    frequency and smoothed target encodings by bincount, and one_hot's refusals."""
    torch, F = lib, lib.nn.functional
    city = torch.tensor([2, 0, 2, 1, 3, 2, 0])
    onehot = F.one_hot(city)
    show(onehot, onehot.dtype, F.one_hot(city, num_classes=6).shape, F.one_hot(city, -1).shape)
    show(F.one_hot(torch.tensor([[1, 0], [2, 2]])).shape, F.one_hot(torch.tensor(3), 5))
    show(F.one_hot(city).float().mean(0), F.one_hot(city).sum(0), F.one_hot(city).sum(0).dtype)
    show_outcome(show, lambda: F.one_hot(city, num_classes=3))
    show_outcome(show, lambda: F.one_hot(torch.tensor([1, -1, 2])))
    show_outcome(show, lambda: F.one_hot(city.float()))
    show_outcome(show, lambda: F.one_hot(city.int()))
    show_outcome(show, lambda: F.one_hot(torch.tensor([], dtype=torch.long)))
    show_outcome(show, lambda: F.one_hot(torch.tensor([], dtype=torch.long), 3).shape)
    show_outcome(show, lambda: F.one_hot(city, num_classes=-2))
    tags = [[0, 2], [1], [], [0, 1, 3], [3, 3]]
    rows = torch.tensor([i for i, ts in enumerate(tags) for _ in ts])
    cols = torch.tensor([t for ts in tags for t in ts])
    multi = torch.zeros(len(tags), 4, dtype=torch.bool)
    multi[rows, cols] = True
    show(multi, multi.sum(1), multi.sum(1).dtype, multi.float().mean(0))
    counts = torch.zeros(len(tags), 4).index_put_((rows, cols), torch.ones(len(rows)), accumulate=True)
    show(counts)
    padded = torch.tensor([[0, 2, -1], [1, -1, -1], [-1, -1, -1], [0, 1, 3], [3, 3, -1]])
    hot = torch.zeros(5, 5).scatter_(1, padded.clamp(min=-1) + 1, 1.0)[:, 1:]
    show(hot)
    freq = torch.bincount(city) / len(city)
    show(freq, freq[city], freq.dtype)
    target = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    n = torch.bincount(city, minlength=5)
    s = torch.bincount(city, weights=target, minlength=5)
    prior, alpha = target.mean(), 2.0
    smoothed = (s + alpha * prior) / (n + alpha)
    show(n, s, s.dtype, smoothed, smoothed[city])
    show_outcome(show, lambda: torch.bincount(torch.tensor([1, -2])))
    show_outcome(show, lambda: torch.bincount(city.float()))
    show_outcome(show, lambda: torch.bincount(city.view(1, -1)))
    show_outcome(show, lambda: torch.bincount(city, weights=target[:3]))
    show(torch.bincount(torch.tensor([], dtype=torch.long)), torch.bincount(city.int(), weights=target.double()))


def _stratified_split(lib, show):
    """A stratified 70/30 train/test split: per-class shuffles by randperm from one seeded Generator, the split
    sizes by floor/round, the index sets concatenated and checked for overlap, class shares compared."""
    torch = lib
    labels = torch.tensor([0] * 10 + [1] * 6 + [2] * 4)
    g = torch.Generator().manual_seed(2024)
    train, test = [], []
    for c in torch.unique(labels).tolist():
        members = (labels == c).nonzero(as_tuple=True)[0]
        perm = members[torch.randperm(len(members), generator=g)]
        n_train = int(round(0.7 * len(members)))
        train.append(perm[:n_train])
        test.append(perm[n_train:])
        show(c, members, perm, n_train)
    train, test = torch.cat(train), torch.cat(test)
    show(train, test, train.dtype, len(train), len(test))
    show(torch.isin(train, test).any(), torch.cat([train, test]).sort().values.equal(torch.arange(20)))
    show(torch.bincount(labels[train]) / len(train), torch.bincount(labels[test]) / len(test))
    show(torch.randperm(5, generator=g, dtype=torch.int32), torch.randperm(0, generator=g),
         torch.randperm(1, generator=g))
    state = g.get_state()
    a = torch.randperm(8, generator=g)
    g.set_state(state)
    show(a, torch.randperm(8, generator=g), g.initial_seed())
    shuffled = torch.randperm(20, generator=torch.Generator().manual_seed(7))
    folds = shuffled.chunk(3)
    show([f.tolist() for f in folds], [len(f) for f in shuffled.tensor_split(3)])
    weights = torch.bincount(labels).float().reciprocal()[labels]
    draws = torch.multinomial(weights, 8, replacement=True, generator=torch.Generator().manual_seed(3))
    show(draws, torch.bincount(labels[draws], minlength=3))
    show(torch.multinomial(weights, 5, replacement=False, generator=torch.Generator().manual_seed(3)))
    show_outcome(show, lambda: torch.randperm(-1, generator=g))
    show_outcome(show, lambda: torch.multinomial(weights, 30, generator=g))
    show_outcome(show, lambda: torch.randperm(4, generator=g, dtype=torch.float32))
    show_outcome(show, lambda: torch.randperm(300, dtype=torch.int8))


def _date_arithmetic(lib, show):
    """Dates as int64 seconds since the epoch: days and seconds of the day by floor_divide and remainder (dates
    before 1970 are negative), weekdays, div with each rounding mode, durations in hours (int / int gives
    float), month buckets, and integer division by zero."""
    torch = lib
    ts = torch.tensor([0, 86399, 86400, -1, -86400, -86401, 1_700_000_000, 951_782_400], dtype=torch.int64)
    day = torch.floor_divide(ts, 86400)
    sec = torch.remainder(ts, 86400)
    show(day, sec, day.dtype, (day * 86400 + sec).equal(ts))
    show(ts // 86400, ts % 86400, torch.fmod(ts, 86400))
    show(torch.div(ts, 86400, rounding_mode="floor"), torch.div(ts, 86400, rounding_mode="trunc"))
    show(torch.div(ts, 86400), torch.div(ts, 86400).dtype, ts / 3600)
    weekday = (day + 3) % 7
    show(weekday, weekday.dtype, torch.remainder(day + 3, -7))
    hours = (ts[1:] - ts[:-1]) / 3600
    show(hours, hours.dtype, (ts[1:] - ts[:-1]).abs().max())
    show(torch.remainder(-7, torch.tensor([3, -3])), torch.floor_divide(torch.tensor([-7, 7]), -2))
    show(torch.remainder(torch.tensor([-7.5, 7.5]), 2), torch.fmod(torch.tensor([-7.5, 7.5]), 2))
    show(ts.int() // 86400, (ts.int() // 86400).dtype, (ts.int() * 1000).dtype)
    show_outcome(show, lambda: ts // 0)
    show_outcome(show, lambda: ts % 0)
    show_outcome(show, lambda: torch.div(ts, 0, rounding_mode="trunc"))
    show(ts / 0, torch.div(ts.float(), 0, rounding_mode="floor"), torch.fmod(ts.double(), 0))
    show_outcome(show, lambda: torch.div(ts, 7, rounding_mode="round"))
    minutes = torch.tensor([5, 59, 60, 61, 125, -1])
    show(torch.stack([minutes.div(60, rounding_mode="floor"), minutes.remainder(60)], 1))
    show(torch.tensor(1_700_000_000).float(), torch.tensor(1_700_000_000).double(), torch.tensor(2**31).int())
    months = torch.tensor([202301, 202312, 202401, 202402])
    year, month = months.div(100, rounding_mode="floor"), months % 100
    show(year, month, (year - 2023) * 12 + month - 1)
    d = ts.clone()
    d.floor_divide_(86400)
    d.remainder_(7)
    show(d)
    show_outcome(show, lambda: ts.clone().div_(3))
    show(ts.clone().div_(3, rounding_mode="trunc"))


def _dtype_surprises(lib, show):
    """The dtype surprises of tabular code: int / int is float, the mean of an int column is refused, sums of bool
    masks are int64, cumsum of int32 is int64 (and with dtype=), prod of int8, integer overflow of sums, max of
    a bool column, and mixing int64 with float32 columns."""
    torch = lib
    clicks = torch.tensor([3, 0, 7, 2], dtype=torch.int32)
    views = torch.tensor([10, 5, 7, 0], dtype=torch.int32)
    ctr = clicks / views
    show(ctr, ctr.dtype, clicks // views.clamp(min=1), (clicks // views.clamp(min=1)).dtype)
    show_outcome(show, lambda: clicks.mean())
    show_outcome(show, lambda: torch.mean(clicks, dim=0))
    show(clicks.float().mean(), clicks.mean(dtype=torch.float64), clicks.sum(), clicks.sum().dtype)
    mask = clicks > 1
    show(mask.sum(), mask.sum().dtype, mask.float().mean(), mask.sum(dtype=torch.int32).dtype)
    show(mask.any(), mask.all(), mask.max(), mask.int().argmax(), mask.cumsum(0), mask.cumsum(0).dtype)
    show(clicks.cumsum(0), clicks.cumsum(0).dtype, clicks.cumsum(0, dtype=torch.int32).dtype)
    show(clicks.cumprod(0).dtype, clicks.prod(), clicks.prod().dtype, torch.tensor([100, 3], dtype=torch.int8).prod())
    show(torch.tensor([2**62, 2**62]).sum(), torch.tensor([100, 100], dtype=torch.int8).sum(dtype=torch.int8))
    show((clicks + 0.5).dtype, (clicks + torch.tensor(0.5, dtype=torch.float64)).dtype,
         (clicks.long() + torch.zeros(4)).dtype, (clicks * True).dtype)
    show(torch.tensor([1, 2]) / torch.tensor([2, 2]), torch.true_divide(torch.tensor([1]), 2))
    show(clicks.median(), clicks.is_floating_point(), clicks.float().std(correction=0))
    show_outcome(show, lambda: clicks.std())
    show_outcome(show, lambda: clicks.var(correction=0))
    show_outcome(show, lambda: torch.quantile(clicks, 0.5))
    show_outcome(show, lambda: clicks.nanmean())
    show(torch.tensor([True, True, False]).sum(0), torch.tensor([[True], [False]]).sum(1).dtype)
    show(torch.tensor([1.5, 2.5, -0.5]).long(), torch.tensor([1.5, 2.5, -0.5]).round(), clicks.float().div(3).round(
        decimals=2))
    show(clicks.argmax(), clicks.max(0), torch.max(clicks, views), torch.tensor([3, 7, 7]).argmax())
    show_outcome(show, lambda: clicks.sum(dtype=torch.bool))
    show(torch.tensor([]).sum(), torch.tensor([], dtype=torch.long).prod(), torch.tensor([]).mean())
    show(torch.tensor([], dtype=torch.long).sum().dtype, torch.tensor([], dtype=torch.bool).sum())
    show_outcome(show, lambda: torch.tensor([]).amax())
    show_outcome(show, lambda: torch.tensor([]).max())
    show(torch.count_nonzero(torch.tensor([[0, 1], [2, 0]]), dim=0), torch.tensor([0, 1]).count_nonzero().dtype)


PROGRAMS = [
    _group_by_scatter_reduce,
    _pivot_table,
    _ranks_with_ties,
    _percentiles,
    _binning,
    _rolling_windows,
    _missing_values,
    _forward_fill,
    _joins_by_searchsorted,
    _encodings,
    _stratified_split,
    _date_arithmetic,
    _dtype_surprises,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-6, atol=1e-7)
