"""A tenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: a damped spring chain integrated with velocity Verlet and
differentiated (first and second order) with respect to its stiffness, damping and masses, then fitted; exact
Gaussian-process regression through cholesky/solve_triangular/cholesky_solve with Adam on softplus
hyperparameters, and cholesky_ex on kernels that are not positive-definite; a k-NN classifier with the binning
tools (histc, histogram, histogramdd, bucketize, searchsorted with sorter, bincount weights); a BiLSTM trained with
CTC on concatenated targets with the blank last; a hand-built log-mel front end over stft/istft; distributions
beyond the basics (MixtureSameFamily fitted by gradient, Independent, a logit-normal TransformedDistribution, KL
pairs, validate_args); the learning-rate schedulers a script prints (Sequential/Chained/Polynomial/Cyclic/OneCycle/
warm restarts/plateau, state_dict); robust regression with Huber and smooth-L1 through LBFGS; a matrix
factorisation recommender with Adagrad and an EmbeddingBag history encoder; Bayesian linear regression through
lstsq/pinv/eigh/slogdet; DP-SGD per-sample gradients from module hooks with parameters_to_vector; image filtering
with meshgrid kernels, unfold medians and fold; and Hessian-vector products forward-over-reverse with a
Newton-CG loop. Everything is drawn from the seeded global generator, which is torch's; values are compared to a
tolerance (matrix products, MKL's exp/log/log10 and FFTs are not bit for bit), and LBFGS is run only on smooth
losses (on a kink, rounding turns into different steps).

Differences these programs found, now fixed (``tests/ops/test_program10_findings_vs_torch.py``):
- ``torch.histogram``/``histogramdd`` of a tensor that requires grad (a layer's weights) gave results without
  history; torch gives them a shared ``NotImplemented`` node whose backward refuses;
- ``F.ctc_loss`` computed in half and bfloat16, which torch's CPU kernel refuses;
- ``linalg.cholesky_ex`` of a matrix that is not positive-definite returned zeros without history where torch
  returns what LAPACK left (with its node), named itself ``linalg.cholesky`` under ``check_errors``, and a NaN
  pivot passed as success; ``cholesky(upper=True)`` read the lower triangle where torch reads the upper one (and
  gave -0 imaginary parts); the legacy ``torch.cholesky`` recorded ``LinalgCholeskyExBackward0`` and spoke as
  ``linalg.cholesky`` where torch has ``CholeskyBackward0`` and "cholesky: ...".

Since fixed: ``torch.quasirandom.SobolEngine`` was missing, and ``inv_ex`` of a singular matrix returned a
pseudo-inverse where torch returns LAPACK's inf/NaN (``tests/test_sobol_engine_vs_torch.py``,
``tests/ops/test_leftovers27_vs_torch.py``).

Left: float32 ``log10``/``exp`` and the FFTs (stft) are an ulp off torch's MKL
results in places (a printed ``-10.0000`` for torch's ``-10.``, ``-1.1e-16j`` for ``-0.j``); ``histc`` of NaN
says ``[nan, nan]`` where torch prints ``[-nan, -nan]``; cholesky_ex's partial factor follows unblocked LAPACK,
which MKL's blocked code may not for large matrices.
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _spring_chain_sensitivities(lib, show):
    """A damped chain of masses and springs integrated with velocity Verlet, differentiated with autograd.grad
    with respect to its stiffness, damping and masses (first and second derivatives), and fitted to an observed
    trajectory."""
    torch = lib
    torch.manual_seed(100)
    n, dt, steps = 4, 0.05, 40
    stiffness = torch.tensor([4.0, 3.0, 5.0], dtype=torch.float64, requires_grad=True)
    damping = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    masses = torch.ones(n, dtype=torch.float64, requires_grad=True)
    x0 = torch.arange(n, dtype=torch.float64) + 0.2 * torch.randn(n, dtype=torch.float64)

    def forces(x, v, k, c):
        stretch = x.diff() - 1.0
        f = torch.zeros_like(x)
        f = f.index_add(0, torch.arange(n - 1), k * stretch)
        f = f.index_add(0, torch.arange(1, n), -k * stretch)
        return f - c * v

    def simulate(k, c, m):
        x, v = x0.clone(), torch.zeros(n, dtype=torch.float64)
        trajectory = []
        a = forces(x, v, k, c) / m
        for _ in range(steps):
            x = x + v * dt + 0.5 * a * dt ** 2
            a_new = forces(x, v, k, c) / m
            v = v + 0.5 * (a + a_new) * dt
            a = a_new
            trajectory.append(x)
        return torch.stack(trajectory), x, v

    traj, x, v = simulate(stiffness, damping, masses)
    energy = 0.5 * (masses * v ** 2).sum() + 0.5 * (stiffness * (x.diff() - 1.0) ** 2).sum()
    show(traj.shape, traj.grad_fn.name(), x, energy)
    g_k, g_c, g_m = torch.autograd.grad(energy, (stiffness, damping, masses), create_graph=True)
    show(g_k, g_c, g_m, g_c.grad_fn.name())
    h_cc, = torch.autograd.grad(g_c, damping, retain_graph=True)
    h_kc = torch.autograd.grad(g_k.sum(), damping)[0]
    show(h_cc, h_kc)
    with torch.no_grad():
        observed = simulate(torch.tensor([5.0, 2.0, 4.0], dtype=torch.float64), torch.tensor(0.3, dtype=torch.float64),
                            masses)[0]
    k = torch.nn.Parameter(torch.full((3,), 4.0, dtype=torch.float64))
    c = torch.nn.Parameter(torch.tensor(0.1, dtype=torch.float64))
    opt = torch.optim.Adam([k, c], lr=0.1)
    for step in range(4):
        loss = torch.nn.functional.mse_loss(simulate(k, c, masses.detach())[0], observed)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, k.detach().clone(), c.grad)
    show(masses.grad)
    show_outcome(show, lambda: torch.autograd.grad(energy, masses))


def _gaussian_process_regression(lib, show):
    """Exact GP regression: an RBF kernel from cdist, its Cholesky factor, the log marginal likelihood through
    solve_triangular/cholesky_solve, hyperparameters (softplus-constrained) fitted with Adam, the predictive mean
    and variance, and the errors of a kernel that is not positive definite."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(101)
    x = torch.rand(12, 1, dtype=torch.float64) * 6
    y = torch.sin(x).squeeze(1) + 0.1 * torch.randn(12, dtype=torch.float64)
    raw = torch.nn.ParameterDict({
        "lengthscale": torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64)),
        "outputscale": torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64)),
        "noise": torch.nn.Parameter(torch.tensor(-2.0, dtype=torch.float64)),
    })

    def kernel(a, b):
        d = torch.cdist(a, b) / F.softplus(raw["lengthscale"])
        return F.softplus(raw["outputscale"]) * torch.exp(-0.5 * d ** 2)

    def neg_log_marginal():
        K = kernel(x, x) + (F.softplus(raw["noise"]) + 1e-6) * torch.eye(12, dtype=torch.float64)
        L = torch.linalg.cholesky(K)
        alpha = torch.linalg.solve_triangular(L, y.unsqueeze(1), upper=False)
        return 0.5 * (alpha ** 2).sum() + L.diagonal().log().sum() + 6 * math.log(2 * math.pi), L

    opt = torch.optim.Adam(raw.parameters(), lr=0.1)
    for step in range(5):
        nlml, L = neg_log_marginal()
        opt.zero_grad()
        nlml.backward()
        opt.step()
        show(step, nlml, {k: round(p.grad.item(), 6) for k, p in raw.items()})
    with torch.no_grad():
        nlml, L = neg_log_marginal()
        x_test = torch.linspace(0, 6, 5, dtype=torch.float64).unsqueeze(1)
        k_star = kernel(x_test, x)
        mean = k_star @ torch.cholesky_solve(y.unsqueeze(1), L)
        v = torch.linalg.solve_triangular(L, k_star.T, upper=False)
        var = F.softplus(raw["outputscale"]) - (v ** 2).sum(0)
        show(mean.squeeze(1), var, torch.cholesky_inverse(L).diagonal()[:3])
    show(L.dtype, L.triu(1).abs().max(), torch.linalg.solve_triangular(L.T, torch.ones(12, 1, dtype=torch.float64),
                                                                           upper=True)[:3, 0])
    bad = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
    show_outcome(show, lambda: torch.linalg.cholesky(bad))
    show(torch.linalg.cholesky_ex(bad), torch.linalg.cholesky_ex(torch.eye(2)).info)
    jittered = (kernel(x, x) - 0.5 * torch.eye(12, dtype=torch.float64)).detach().requires_grad_()
    failed = torch.linalg.cholesky_ex(jittered)
    show(failed.info, failed.L.grad_fn.name(), failed.L[:3, :3])
    show_outcome(show, lambda: torch.linalg.cholesky_ex(jittered, check_errors=True))
    show_outcome(show, lambda: torch.linalg.cholesky(torch.tensor([[4.0, 2.0], [2.0, float('nan')]])))
    show(torch.linalg.cholesky(torch.tensor([[4.0, 2.0], [9.0, 5.0]]), upper=True))
    show_outcome(show, lambda: torch.linalg.cholesky(torch.tensor([[4.0, 9.0], [2.0, 5.0]]), upper=True))
    show_outcome(show, lambda: torch.linalg.solve_triangular(L, torch.ones(12, 1, dtype=torch.float64)))
    show_outcome(show, lambda: torch.cholesky_solve(torch.ones(12, 1), L))


def _knn_and_binning(lib, show):
    """A k-nearest-neighbour classifier (cdist, topk, mode, bincount votes with distance weights) and the
    histogram and binning tools of a data-exploration cell: histc, histogram with weights and density,
    bucketize/searchsorted on edges, quantile bins and unique counts."""
    torch = lib
    torch.manual_seed(102)
    centers = torch.tensor([[0.0, 0.0], [3.0, 3.0], [0.0, 4.0]])
    labels = torch.arange(3).repeat_interleave(10)
    train = centers[labels] + torch.randn(30, 2)
    test = torch.randn(6, 2) * 2 + 1.5
    dist = torch.cdist(test, train)
    knn_d, knn_i = dist.topk(5, largest=False)
    votes = labels[knn_i]
    show(knn_d, knn_i, votes, votes.mode(dim=1))
    weighted = torch.stack([torch.bincount(v, weights=1 / (d + 1e-3), minlength=3) for v, d in zip(votes, knn_d)])
    show(weighted, weighted.argmax(1), torch.cdist(test, train, p=1).argmin(1), torch.cdist(test, train, p=0)[0, :5])
    values = train[:, 0]
    show(torch.histc(values, bins=6, min=-3, max=5), torch.histc(values, bins=4))
    hist, edges = torch.histogram(values, bins=5)
    show(hist, edges)
    show(torch.histogram(values, bins=torch.tensor([-3.0, 0.0, 1.0, 5.0]), weight=torch.rand(30), density=True))
    show(torch.histogram(values, bins=4, range=(-1.0, 3.0), density=True))
    edges = torch.quantile(values, torch.tensor([0.25, 0.5, 0.75]))
    bins = torch.bucketize(values, edges)
    show(edges, bins, torch.bucketize(values, edges, right=True).eq(bins).all(), bins.dtype)
    show(torch.searchsorted(edges, torch.tensor([-1.0, 0.5, 9.0]), side="right"),
         torch.searchsorted(edges, values[:4], out_int32=True))
    unsorted = torch.tensor([3.0, 1.0, 2.0])
    show(torch.searchsorted(unsorted, torch.tensor([1.5, 2.5]), sorter=unsorted.argsort()))
    show(torch.unique(bins, return_counts=True), torch.unique(votes, sorted=True, return_inverse=True)[1][0])
    show(torch.histogramdd(train, bins=[2, 3]).hist)
    weights = torch.nn.Linear(30, 4).weight
    counts = torch.histogram(weights, bins=4)
    show(counts, counts.hist.grad_fn.name())
    show_outcome(show, lambda: counts.hist.sum().backward())
    show_outcome(show, lambda: torch.histc(labels, bins=3))
    show_outcome(show, lambda: torch.histogram(labels.float(), bins=0))
    show_outcome(show, lambda: torch.searchsorted(edges, torch.tensor([1.0]), side="middle"))
    show_outcome(show, lambda: torch.bincount(torch.tensor([-1, 2])))


def _ctc_speech_recogniser(lib, show):
    """A tiny BiLSTM acoustic model trained with CTC: concatenated 1-D targets, the blank as the last class,
    zero_infinity for impossible alignments, per-sample and summed reductions, float64 log-probabilities and a
    greedy decoder with unique_consecutive."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(103)
    T, N, C = 10, 3, 5
    blank = C - 1
    lstm = nn.LSTM(4, 6, bidirectional=True)
    head = nn.Linear(12, C)
    feats = torch.randn(T, N, 4)
    targets = torch.tensor([0, 1, 1, 2, 3, 0, 2])
    target_lengths = torch.tensor([3, 2, 2])
    input_lengths = torch.tensor([10, 8, 6])
    opt = torch.optim.RMSprop(list(lstm.parameters()) + list(head.parameters()), lr=0.01)
    for step in range(3):
        log_probs = F.log_softmax(head(lstm(feats)[0]), dim=-1)
        loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=blank)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, loss.grad_fn.name(), head.bias.grad)
    per_sample = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=blank, reduction="none")
    summed = F.ctc_loss(log_probs.double(), targets, input_lengths, target_lengths, blank=blank, reduction="sum")
    show(per_sample, summed, summed.dtype)
    impossible = torch.tensor([3, 8, 6])
    long_targets = torch.tensor([[0, 1, 0, 1, 0], [1, 1, 1, 1, 1], [2, 3, 2, 3, 2]])
    lp = log_probs.detach().requires_grad_()
    out = F.ctc_loss(lp, long_targets, impossible, torch.tensor([5, 5, 5]), blank=blank, reduction="none")
    show(out)
    z = F.ctc_loss(lp, long_targets, impossible, torch.tensor([5, 5, 5]), blank=blank, zero_infinity=True)
    z.backward()
    show(z, lp.grad[:, 0].abs().sum(), lp.grad[:, 1].abs().sum())
    best = log_probs.argmax(-1).T
    for seq, length in zip(best, input_lengths):
        collapsed = torch.unique_consecutive(seq[:length])
        show(collapsed[collapsed != blank])
    show_outcome(show, lambda: F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=C))
    show_outcome(show, lambda: F.ctc_loss(log_probs, targets.float(), input_lengths, target_lengths))
    show_outcome(show, lambda: F.ctc_loss(log_probs, targets, torch.tensor([10, 8]), target_lengths))
    show_outcome(show, lambda: F.ctc_loss(log_probs.half(), targets, input_lengths, target_lengths, blank=blank))


def _audio_features(lib, show):
    """An audio front end written by hand: framing with stft (centered and not, normalised, reflect padding),
    a triangular mel filterbank, log-mel features with per-channel normalisation, a learnable gain trained
    through the spectrogram, and an istft round trip."""
    torch = lib
    torch.manual_seed(104)
    sr, n_fft, hop, n_mels = 800, 64, 16, 6
    t = torch.arange(sr // 2) / sr
    wave = torch.stack([torch.sin(2 * math.pi * 60 * t), torch.sin(2 * math.pi * 150 * t) * torch.exp(-3 * t)])
    wave = wave + 0.05 * torch.randn_like(wave)
    window = torch.hann_window(n_fft)
    spec = torch.stft(wave, n_fft, hop_length=hop, window=window, return_complex=True, pad_mode="reflect")
    power = spec.abs() ** 2
    show(spec.shape, spec.dtype, power[0, :4, 0], power.sum((1, 2)))

    def hz_to_mel(f):
        return 2595 * torch.log10(1 + f / 700)

    def mel_to_hz(m):
        return 700 * (10 ** (m / 2595) - 1)

    freqs = torch.fft.rfftfreq(n_fft, d=1 / sr)
    mel_points = torch.linspace(hz_to_mel(torch.tensor(0.0)), hz_to_mel(torch.tensor(sr / 2)), n_mels + 2)
    hz = mel_to_hz(mel_points)
    lower, center, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fbank = torch.clamp(torch.minimum((freqs - lower) / (center - lower), (upper - freqs) / (upper - center)), min=0)
    show(fbank.shape, fbank.sum(1), fbank.argmax(1))
    mel = torch.einsum("mf,cft->cmt", fbank, power)
    log_mel = torch.log(mel + 1e-6)
    normed = (log_mel - log_mel.mean(-1, keepdim=True)) / (log_mel.std(-1, keepdim=True) + 1e-5)
    show(log_mel[:, :, 0], normed.mean(-1).abs().max() < 1e-5, normed.std(-1)[0])
    gain = torch.ones(n_mels, requires_grad=True)
    target = log_mel.detach() + 0.5
    opt = torch.optim.SGD([gain], lr=0.05, momentum=0.9)
    for step in range(3):
        feats = torch.log(gain[None, :, None] * torch.einsum("mf,cft->cmt", fbank, power) + 1e-6)
        loss = (feats - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, gain.grad)
    back = torch.istft(spec, n_fft, hop_length=hop, window=window, length=wave.shape[-1])
    show(back.shape, (back - wave).abs().max() < 1e-4)
    raw = torch.stft(wave[0], n_fft, hop_length=hop, window=window, center=False, normalized=True,
                     onesided=False, return_complex=True)
    show(raw.shape, raw[:3, 0], torch.view_as_real(raw).shape)
    show_outcome(show, lambda: torch.stft(wave, n_fft, hop_length=hop, window=window, return_complex=False).shape)
    show_outcome(show, lambda: torch.stft(wave, n_fft, window=torch.hann_window(32), return_complex=True))
    show_outcome(show, lambda: torch.istft(spec, n_fft, hop_length=hop))


def _distribution_zoo(lib, show):
    """Distributions beyond the basics: a Gaussian mixture (MixtureSameFamily) fitted by gradient ascent,
    Independent reinterpretation, a logit-normal through TransformedDistribution, rsample against sample,
    kl_divergence pairs (and a missing one), entropies, broadcasting log_prob and validate_args' refusals."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(105)
    data = torch.cat([torch.randn(40) - 2, torch.randn(60) * 0.5 + 1.5])
    logits = torch.zeros(2, requires_grad=True)
    locs = torch.tensor([-1.0, 1.0], requires_grad=True)
    log_scales = torch.zeros(2, requires_grad=True)
    opt = torch.optim.Adam([logits, locs, log_scales], lr=0.1)
    for step in range(5):
        mix = D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(locs, log_scales.exp()))
        nll = -mix.log_prob(data).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
        show(step, nll, locs.grad)
    show(mix.batch_shape, mix.event_shape, mix.mean, mix.variance, mix.sample((3,)))
    mvn = D.Independent(D.Normal(torch.zeros(3), torch.ones(3)), 1)
    show(mvn.batch_shape, mvn.event_shape, mvn.log_prob(torch.zeros(2, 3)), mvn.entropy(), mvn)
    logit_normal = D.TransformedDistribution(D.Normal(torch.tensor(0.0), torch.tensor(1.5)),
                                             [D.transforms.AffineTransform(0.5, 2.0), D.transforms.SigmoidTransform()])
    s = logit_normal.sample((4,))
    show(s, logit_normal.log_prob(s), logit_normal.support, logit_normal.has_rsample)
    mu = torch.tensor(0.3, requires_grad=True)
    normal = D.Normal(mu, 1.0)
    r, plain = normal.rsample((3,)), normal.sample((3,))
    show(r.grad_fn.name(), plain.requires_grad, r, plain)
    pairs = [(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)), (D.Bernoulli(0.3), D.Bernoulli(0.6)),
             (D.Gamma(2.0, 1.0), D.Exponential(0.5)), (D.Beta(2.0, 3.0), D.Uniform(0.0, 1.0)),
             (D.Categorical(probs=torch.tensor([0.2, 0.8])), D.Categorical(probs=torch.tensor([0.5, 0.5]))),
             (D.Poisson(3.0), D.Poisson(2.0)), (D.Laplace(0.0, 1.0), D.Laplace(1.0, 1.0))]
    show([D.kl_divergence(p, q) for p, q in pairs])
    show_outcome(show, lambda: D.kl_divergence(D.Uniform(0.0, 1.0), D.Beta(2.0, 3.0)))
    show_outcome(show, lambda: D.kl_divergence(D.Normal(0.0, 1.0), D.StudentT(3.0)))
    show([d.entropy() for d in (D.Gamma(2.0, 3.0), D.Dirichlet(torch.ones(3)), D.Geometric(0.3), D.Gumbel(0., 2.))])
    batch = D.Normal(torch.zeros(3, 1), torch.ones(1, 4))
    show(batch.batch_shape, batch.log_prob(torch.zeros(2, 1, 1, 4)).shape, batch.cdf(torch.tensor(0.5)).shape)
    show_outcome(show, lambda: D.Normal(0.0, -1.0))
    show_outcome(show, lambda: D.Bernoulli(probs=1.5))
    show_outcome(show, lambda: D.Categorical(probs=torch.tensor([0.5, 0.5])).log_prob(torch.tensor(2)))
    show_outcome(show, lambda: D.Normal(0.0, -1.0, validate_args=False).scale)
    show_outcome(show, lambda: D.Bernoulli(probs=0.5, logits=0.0))
    show_outcome(show, lambda: D.Beta(2.0, 3.0).log_prob(torch.tensor(1.5)))


def _scheduler_zoo(lib, show):
    """Learning-rate schedules a training script prints: LinearLR warmup chained with ExponentialLR, a
    ChainedScheduler, PolynomialLR, MultiStepLR, CyclicLR with momentum cycling, OneCycleLR, warm restarts with
    fractional epochs, ReduceLROnPlateau in max mode with cooldown, and a state_dict round trip."""
    torch, optim = lib, lib.optim
    sched = optim.lr_scheduler
    torch.manual_seed(106)
    w = torch.nn.Parameter(torch.randn(2))

    def sgd(**kw):
        return optim.SGD([w], lr=0.1, **kw)

    def trace(opt, scheduler, n, metric=None):
        lrs = []
        for i in range(n):
            opt.step()
            if metric is None:
                scheduler.step()
            else:
                scheduler.step(metric(i))
            lrs.append(round(opt.param_groups[0]["lr"], 8))
        return lrs

    o = sgd()
    seq = sched.SequentialLR(o, [sched.LinearLR(o, start_factor=0.1, total_iters=3),
                                 sched.ExponentialLR(o, gamma=0.8)], milestones=[3])
    show(trace(o, seq, 7), seq.get_last_lr())
    o = sgd()
    chained = sched.ChainedScheduler([sched.ConstantLR(o, factor=0.5, total_iters=2),
                                      sched.ExponentialLR(o, gamma=0.9)])
    show(trace(o, chained, 5), chained.get_last_lr())
    o = sgd()
    show(trace(o, sched.PolynomialLR(o, total_iters=4, power=2.0), 6))
    o = sgd()
    show(trace(o, sched.MultiStepLR(o, milestones=[2, 2, 4], gamma=0.5), 6))
    o = sgd(momentum=0.9)
    cyc = sched.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2")
    show(trace(o, cyc, 9), o.param_groups[0]["momentum"])
    o = sgd(momentum=0.9)
    one = sched.OneCycleLR(o, max_lr=0.5, total_steps=6, anneal_strategy="linear")
    show(trace(o, one, 5), o.param_groups[0]["momentum"], o.param_groups[0]["initial_lr"])
    show_outcome(show, lambda: trace(o, one, 2))
    o = sgd()
    warm = sched.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01)
    lrs = []
    for epoch in range(2):
        for i in range(4):
            o.step()
            warm.step(epoch + i / 4)
            lrs.append(round(warm.get_last_lr()[0], 8))
    show(lrs, warm.T_cur, warm.T_i)
    o = sgd()
    plateau = sched.ReduceLROnPlateau(o, mode="max", factor=0.5, patience=1, cooldown=1, min_lr=0.02)
    show(trace(o, plateau, 8, metric=lambda i: [0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.7, 0.7][i]), plateau.num_bad_epochs)
    o = sgd()
    multi = sched.MultiStepLR(o, milestones=[1, 3], gamma=0.1)
    trace(o, multi, 2)
    state = multi.state_dict()
    show(sorted(state), state["milestones"], state["last_epoch"])
    o2 = sgd()
    fresh = sched.MultiStepLR(o2, milestones=[5], gamma=0.5)
    fresh.load_state_dict(state)
    show(trace(o2, fresh, 3), fresh.milestones)
    show_outcome(show, lambda: sched.LinearLR(sgd(), start_factor=0.0))
    show_outcome(show, lambda: sched.SequentialLR(o, [sched.StepLR(o, 2)], milestones=[1]))
    show_outcome(show, lambda: sched.ReduceLROnPlateau(sgd(), mode="up"))
    show_outcome(show, lambda: sched.CyclicLR(sgd(), 0.01, 0.1, mode="saw"))


def _robust_regression(lib, show):
    """Regression with outliers: least squares against Huber and smooth-L1 losses with different deltas fitted
    with LBFGS closures in float64 (the non-smooth L1 and pinball losses only evaluated: LBFGS on a kink turns
    rounding into different steps), and Huber with plain SGD."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(107)
    x = torch.linspace(-2, 2, 30, dtype=torch.float64).unsqueeze(1)
    y = 1.5 * x.squeeze(1) - 0.5 + 0.1 * torch.randn(30, dtype=torch.float64)
    y[::7] += 6.0

    def fit(loss_fn, max_iter=20):
        model = nn.Linear(1, 1).double()
        opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=max_iter, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = loss_fn(model(x).squeeze(1), y)
            loss.backward()
            return loss

        first = opt.step(closure)
        return first, model.weight.item(), model.bias.item()

    def pinball(q):
        return lambda pred, target: torch.maximum(q * (target - pred), (q - 1) * (target - pred)).mean()

    for name, loss_fn in [("mse", F.mse_loss), ("huber", nn.HuberLoss(delta=0.5)),
                          ("smooth_l1", nn.SmoothL1Loss(beta=0.5))]:
        first, w, b = fit(loss_fn)
        show(name, first, round(w, 4), round(b, 4))
    line = nn.Linear(1, 1).double()
    for name, loss_fn in [("l1", nn.L1Loss()), ("median", pinball(0.5)), ("q90", pinball(0.9))]:
        loss = loss_fn(line(x).squeeze(1), y)
        show(name, loss, torch.autograd.grad(loss, line.weight)[0])
    pred = torch.linspace(-1, 1, 5, requires_grad=True)
    target = torch.zeros(5)
    for loss in (F.huber_loss(pred, target, delta=0.3), F.smooth_l1_loss(pred, target, beta=0.0),
                 F.smooth_l1_loss(pred, target, beta=2.0, reduction="sum")):
        g, = torch.autograd.grad(loss, pred)
        show(loss, g, loss.grad_fn.name())
    show(F.huber_loss(pred, target, reduction="none"), F.l1_loss(pred.double(), target).dtype)
    model = nn.Linear(1, 1).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        loss = F.huber_loss(model(x).squeeze(1), y, delta=1.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, model.weight.grad)
    show_outcome(show, lambda: F.huber_loss(pred, target, delta=-1.0))
    show_outcome(show, lambda: F.smooth_l1_loss(pred, target, beta=-1.0))
    show_outcome(show, lambda: F.huber_loss(pred, torch.zeros(3)))


def _matrix_factorisation_recommender(lib, show):
    """A recommender: user and item embeddings with biases trained on observed ratings with Adagrad and weight
    decay, RMSE on held-out pairs, top-k recommendations that mask already-seen items, and an EmbeddingBag
    item-history encoder with per-sample weights."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(108)
    n_users, n_items, dim = 6, 8, 3
    users = torch.randint(0, n_users, (40,))
    items = torch.randint(0, n_items, (40,))
    ratings = (torch.randn(n_users, dim) @ torch.randn(dim, n_items))[users, items].clamp(-2, 2) + 3

    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(n_users, dim)
            self.item = nn.Embedding(n_items, dim)
            self.user_bias = nn.Embedding(n_users, 1)
            self.item_bias = nn.Embedding(n_items, 1)
            nn.init.normal_(self.user.weight, std=0.1)
            nn.init.normal_(self.item.weight, std=0.1)
            nn.init.zeros_(self.user_bias.weight)
            nn.init.zeros_(self.item_bias.weight)
            self.register_buffer("global_mean", torch.tensor(3.0))

        def forward(self, u, i):
            dot = (self.user(u) * self.item(i)).sum(-1)
            return dot + self.user_bias(u).squeeze(-1) + self.item_bias(i).squeeze(-1) + self.global_mean

    model = MF()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1, weight_decay=1e-3, lr_decay=0.01)
    train, held = slice(0, 32), slice(32, 40)
    for epoch in range(4):
        pred = model(users[train], items[train])
        loss = F.mse_loss(pred, ratings[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            rmse = F.mse_loss(model(users[held], items[held]), ratings[held]).sqrt()
        show(epoch, loss, rmse, model.item_bias.weight.grad.squeeze(1))
    show(sorted(opt.state[model.user.weight]), opt.state[model.user.weight]["step"])
    with torch.no_grad():
        scores = model.user.weight @ model.item.weight.T + model.item_bias.weight.T
        seen = torch.zeros(n_users, n_items, dtype=torch.bool)
        seen[users, items] = True
        masked = scores.masked_fill(seen, float("-inf"))
        top = masked.topk(2, dim=1)
    show(seen.sum(1), top.indices, top.values)
    history = nn.EmbeddingBag.from_pretrained(model.item.weight.detach(), mode="sum", freeze=False)
    flat = items[:10]
    offsets = torch.tensor([0, 4, 4, 7])
    weights = torch.linspace(0.1, 1.0, 10)
    enc = history(flat, offsets, per_sample_weights=weights)
    enc.pow(2).sum().backward()
    show(enc, history.weight.grad.abs().sum(1), history.weight.requires_grad)
    show(nn.EmbeddingBag(n_items, 2, mode="mean", padding_idx=0)(torch.tensor([[0, 1], [0, 0]])))
    show_outcome(show, lambda: history(flat, offsets, per_sample_weights=weights[:5]))
    show_outcome(show, lambda: nn.EmbeddingBag(n_items, 2, mode="max")(flat, offsets, per_sample_weights=weights))
    show_outcome(show, lambda: model(torch.tensor([n_users]), torch.tensor([0])))


def _bayesian_linear_regression(lib, show):
    """Bayesian linear regression on polynomial features: the least-squares fit through linalg.lstsq (drivers,
    residuals, rank), pinv and the normal equations, the Gaussian posterior with its eigendecomposition, the
    log evidence through slogdet, and the posterior predictive as a MultivariateNormal."""
    torch = lib
    torch.manual_seed(109)
    x = torch.linspace(-1, 1, 20, dtype=torch.float64)
    y = 0.5 - x + 2 * x ** 3 + 0.1 * torch.randn(20, dtype=torch.float64)
    Phi = torch.vander(x, N=4, increasing=True)
    sol = torch.linalg.lstsq(Phi, y.unsqueeze(1))
    show(sol.solution.squeeze(1), sol.residuals, sol.rank, sol.singular_values)
    gelsd = torch.linalg.lstsq(Phi, y.unsqueeze(1), driver="gelsd")
    show(gelsd.solution.squeeze(1), gelsd.rank, gelsd.singular_values)
    show(torch.linalg.pinv(Phi) @ y, torch.linalg.solve(Phi.T @ Phi, Phi.T @ y))
    alpha, beta = 1.0, 100.0
    precision = alpha * torch.eye(4, dtype=torch.float64) + beta * Phi.T @ Phi
    cov = torch.linalg.inv(precision)
    mean = beta * cov @ Phi.T @ y
    evals, evecs = torch.linalg.eigh(precision)
    show(mean, evals, torch.allclose(evecs @ torch.diag(evals) @ evecs.T, precision))
    sign, logdet = torch.linalg.slogdet(precision)
    fit = ((y - Phi @ mean) ** 2).sum()
    log_evidence = (4 * math.log(alpha) + 20 * math.log(beta) - beta * fit - alpha * mean @ mean - logdet
                    - 20 * math.log(2 * math.pi)) / 2
    show(sign, logdet, log_evidence, torch.linalg.matrix_rank(Phi), torch.linalg.cond(Phi))
    log_alpha = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)

    def evidence(la):
        a = la.exp()
        A = a * torch.eye(4, dtype=torch.float64) + beta * Phi.T @ Phi
        m = beta * torch.linalg.solve(A, Phi.T @ y)
        return (4 * la + 20 * math.log(beta) - beta * ((y - Phi @ m) ** 2).sum() - a * m @ m
                - torch.logdet(A) - 20 * math.log(2 * math.pi)) / 2

    e = evidence(log_alpha)
    e.backward()
    show(e, log_alpha.grad)
    x_new = torch.tensor([-0.5, 0.0, 0.9], dtype=torch.float64)
    Phi_new = torch.vander(x_new, N=4, increasing=True)
    pred = torch.distributions.MultivariateNormal(Phi_new @ mean, Phi_new @ cov @ Phi_new.T
                                                  + torch.eye(3, dtype=torch.float64) / beta)
    show(pred.mean, pred.stddev, pred.log_prob(torch.zeros(3, dtype=torch.float64)), pred.scale_tril.diagonal())
    show(torch.linalg.eigvalsh(cov), torch.linalg.svdvals(Phi), torch.linalg.norm(Phi, ord="fro"))
    show_outcome(show, lambda: torch.linalg.lstsq(Phi, y))
    show_outcome(show, lambda: torch.linalg.lstsq(Phi, y.unsqueeze(1), driver="qr"))
    show_outcome(show, lambda: torch.linalg.inv(torch.zeros(2, 2)))
    show_outcome(show, lambda: torch.linalg.eigh(torch.ones(2, 3)))


def _per_sample_gradients_with_hooks(lib, show):
    """DP-SGD without torch.func: per-sample gradients of linear layers from forward hooks (activations) and
    full backward hooks (output gradients), checked against a loop over samples, clipped per sample, noised,
    and written back through parameters_to_vector/vector_to_parameters."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(110)
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    x = torch.randn(6, 4)
    y = torch.randint(0, 3, (6,))
    acts, grads, order = {}, {}, []

    def save_input(module, inputs, output):
        acts[module] = inputs[0].detach()

    def save_grad(module, grad_input, grad_output):
        order.append(type(module).__name__ + str(grad_output[0].shape[1]))
        grads[module] = grad_output[0].detach()

    linears = [m for m in model if isinstance(m, nn.Linear)]
    handles = [m.register_forward_hook(save_input) for m in linears]
    handles += [m.register_full_backward_hook(save_grad) for m in linears]
    loss = F.cross_entropy(model(x), y, reduction="sum")
    loss.backward()
    show(order, [g.shape for g in grads.values()])
    per_sample = {}
    for m in linears:
        per_sample[m.weight] = torch.einsum("bo,bi->boi", grads[m], acts[m])
        per_sample[m.bias] = grads[m]
    show(per_sample[linears[1].weight].sum(0), linears[1].weight.grad)
    for h in handles:
        h.remove()
    model.zero_grad()
    F.cross_entropy(model(x[2:3]), y[2:3], reduction="sum").backward()
    show(torch.allclose(per_sample[linears[0].weight][2], linears[0].weight.grad, atol=1e-6), len(order))
    flat = torch.cat([per_sample[p].flatten(1) for p in model.parameters()], dim=1)
    norms = flat.norm(dim=1)
    factors = (1.0 / norms).clamp(max=1.0)
    noisy = (flat * factors[:, None]).sum(0) + 0.1 * torch.randn(flat.shape[1])
    show(flat.shape, norms, noisy[:5])
    vec = nn.utils.parameters_to_vector(model.parameters())
    show(vec.shape, vec.grad_fn.name(), vec[:4])
    nn.utils.vector_to_parameters(vec.detach() - 0.1 * noisy / 6, model.parameters())
    show(model[0].bias, type(model[0].weight).__name__, model[0].weight.requires_grad, model[2].weight.is_leaf)
    show_outcome(show, lambda: nn.utils.vector_to_parameters(vec[:-1], model.parameters()))
    show_outcome(show, lambda: nn.utils.vector_to_parameters(vec.tolist(), model.parameters()))
    show_outcome(show, lambda: nn.utils.parameters_to_vector(model[0].weight))


def _image_filtering(lib, show):
    """Classic image processing with conv2d: Gaussian and Sobel kernels built from meshgrid, depthwise filtering
    with reflect padding, gradient magnitude and orientation histograms, unfold patch statistics, a median
    filter through unfold + median, and fold back to an image (overlap counts)."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(111)
    img = torch.zeros(1, 3, 12, 12)
    img[:, :, 3:9, 4:10] = 1.0
    img = img + 0.1 * torch.randn_like(img)
    coords = torch.arange(5) - 2.0
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    gauss = torch.exp(-(xx ** 2 + yy ** 2) / 2)
    gauss = gauss / gauss.sum()
    show(gauss[2], torch.meshgrid(coords[:2], coords[:3], indexing="xy")[0].shape)
    blurred = F.conv2d(F.pad(img, (2, 2, 2, 2), mode="reflect"), gauss.expand(3, 1, 5, 5), groups=3)
    show(blurred.shape, blurred[0, 0, 6, 3:9])
    sobel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
    kernels = torch.stack([sobel_x, sobel_x.T]).unsqueeze(1)
    gray = blurred.mean(1, keepdim=True)
    g = F.conv2d(gray, kernels, padding=1)
    magnitude = g.pow(2).sum(1).sqrt()
    angle = torch.atan2(g[:, 1], g[:, 0])
    show(magnitude[0, 6, :6], angle[0, 3, 4:8])
    show(torch.histc(angle, bins=4, min=-math.pi, max=math.pi), (magnitude > 1.0).sum())
    patches = F.unfold(img, kernel_size=3, padding=1)
    show(patches.shape, patches.view(1, 3, 9, 144).std(2)[0, 0, :5])
    median = patches.view(1, 3, 9, 12, 12).median(dim=2).values
    show(median.shape, median[0, 0, 3, 2:7], (median - img).abs().mean())
    ones = torch.ones(1, 1, 6, 6)
    counts = F.fold(F.unfold(ones, 2, stride=1), output_size=(6, 6), kernel_size=2, stride=1)
    show(counts[0, 0])
    tiles = F.unfold(img, kernel_size=4, stride=4)
    back = F.fold(tiles, output_size=(12, 12), kernel_size=4, stride=4)
    show(tiles.shape, torch.equal(back, img))
    img.requires_grad_()
    edge_loss = F.conv2d(img.mean(1, keepdim=True), kernels, padding=1).abs().mean()
    edge_loss.backward()
    show(edge_loss, img.grad[0, 0, 3, 3:6])
    show_outcome(show, lambda: F.unfold(img[0, 0], kernel_size=3))
    show_outcome(show, lambda: F.fold(tiles, output_size=(10, 10), kernel_size=4, stride=4))
    show_outcome(show, lambda: F.pad(img, (6, 6), mode="reflect"))
    show_outcome(show, lambda: torch.meshgrid(coords, coords, indexing="xyz"))


def _hessian_vector_products(lib, show):
    """Second-order tools for a logistic regression: a Hessian-vector product by forward-over-reverse
    (forward_ad around autograd.grad), the same by double backward and autograd.functional.hvp/vhp, conjugate
    gradient for a Newton step, and the Hessian's spectrum."""
    torch, F = lib, lib.nn.functional
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(112)
    X = torch.randn(20, 3, dtype=torch.float64)
    y = (X @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) > 0).double()

    def loss_fn(w):
        return F.binary_cross_entropy_with_logits(X @ w, y) + 0.01 * w.pow(2).sum()

    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    v = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)
    g, = torch.autograd.grad(loss_fn(w), w, create_graph=True)
    hv_double, = torch.autograd.grad(g, w, grad_outputs=v)
    with fwAD.dual_level():
        dual = fwAD.make_dual(w.detach(), v)
        w_dual = dual.requires_grad_()
        g_dual, = torch.autograd.grad(loss_fn(w_dual), w_dual)
        hv_forward = fwAD.unpack_dual(g_dual).tangent
    show(g, hv_double, hv_forward)
    _, hvp = torch.autograd.functional.hvp(loss_fn, w.detach(), v)
    _, vhp = torch.autograd.functional.vhp(loss_fn, w.detach(), v)
    H = torch.autograd.functional.hessian(loss_fn, w.detach())
    show(hvp, vhp, H @ v, torch.linalg.eigvalsh(H))

    def conjugate_gradient(matvec, b, iters=3):
        x = torch.zeros_like(b)
        r = b.clone()
        p = r.clone()
        for _ in range(iters):
            Ap = matvec(p)
            step = (r @ r) / (p @ Ap)
            x = x + step * p
            r_new = r - step * Ap
            p = r_new + (r_new @ r_new) / (r @ r) * p
            r = r_new
        return x

    params = w.detach().clone()
    for it in range(3):
        params.requires_grad_()
        grad, = torch.autograd.grad(loss_fn(params), params)
        at = params.detach()
        step = conjugate_gradient(lambda p, at=at: torch.autograd.functional.hvp(loss_fn, at, p)[1], grad)
        params = (params - step).detach()
        show(it, loss_fn(params), grad.norm())
    show_outcome(show, lambda: torch.autograd.functional.hvp(loss_fn, w.detach(), torch.ones(2, dtype=torch.float64)))
    with fwAD.dual_level():
        show_outcome(show, lambda: fwAD.make_dual(w.detach(), torch.ones(2, dtype=torch.float64)))
    show_outcome(show, lambda: fwAD.make_dual(w.detach(), v))


PROGRAMS = [
    _spring_chain_sensitivities,
    _gaussian_process_regression,
    _knn_and_binning,
    _ctc_speech_recogniser,
    _audio_features,
    _distribution_zoo,
    _scheduler_zoo,
    _robust_regression,
    _matrix_factorisation_recommender,
    _bayesian_linear_regression,
    _per_sample_gradients_with_hooks,
    _image_filtering,
    _hessian_vector_products,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
