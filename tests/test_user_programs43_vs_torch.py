"""A forty-third set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These study parameter initialisation with ``torch.nn.init``, bit for bit under ``torch.manual_seed`` and with
``generator=``: the plain fills (uniform_/normal_/constant_/ones_/zeros_/eye_/dirac_ with groups, and their
refusals for the wrong number of dims); xavier and kaiming (gain, ``a``, fan_in/fan_out, every nonlinearity);
trunc_normal_ (mean/std/a/b, a generator); orthogonal_ (gain, wide, tall, 3-d flattened); sparse_;
calculate_gain for every name, with its refusals and its handling of ``param``; the fan helpers on 1-d to 5-d
weights; init on views, non-contiguous tensors, leaves that require grad (no graph, version counter bumps) and
float16/bfloat16/float64 tensors; the default ``reset_parameters`` of Linear, convolutions, transposed
convolutions, Embedding (padding_idx zeroed), LSTM, GRU, MultiheadAttention, LayerNorm and BatchNorm under a
seed; and the statistics of initialised weights against their theoretical values, printed exactly.

Differences these programs found, now fixed (``tests/ops/test_program43_findings_vs_torch.py``):
- ``nn.init.uniform_`` with ``a > b`` and ``nn.init.normal_`` with a negative std filled the tensor where torch
  (whose init calls ``tensor.uniform_``/``tensor.normal_``) refuses them, and ``normal_`` took integer tensors;
- init of a non-contiguous view (``base.T[::2]``) drew its values in the view's index order, where torch's fill
  walks the storage: other values under the same seed (uniform/normal/xavier/kaiming/trunc_normal_/sparse_).

Left: ``orthogonal_`` is compared to a tolerance only: its QR (NumPy's LAPACK call) is not torch's bit for bit.
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _plain_fills(lib, show):
    """uniform_/normal_/constant_/ones_/zeros_/eye_/dirac_ on fresh weights, with their refusals."""
    torch, init = lib, lib.nn.init
    torch.manual_seed(430)
    w = torch.empty(3, 5)
    show(init.uniform_(w, -0.5, 0.5))
    show(init.normal_(w, mean=1.0, std=0.1))
    show(init.constant_(w, 0.3), init.ones_(torch.empty(2, 2)), init.zeros_(torch.empty(2, 3)))
    show(init.eye_(torch.empty(3, 5)), init.eye_(torch.empty(4, 2)))
    show_outcome(show, lambda: init.eye_(torch.empty(2, 2, 2)))
    show_outcome(show, lambda: init.eye_(torch.empty(4)))
    conv = torch.empty(4, 2, 3)
    show(init.dirac_(conv))
    show(init.dirac_(torch.empty(6, 2, 3, 3), groups=2).sum(dim=(2, 3)))
    show(init.dirac_(torch.empty(2, 4, 1, 3, 3)).sum(dim=(2, 3, 4)))
    show_outcome(show, lambda: init.dirac_(torch.empty(3, 3)))
    show_outcome(show, lambda: init.dirac_(torch.empty(5, 2, 3), groups=2))
    x = torch.randn(1, 4, 7)
    identity = torch.nn.Conv1d(4, 4, 3, padding=1, bias=False)
    init.dirac_(identity.weight)
    show(torch.equal(identity(x), x), identity(x).grad_fn)
    show(init.uniform_(torch.empty(6), a=2, b=3))
    show(init.normal_(torch.empty(2, 3, dtype=torch.float64), std=2.0))
    show_outcome(show, lambda: init.uniform_(torch.empty(3), 1.0, 0.0))
    show_outcome(show, lambda: init.normal_(torch.empty(3), std=-1.0))


def _xavier_and_kaiming(lib, show):
    """xavier_uniform_/xavier_normal_ with a gain, kaiming_uniform_/kaiming_normal_ with every mode and slope."""
    torch, init = lib, lib.nn.init
    torch.manual_seed(431)
    w = torch.empty(16, 8)
    show(init.xavier_uniform_(w)[:2])
    show(init.xavier_uniform_(w, gain=init.calculate_gain("relu"))[:2])
    show(init.xavier_normal_(w, gain=0.5)[:2])
    show(init.xavier_normal_(torch.empty(4, 3, 2, 2))[0])
    for mode in ("fan_in", "fan_out"):
        for nonlinearity in ("relu", "leaky_relu", "linear", "tanh", "selu", "sigmoid"):
            show(mode, nonlinearity, init.kaiming_uniform_(torch.empty(3, 4), mode=mode,
                                                         nonlinearity=nonlinearity).flatten()[:4])
    show(init.kaiming_uniform_(torch.empty(5, 6), a=math.sqrt(5))[0])
    show(init.kaiming_normal_(torch.empty(5, 6), a=0.2, mode="fan_out")[0])
    show(init.kaiming_normal_(torch.empty(2, 3, 3, 3), nonlinearity="relu")[0, 0])
    show_outcome(show, lambda: init.kaiming_uniform_(torch.empty(3, 4), mode="fan_avg"))
    show_outcome(show, lambda: init.kaiming_normal_(torch.empty(3, 4), nonlinearity="gelu"))
    show_outcome(show, lambda: init.xavier_uniform_(torch.empty(7)))
    show_outcome(show, lambda: init.kaiming_uniform_(torch.empty(0, 3)))
    g = torch.Generator().manual_seed(7)
    a = init.kaiming_uniform_(torch.empty(3, 3), generator=g)
    g.manual_seed(7)
    b = init.kaiming_uniform_(torch.empty(3, 3), generator=g)
    show(a, torch.equal(a, b))
    g.manual_seed(8)
    show(init.xavier_normal_(torch.empty(2, 5), generator=g), init.kaiming_normal_(torch.empty(2, 2), generator=g))


def _trunc_normal_study(lib, show):
    """trunc_normal_ with mean/std/a/b and a generator: the draws, their bounds and their moments."""
    torch, init = lib, lib.nn.init
    torch.manual_seed(432)
    w = init.trunc_normal_(torch.empty(4, 6), std=0.02)
    show(w)
    show(w.abs().max() <= 2.0, w.dtype)
    wide = init.trunc_normal_(torch.empty(2000), mean=0.0, std=1.0, a=-2.0, b=2.0)
    show(wide.min().item() >= -2.0, wide.max().item() <= 2.0, wide.mean(), wide.std())
    shifted = init.trunc_normal_(torch.empty(3, 3), mean=5.0, std=2.0, a=4.0, b=6.0)
    show(shifted, bool(((shifted >= 4) & (shifted <= 6)).all()))
    g = torch.Generator().manual_seed(3)
    first = init.trunc_normal_(torch.empty(5), generator=g)
    g.manual_seed(3)
    show(first, torch.equal(first, init.trunc_normal_(torch.empty(5), generator=g)))
    show(init.trunc_normal_(torch.empty(2, 3, dtype=torch.float64), mean=-1.0, std=0.5, a=-1.5, b=0.0))
    one_sided = init.trunc_normal_(torch.empty(8), mean=0.0, std=1.0, a=0.0, b=10.0)
    show(one_sided, bool((one_sided >= 0).all()))
    far = init.trunc_normal_(torch.empty(4), mean=10.0, std=1.0, a=-2.0, b=2.0)
    show(far)


def _orthogonal_and_sparse(lib, show):
    """orthogonal_ (gain, wide, tall, 3-d flattened) checked by W Wᵀ, and sparse_ (sparsity, std)."""
    torch, init = lib, lib.nn.init
    torch.manual_seed(433)
    tall = init.orthogonal_(torch.empty(6, 3))
    show(tall, torch.allclose(tall.T @ tall, torch.eye(3), atol=1e-5))
    wide = init.orthogonal_(torch.empty(3, 6), gain=2.0)
    show(wide, torch.allclose(wide @ wide.T, 4 * torch.eye(3), atol=1e-4))
    cube = init.orthogonal_(torch.empty(4, 2, 3))
    flat = cube.reshape(4, -1)
    show(cube.shape, torch.allclose(flat @ flat.T, torch.eye(4), atol=1e-5))
    show_outcome(show, lambda: init.orthogonal_(torch.empty(5)))
    show(init.orthogonal_(torch.empty(0, 3)).shape)
    g = torch.Generator().manual_seed(11)
    show(init.orthogonal_(torch.empty(2, 2), generator=g))
    s = init.sparse_(torch.empty(10, 4), sparsity=0.3)
    show(s, (s == 0).sum(dim=0))
    s2 = init.sparse_(torch.empty(5, 3), sparsity=0.5, std=1.0)
    show(s2, (s2 == 0).sum(dim=0))
    show_outcome(show, lambda: init.sparse_(torch.empty(2, 3, 4), 0.5))
    g.manual_seed(12)
    show(init.sparse_(torch.empty(4, 2), 0.25, generator=g))
    show(init.sparse_(torch.empty(3, 2), sparsity=0.0))


def _gains_and_fans(lib, show):
    """calculate_gain for every name (and its param handling), the fan helpers on 1-d to 5-d weights."""
    torch, init = lib, lib.nn.init
    for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
        show(name, init.calculate_gain(name))
    show(init.calculate_gain("leaky_relu", 0.2), init.calculate_gain("leaky_relu", 1),
         init.calculate_gain("leaky_relu", True), init.calculate_gain("tanh", 5))
    show_outcome(show, lambda: init.calculate_gain("leaky_relu", "0.2"))
    show_outcome(show, lambda: init.calculate_gain("gelu"))
    show_outcome(show, lambda: init.calculate_gain("Relu"))
    show_outcome(show, lambda: init.calculate_gain("leaky_relu", None))
    for shape in ((5,), (4, 3), (4, 3, 5), (8, 2, 3, 3), (6, 2, 2, 3, 3), (0, 4), (3, 0, 2)):
        show(shape, show_fans(init, torch.empty(*shape)))
    w = torch.empty(8, 2, 3, 3)
    show(init._calculate_correct_fan(w, "fan_in"), init._calculate_correct_fan(w, "fan_out"))
    show_outcome(show, lambda: init._calculate_correct_fan(w, "fan_mid"))
    show_outcome(show, lambda: init._calculate_correct_fan(torch.empty(3), "fan_in"))
    show_outcome(show, lambda: init._calculate_fan_in_and_fan_out(torch.tensor(1.0)))


def show_fans(init, tensor):
    try:
        return init._calculate_fan_in_and_fan_out(tensor)
    except Exception as exc:  # noqa: BLE001 - the refusal is what is shown
        return type(exc).__name__, str(exc)


def _views_grads_and_dtypes(lib, show):
    """init on views, non-contiguous tensors, leaves that require grad and half/bfloat16/float64 tensors."""
    torch, nn, init = lib, lib.nn, lib.nn.init
    torch.manual_seed(434)
    base = torch.zeros(4, 6)
    init.ones_(base[1:3, ::2])
    show(base)
    t = torch.zeros(3, 5).t()
    show(t.is_contiguous(), init.uniform_(t, 0, 1).is_contiguous())
    show(init.normal_(base.T[::2]), base)
    init.eye_(base[:, :4].T)
    show(base)
    p = nn.Parameter(torch.empty(3, 3))
    v0 = p._version
    out = init.kaiming_uniform_(p)
    show(out is p, out.requires_grad, out.grad_fn, p._version > v0, p.is_leaf)
    leaf = torch.randn(2, 2, requires_grad=True)
    before = leaf._version
    init.zeros_(leaf)
    init.constant_(leaf, 2.5)
    show(leaf, leaf._version - before, leaf.grad_fn)
    (leaf * 3).sum().backward()
    show(leaf.grad)
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        w = torch.empty(2, 4, dtype=dtype)
        show(dtype, init.uniform_(w, -1, 1), init.normal_(w), init.xavier_uniform_(w))
        show(init.kaiming_normal_(w), init.trunc_normal_(w, std=0.5), init.constant_(w, 1 / 3))
    show(init.orthogonal_(torch.empty(3, 2, dtype=torch.float64)))
    show_outcome(show, lambda: init.orthogonal_(torch.empty(2, 2, dtype=torch.float16)))
    show_outcome(show, lambda: init.uniform_(torch.empty(3, dtype=torch.int64)))
    show_outcome(show, lambda: init.trunc_normal_(torch.empty(2, dtype=torch.bfloat16)))


def _default_resets(lib, show):
    """The default reset_parameters of the common layers under a seed."""
    torch, nn = lib, lib.nn
    torch.manual_seed(435)
    lin = nn.Linear(5, 3)
    show(lin.weight, lin.bias)
    show(nn.Conv1d(2, 3, 3).weight[0], nn.Conv2d(2, 2, 2, groups=2).bias)
    conv3 = nn.Conv3d(1, 2, 2)
    show(conv3.weight.flatten(), conv3.bias)
    tconv = nn.ConvTranspose2d(3, 2, 2)
    show(tconv.weight[0], tconv.bias)
    show(nn.ConvTranspose1d(2, 4, 3, groups=2).weight.shape, nn.ConvTranspose1d(2, 4, 3, groups=2).bias)
    emb = nn.Embedding(5, 3, padding_idx=2)
    show(emb.weight)
    emb.reset_parameters()
    show(emb.weight[2], emb.weight.sum())
    lstm = nn.LSTM(3, 2)
    show([name for name, _ in lstm.named_parameters()], lstm.weight_hh_l0)
    gru = nn.GRU(2, 2, bidirectional=True)
    show(gru.bias_ih_l0_reverse)
    mha = nn.MultiheadAttention(4, 2)
    show(mha.in_proj_weight[:2], mha.in_proj_bias, mha.out_proj.bias, mha.out_proj.weight[0])
    show(nn.LayerNorm(3).weight, nn.LayerNorm(3).bias, nn.BatchNorm1d(2).running_var)
    bn = nn.BatchNorm2d(2)
    bn.running_mean.fill_(3.0)
    bn.weight.data.fill_(0.5)
    bn.reset_parameters()
    show(bn.running_mean, bn.weight, bn.num_batches_tracked)
    lin.reset_parameters()
    show(lin.weight[0])
    torch.manual_seed(435)
    show(torch.equal(nn.Linear(5, 3).weight, nn.Linear(5, 3).weight))


def _weight_statistics(lib, show):
    """Std of initialised weights against the theoretical value, printed exactly."""
    torch, init = lib, lib.nn.init
    torch.manual_seed(436)
    fan_in, fan_out = 256, 128
    w = torch.empty(fan_out, fan_in)
    init.kaiming_normal_(w, nonlinearity="relu")
    show(f"kaiming_normal std {w.std().item():.6f} vs {math.sqrt(2 / fan_in):.6f}")
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = 1 / math.sqrt(fan_in)
    show(f"kaiming_uniform max {w.abs().max().item():.6f} <= {bound:.6f}", w.std())
    init.xavier_uniform_(w)
    show(f"xavier_uniform std {w.std().item():.6f} vs {math.sqrt(2 / (fan_in + fan_out)):.6f}")
    init.xavier_normal_(w, gain=init.calculate_gain("tanh"))
    show(f"xavier_normal std {w.std().item():.6f}", w.mean(), w.var())
    init.orthogonal_(w)
    show(f"orthogonal row norms {w.norm(dim=1).mean().item():.5f}")
    init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04)
    show(f"trunc std {w.std().item():.6f}", w.min(), w.max())
    torch.manual_seed(436)
    lin = torch.nn.Linear(fan_in, fan_out)
    show(f"linear weight std {lin.weight.std().item():.6f} vs {1 / math.sqrt(3 * fan_in):.6f}", lin.bias.std())
    x = torch.randn(512, fan_in)
    h = x
    for depth in range(4):
        layer = torch.nn.Linear(fan_in, fan_in, bias=False)
        init.kaiming_normal_(layer.weight, nonlinearity="relu")
        h = torch.relu(layer(h))
        show(depth, f"{h.pow(2).mean().item():.4f}")


PROGRAMS = [
    _plain_fills,
    _xavier_and_kaiming,
    _trunc_normal_study,
    _orthogonal_and_sparse,
    _gains_and_fans,
    _views_grads_and_dtypes,
    _default_resets,
    _weight_statistics,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
