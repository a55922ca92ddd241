"""``torch.autocast("cpu")`` against torch 2.13's CPU build: the operators it casts (lower precision, float32,
promoted), training steps of an MLP, a CNN and a transformer block (each layer's dtype, the loss, the gradients'
dtypes and values), the cache of cast weights, nesting and disabling, the state functions and
``torch.amp.custom_fwd``/``custom_bwd``.

Values are compared bit for bit where tracegrad's bfloat16 kernels are (matrix products, convolutions, the losses);
addbmm, conv_tbc and scaled_dot_product_attention round their bfloat16 results differently from torch's (flash
attention's blocks, oneDNN's accumulation), so those and what follows them are compared within bfloat16 ulps."""

from __future__ import annotations

import warnings

import pytest
from _lib import np, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _arrays(seed: int = 1):
    rs = np.random.default_rng(seed)
    return lambda *shape: rs.standard_normal(shape).astype(np.float32)


def _low(lib):
    return lib.bfloat16


# name -> program(lib, F, a), ``a(*shape)`` a float32 tensor of fixed random values
OPERATORS = {
    # lower_precision_fp
    "linear": lambda L, F, a: F.linear(a(4, 3), a(5, 3), a(5)),
    "matmul": lambda L, F, a: L.matmul(a(2, 4, 3), a(3, 5)),
    "@ (matrices)": lambda L, F, a: a(4, 3) @ a(3, 5),
    "@ (batched)": lambda L, F, a: a(2, 4, 3) @ a(3, 5),
    "Tensor.matmul": lambda L, F, a: a(4, 3).matmul(a(3, 5)),
    "mm": lambda L, F, a: L.mm(a(4, 3), a(3, 5)),
    "bmm": lambda L, F, a: L.bmm(a(2, 4, 3), a(2, 3, 5)),
    "baddbmm": lambda L, F, a: L.baddbmm(a(2, 4, 5), a(2, 4, 3), a(2, 3, 5)),
    "addmm": lambda L, F, a: L.addmm(a(4, 5), a(4, 3), a(3, 5)),
    "addbmm": lambda L, F, a: L.addbmm(a(4, 5), a(2, 4, 3), a(2, 3, 5)),
    "conv1d": lambda L, F, a: F.conv1d(a(1, 2, 8), a(3, 2, 3)),
    "conv2d": lambda L, F, a: F.conv2d(a(1, 2, 5, 5), a(3, 2, 3, 3), a(3)),
    "conv2d padding='same'": lambda L, F, a: F.conv2d(a(1, 2, 5, 5), a(3, 2, 3, 3), padding="same"),
    "conv3d": lambda L, F, a: F.conv3d(a(1, 2, 4, 4, 4), a(3, 2, 3, 3, 3)),
    "torch.conv2d": lambda L, F, a: L.conv2d(a(1, 2, 5, 5), a(3, 2, 3, 3)),
    "conv_transpose1d": lambda L, F, a: F.conv_transpose1d(a(1, 2, 5), a(2, 3, 3)),
    "conv_transpose2d": lambda L, F, a: F.conv_transpose2d(a(1, 2, 5, 5), a(2, 3, 3, 3)),
    "conv_tbc": lambda L, F, a: L.conv_tbc(a(5, 1, 2), a(3, 2, 4), a(4)),
    "prelu": lambda L, F, a: F.prelu(a(2, 3), a(1)),
    "scaled_dot_product_attention": lambda L, F, a: F.scaled_dot_product_attention(a(1, 2, 4, 8), a(1, 2, 4, 8),
                                                                                   a(1, 2, 4, 8)),
    # fp32
    "cross_entropy": lambda L, F, a: F.cross_entropy(a(4, 5).to(_low(L)), L.tensor([0, 1, 2, 3])),
    "nll_loss": lambda L, F, a: F.nll_loss(a(4, 5).to(_low(L)), L.tensor([0, 1, 2, 3])),
    "mse_loss": lambda L, F, a: F.mse_loss(a(4, 5).to(_low(L)), a(4, 5)),
    "l1_loss": lambda L, F, a: F.l1_loss(a(4, 5), a(4, 5).to(_low(L))),
    "smooth_l1_loss": lambda L, F, a: F.smooth_l1_loss(a(4, 5).to(_low(L)), a(4, 5)),
    "huber_loss": lambda L, F, a: F.huber_loss(a(4, 5).to(_low(L)), a(4, 5)),
    "kl_div": lambda L, F, a: F.kl_div(a(4, 5).to(_low(L)), a(4, 5), reduction="batchmean"),
    "binary_cross_entropy": lambda L, F, a: F.binary_cross_entropy(L.sigmoid(a(4, 5)), L.sigmoid(a(4, 5))),
    "binary_cross_entropy_with_logits": lambda L, F, a: F.binary_cross_entropy_with_logits(a(4, 5).to(_low(L)),
                                                                                           L.sigmoid(a(4, 5))),
    "margin_ranking_loss": lambda L, F, a: F.margin_ranking_loss(a(4).to(_low(L)), a(4), L.sign(a(4))),
    "soft_margin_loss": lambda L, F, a: F.soft_margin_loss(a(4).to(_low(L)), L.sign(a(4))),
    "hinge_embedding_loss": lambda L, F, a: F.hinge_embedding_loss(a(4).to(_low(L)), L.sign(a(4))),
    "poisson_nll_loss": lambda L, F, a: F.poisson_nll_loss(a(4).to(_low(L)), L.abs(a(4))),
    "cosine_embedding_loss": lambda L, F, a: F.cosine_embedding_loss(a(3, 4).to(_low(L)), a(3, 4), L.sign(a(3))),
    "triplet_margin_loss": lambda L, F, a: F.triplet_margin_loss(a(3, 4).to(_low(L)), a(3, 4), a(3, 4)),
    "multi_margin_loss": lambda L, F, a: F.multi_margin_loss(a(3, 4).to(_low(L)), L.tensor([0, 1, 2])),
    "prod": lambda L, F, a: L.prod(a(3, 4).to(_low(L))),
    "prod(dim)": lambda L, F, a: L.prod(a(3, 4).to(_low(L)), 1),
    "Tensor.prod": lambda L, F, a: a(3, 4).to(_low(L)).prod(),
    "trace": lambda L, F, a: L.trace(a(3, 3).to(_low(L))),
    "cdist": lambda L, F, a: L.cdist(a(3, 4).to(_low(L)), a(2, 4)),
    "quantile": lambda L, F, a: L.quantile(a(8).to(_low(L)), 0.3),
    "inverse": lambda L, F, a: L.inverse(a(3, 3).to(_low(L))),
    "linalg.inv": lambda L, F, a: L.linalg.inv(a(3, 3).to(_low(L))),
    "linalg.solve": lambda L, F, a: L.linalg.solve(a(3, 3).to(_low(L)), a(3)),
    "linalg.svd": lambda L, F, a: L.linalg.svd(a(3, 3).to(_low(L)))[1],
    "linalg.qr": lambda L, F, a: L.linalg.qr(a(3, 3).to(_low(L)))[0],
    "fft.rfft": lambda L, F, a: L.fft.rfft(a(8).to(_low(L))),
    "fft.fft2": lambda L, F, a: L.fft.fft2(a(4, 4).to(_low(L))),
    "avg_pool3d": lambda L, F, a: F.avg_pool3d(a(1, 1, 4, 4, 4).to(_low(L)), 2),
    "max_pool3d": lambda L, F, a: F.max_pool3d(a(1, 1, 4, 4, 4).to(_low(L)), 2),
    "reflection_pad2d": lambda L, F, a: F.pad(a(1, 2, 5, 5).to(_low(L)), (1, 1, 1, 1), mode="reflect"),
    "reflection_pad3d (not listed)": lambda L, F, a: F.pad(a(1, 1, 3, 3, 3).to(_low(L)), (1,) * 6, mode="reflect"),
    "circular pad (not listed)": lambda L, F, a: F.pad(a(1, 2, 5, 5).to(_low(L)), (1, 1, 1, 1), mode="circular"),
    "replication_pad3d": lambda L, F, a: F.pad(a(1, 1, 3, 3, 3).to(_low(L)), (1,) * 6, mode="replicate"),
    "grid_sample": lambda L, F, a: F.grid_sample(a(1, 1, 4, 4).to(_low(L)), L.tanh(a(1, 3, 3, 2)),
                                                 align_corners=False),
    # promote
    "cat (float32, bfloat16)": lambda L, F, a: L.cat([a(2, 3), a(2, 3).to(_low(L))]),
    "stack (bfloat16 alone)": lambda L, F, a: L.stack([a(2, 3).to(_low(L)), a(2, 3).to(_low(L))]),
    "cat (bfloat16, float64 ignored)": lambda L, F, a: L.cat([a(2, 3).to(_low(L)), a(2, 3).double()]),
    "index_copy": lambda L, F, a: L.index_copy(a(3, 2).to(_low(L)), 0, L.tensor([0, 2]), a(2, 2)),
    "Tensor.index_copy": lambda L, F, a: a(3, 2).to(_low(L)).index_copy(0, L.tensor([0, 2]), a(2, 2)),
    # not listed: the input's dtype, as without autocast
    "softmax": lambda L, F, a: L.softmax(a(2, 4), -1),
    "relu of bfloat16": lambda L, F, a: F.relu(a(2, 4).to(_low(L))),
    "add (float32 + bfloat16)": lambda L, F, a: a(2, 4) + a(2, 4).to(_low(L)),
    # float64 tensors are not cast; out= is another operator, which autocast leaves alone
    "mm of float64": lambda L, F, a: L.mm(a(4, 3).double(), a(3, 5).double()),
    "linear of float64 and float32": lambda L, F, a: F.linear(a(4, 3).double(), a(5, 3)),
    "mm out=": lambda L, F, a: L.mm(a(4, 3), a(3, 5), out=L.empty(4, 5)),
    "complex mm": lambda L, F, a: L.mm(L.complex(a(2, 2), a(2, 2)), L.complex(a(2, 2), a(2, 2))),
}
# tracegrad's kernels round these differently from torch's (see the module's docstring)
APPROXIMATE = {"addbmm", "conv_tbc", "scaled_dot_product_attention", "cosine_embedding_loss", "inverse",
               "linalg.inv", "linalg.svd", "linalg.qr", "fft.rfft", "fft.fft2", "grid_sample", "poisson_nll_loss",
               "linalg.solve", "mm out=", "complex mm"}  # (the last: float32 products by another BLAS)


def _outcome(lib, program, dtype: str):
    """The result of ``program`` inside ``autocast("cpu", dtype)``: (dtype, float values), or the error."""
    a_numpy = _arrays()

    def a(*shape):
        return lib.tensor(a_numpy(*shape))

    try:
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            result = program(lib, lib.nn.functional, a)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    values = result.detach()
    if values.is_complex():
        values = lib.view_as_real(values)
    return str(result.dtype), values.double().numpy()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(OPERATORS))
def test_operator_runs_in_torchs_dtype(name, dtype):
    theirs = _outcome(torch, OPERATORS[name], dtype)
    ours = _outcome(tg, OPERATORS[name], dtype)
    assert ours[0] == theirs[0]
    if isinstance(theirs[1], str):
        assert ours[1] == theirs[1]
    elif name in APPROXIMATE or dtype == "float16":
        # (a few ulps of the result's dtype, relative to the largest value)
        ulp = 2.0 ** (-7 if "bfloat16" in theirs[0] else -10 if "float16" in theirs[0] else -20)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=4 * ulp, atol=4 * ulp * np.abs(theirs[1]).max())
    else:
        np.testing.assert_array_equal(ours[1], theirs[1])


def test_promote_refuses_a_float16_among_bfloat16():
    outcomes = []
    for lib in (torch, tg):
        with lib.autocast("cpu"), pytest.raises(RuntimeError) as info:
            lib.cat([lib.ones(2, dtype=lib.bfloat16), lib.ones(2, dtype=lib.float16)])
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


# ---- training steps --------------------------------------------------------------------------------------------


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3),
                         nn.Flatten(), nn.Linear(4, 4))


class _Block:
    """A pre-norm transformer block over (batch, tokens, 8): attention with two heads, then an MLP."""

    @staticmethod
    def build(lib):
        nn = lib.nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm1, self.norm2 = nn.LayerNorm(8), nn.LayerNorm(8)
                self.qkv, self.proj = nn.Linear(8, 24), nn.Linear(8, 8)
                self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))
                self.head = nn.Linear(8, 4)

            def forward(self, x):
                b, n, _ = x.shape
                q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, 2, 4).permute(2, 0, 3, 1, 4)
                attended = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.proj(attended.transpose(1, 2).reshape(b, n, 8))
                x = x + self.mlp(self.norm2(x))
                return self.head(x.mean(1))

        return Block()


MODELS = {
    "mlp": (_mlp, (5, 6), "cross_entropy"),
    "cnn": (_cnn, (3, 2, 6, 6), "cross_entropy"),
    "transformer block": (_Block.build, (2, 5, 8), "mse_loss"),
}


def _training_steps(lib, name: str, dtype: str, steps: int = 2) -> dict:
    """Two SGD steps of ``name`` with its forward under autocast (backward outside, as torch's docs advise): the
    dtypes of every module's output, the losses, the gradients (dtype and values) and the final parameters."""
    build, shape, loss_name = MODELS[name]
    lib.manual_seed(0)
    model = build(lib)
    with lib.no_grad():
        for p in model.parameters():  # (the same weights in both libraries)
            p.copy_(lib.tensor(_arrays(p.numel())(*p.shape)) * 0.5)
    layer_dtypes: list = []
    for module_name, module in model.named_modules():
        module.register_forward_hook(lambda m, i, o, module_name=module_name:
                                     layer_dtypes.append((module_name, str(o.dtype))))
    a = _arrays(7)
    x = lib.tensor(a(*shape))
    target = lib.tensor([0, 1, 2, 3, 0][: shape[0]]) if loss_name == "cross_entropy" else lib.tensor(a(shape[0], 4))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    record: dict = {"layers": layer_dtypes, "losses": [], "grads": []}
    for _ in range(steps):
        optimizer.zero_grad()
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            out = model(x)
            loss = getattr(lib.nn.functional, loss_name)(out, target)
        record["losses"].append((str(out.dtype), str(loss.dtype), loss.item()))
        loss.backward()
        record["grads"].append([(n, str(p.grad.dtype), p.grad.numpy().copy()) for n, p in model.named_parameters()])
        optimizer.step()
    record["params"] = [p.detach().numpy().copy() for p in model.parameters()]
    return record


def _dtypes_only(record: dict) -> tuple:
    return (record["layers"], [r[:2] for r in record["losses"]],
            [[g[:2] for g in grads] for grads in record["grads"]])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(MODELS))
def test_training_step_like_torch(name, dtype):
    theirs, ours = (_training_steps(lib, name, dtype) for lib in (torch, tg))
    assert _dtypes_only(ours) == _dtypes_only(theirs)
    exact = name != "transformer block" and dtype == "bfloat16"  # (attention's bfloat16 kernel differs)
    ours_values = [v for r in ours["losses"] for v in r[2:]] + [g[2] for gs in ours["grads"] for g in gs]
    theirs_values = [v for r in theirs["losses"] for v in r[2:]] + [g[2] for gs in theirs["grads"] for g in gs]
    for o, t in zip(ours_values + ours["params"], theirs_values + theirs["params"], strict=True):
        if exact:
            np.testing.assert_array_equal(o, t)
        else:
            np.testing.assert_allclose(o, t, rtol=0.05, atol=0.02 * max(np.abs(t).max(), 1e-3))


def test_layers_run_in_torchs_dtypes():
    # (spelled out for one model, so a reader sees what the comparison above checks)
    record = _training_steps(tg, "transformer block", "bfloat16", steps=1)
    dtypes = dict(record["layers"])
    assert dtypes["norm1"] == "torch.float32" and dtypes["qkv"] == "torch.bfloat16"
    assert dtypes["mlp"] == "torch.bfloat16" and dtypes[""] == "torch.bfloat16"
    assert record["losses"][0][:2] == ("torch.bfloat16", "torch.float32")
    assert {g[1] for g in record["grads"][0]} == {"torch.float32"}


# ---- the cache of cast weights ---------------------------------------------------------------------------------


def _cast_nodes(lib, program) -> tuple:
    """``program(lib, w, x)`` in an autocast region; per result, the node its weight ``w`` came through, numbered
    by first appearance (equal numbers: one cast reused), and the results' values."""
    w = lib.tensor(_arrays(3)(3, 3), requires_grad=True)
    x = lib.tensor(_arrays(4)(2, 3))
    results = program(lib, w, x)
    nodes: list = []
    numbered = []
    for r in results:
        node = r.grad_fn.next_functions[1][0]
        if not any(node is n for n in nodes):
            nodes.append(node)
        numbered.append((next(k for k, n in enumerate(nodes) if n is node), type(node).__name__))
    return numbered, [r.detach().float().numpy() for r in results]


def _twice(lib, w, x, **autocast_kwargs):
    with lib.autocast("cpu", **autocast_kwargs):
        return [lib.mm(x, w), lib.mm(x, w)]


CACHE_PROGRAMS = {
    "a weight used twice is cast once": _twice,
    "cache_enabled=False casts each time": lambda lib, w, x: _twice(lib, w, x, cache_enabled=False),
    "a weight changed in place is not cast again": lambda lib, w, x: _changed_in_place(lib, w, x),
    "a new region casts again": lambda lib, w, x: _twice(lib, w, x)[:1] + _twice(lib, w, x)[:1],
    "an inner region's exit keeps the cache": lambda lib, w, x: _inner_exit(lib, w, x),
    "clear_autocast_cache drops it": lambda lib, w, x: _cleared(lib, w, x),
    "a view is not cached": lambda lib, w, x: _twice(lib, w[:, :], x),
    "a non-leaf is not cached": lambda lib, w, x: _twice(lib, w * 1, x),
    "float16 autocast caches too": lambda lib, w, x: _twice(lib, w, x, dtype=lib.float16),
    "a cast first made under no_grad keeps its graph": lambda lib, w, x: _first_under(lib, lib.no_grad, w, x),
    "inference_mode does not fill the cache": lambda lib, w, x: _first_under(lib, lib.inference_mode, w, x),
}


def _first_under(lib, mode, w, x):
    """The weight first cast inside ``mode`` (torch 2.13 makes a cast it keeps with grad enabled, and keeps none
    inside inference_mode), then changed in place: the later forwards' casts and values."""
    with lib.autocast("cpu"):
        with mode():
            lib.mm(x, w)
        with lib.no_grad():
            w.add_(1.0)
        return [lib.mm(x, w), lib.mm(x, w)]


def _changed_in_place(lib, w, x):
    with lib.autocast("cpu"):
        first = lib.mm(x, w)
        with lib.no_grad():
            w.add_(1.0)  # (torch's cache is keyed by the tensor, not its version: the old cast is reused)
        return [first, lib.mm(x, w), lib.mm(x, w * 1)]


def _inner_exit(lib, w, x):
    with lib.autocast("cpu"):
        with lib.autocast("cpu"):
            first = lib.mm(x, w)
        return [first, lib.mm(x, w)]


def _cleared(lib, w, x):
    with lib.autocast("cpu"):
        first = lib.mm(x, w)
        lib.clear_autocast_cache()
        return [first, lib.mm(x, w)]


@pytest.mark.parametrize("name", list(CACHE_PROGRAMS))
def test_weight_cast_cache_like_torch(name):
    (theirs, theirs_values), (ours, ours_values) = (_cast_nodes(lib, CACHE_PROGRAMS[name]) for lib in (torch, tg))
    assert ours == theirs
    for o, t in zip(ours_values, theirs_values, strict=True):
        np.testing.assert_array_equal(o, t)


def test_inference_mode_reads_no_cached_cast():
    values = []
    for lib in (torch, tg):
        w = lib.tensor(_arrays(3)(3, 3), requires_grad=True)
        x = lib.tensor(_arrays(4)(2, 3))
        with lib.autocast("cpu"):
            cached = lib.mm(x, w)
            with lib.no_grad():
                w.add_(1.0)
            with lib.inference_mode():
                fresh = lib.mm(x, w)
        values.append([cached.detach().float().numpy(), fresh.float().numpy(), fresh.requires_grad])
    for ours, theirs in zip(values[1], values[0], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_cached_weight_gradient_accumulates_through_one_cast():
    grads = []
    for lib in (torch, tg):
        w = lib.tensor(_arrays(3)(3, 3), requires_grad=True)
        x = lib.tensor(_arrays(4)(2, 3))
        with lib.autocast("cpu"):
            loss = (lib.mm(x, w) * lib.mm(x, w)).sum()
        loss.float().backward()
        grads.append((str(w.grad.dtype), w.grad.numpy()))
    assert grads[0][0] == grads[1][0]
    np.testing.assert_array_equal(grads[1][1], grads[0][1])


# ---- nesting, disabling, state functions -----------------------------------------------------------------------


def _states(lib) -> list:
    seen = []

    def look(where):
        seen.append((where, lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu")),
                     lib.is_autocast_cache_enabled(), str(lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype)))

    look("before")
    with lib.autocast("cpu"):
        look("outer")
        with lib.autocast("cpu", enabled=False):
            look("disabled inside")
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                look("float16 inside that")
            look("disabled again")
        look("outer again")
    look("after")
    lib.set_autocast_enabled("cpu", True)
    try:
        look("set_autocast_enabled")
        lib.set_autocast_dtype("cpu", lib.float16)
        look("set_autocast_dtype")
    finally:
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
    look("reset")

    @lib.autocast("cpu")
    def decorated():
        look("decorated")

    decorated()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with lib.cpu.amp.autocast():
            look("torch.cpu.amp.autocast")
    return seen


def test_nesting_disabling_and_state_like_torch():
    assert _states(tg) == _states(torch)


def test_an_error_inside_restores_the_state():
    outcomes = []
    for lib in (torch, tg):
        with pytest.raises(ValueError), lib.autocast("cpu"):
            raise ValueError
        outcomes.append((lib.is_autocast_enabled("cpu"), str(lib.mm(lib.ones(1, 1), lib.ones(1, 1)).dtype)))
    assert outcomes[0] == outcomes[1] == (False, "torch.float32")


def _custom_function_log(lib) -> list:
    log = []

    class Scale(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
        def forward(ctx, x, w):
            log.append(("forward", str(x.dtype), str(w.dtype), lib.is_autocast_enabled("cpu")))
            ctx.save_for_backward(x, w)
            return lib.mm(x, w)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            log.append(("backward", str(g.dtype), lib.is_autocast_enabled("cpu")))
            return lib.mm(g, w.t()), lib.mm(x.t(), g)

    class Plain(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            log.append(("plain forward", lib.is_autocast_enabled("cpu"), str(lib.mm(x, x).dtype)))
            return x * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            log.append(("plain backward", lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu"))))
            return g * 2

    x = lib.ones(2, 2, dtype=lib.bfloat16, requires_grad=True)
    w = lib.ones(2, 2, requires_grad=True)
    with lib.autocast("cpu"):
        y = Scale.apply(x, w)
        z = Plain.apply(lib.ones(2, 2, requires_grad=True))
    log.append(("outputs", str(y.dtype), str(z.dtype)))
    (y.sum() + z.sum()).backward()
    log.append(("grads", str(x.grad.dtype), str(w.grad.dtype)))
    log.append(("outside a region: no casts", str(Scale.apply(x.detach(), w.to(lib.bfloat16)).dtype)))
    log.append(("refused", _refusal(lambda: lib.amp.custom_fwd(device_type=1))))
    return log


def _refusal(program):
    try:
        program()
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__, str(exc)
    return None


def test_custom_fwd_and_custom_bwd_like_torch():
    assert _custom_function_log(tg) == _custom_function_log(torch)


# ---- recurrent layers: ATen's cells call at::linear through the dispatcher, so their gates are cast --------------

RECURRENT = {
    "RNN relu, 2 layers": lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu"),
    "RNN tanh, bidirectional": lambda nn: nn.RNN(3, 4, bidirectional=True),
    "GRU, 2 layers": lambda nn: nn.GRU(3, 4, num_layers=2),
    "RNNCell": lambda nn: nn.RNNCell(3, 4),
    "GRUCell": lambda nn: nn.GRUCell(3, 4),
}


@pytest.mark.parametrize("name", list(RECURRENT))
def test_recurrent_layer_output_like_torch(name):
    outs = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        layer = RECURRENT[name](lib.nn)
        x = lib.tensor(_arrays(5)(5, 2, 3) if "Cell" not in name else _arrays(5)(2, 3))
        with lib.autocast("cpu"):
            out = layer(x)
        out = out[0] if isinstance(out, tuple) else out
        outs.append((str(out.dtype).split(".")[1], out.detach().float().numpy()))
    assert outs[1][0] == outs[0][0]
    np.testing.assert_array_equal(outs[1][1], outs[0][1])
