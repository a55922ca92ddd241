"""tracegrad.nn modules against torch.nn: registration semantics, state dicts, hooks, reprs, layers, init."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import pytest
from _lib import assert_close, np, run_both, tg, torch


def _rand(*shape, seed=0, low=-1.0, high=1.0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def _sync(tg_module, torch_module):
    """Copy torch's parameters and buffers into the tracegrad module (exercises load_state_dict)."""
    state = {k: tg.tensor(v.detach().numpy().copy()) for k, v in torch_module.state_dict().items()}
    tg_module.load_state_dict(state)


# ---- Parameter ----------------------------------------------------------------------------------------------------


def test_parameter_basics():
    t = tg.randn(2, 3)
    p = tg.nn.Parameter(t)
    assert isinstance(p, tg.Tensor) and isinstance(p, tg.nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert repr(p).startswith("Parameter containing:\ntensor(")
    with tg.no_grad():
        t.add_(1.0)  # shares storage
    assert_close(p, t)
    assert not tg.nn.Parameter(tg.ones(2), requires_grad=False).requires_grad
    q = copy.deepcopy(p)
    assert type(q) is tg.nn.Parameter and q.requires_grad and q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is tg.nn.Parameter
    assert_close(r, p)
    assert type(p * 2) is tg.Tensor


# ---- registration -------------------------------------------------------------------------------------------------


class _Net:
    """Same small module in both libraries."""

    @staticmethod
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 4)
                self.act = lib.nn.ReLU()
                self.block = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh())
                self.scale = lib.nn.Parameter(lib.ones(1))
                self.register_buffer("steps", lib.zeros(1))
                self.register_buffer("cache", lib.zeros(2), persistent=False)

            def forward(self, x):
                return self.block(self.act(self.fc(x))) * self.scale

        return Net()


def test_named_members_match_torch():
    def program(lib):
        net = _Net.build(lib)
        return (
            [n for n, _ in net.named_parameters()],
            [n for n, _ in net.named_buffers()],
            [n for n, _ in net.named_children()],
            [n for n, _ in net.named_modules()],
            [n for n, _ in net.named_parameters(prefix="m", recurse=False)],
            list(net.state_dict().keys()),
            len(list(net.parameters())),
            len(list(net.modules())),
        )

    ours, theirs = run_both(program)
    assert ours == theirs


def test_shared_parameters_deduplicated():
    def program(lib):
        lin = lib.nn.Linear(2, 2)
        seq = lib.nn.Sequential(lin, lin)
        return (
            [n for n, _ in seq.named_parameters()],
            [n for n, _ in seq.named_modules()],
            [n for n, _ in seq.named_parameters(remove_duplicate=False)],
        )

    ours, theirs = run_both(program)
    assert ours == theirs


def test_setattr_registration_semantics():
    m = tg.nn.Module()
    m.w = tg.nn.Parameter(tg.ones(2))
    assert "w" in m._parameters
    m.w = None
    assert m._parameters["w"] is None
    with pytest.raises(
        TypeError,
        match=r"cannot assign 'torch.FloatTensor' as parameter 'w' \(torch.nn.Parameter "
        r"or None expected\)",
    ):
        m.w = tg.ones(2)
    m.sub = tg.nn.Linear(1, 1)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 3
    m.register_buffer("b", tg.zeros(1))
    m.b = tg.ones(1)  # a plain tensor assigned to a buffer name stays a buffer
    assert_close(m._buffers["b"], np.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'b'"):
        m.b = "x"
    m.plain = 5
    assert m.plain == 5 and "plain" in m.__dict__
    m.plain = tg.nn.Parameter(tg.ones(1))  # a Parameter replaces the plain attribute
    assert "plain" in m._parameters and "plain" not in m.__dict__
    del m.plain
    assert "plain" not in m._parameters
    m.buf2 = tg.nn.Buffer(tg.ones(3), persistent=False)
    assert "buf2" in m._buffers and "buf2" not in m.state_dict()
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        m.missing  # noqa: B018


def test_registration_errors():
    m = tg.nn.Module()
    m.x = 1
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.register_buffer("x", tg.ones(1))
    with pytest.raises(KeyError, match="buffer name can"):
        m.register_buffer("a.b", tg.ones(1))
    with pytest.raises(KeyError, match="parameter name can"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'p'"):
        m.register_parameter("p", tg.ones(1))
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'q'"):
        m.register_parameter("q", _nonleaf_param())
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)
    with pytest.raises(KeyError, match="module name can"):
        m.add_module("a.b", tg.nn.ReLU())

    class Early(tg.nn.Module):
        def __init__(self):
            self.w = tg.nn.Parameter(tg.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def _nonleaf_param():
    p = tg.nn.Parameter(tg.ones(1))
    out = p * 2
    out.__class__ = tg.nn.Parameter
    return out


def test_get_submodule_parameter_buffer():
    net = _Net.build(tg)
    assert net.get_submodule("block.0") is net.block[0]
    assert net.get_parameter("block.0.weight") is net.block[0].weight
    assert net.get_buffer("steps") is net.steps
    with pytest.raises(AttributeError, match="Sequential has no attribute `9`"):
        net.get_submodule("block.9")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.get_submodule("fc.weight")
    with pytest.raises(AttributeError, match="`act` is not an nn.Parameter"):
        net.get_parameter("act")
    net.set_submodule("act", tg.nn.Tanh())
    assert isinstance(net.act, tg.nn.Tanh)


def test_forward_missing():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        tg.nn.Module()(1)


# ---- state dict ------------------------------------------------------------------------------------------------------


def test_state_dict_roundtrip_and_detached():
    a, b = _Net.build(tg), _Net.build(tg)
    sd = a.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    assert a.state_dict(keep_vars=True)["fc.weight"] is a.fc.weight
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    for (_, p1), (_, p2) in zip(a.named_parameters(), b.named_parameters()):
        assert_close(p1, p2)
        assert p1.data_ptr() != p2.data_ptr()


def test_load_state_dict_errors_match_torch():
    def program(lib):
        net = _Net.build(lib)
        sd = {k: v.clone() for k, v in net.state_dict().items()}
        del sd["fc.bias"]
        sd["extra.weight"] = lib.zeros(1)
        sd["block.0.weight"] = lib.zeros(2, 2)
        try:
            net.load_state_dict(sd)
        except RuntimeError as e:
            msg = str(e)
        res = net.load_state_dict({k: v for k, v in sd.items() if k != "block.0.weight"}, strict=False)
        return msg, res.missing_keys, res.unexpected_keys

    ours, theirs = run_both(program)
    assert ours == theirs


def test_load_state_dict_assign_keeps_parameter_type():
    lin = tg.nn.Linear(2, 2)
    new = {"weight": tg.ones(2, 2), "bias": tg.zeros(2)}
    lin.load_state_dict(new, assign=True)
    assert isinstance(lin.weight, tg.nn.Parameter) and lin.weight.requires_grad
    assert_close(lin.weight, np.ones((2, 2)))


def test_state_dict_hooks():
    lin = tg.nn.Linear(2, 2)
    seen = []
    lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: seen.append(sorted(sd)))
    lin.state_dict()
    assert seen == [["bias", "weight"]]


# ---- modes, conversion -----------------------------------------------------------------------------------------------


def test_train_eval_zero_grad_requires_grad_apply():
    net = _Net.build(tg)
    assert net.training and net.block[1].training
    net.eval()
    assert not net.training and not net.block[0].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    net.train()
    net(tg.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    names = []
    net.apply(lambda m: names.append(type(m).__name__))
    assert names == ["Linear", "ReLU", "Linear", "Tanh", "Sequential", "Net"]


def test_to_double_keeps_parameter_objects():
    net = _Net.build(tg)
    w = net.fc.weight
    net(tg.ones(1, 3)).sum().backward()
    assert net.double() is net
    assert net.fc.weight is w and w.dtype == tg.float64 and w.grad.dtype == tg.float64
    assert net.steps.dtype == tg.float64
    net.to(tg.float32)
    assert w.dtype == tg.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        net.to(tg.int64)


# ---- repr ----------------------------------------------------------------------------------------------------------


def test_repr_matches_torch():
    def program(lib):
        nn = lib.nn
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 8, (3, 5), padding="same", dilation=2, groups=2, padding_mode="reflect"),
            nn.ConvTranspose2d(8, 4, 2, stride=2, output_padding=1),
            nn.GroupNorm(2, 4),
            nn.Dropout(0.25),
            nn.Flatten(),
            nn.Unflatten(1, (2, 2)),
            nn.LayerNorm(7),
            nn.Linear(7, 5),
            nn.LeakyReLU(0.2),
            nn.ELU(alpha=0.5),
            nn.GELU(approximate="tanh"),
            nn.Softplus(beta=2),
            nn.Hardtanh(-2, 2),
            nn.Softmax(dim=1),
            nn.Embedding(10, 3, padding_idx=0),
            nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.Tanh()]),
            nn.ModuleDict({"a": nn.Identity(), "b": nn.SiLU()}),
            nn.InstanceNorm2d(4, affine=True),
            nn.AvgPool2d(2),
            nn.AdaptiveAvgPool2d((1, 1)),
            nn.CrossEntropyLoss(),
            nn.Bilinear(2, 3, 4),
            nn.BatchNorm1d(4, momentum=None),
            nn.Threshold(0.1, 20),
            nn.PReLU(),
            nn.Upsample(scale_factor=2),
        )
        plist = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(1)])
        return repr(model), repr(plist)

    ours, theirs = run_both(program)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]


# ---- containers ---------------------------------------------------------------------------------------------------


def test_sequential_api():
    def program(lib):
        nn = lib.nn
        seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
        out = [len(seq), type(seq[-1]).__name__, type(seq[0:2]).__name__, len(seq[1:])]
        seq.append(nn.Tanh())
        seq.insert(1, nn.Sigmoid())
        del seq[0]
        out.append([type(m).__name__ for m in seq])
        out.append(list(seq._modules.keys()))
        seq2 = nn.Sequential(__import__("collections").OrderedDict([("first", nn.ReLU()), ("second", nn.Tanh())]))
        out.append([n for n, _ in seq2.named_children()])
        out.append([type(m).__name__ for m in seq + seq2])
        return out

    ours, theirs = run_both(program)
    assert ours == theirs


def test_modulelist_moduledict_parameterlist_parameterdict():
    def program(lib):
        nn = lib.nn
        ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
        ml.append(nn.Tanh())
        ml.extend([nn.Sigmoid()])
        ml.insert(0, nn.Identity())
        ml[1] = nn.ELU()
        out = [[type(m).__name__ for m in ml], len(ml), type(ml[1:]).__name__]
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        md["c"] = nn.Identity()
        out.append(list(md.keys()))
        out.append("a" in md)
        md.pop("b")
        out.append(list(md))
        pl = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(3))])
        pl.append(lib.ones(1))
        out.append([type(p).__name__ for p in pl])
        out.append([n for n, _ in pl.named_parameters()])
        pd = nn.ParameterDict({"x": lib.ones(2)})
        pd["y"] = nn.Parameter(lib.zeros(1))
        out.append([n for n, _ in pd.named_parameters()])
        out.append(list(pd.keys()))
        out.append(type(pd["x"]).__name__)
        return out

    ours, theirs = run_both(program)
    assert ours == theirs
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        tg.nn.ParameterList()()


# ---- hooks ----------------------------------------------------------------------------------------------------------


def test_forward_hooks_order_kwargs_prepend_and_always_call():
    def program(lib):
        lin = lib.nn.Linear(2, 2)
        log = []
        lin.register_forward_pre_hook(lambda m, args: log.append("pre1"))
        lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        lin.register_forward_pre_hook(
            lambda m, args, kwargs: log.append(("prekw", sorted(kwargs))) or None, with_kwargs=True
        )
        lin.register_forward_pre_hook(lambda m, args: log.append("pre0"), prepend=True)
        h = lin.register_forward_hook(lambda m, args, out: out + 1)
        lin.register_forward_hook(lambda m, args, kwargs, out: log.append("postkw"), with_kwargs=True)
        x = lib.ones(1, 2)
        y1 = lin(x)
        h.remove()
        y2 = lin(x)
        lin.register_forward_hook(lambda m, a, o: log.append("always"), always_call=True)

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        b = Boom()
        b.register_forward_hook(lambda m, a, o: log.append("always-on-error"), always_call=True)
        try:
            b(x)
        except ValueError:
            log.append("raised")
        return log, (y1 - y2).detach()

    ours, theirs = run_both(program)
    assert ours[0] == theirs[0]
    assert_close(ours[1], theirs[1])


def _bw_model(lib):
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(_rand(2, 3, seed=1)))
        lin.bias.copy_(lib.tensor(_rand(2, seed=2)))
    return lin


def test_full_backward_hook_values():
    def program(lib):
        lin = _bw_model(lib)
        seen = []

        def hook(module, grad_input, grad_output):
            seen.append(([None if g is None else g.clone() for g in grad_input], [g.clone() for g in grad_output]))
            return (grad_input[0] * 3,)

        def pre_hook(module, grad_output):
            return (grad_output[0] * 2,)

        lin.register_full_backward_pre_hook(pre_hook)
        lin.register_full_backward_hook(hook)
        x = lib.tensor(_rand(4, 3), requires_grad=True)
        (lin(x) ** 2).sum().backward()
        return seen, x.grad, lin.weight.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_full_backward_hook_no_input_grad_warns():
    def program(lib):
        lin = _bw_model(lib)
        seen = []
        lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].clone())))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin(lib.ones(2, 3)).sum().backward()
        return seen, any("Full backward hook is firing" in str(m.message) for m in w)

    ours, theirs = run_both(program)
    assert ours[1] and theirs[1]
    assert ours[0][0][0] == (None,) and theirs[0][0][0] == (None,)
    assert_close(ours[0][0][1], theirs[0][0][1])


def test_full_backward_hook_multiple_inputs_outputs():
    def program(lib):
        class Two(lib.nn.Module):
            def forward(self, a, k, b):
                return a * b, a + b, k

        m = Two()
        seen = []
        m.register_full_backward_hook(
            lambda mod, gi, go: seen.append(
                (
                    [None if g is None else g.clone() for g in gi],
                    [None if g is None else g.clone() for g in go],
                )
            )
        )
        a = lib.tensor(_rand(3), requires_grad=True)
        b = lib.tensor(_rand(3, seed=1), requires_grad=True)
        p, s, _ = m(a, 7, b)
        (p.sum() * 2 + s.sum()).backward()
        return seen, a.grad, b.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)


def test_full_backward_hook_fires_once_under_double_backward():
    def program(lib):
        lin = _bw_model(lib)
        count = [0]
        lin.register_full_backward_hook(lambda *a: count.__setitem__(0, count[0] + 1))
        x = lib.tensor(_rand(2, 3), requires_grad=True)
        (g,) = lib.autograd.grad(lib.tanh(lin(x)).sum(), x, create_graph=True)
        first = count[0]
        (gg,) = lib.autograd.grad(g.sum(), x)
        return first, count[0], g, gg, lin(x).grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[:2] == theirs[:2] == (1, 2)  # the second pass goes through the output again (tanh')
    assert_close(ours[2:4], theirs[2:4], rtol=1e-5, atol=1e-6)
    assert ours[4] == theirs[4] == "BackwardHookFunctionBackward"


def test_mixing_backward_hook_kinds_errors():
    lin = tg.nn.Linear(1, 1)
    lin.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_backward_hook(lambda *a: None)


# ---- layers against torch --------------------------------------------------------------------------------------------


def _compare_layer(make, x_shape, train=True, steps=1, extra_inputs=(), seed=0, atol=1e-5, int_input=None):
    """Same initial state in both libraries; outputs, input grads, parameter grads and buffers agree."""
    t_layer = make(torch)
    g_layer = make(tg)
    _sync(g_layer, t_layer)
    t_layer.train(train)
    g_layer.train(train)
    results = []
    for lib, layer in ((tg, g_layer), (torch, t_layer)):
        outs = []
        for step in range(steps):
            if int_input is not None:
                x = lib.tensor(np.random.default_rng(seed + step).integers(0, int_input, x_shape))
            else:
                x = lib.tensor(_rand(*x_shape, seed=seed + step), requires_grad=True)
            args = [x] + [lib.tensor(_rand(*s, seed=seed + 10 + i)) for i, s in enumerate(extra_inputs)]
            y = layer(*args)
            y.backward(lib.tensor(_rand(*tuple(y.shape), seed=99 + step)))
            outs.append((y.detach(), x.grad if int_input is None else None))
        grads = [p.grad for p in layer.parameters()]
        buffers = [b.detach().clone() for b in layer.buffers()]
        results.append((outs, grads, buffers))
    assert_close(results[0], results[1], rtol=1e-4, atol=atol)


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda lib: lib.nn.Linear(5, 3), (4, 5)),
        (lambda lib: lib.nn.Linear(5, 3, bias=False), (2, 4, 5)),
        (lambda lib: lib.nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
        (lambda lib: lib.nn.Conv2d(4, 6, 3, padding="same", groups=2, padding_mode="circular"), (2, 4, 6, 5)),
        (
            lambda lib: lib.nn.Conv2d(3, 2, (2, 3), stride=(2, 1), dilation=(1, 2), padding_mode="reflect", padding=2),
            (1, 3, 7, 8),
        ),
        (
            lambda lib: lib.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2),
            (2, 4, 3, 3),
        ),
        (lambda lib: lib.nn.ConvTranspose1d(3, 2, 4, stride=3), (2, 3, 5)),
        (lambda lib: lib.nn.LayerNorm((4, 5)), (3, 4, 5)),
        (lambda lib: lib.nn.GroupNorm(2, 4), (3, 4, 5)),
        (lambda lib: lib.nn.InstanceNorm2d(3, affine=True, track_running_stats=True), (2, 3, 4, 4)),
        (lambda lib: lib.nn.InstanceNorm1d(3), (3, 6)),
        (lambda lib: lib.nn.MaxPool2d(3, stride=2, padding=1), (2, 3, 7, 7)),
        (lambda lib: lib.nn.AvgPool2d(2, ceil_mode=True), (2, 3, 5, 5)),
        (lambda lib: lib.nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 5, 7)),
        (lambda lib: lib.nn.Flatten(), (2, 3, 4)),
        (lambda lib: lib.nn.Unflatten(1, (2, -1)), (2, 6)),
        (lambda lib: lib.nn.PReLU(3), (2, 3, 4)),
        (lambda lib: lib.nn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 3)),
        (lambda lib: lib.nn.ReflectionPad2d((1, 2, 0, 1)), (1, 2, 3, 4)),
    ],
)
def test_layer_matches_torch(make, shape):
    _compare_layer(make, shape)


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda lib: lib.nn.BatchNorm1d(4), (6, 4)),
        (lambda lib: lib.nn.BatchNorm1d(4, momentum=None), (6, 4, 3)),
        (lambda lib: lib.nn.BatchNorm2d(3, affine=False), (4, 3, 2, 2)),
        (lambda lib: lib.nn.BatchNorm2d(3, track_running_stats=False), (4, 3, 2, 2)),
    ],
)
def test_batchnorm_train_then_eval(make, shape):
    _compare_layer(make, shape, train=True, steps=3)
    _compare_layer(make, shape, train=False, steps=1)


def test_batchnorm_counts_batches():
    bn = tg.nn.BatchNorm1d(2)
    for _ in range(3):
        bn(tg.randn(4, 2))
    assert bn.num_batches_tracked.item() == 3 and bn.num_batches_tracked.dtype == tg.int64
    bn.eval()
    bn(tg.randn(4, 2))
    assert bn.num_batches_tracked.item() == 3
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        bn(tg.ones(1, 2, 3, 4))


def test_bilinear_module():
    _compare_layer(lambda lib: lib.nn.Bilinear(3, 2, 4), (5, 3), extra_inputs=[(5, 2)])


def test_embedding_module():
    _compare_layer(lambda lib: lib.nn.Embedding(7, 3, padding_idx=2), (4, 5), int_input=7)
    emb = tg.nn.Embedding(5, 2, padding_idx=-1)
    assert emb.padding_idx == 4 and float(emb.weight[4].abs().sum()) == 0
    pre = tg.nn.Embedding.from_pretrained(tg.ones(3, 2))
    assert not pre.weight.requires_grad


def test_dropout_module_train_eval():
    d = tg.nn.Dropout(0.5)
    x = tg.ones(1000)
    assert (d(x) == 0).any()
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        tg.nn.Dropout(-0.1)


@pytest.mark.parametrize(
    "cls,kwargs,inputs",
    [
        ("CrossEntropyLoss", {"label_smoothing": 0.1}, "classes"),
        ("CrossEntropyLoss", {"weight": True, "reduction": "sum"}, "classes"),
        ("NLLLoss", {"ignore_index": 1}, "classes"),
        ("MSELoss", {}, "regression"),
        ("L1Loss", {"reduction": "none"}, "regression"),
        ("SmoothL1Loss", {"beta": 0.5}, "regression"),
        ("HuberLoss", {"delta": 0.3}, "regression"),
        ("BCELoss", {}, "probs"),
        ("BCEWithLogitsLoss", {"pos_weight": True}, "regression01"),
        ("KLDivLoss", {"reduction": "batchmean"}, "kl"),
    ],
)
def test_loss_modules(cls, kwargs, inputs):
    def program(lib):
        kw = dict(kwargs)
        if kw.pop("weight", False):
            kw["weight"] = lib.tensor(_rand(4, seed=5, low=0.5, high=2))
        if kw.pop("pos_weight", False):
            kw["pos_weight"] = lib.tensor(_rand(4, seed=6, low=0.5, high=2))
        loss_fn = getattr(lib.nn, cls)(**kw)
        x = lib.tensor(
            _rand(3, 4, low=0.05 if inputs == "probs" else -2, high=0.95 if inputs == "probs" else 2),
            requires_grad=True,
        )
        if inputs == "classes":
            t = lib.tensor([0, 3, 1])
        elif inputs == "kl":
            t = lib.softmax(lib.tensor(_rand(3, 4, seed=2)), 1)
        elif inputs in ("probs", "regression01"):
            t = lib.tensor(_rand(3, 4, seed=2, low=0, high=1))
        else:
            t = lib.tensor(_rand(3, 4, seed=2))
        loss = loss_fn(lib.log_softmax(x, 1) if cls in ("NLLLoss", "KLDivLoss") else x, t)
        loss.backward(lib.ones_like(loss))
        return loss.detach(), x.grad, repr(loss_fn), [n for n, _ in loss_fn.named_buffers()]

    ours, theirs = run_both(program)
    assert ours[2:] == theirs[2:]
    assert_close(ours[:2], theirs[:2], rtol=1e-5, atol=1e-6)


def test_activation_modules_match_torch():
    names = [
        "ReLU",
        "ReLU6",
        "LeakyReLU",
        "ELU",
        "SELU",
        "CELU",
        "GELU",
        "SiLU",
        "Mish",
        "Softplus",
        "Hardtanh",
        "Hardswish",
        "Hardsigmoid",
        "Sigmoid",
        "Tanh",
        "LogSigmoid",
        "Softsign",
        "Tanhshrink",
        "Hardshrink",
        "Softshrink",
    ]

    def program(lib):
        out = []
        for name in names:
            x = lib.tensor(_rand(3, 4, low=-4, high=4), requires_grad=True)
            y = getattr(lib.nn, name)()(x)
            y.sum().backward()
            out.append((y.detach(), x.grad))
        for cls in ("Softmax", "LogSoftmax", "Softmin"):
            out.append(getattr(lib.nn, cls)(dim=0)(lib.tensor(_rand(3, 4))))
        out.append(lib.nn.GLU()(lib.tensor(_rand(3, 4))))
        return out

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_mlp_training_trajectory_matches_torch():
    """Same weights in both libraries, a few SGD-momentum steps: identical parameters afterwards."""

    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Linear(6, 8),
            lib.nn.ReLU(),
            lib.nn.Dropout(0.0),
            lib.nn.Linear(8, 8),
            lib.nn.LayerNorm(8),
            lib.nn.Tanh(),
            lib.nn.Linear(8, 3),
        )

    t_model, g_model = build(torch), build(tg)
    _sync(g_model, t_model)
    x = _rand(16, 6)
    y = np.random.default_rng(0).integers(0, 3, 16)
    for lib, model in ((tg, g_model), (torch, t_model)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y)).backward()
            opt.step()
    for (_, p), (_, q) in zip(g_model.named_parameters(), t_model.named_parameters()):
        assert_close(p, q, rtol=1e-5, atol=1e-6)


# ---- init -------------------------------------------------------------------------------------------------------------


def test_calculate_gain_matches_torch():
    cases = [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("selu", None),
    ]
    for name, param in cases:
        assert tg.nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        tg.nn.init.calculate_gain("foo")


def test_init_distributions_and_reproducibility():
    init = tg.nn.init
    w = tg.empty(400, 300)
    tg.manual_seed(3)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = 1 / math.sqrt(300)
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.95 * bound
    first = w.clone()
    tg.manual_seed(3)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    assert_close(w, first)
    init.xavier_normal_(w)
    assert abs(float(w.std()) - math.sqrt(2 / 700)) < 0.002
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(float(w.std()) - math.sqrt(2 / 400)) < 0.003
    init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert float(w.abs().max()) <= 0.5
    q = tg.empty(5, 8)
    init.orthogonal_(q, gain=2.0)
    assert_close(q @ q.T, 4 * np.eye(5), atol=1e-5)
    e = tg.empty(3, 4)
    init.eye_(e)
    assert_close(e, np.eye(3, 4))
    c = tg.empty(2, 2)
    init.constant_(c, 0.3)
    assert_close(c, np.full((2, 2), 0.3))
    d = tg.empty(4, 2, 3)
    init.dirac_(d)
    assert_close(d, torch.nn.init.dirac_(torch.empty(4, 2, 3)))
    with pytest.raises(
        ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
    ):
        init.xavier_uniform_(tg.empty(3))


def test_init_does_not_record_history_and_bumps_version():
    p = tg.nn.Parameter(tg.empty(3, 3))
    v = p._version
    tg.nn.init.normal_(p)
    assert p.grad_fn is None and p._version > v


def test_default_linear_and_conv_init_bounds():
    lin = tg.nn.Linear(50, 20)
    bound = 1 / math.sqrt(50)
    assert float(lin.weight.abs().max()) <= bound and float(lin.bias.abs().max()) <= bound
    conv = tg.nn.ConvTranspose2d(4, 6, 3)
    bound = 1 / math.sqrt(6 * 9)
    assert float(conv.bias.abs().max()) <= bound


# ---- utils ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_clip_grad_norm_matches_torch(norm_type):
    def program(lib):
        params = [lib.nn.Parameter(lib.tensor(_rand(3, 4, seed=i))) for i in range(3)]
        for i, p in enumerate(params):
            p.grad = lib.tensor(_rand(3, 4, seed=10 + i, low=-3, high=3))
        total = lib.nn.utils.clip_grad_norm_(params, 1.5, norm_type=norm_type)
        return total, [p.grad for p in params]

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_clip_grad_nonfinite_error_and_value_clipping():
    p = tg.nn.Parameter(tg.ones(2))
    p.grad = tg.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        tg.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    q = tg.nn.Parameter(tg.ones(3))
    q.grad = tg.tensor([-5.0, 0.5, 7.0])
    tg.nn.utils.clip_grad_value_(q, 1.0)
    assert_close(q.grad, np.array([-1.0, 0.5, 1.0]))


def test_parameters_vector_roundtrip():
    lin = tg.nn.Linear(3, 2)
    vec = tg.nn.utils.parameters_to_vector(lin.parameters())
    assert tuple(vec.shape) == (8,)
    tg.nn.utils.vector_to_parameters(tg.arange(8.0), lin.parameters())
    assert_close(lin.weight, np.arange(6.0).reshape(2, 3))
    assert_close(lin.bias, np.array([6.0, 7.0]))
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: int"):
        tg.nn.utils.vector_to_parameters(3, lin.parameters())
