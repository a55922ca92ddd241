"""A twenty-first set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: classic machine learning written from scratch in tensors, the
way course notebooks do it. k-means with k-means++ seeding from a Generator, cdist/argmin assignments, centroids by
scatter_add_/bincount and a cluster left empty; PCA by the SVD of centred data and by eigh of the covariance with
sklearn's sign convention and explained variance; k-nearest neighbours with topk over tied distances, mode votes
(ties), weighted bincount votes and Minkowski distances; logistic and softmax regression trained by hand (updates
under no_grad, ``.grad.zero_()``, and the usual slips: an in-place update of a leaf, zero_() before any backward,
``w = w - lr * w.grad``); a linear SVM with margins on the hinge's kink and the subgradient each formulation picks
(clamp, relu, maximum, where, hardtanh, multi_margin_loss); Gaussian and multinomial naive Bayes through logsumexp
with an empty class; a decision stump searched by stable sorts, cumsum and unique_consecutive, with an AdaBoost
reweighting; ridge regression by solve, lstsq (default and gelsd drivers), cholesky_solve and the penalty's
hypergradient; standardisation (unbiased vs correction=0, constant columns, one sample, NaN and inf); confusion
matrices by bincount, index_put_(accumulate=True) and scatter_add_ with 0/0 metrics; ROC/AUC by argsort and cumsum
against the rank statistic with ties, and splits by randperm from seeded Generators. Everything is drawn from
seeded generators, which are torch's. Programs whose transcript holds a matrix product, a LAPACK result or MKL's
float32 exp/log are compared to a tolerance (those are not bit for bit); the others (``EXACT``) bit for bit.

Differences these programs found, now fixed (``tests/ops/test_program21_findings_vs_torch.py``):
- ``cumsum``/``cumprod`` computing in bool (``dtype=torch.bool``, in place on a bool tensor, a bool ``out=``) gave
  a running or/and; torch's scan kernels refuse Bool;
- ``sum``/``prod``/``cumsum``/``cumprod``/``nansum``/``mean`` with an ``out=`` of another dtype computed in their
  own dtype and cast (a float32 sum into a float64 out lost its precision, a long or bool out was refused as a
  cast); torch converts and accumulates in out's dtype;
- ``randperm(n, dtype=)`` wrapped around where the dtype cannot hold n - 1 (``randperm(300, dtype=torch.int8)``);
  torch refuses, and refuses floating dtypes too short for exact indices;
- ``torch.Generator`` printed as ``<torch._factories.Generator object ...>`` (torch: ``torch._C.Generator``);
- ``cdist``/``pdist`` with p other than 0, 1, 2, inf (Minkowski distances) were an ulp or two off torch's for most
  distances.

Left: the backward of cdist/pdist for p other than 0, 1, 2, inf is still a few ulp off (torch's vector
``pow`` terms, summed column by column); float64 pdist with such a p takes glibc's pow where torch's vector loop
takes Sleef's (about 1% of distances an ulp off); an ``out=`` given to ``sum(..., keepdim=True)`` as an
expanded tensor is refused as an internal overlap where torch resizes it first.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _kmeans_with_empty_clusters(lib, show):
    """Lloyd's k-means: k-means++ seeding drawn from a Generator, assignments by cdist/argmin, centroids by
    scatter_add_ and bincount, a cluster left empty keeping its old centre, inertia per iteration."""
    torch = lib
    g = torch.Generator().manual_seed(210)
    blobs = torch.tensor([[0.0, 0.0], [5.0, 5.0], [0.0, 5.0]])
    X = (blobs.repeat_interleave(6, dim=0) + 0.5 * torch.randn(18, 2, generator=g))
    show(X.shape, X.dtype, X[:3])
    first = torch.randint(0, len(X), (1,), generator=g)
    centres = X[first]
    while len(centres) < 4:
        d2 = torch.cdist(X, centres).min(dim=1).values ** 2
        nxt = torch.multinomial(d2 / d2.sum(), 1, generator=g)
        centres = torch.cat([centres, X[nxt]])
    centres[3] = torch.tensor([100.0, 100.0])  # a centre far away: its cluster stays empty
    show(centres)
    k = len(centres)
    for it in range(5):
        dist = torch.cdist(X, centres)
        labels = dist.argmin(dim=1)
        counts = torch.bincount(labels, minlength=k)
        sums = torch.zeros(k, 2).scatter_add_(0, labels.unsqueeze(1).expand(-1, 2), X)
        new = sums / counts.unsqueeze(1).clamp(min=1)
        empty = counts == 0
        new[empty] = centres[empty]
        inertia = dist.gather(1, labels.unsqueeze(1)).pow(2).sum()
        show(it, labels, counts, counts.dtype, empty, inertia)
        if torch.allclose(new, centres):
            break
        centres = new
    show(centres, torch.unique(labels, return_counts=True))
    per_cluster = torch.zeros(k).index_add_(0, labels, dist.min(dim=1).values)
    show(per_cluster, per_cluster / counts, (per_cluster / counts).isnan().sum())
    show(torch.cdist(X[:2], centres, p=1), torch.cdist(X[:2], centres, p=float("inf")))
    show_outcome(show, lambda: torch.bincount(labels - 1))
    show_outcome(show, lambda: torch.bincount(X[:, 0]))
    show_outcome(show, lambda: torch.bincount(labels.view(3, 6)))
    show_outcome(show, lambda: torch.cdist(X, centres[:, :1]))
    show_outcome(show, lambda: torch.zeros(k, 2).scatter_add_(0, labels.unsqueeze(1), X.double()))


def _pca_by_svd_and_eigh(lib, show):
    """PCA twice: by the SVD of the centred data and by eigh of the covariance, with sklearn's sign convention
    (the largest loading of each component made positive), explained variance ratios, projections, a
    reconstruction error per number of components, and the rank-deficient and non-square refusals."""
    torch = lib
    torch.manual_seed(211)
    latent = torch.randn(40, 2, dtype=torch.float64)
    mixing = torch.tensor([[2.0, 0.5, 0.0, 1.0], [0.0, 1.0, 3.0, -1.0]], dtype=torch.float64)
    X = latent @ mixing + 0.05 * torch.randn(40, 4, dtype=torch.float64)
    mean = X.mean(dim=0, keepdim=True)
    Xc = X - mean
    U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
    show(U.shape, S.shape, Vh.shape, S.dtype)
    signs = torch.sign(Vh.gather(1, Vh.abs().argmax(dim=1, keepdim=True)))
    components = Vh * signs
    explained = S ** 2 / (len(X) - 1)
    ratio = explained / explained.sum()
    show(components, explained, ratio, ratio.cumsum(0))
    cov = torch.cov(Xc.T)
    show(torch.allclose(cov, Xc.T @ Xc / (len(X) - 1)), cov.shape, torch.cov(Xc.T, correction=0).diag())
    evals, evecs = torch.linalg.eigh(cov)
    show(evals.dtype, evals[:1] < evals[-1:])
    order = evals.argsort(descending=True)
    evals, evecs = evals[order], evecs[:, order]
    evecs = evecs * torch.sign(evecs.gather(0, evecs.abs().argmax(dim=0, keepdim=True)))
    show(evals, evecs.T, torch.allclose(evecs.T, components), torch.allclose(evals, explained))
    for n in (1, 2, 3):
        Z = Xc @ components[:n].T
        recon = Z @ components[:n] + mean
        show(n, Z.shape, ((X - recon) ** 2).mean())
    show(torch.linalg.matrix_rank(Xc), torch.linalg.matrix_rank(Xc, atol=1.0), torch.linalg.svdvals(Xc[:, :2]))
    corr = torch.corrcoef(X.T)
    show(corr.diag(), corr.shape)
    show(torch.linalg.svd(torch.zeros(3, 2)), torch.linalg.eigvalsh(torch.eye(3) * 2))
    show_outcome(show, lambda: torch.linalg.eigh(X))
    show_outcome(show, lambda: torch.linalg.svd(X.int()))
    show_outcome(show, lambda: torch.cov(X.T, fweights=torch.ones(3)))
    show_outcome(show, lambda: torch.cov(X.T, correction=2, aweights=torch.rand(40)))
    show_outcome(show, lambda: torch.cov(torch.ones(2, 3, 4)))
    show(torch.cov(torch.ones(1, 1)), torch.cov(torch.tensor([1.0, 2.0]), correction=2))


def _knn_with_topk_and_mode(lib, show):
    """k-nearest neighbours: distances by broadcasting, topk(largest=False) with tied distances, votes by mode
    (ties go to the smallest label) and by a weighted bincount, accuracy over k, and topk/mode refusals."""
    torch = lib
    train_x = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [3.0, 3.0], [3.0, 4.0], [4.0, 3.0],
                            [2.0, 2.0]])
    train_y = torch.tensor([0, 0, 1, 1, 2, 2, 2, 1])
    test_x = torch.tensor([[0.5, 0.5], [3.5, 3.5], [2.0, 1.0], [0.0, 0.0]])
    test_y = torch.tensor([0, 2, 1, 0])
    d = ((test_x[:, None, :] - train_x[None, :, :]) ** 2).sum(-1)
    show(d)
    for k in (1, 3, 4, 5):
        vals, idx = d.topk(k, dim=1, largest=False)
        votes = train_y[idx]
        pred, where = votes.mode(dim=1)
        show(k, vals, idx, votes, pred, where, (pred == test_y).float().mean())
    vals, idx = d.topk(4, dim=1, largest=False, sorted=True)
    w = 1.0 / (vals + 1e-3)
    scores = torch.zeros(len(test_x), 3).scatter_add_(1, train_y[idx], w)
    show(scores, scores.argmax(1), scores.softmax(1))
    show([torch.bincount(train_y[i], weights=wi, minlength=3) for i, wi in zip(idx, w)])
    for p in (1.0, 1.5, 3.0):  # (Minkowski distances: the neighbours change with p)
        dp = torch.cdist(test_x, train_x, p=p)
        show(p, dp, dp.topk(3, dim=1, largest=False).indices, torch.pdist(train_x[:4], p=p))
    show(torch.mode(torch.tensor([2, 1, 2, 1, 3])), torch.mode(torch.tensor([[1.0, 1.0, 0.0], [5.0, 4.0, 4.0]]), 1))
    show(torch.mode(torch.tensor([float("nan"), 1.0, float("nan")])), torch.mode(torch.tensor(7)))
    s, si = torch.sort(d[0])
    show(s, si, d[0].argsort(stable=True), d[0].kthvalue(3))
    show(torch.topk(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 2), torch.topk(torch.tensor([1, 1, 1, 1]), 3))
    show_outcome(show, lambda: d.topk(9, dim=1))
    show_outcome(show, lambda: d.topk(-1))
    show_outcome(show, lambda: torch.mode(torch.tensor([])))
    show_outcome(show, lambda: d.kthvalue(0, dim=1))
    show_outcome(show, lambda: torch.bincount(train_y, weights=w[0]))


def _logistic_regression_by_hand(lib, show):
    """Binary logistic regression trained by hand: a weight and bias that require grad, a loss written from
    log-sigmoid, updates under no_grad and ``.grad.zero_()``, then the usual slips (updating outside no_grad,
    zero_() before the first backward, ``w = w - lr * w.grad`` turning the leaf into a non-leaf)."""
    torch = lib
    torch.manual_seed(213)
    X = torch.randn(30, 2)
    y = (X[:, 0] - 0.5 * X[:, 1] > 0.2).float()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    show(w.grad, w.is_leaf, b.grad_fn)
    lr = 0.5
    for step in range(30):
        z = X @ w + b
        loss = -(y * torch.nn.functional.logsigmoid(z) + (1 - y) * torch.nn.functional.logsigmoid(-z)).mean()
        loss.backward()
        if step % 10 == 0:
            show(step, loss, loss.grad_fn.name(), w.grad.clone(), b.grad.clone())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    show(w, b, w.grad, w.requires_grad, w.is_leaf)
    with torch.no_grad():
        p = torch.sigmoid(X @ w + b)
        show(((p > 0.5).float() == y).float().mean(), p.requires_grad, p[:4])
    manual = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    show(manual, torch.nn.functional.binary_cross_entropy(p, y), torch.nn.functional.binary_cross_entropy_with_logits(
        (X @ w + b).detach(), y))
    show(torch.log(torch.sigmoid(torch.tensor([-200.0, 0.0, 200.0]))), torch.nn.functional.logsigmoid(
        torch.tensor([-200.0, 0.0, 200.0])))

    def update_outside_no_grad():
        w.sub_(0.1 * torch.ones(2))

    show_outcome(show, update_outside_no_grad)
    fresh = torch.zeros(2, requires_grad=True)
    show_outcome(show, lambda: fresh.grad.zero_())
    v = torch.ones(2, requires_grad=True)
    (X[:3] @ v).sum().backward()
    v = v - 0.1 * v.grad
    show(v.is_leaf, v.grad_fn.name(), v.requires_grad)
    show(v.grad)
    (X[:3] @ v).sum().backward()
    show(v.grad)
    show_outcome(show, lambda: torch.nn.functional.binary_cross_entropy(p, y.long()))
    show_outcome(show, lambda: torch.nn.functional.binary_cross_entropy(p + 1, y))
    show_outcome(show, lambda: torch.nn.functional.binary_cross_entropy(p, y[:5]))


def _softmax_regression_by_hand(lib, show):
    """Multinomial logistic regression by hand: one-hot targets, log_softmax, the cross entropy written out
    against F.cross_entropy, the gradient checked against (softmax - onehot) / n, L2 decay, argmax predictions
    with tied logits, and one_hot's refusals."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(214)
    X = torch.randn(24, 3, dtype=torch.float64)
    y = torch.arange(24) % 3
    X[y == 1] += 1.5
    X[y == 2] -= 1.5
    W = torch.zeros(3, 3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    Y = F.one_hot(y, num_classes=3)
    show(Y.dtype, Y[:4], F.one_hot(torch.tensor([2, 0])), F.one_hot(torch.tensor([], dtype=torch.long), 4).shape)
    for step in range(40):
        logits = X @ W + b
        logp = logits.log_softmax(dim=1)
        loss = -(Y * logp).sum(dim=1).mean() + 1e-3 * (W ** 2).sum()
        loss.backward()
        if step in (0, 39):
            with torch.no_grad():
                expected = X.T @ (logits.softmax(1) - Y) / len(X) + 2e-3 * W
            show(step, loss, torch.allclose(W.grad, expected), F.cross_entropy(logits, y))
        with torch.no_grad():
            W -= 0.5 * W.grad
            b -= 0.5 * b.grad
            W.grad.zero_()
            b.grad.zero_()
    pred = (X @ W + b).argmax(dim=1)
    show(pred, (pred == y).double().mean(), b, b.sum())
    tied = torch.tensor([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 3.0, 3.0]])
    show(tied.argmax(1), tied.argmin(1), tied.max(1), tied.softmax(1), tied.log_softmax(1))
    big = torch.tensor([[1000.0, 0.0, -1000.0]])
    show(big.softmax(1), big.log_softmax(1), torch.exp(big) / torch.exp(big).sum(), F.cross_entropy(big, torch.tensor([2])))
    show(F.cross_entropy(X @ W + b, y, reduction="none")[:3], F.nll_loss(logp, y, reduction="sum"))
    show_outcome(show, lambda: F.one_hot(torch.tensor([0, 3]), num_classes=3))
    show_outcome(show, lambda: F.one_hot(torch.tensor([0.0, 1.0])))
    show_outcome(show, lambda: F.one_hot(torch.tensor([-1, 1])))
    show_outcome(show, lambda: F.one_hot(torch.tensor([0, 1]), num_classes=0))
    show_outcome(show, lambda: F.cross_entropy(logits, Y))
    show_outcome(show, lambda: F.cross_entropy(logits, y + 1))


def _linear_svm_hinge_subgradients(lib, show):
    """A linear SVM by subgradient descent on the hinge loss, with margins landing exactly on the kink: which
    subgradient clamp, relu, maximum, where and F.hinge_embedding_loss/multi_margin_loss pick there, support
    vectors by the margin, and the multiclass hinge refusals."""
    torch, F = lib, lib.nn.functional
    X = torch.tensor([[2.0, 1.0], [1.0, 2.0], [-1.0, -1.0], [-2.0, 0.0], [0.5, 0.5], [0.0, -0.5]])
    y = torch.tensor([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    w = torch.tensor([0.5, 0.5], requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    margins = y * (X @ w + b)
    show(margins, 1 - margins)
    for name, hinge in [("clamp", lambda m: (1 - m).clamp(min=0)), ("relu", lambda m: torch.relu(1 - m)),
                        ("maximum", lambda m: torch.maximum(torch.zeros_like(m), 1 - m)),
                        ("clamp_min", lambda m: torch.clamp_min(1 - m, 0.0)),
                        ("where", lambda m: torch.where(m < 1, 1 - m, torch.zeros_like(m))),
                        ("F.relu", lambda m: F.relu(1 - m)), ("hardtanh", lambda m: F.hardtanh(1 - m, 0.0, 10.0))]:
        w.grad = b.grad = None
        loss = hinge(y * (X @ w + b)).mean() + 0.05 * w.dot(w)
        loss.backward()
        show(name, loss, loss.grad_fn.next_functions[0][0].name(), w.grad, b.grad)
    for _ in range(20):
        w.grad = b.grad = None
        loss = (1 - y * (X @ w + b)).clamp(min=0).mean() + 0.05 * w.dot(w)
        loss.backward()
        with torch.no_grad():
            w.sub_(0.1 * w.grad)
            b.sub_(0.1 * b.grad)
    with torch.no_grad():
        m = y * (X @ w + b)
    show(w, b, m, (m <= 1).nonzero().squeeze(1), torch.sign(X @ w + b))
    scores = torch.tensor([[2.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 3.0, 2.0]], requires_grad=True)
    target = torch.tensor([0, 1, 1])
    loss = F.multi_margin_loss(scores, target)
    loss.backward()
    show(loss, loss.grad_fn.name(), scores.grad)
    v = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
    out = F.hinge_embedding_loss(v, torch.tensor([1.0, -1.0, -1.0]), margin=1.0, reduction="none")
    out.sum().backward()
    show(out, v.grad)
    show(F.multi_margin_loss(scores, target, p=2, margin=0.5, weight=torch.tensor([1.0, 2.0, 3.0]),
                             reduction="sum"))
    show_outcome(show, lambda: F.multi_margin_loss(scores, target, p=3))
    show_outcome(show, lambda: F.multi_margin_loss(scores, target + 2))
    show_outcome(show, lambda: F.multi_margin_loss(scores, target.float()))
    show_outcome(show, lambda: F.hinge_embedding_loss(v, torch.tensor([1, -1])))


def _naive_bayes_with_logsumexp(lib, show):
    """Gaussian and multinomial naive Bayes by hand: class priors from bincount with an empty class (log 0 is
    -inf), per-class means and variances with correction=0 plus a smoothing floor, joint log-likelihoods,
    posteriors through logsumexp (rows all -inf included), and lgamma in a multinomial likelihood."""
    torch = lib
    torch.manual_seed(216)
    X = torch.cat([torch.randn(5, 2) + torch.tensor([2.0, 0.0]), torch.randn(7, 2) - torch.tensor([2.0, 0.0])])
    y = torch.cat([torch.zeros(5, dtype=torch.long), torch.full((7,), 2)])
    counts = torch.bincount(y, minlength=3)
    prior = counts / counts.sum()
    log_prior = prior.log()
    show(counts, prior, log_prior, prior.dtype)
    means = torch.stack([X[y == c].mean(0) for c in range(3)])
    variances = torch.stack([X[y == c].var(0, correction=0) for c in range(3)])
    show(means, variances, means.isnan().any(1))
    variances = variances + 1e-9 * X.var(0).max()
    test = torch.tensor([[2.0, 0.0], [-2.0, 1.0], [0.0, 0.0]])
    diff = test[:, None, :] - means[None]
    log_lik = -0.5 * (torch.log(2 * torch.pi * variances) + diff ** 2 / variances).sum(-1)
    joint = log_prior + torch.nan_to_num(log_lik, nan=-torch.inf)
    show(log_lik, joint)
    norm = torch.logsumexp(joint, dim=1, keepdim=True)
    post = (joint - norm).exp()
    show(norm, post, post.sum(1), post.argmax(1))
    show(torch.logsumexp(torch.full((2, 3), -torch.inf), dim=1), torch.logsumexp(torch.tensor([torch.inf, 1.0]), 0),
         torch.logsumexp(torch.tensor([torch.inf, -torch.inf]), 0), torch.logsumexp(torch.tensor([]), 0))
    show(torch.full((3,), -torch.inf).softmax(0), torch.full((3,), -torch.inf).log_softmax(0),
         torch.special.logsumexp(torch.tensor([[0.0, 1.0], [2.0, 3.0]]), (0, 1)))
    words = torch.tensor([[3, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]])
    labels = torch.tensor([0, 1, 1])
    feat = torch.zeros(2, 4, dtype=torch.long).index_add_(0, labels, words)
    theta = (feat + 1) / (feat + 1).sum(1, keepdim=True)
    doc = torch.tensor([2, 1, 0, 1])
    log_multinomial = torch.lgamma(doc.sum() + 1.0) - torch.lgamma(doc + 1.0).sum()
    scores = log_multinomial + (doc * theta.log()).sum(1)
    show(feat, theta, scores, scores - scores.logsumexp(0), torch.special.xlogy(doc, theta))
    show(torch.xlogy(torch.tensor([0.0, 0.0, 1.0]), torch.tensor([0.0, torch.nan, 0.0])))
    show_outcome(show, lambda: torch.logsumexp(words, 1))
    show_outcome(show, lambda: torch.logsumexp(X, 2))
    show_outcome(show, lambda: torch.zeros(2, 4).index_add_(0, labels, words))


def _decision_stump_search(lib, show):
    """The best single split of a decision stump: each feature sorted (stable, ties kept in order), running
    class counts by cumsum, Gini impurity at every cut, cuts only between distinct values (unique_consecutive
    with counts and inverse), the threshold at the midpoint, and a weighted error for AdaBoost's first round."""
    torch = lib
    X = torch.tensor([[2.5, 1.0], [1.0, 3.0], [2.5, 2.0], [3.0, 1.0], [1.0, 0.5], [4.0, 2.0], [3.0, 3.5],
                      [2.0, 2.0]])
    y = torch.tensor([0, 0, 1, 1, 0, 1, 1, 0])
    n = len(y)
    best = (float("inf"), -1, 0.0)
    for f in range(X.shape[1]):
        values, order = X[:, f].sort(stable=True)
        labels = y[order]
        ones_left = labels.cumsum(0)[:-1]
        left_n = torch.arange(1, n)
        right_n = n - left_n
        ones_right = labels.sum() - ones_left
        p_left, p_right = ones_left / left_n, ones_right / right_n
        gini = (left_n * 2 * p_left * (1 - p_left) + right_n * 2 * p_right * (1 - p_right)) / n
        valid = values[1:] != values[:-1]
        gini = gini.masked_fill(~valid, float("inf"))
        show(f, values, order, labels, ones_left.dtype, p_left.dtype, gini)
        uniq, inverse, counts = torch.unique_consecutive(values, return_inverse=True, return_counts=True)
        show(uniq, inverse, counts, counts.cumsum(0))
        i = int(gini.argmin())
        if gini[i] < best[0]:
            best = (gini[i].item(), f, ((values[i] + values[i + 1]) / 2).item())
    show(best)
    _, f, thr = best
    pred = (X[:, f] > thr).long()
    weights = torch.full((n,), 1.0 / n, dtype=torch.float64)
    miss = pred != y
    err = weights[miss].sum()
    alpha = 0.5 * torch.log((1 - err) / err)
    weights = weights * torch.exp(alpha * torch.where(miss, 1.0, -1.0))
    weights /= weights.sum()
    show(pred, miss, err, alpha, weights, weights.dtype)
    show(torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 3]]), dim=0, return_counts=True))
    show(torch.unique_consecutive(torch.tensor([1.0, float("nan"), float("nan"), 2.0])))
    show(torch.tensor([3.0, 1.0, 2.0, 1.0]).sort(descending=True, stable=True), torch.tensor([True, False]).cumsum(0))
    show(torch.tensor([1, 2, 3], dtype=torch.uint8).cumsum(0).dtype, torch.tensor([1, 2], dtype=torch.int32).cumsum(
        0, dtype=torch.float16))
    show_outcome(show, lambda: torch.unique_consecutive(X, dim=2))
    show_outcome(show, lambda: X.sort(dim=2))
    show_outcome(show, lambda: y.cumsum(0, dtype=torch.bool))


def _ridge_regression_solvers(lib, show):
    """Ridge regression solved several ways: the normal equations by linalg.solve, lstsq on an augmented system
    (solution, residuals, rank, singular values as the default driver reports them), cholesky_solve, the effective
    degrees of freedom, the gradient of a validation loss with respect to the penalty through solve, and the
    refusals of a singular system and mismatched shapes."""
    torch = lib
    torch.manual_seed(218)
    X = torch.randn(20, 3, dtype=torch.float64)
    true_w = torch.tensor([1.5, -2.0, 0.0], dtype=torch.float64)
    y = X @ true_w + 0.1 * torch.randn(20, dtype=torch.float64)
    lam = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    A = X.T @ X + lam * torch.eye(3, dtype=torch.float64)
    w = torch.linalg.solve(A, X.T @ y)
    show(w, w.grad_fn.name(), A.grad_fn.name())
    aug_X = torch.cat([X, lam.detach().sqrt() * torch.eye(3, dtype=torch.float64)])
    aug_y = torch.cat([y, torch.zeros(3, dtype=torch.float64)])
    sol = torch.linalg.lstsq(aug_X, aug_y.unsqueeze(1))
    show(sol.solution.squeeze(1), sol.residuals, sol.rank, sol.singular_values, torch.allclose(sol.solution.squeeze(1), w))
    gelsd = torch.linalg.lstsq(aug_X, aug_y.unsqueeze(1), driver="gelsd")
    show(gelsd.residuals, gelsd.rank, gelsd.singular_values)
    L = torch.linalg.cholesky(A.detach())
    show(torch.cholesky_solve((X.T @ y).unsqueeze(1), L).squeeze(1))
    s = torch.linalg.svdvals(X)
    show(s, (s ** 2 / (s ** 2 + lam.detach())).sum())
    X_val = torch.randn(5, 3, dtype=torch.float64)
    y_val = X_val @ true_w
    val_loss = ((X_val @ w - y_val) ** 2).mean()
    val_loss.backward()
    show(val_loss, lam.grad)
    show_outcome(show, lambda: torch.linalg.solve(torch.ones(3, 3, dtype=torch.float64), y[:3]))
    show_outcome(show, lambda: torch.linalg.solve(A.detach(), y))
    show_outcome(show, lambda: torch.linalg.lstsq(X, y[:5]))
    show_outcome(show, lambda: torch.linalg.lstsq(X, y.float().unsqueeze(1)))
    show_outcome(show, lambda: torch.linalg.lstsq(X, y.unsqueeze(1), driver="qr"))
    show_outcome(show, lambda: torch.linalg.cholesky(-A.detach()))
    show_outcome(show, lambda: torch.linalg.solve(A.detach().int(), y[:3]))


def _standardisation_statistics(lib, show):
    """Standardising features: mean/std with the unbiased default against correction=0, var_mean/std_mean, a
    constant column (division by zero), a single sample (degrees of freedom <= 0), NaN and inf in the data,
    nanmean/nanmedian/nan_to_num, min-max scaling by aminmax, and the integer refusals."""
    torch = lib
    X = torch.tensor([[1.0, 10.0, 5.0, 0.1], [2.0, 20.0, 5.0, 0.2], [3.0, 30.0, 5.0, 0.4], [4.0, 45.0, 5.0, 0.8]])
    mu = X.mean(dim=0)
    sd = X.std(dim=0)
    sd0 = X.std(dim=0, correction=0)
    show(mu, sd, sd0, X.std(dim=0, unbiased=False), X.var(dim=0, correction=2))
    show(torch.var_mean(X, dim=0), torch.std_mean(X, dim=0, correction=0, keepdim=True))
    Z = (X - mu) / sd
    show(Z, Z.mean(0), Z.std(0))
    Z_safe = (X - mu) / torch.where(sd == 0, torch.ones_like(sd), sd)
    show(Z_safe[:, 2], ((X - mu) / sd0.clamp_min(1e-12))[:, 2])
    one = X[:1]
    show(one.std(0), one.var(0, correction=0), one.mean(0), torch.tensor([]).mean(), torch.tensor([]).std())
    show(X.std(), X.std(correction=0), X.var(dim=(0, 1)), X.std(dim=1, keepdim=True).shape)
    lo, hi = torch.aminmax(X, dim=0)
    show(lo, hi, (X - lo) / (hi - lo))
    bad = X.clone()
    bad[1, 0] = float("nan")
    bad[2, 1] = float("inf")
    show(bad.mean(0), bad.std(0), bad.nanmean(0), bad.nanmedian(0), bad.median(0))
    show(torch.nan_to_num(bad), torch.nan_to_num(bad, nan=0.0, posinf=1e6), bad.isfinite().all(0), bad.isnan().sum())
    filled = torch.where(bad.isnan(), bad.nanmean(0).expand_as(bad), bad)
    show(filled[:, 0], torch.nansum(bad, 0), bad.nan_to_num().amax(0))
    h = X.half()
    show(h.mean(0), h.std(0), h.var(0).dtype, X.double().std(0).dtype)
    ints = torch.tensor([[1, 2], [3, 5]])
    show(ints.float().mean(0), ints.sum(0).dtype, ints.median(0), torch.tensor([1, 2, 3, 4]).median())
    show_outcome(show, lambda: ints.mean(0))
    show_outcome(show, lambda: ints.std(0))
    show_outcome(show, lambda: ints.var())
    show_outcome(show, lambda: X.std(0, unbiased=True, correction=1))
    show_outcome(show, lambda: torch.nanmean(ints))
    show_outcome(show, lambda: X.std(dim=2))
    show_outcome(show, lambda: ints.mean(0, dtype=torch.long))


def _confusion_matrix_and_metrics(lib, show):
    """Classification metrics by hand: a confusion matrix by bincount of ``n * true + pred``, the same by
    index_put_(accumulate=True) and by scatter_add_, per-class precision/recall/F1 with a class never predicted
    (0/0 is NaN, then nanmean and nan_to_num), balanced accuracy, Cohen's kappa, and the index_put_ refusals."""
    torch = lib
    y_true = torch.tensor([0, 1, 2, 2, 1, 0, 3, 3, 2, 1])
    y_pred = torch.tensor([0, 2, 2, 2, 1, 0, 0, 1, 2, 1])
    n = 4
    cm = torch.bincount(n * y_true + y_pred, minlength=n * n).reshape(n, n)
    show(cm, cm.dtype)
    cm2 = torch.zeros(n, n, dtype=torch.long)
    cm2.index_put_((y_true, y_pred), torch.ones_like(y_true), accumulate=True)
    show(torch.equal(cm, cm2))
    overwrite = torch.zeros(n, n, dtype=torch.long).index_put_((y_true, y_pred), torch.ones_like(y_true))
    show(overwrite.sum(), overwrite)
    cm3 = torch.zeros(n * n, dtype=torch.float32).scatter_add_(0, n * y_true + y_pred, torch.ones(10))
    show(cm3.view(n, n), torch.zeros(n, n).index_put((y_true, y_pred), torch.tensor(0.5), accumulate=True))
    tp = cm.diag()
    precision = tp / cm.sum(0)
    recall = tp / cm.sum(1)
    f1 = 2 * precision * recall / (precision + recall)
    show(tp, precision, recall, f1, precision.dtype)
    show(f1.nanmean(), f1.nan_to_num().mean(), recall.mean(), torch.nanmean(precision))
    accuracy = tp.sum() / cm.sum()
    p_e = (cm.sum(0) * cm.sum(1)).sum() / cm.sum() ** 2
    kappa = (accuracy - p_e) / (1 - p_e)
    show(accuracy, p_e, kappa, accuracy.dtype, (y_true == y_pred).float().mean())
    weights = torch.tensor([1.0, 2.0, 1.0, 0.5, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0])
    wcm = torch.bincount(n * y_true + y_pred, weights=weights, minlength=n * n).reshape(n, n)
    show(wcm, wcm.dtype, torch.bincount(y_true, weights=weights.double()).dtype)
    cm_norm = cm / cm.sum(1, keepdim=True)
    show(cm_norm, cm.float().div(cm.sum(1, keepdim=True)).round(decimals=2), cm.T.contiguous().stride())
    show(torch.bincount(torch.tensor([], dtype=torch.long)), torch.bincount(torch.tensor([], dtype=torch.long), minlength=3))
    show_outcome(show, lambda: cm2.index_put_((y_true, y_pred), torch.ones(10), accumulate=True))
    show_outcome(show, lambda: cm2.index_put_((y_true, y_pred + 1), torch.ones_like(y_true), accumulate=True))
    show_outcome(show, lambda: cm2.index_put_((y_true,), torch.ones(3, dtype=torch.long), accumulate=True))
    show_outcome(show, lambda: cm2.index_put_((y_true.float(), y_pred), torch.ones_like(y_true)))
    show_outcome(show, lambda: torch.bincount(y_true, minlength=-1))
    show_outcome(show, lambda: torch.bincount(y_true, weights=weights[:3]))


def _roc_auc_and_splits(lib, show):
    """ROC and AUC by hand: scores sorted descending (stable, with tied scores), true and false positive rates
    by cumsum at distinct thresholds, the area by trapezoid against the rank statistic with average ranks for
    ties; then train/test splits by randperm from seeded Generators, a stratified split, and k folds."""
    torch = lib
    scores = torch.tensor([0.9, 0.8, 0.8, 0.7, 0.55, 0.55, 0.4, 0.3, 0.3, 0.1])
    labels = torch.tensor([1, 1, 0, 1, 0, 1, 0, 0, 1, 0])
    order = torch.argsort(scores, descending=True, stable=True)
    s, y = scores[order], labels[order]
    show(order, s, y)
    distinct = torch.nonzero(s.diff() != 0).squeeze(1)
    cut = torch.cat([distinct, torch.tensor([len(s) - 1])])
    tps = y.cumsum(0)[cut]
    fps = (1 + cut) - tps
    tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
    fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
    show(cut, tps, fps, tpr, fpr, s[cut])
    auc = torch.trapezoid(tpr, fpr)
    show(auc, torch.trapz(tpr, fpr), ((tpr[1:] + tpr[:-1]) / 2 * fpr.diff()).sum())
    uniq, inverse, counts = torch.unique(scores, return_inverse=True, return_counts=True)
    first_rank = counts.cumsum(0) - counts + 1
    avg_rank = (first_rank + (counts - 1) / 2.0)[inverse]
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    mw_auc = (avg_rank[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    show(uniq, counts, avg_rank, mw_auc, torch.isclose(auc, mw_auc.float()))
    j = tpr - fpr
    show(j.argmax(), j.max(), torch.cat([torch.tensor([float("inf")]), s[cut]])[j.argmax()])
    g = torch.Generator().manual_seed(2021)
    perm = torch.randperm(10, generator=g)
    train, test = perm[:7], perm[7:]
    show(perm, perm.dtype, train, test, labels[test], g.initial_seed())
    again = torch.randperm(10, generator=torch.Generator().manual_seed(2021))
    show(torch.equal(perm, again), torch.randperm(10, generator=g), torch.randperm(5, dtype=torch.float64,
                                                                                   generator=g))
    strat = []
    for c in (0, 1):
        idx = torch.nonzero(labels == c).squeeze(1)
        strat.append(idx[torch.randperm(len(idx), generator=g)][: len(idx) // 2])
    show(strat, torch.cat(strat).sort().values)
    folds = torch.randperm(10, generator=torch.Generator().manual_seed(5)).tensor_split(3)
    show(folds, [len(f) for f in folds], torch.randperm(0), torch.randperm(1))
    torch.manual_seed(7)
    show(torch.randperm(6), torch.randint(0, 10, (4,), generator=torch.Generator().manual_seed(7)))
    show_outcome(show, lambda: torch.randperm(-1))
    show_outcome(show, lambda: torch.randperm(4, dtype=torch.bool))
    show_outcome(show, lambda: torch.randperm(300, dtype=torch.int8))
    show_outcome(show, lambda: torch.trapezoid(tpr, fpr[:-1]))
    show_outcome(show, lambda: torch.Generator().manual_seed(-1))


PROGRAMS = [
    _kmeans_with_empty_clusters,
    _pca_by_svd_and_eigh,
    _knn_with_topk_and_mode,
    _logistic_regression_by_hand,
    _softmax_regression_by_hand,
    _linear_svm_hinge_subgradients,
    _naive_bayes_with_logsumexp,
    _decision_stump_search,
    _ridge_regression_solvers,
    _standardisation_statistics,
    _confusion_matrix_and_metrics,
    _roc_auc_and_splits,
]


# programs with no matrix product, LAPACK call or MKL exp/log among what they print: compared bit for bit
EXACT = {_kmeans_with_empty_clusters, _knn_with_topk_and_mode, _linear_svm_hinge_subgradients, _decision_stump_search,
         _standardisation_statistics, _confusion_matrix_and_metrics, _roc_auc_and_splits}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    tolerance = {"rtol": 0, "atol": 0} if program in EXACT else {"rtol": 1e-5, "atol": 1e-6}
    assert_same_transcript(program, **tolerance)
