"""A twenty-third set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These run what a notebook user *sees*: the print options a user sets and restores (precision, threshold, edgeitems,
linewidth, sci_mode True/False/None, the "short"/"full"/"default" profiles, ``printoptions`` and ``PRINT_OPTS``);
large tensors summarised with "..."; every dtype printed with inf, NaN, -0.0, integers that need width, huge and tiny
magnitudes (the switch to scientific notation); empty tensors of several shapes and 0-d tensors; the suffixes of
requires_grad, grad_fn and dtype, Parameters, views and non-contiguous tensors; Size/dtype/device/finfo/iinfo and
class reprs (``type(layer)``); ``str``/``repr``/f-strings with format specs and their refusals; ``print(model)`` of
nested models with ``extra_repr`` (Conv2d with all its options, BatchNorm, LSTM, Embedding with padding_idx, an
OrderedDict Sequential, ModuleList/ModuleDict, ParameterList/ParameterDict); optimizers with several parameter
groups, their state and schedulers' state_dicts; state_dicts; and ``torch.return_types`` results. Everything printed
is compared as text, exactly (the values printed come from the seeded generator, which is torch's, and from
pointwise ops that match torch bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program23_findings_vs_torch.py``):
- ``torch._tensor_str.PRINT_OPTS`` printed as ``<torch._tensor_str.PrintOptions object at 0x...>`` (torch: the
  dataclass ``__PrinterOptions(precision=4, threshold=1000, ...)``), and ``dataclasses.asdict`` refused it;
- ``torch.tensor([-1, 2**63])`` gave a float tensor where torch refuses it ("Overflow when unpacking long long");
- ``print(type(layer))`` named tracegrad's files: ``torch.nn.modules.normalization.BatchNorm2d`` for torch's
  ``torch.nn.modules.batchnorm.BatchNorm2d``, and likewise the instance norms, the padding and upsampling layers,
  MultiheadAttention, MaxUnpool, the lazy and legacy layers, Adafactor/Muon and set_multithreading_enabled;
  ``torch.nn.modules.batchnorm``/``instancenorm``/``padding``/``upsampling`` did not exist.

Left: tensors on the ``meta`` device (torch prints ``tensor(..., device='meta', size=(2, 3))``; tracegrad refuses
the device); sparse tensors, float8 and complex32 dtypes (absent); ``torch.__version__`` is tracegrad's own plain
string "0.1.0" (torch's TorchVersion compares with tuples: ``torch.__version__ >= (2, 0)`` is a TypeError here); a
lazy module cannot be pickled (its load-state-dict hook is a local function); built-in functions print as Python
functions (``<function relu ...>`` for ``<built-in method relu ...>``); float64-to-uint8 casts of values beyond
the integer range give 0 where torch's C cast gives other bytes.
"""

from __future__ import annotations

import functools
from collections import OrderedDict

import numpy as np
import pytest
from _tutorial_lib import show_outcome, tg, torch, transcript


def assert_same_printout(program) -> list:
    """Run ``program`` under both libraries: every text shown (a printed tensor, model, error or warning) must be
    torch's exactly, and every tensor shown must hold torch's values bit for bit."""
    ours, theirs = transcript(tg, program), transcript(torch, program)
    assert len(ours) == len(theirs), (ours, theirs)
    for line_ours, line_theirs in zip(ours, theirs):
        assert len(line_ours) == len(line_theirs), (line_ours, line_theirs)
        for a, b in zip(line_ours, line_theirs):
            if a[0] == "tensor":
                assert a[1] == b[1]
                np.testing.assert_array_equal(a[2], b[2])
            else:
                assert a == b
    return theirs


def _restoring_print_options(program):
    """``program`` with the print options put back to the defaults however it ends."""
    @functools.wraps(program)
    def run(lib, show):
        try:
            program(lib, show)
        finally:
            lib.set_printoptions(profile="default")
    return run


@_restoring_print_options
def _print_options_tour(lib, show):
    """A user tunes the print options while looking at activations, then restores them three ways."""
    torch = lib
    torch.manual_seed(230)
    acts = torch.randn(4, 6) * 50
    show(repr(acts), repr(torch._tensor_str.PRINT_OPTS))
    torch.set_printoptions(precision=2)
    show(repr(acts), repr(acts.double()), repr(torch.tensor([1 + 2.12345j])))
    torch.set_printoptions(precision=6, sci_mode=True)
    show(repr(acts[0]), repr(torch.tensor([1, 2])), repr(torch._tensor_str.PRINT_OPTS))
    torch.set_printoptions(sci_mode=False)
    show(repr(torch.tensor([1e-10, 1e10])), repr(torch.tensor([1e20 + 1e-20j])))
    torch.set_printoptions(sci_mode=None)
    show(repr(torch.tensor([1e-10, 1e10])))
    torch.set_printoptions(threshold=5, edgeitems=1)
    show(repr(torch.arange(10)), repr(torch.arange(20.).reshape(4, 5)))
    torch.set_printoptions(edgeitems=0)
    show(repr(torch.arange(20)))
    torch.set_printoptions(profile="default")
    torch.set_printoptions(linewidth=30)
    show(repr(torch.randn(2, 10)), repr(torch.tensor([1 + 2j] * 8)), repr(torch.arange(30)))
    torch.set_printoptions(profile="short")
    show(repr(torch.randn(5, 5)), repr(torch.arange(1000.)), torch._tensor_str.get_printoptions())
    torch.set_printoptions(profile="full")
    show(repr(torch.arange(1200).reshape(2, 600)[:, :30]), repr(torch.arange(1001)[-3:]))
    torch.set_printoptions(profile="default")
    with torch._tensor_str.printoptions(precision=1, linewidth=120):
        show(repr(acts))
    show(repr(acts[:2]), torch._tensor_str.get_printoptions())
    torch.set_printoptions(precision=0)
    show(repr(torch.tensor([1.5, 2.5, -0.4])), repr(torch.tensor([1e-4, 1e4])))
    torch.set_printoptions(precision=10)
    show(repr(torch.tensor([1 / 3], dtype=torch.float64)), repr(torch.tensor([1 / 3])))


def _dtype_gallery(lib, show):
    """The same readings stored in every dtype a pipeline meets, with the special values users run into."""
    torch = lib
    readings = [0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"), float("nan"), 1000.125]
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        t = torch.tensor(readings, dtype=dtype)
        show(repr(t), str(t.dtype), t.element_size())
    show(repr(torch.tensor([-0.0])), repr(torch.tensor(-0.0)), repr(torch.tensor([0.0, -0.0])))
    for dtype in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
        t = torch.tensor([0, 1, 100, 127], dtype=dtype)
        show(repr(t), repr(-t if dtype is not torch.uint8 else t + 200))
    show(repr(torch.tensor([-123456, 7])), repr(torch.tensor([[1, -10], [100, -1000]])))
    show(repr(torch.tensor([2**63 - 1, -2**63])), repr(torch.tensor([255, 0], dtype=torch.uint8) + 1))
    show(repr(torch.tensor([True, False])), repr(torch.tensor(True)), repr(torch.eye(3, dtype=torch.bool)))
    show(repr(torch.tensor([1 + 2j, -3.5 - 0.25j])), repr(torch.tensor([1 + 2j], dtype=torch.complex128)))
    show(repr(torch.tensor([1e10 + 1j, 1e-5j])), repr(torch.tensor([-0.0 - 0.0j, 0j])))
    show(repr(torch.tensor([float("nan") + 1j, complex(float("inf"), -float("inf"))])))
    show(repr(torch.tensor([65504.0, 6e-8], dtype=torch.float16)), repr(torch.tensor([1e38, 1e-38], dtype=torch.bfloat16)))
    show(repr(torch.tensor([0.1, 0.2, 0.3], dtype=torch.bfloat16) * 10), repr(torch.full((2,), -0.5, dtype=torch.float16)))
    show(repr(torch.tensor([1, 2], dtype=torch.uint16)), repr(torch.tensor([1, 2], dtype=torch.uint32)))
    show_outcome(show, lambda: torch.tensor([1, 2**63]))
    show_outcome(show, lambda: torch.tensor([-1, 2**63]))
    show_outcome(show, lambda: torch.tensor([[1], [2**63]]))
    show_outcome(show, lambda: repr(torch.tensor([1.5, 2**63])))


def _magnitudes(lib, show):
    """Losses, learning rates and gradients of very different sizes: when the printout switches to scientific."""
    torch = lib
    for values in ([1.0, 2.0, 3.0], [1e8, 1.0], [1e7, 1.0], [123456789.0], [0.1, 100000.0], [0.001, 1000.0],
                   [0.0001, 1000.0], [1e-8, 1.0, float("nan")], [float("inf"), 1e-8], [99999.5], [0.00015, 1.0],
                   [1e-45], [3.4e38, -3.4e38], [float("nan"), 1.0, 2.0]):
        show(repr(torch.tensor(values)))
    show(repr(torch.tensor([1e-320], dtype=torch.float64)), repr(torch.tensor([1 / 3, 2 / 3], dtype=torch.float64) * 1e5))
    show(repr(torch.linspace(0, 1, 7)), repr(torch.logspace(-10, 10, 5)), repr(torch.logspace(-3, 3, 7, dtype=torch.float64)))
    show(repr(torch.tensor(1e-5)), repr(torch.tensor(12345678.0)), repr(torch.tensor(-0.0001)), repr(torch.tensor(float("-inf"))))
    show(repr(torch.tensor(1 + 0j)), repr(torch.tensor(-1e10j)), repr(torch.tensor([1e-10 + 1e10j])))
    lrs = torch.tensor([0.1 * 0.5 ** k for k in range(12)])
    show(repr(lrs), repr(lrs.double()), repr(lrs.half()))
    grads = torch.tensor([3e-9, -2.5e-7, 4.0, 0.0])
    show(repr(grads), repr(grads.abs().max()), repr(grads * 1e9))


def _empty_and_scalars(lib, show):
    """Batches that came out empty after a filter, and the 0-d results of reductions."""
    torch = lib
    torch.manual_seed(231)
    scores = torch.rand(6, 3)
    kept = scores[scores.sum(1) > 10]
    show(repr(kept), kept.shape, repr(scores[:, :0]), repr(scores[0, :0]))
    show(repr(torch.empty(0)), repr(torch.empty(0, 3)), repr(torch.empty(2, 0, 3)), repr(torch.empty(0, dtype=torch.int64)))
    show(repr(torch.empty(0, 2, dtype=torch.float64)), repr(torch.zeros(0, dtype=torch.bool)), repr(torch.zeros(0, 0, 3, dtype=torch.complex64)))
    show(repr(torch.tensor([], requires_grad=True)), repr(torch.zeros(0, 3, dtype=torch.int32)))
    show(repr(torch.zeros(2, 0, dtype=torch.float64, requires_grad=True)), repr(torch.zeros(0, 3) * torch.ones(1, requires_grad=True)))
    show(repr(scores.sum()), repr(scores.max()), repr(scores.argmax()), repr((scores > 0.5).sum()), repr((scores > 0.5).any()))
    show(repr(torch.tensor(3.5)), repr(torch.tensor(3)), repr(torch.tensor(3.5, dtype=torch.float64)), repr(torch.tensor(3.5, dtype=torch.float16)))
    show(repr(torch.tensor(5, dtype=torch.int32)), repr(torch.tensor(5, dtype=torch.int16)), repr(torch.tensor(True).float()))
    show(repr(torch.tensor(float("nan"))), str(torch.tensor(1.0)), [torch.tensor(1.0), torch.tensor([1, 2])])
    show({"loss": torch.tensor(0.25), "acc": torch.tensor([0.5])}, (torch.ones(1),))


def _autograd_suffixes(lib, show):
    """What a tensor's printout says about autograd: leaves, grad_fn of each op, views, Parameters, no_grad."""
    torch, nn = lib, lib.nn
    torch.manual_seed(232)
    w = torch.randn(3, requires_grad=True)
    show(repr(w), repr(w * 2), repr(w.sum()), repr(w.double() * 2), repr(w[0]), repr(w.detach()))
    b = torch.ones(2, 2, requires_grad=True)
    show(repr(b.view(4)[1:]), repr(b.reshape(4).flip(0)), repr(b.T.contiguous()), repr(b.sum(0, keepdim=True)))
    show(repr(b.mean()), repr(b.max()), repr(b.max(0)[0]), repr(b.norm()), repr(b.abs()), repr(b.unbind()))
    show(repr(torch.cat([b, b])), repr(torch.where(b > 0, b, 0.0)), repr(b.split(1)), repr(b.chunk(2)))
    show(repr(torch.ones(2, dtype=torch.float16, requires_grad=True) * 2))
    show(repr(torch.ones(1, dtype=torch.complex128, requires_grad=True).sum()))
    a = torch.ones(3, requires_grad=True).clone()
    a.add_(1)
    show(repr(a))
    a[0] = 5
    show(repr(a), repr(a.unsqueeze(1).squeeze()))
    p = nn.Parameter(torch.ones(2, dtype=torch.float64))
    show(repr(p), str(p), repr(p * 1), repr(p[0]), repr(nn.Parameter(torch.tensor(2.0))), repr(nn.Parameter(torch.empty(0, 2))))
    show(repr(nn.Parameter(torch.ones(2), requires_grad=False)), type(p).__name__)
    m = nn.Linear(2, 1)
    with torch.no_grad():
        show(repr(m.weight * 2), repr(m(torch.ones(1, 2))))
    with torch.inference_mode():
        z = m(torch.ones(1, 2))
    show(repr(z), z.is_inference(), z.requires_grad)
    show(repr(m.weight.data), repr(m.weight.mT), repr(m.weight.to(torch.float64)), repr(m.weight.view(-1)))
    y = (w * w).sum()
    y.backward()
    show(repr(w.grad), repr(y.grad_fn), repr(y.grad_fn.next_functions))
    show_outcome(show, lambda: repr((w * 2).grad))
    x = torch.arange(12.0).reshape(3, 4)
    show(repr(x.t()), x.t().is_contiguous(), x.t().stride(), repr(x[:, ::2]), repr(x[::2, 1::2]))
    show(repr(torch.tensor([1.0, 2.0]).expand(2, 2)), repr(torch.arange(6).as_strided((2, 2), (1, 2))))


def _format_specs(lib, show):
    """A training log written with f-strings: format specs on 0-d and one-element tensors, and their refusals."""
    torch = lib
    torch.manual_seed(233)
    loss = (torch.randn(8, requires_grad=True) ** 2).mean()
    acc = torch.tensor([0.8125])
    show(f"epoch 1 | loss {loss:.4f} | acc {acc:.2%}", f"{loss}", f"{loss!r}", f"{acc}")
    t = torch.tensor(3.14159)
    show(f"{t:.3f}", format(t, ""), "{:>10.2f}".format(t),  # noqa: UP032 - the forms users write
         f"{torch.tensor(5):d}", f"{torch.tensor(5):04d}")
    show(f"{torch.tensor(True)}", f"{torch.ones(2)}", f"{torch.tensor(2.5, requires_grad=True):.1f}")
    show(format(torch.tensor(2.0), ".2e"), "%s" % torch.ones(2), "%r" % (torch.ones(2),), "%.2f" % torch.tensor(2.5))  # noqa: UP031
    for spec in (lambda: f"{torch.ones(2):.2f}", lambda: f"{torch.tensor([[2.5]]):.2f}",
                 lambda: f"{torch.tensor([1, 2]):d}", lambda: f"{torch.tensor(2.5):d}",
                 lambda: f"{torch.tensor(1 + 2j):.1f}", lambda: f"{torch.tensor(True):d}",
                 lambda: f"{torch.tensor(1.5, dtype=torch.float16):.3f}", lambda: f"{torch.tensor(7, dtype=torch.uint8):>5}",
                 lambda: f"{torch.empty(0):.2f}", lambda: "%.2f" % torch.tensor([2.5, 1]),  # noqa: UP031
                 lambda: "%d" % torch.tensor(3)):  # noqa: UP031
        show_outcome(show, spec)
    for convert in (lambda: float(torch.tensor([1.5])), lambda: float(torch.ones(2)), lambda: int(torch.tensor(2.7)),
                    lambda: torch.ones(2).item(), lambda: bool(torch.ones(2)), lambda: complex(torch.tensor(1 + 2j)),
                    lambda: round(torch.tensor(2.567), 2), lambda: [1, 2, 3][torch.tensor(1)],
                    lambda: [1, 2][torch.tensor(1.0)], lambda: torch.tensor([1.5], dtype=torch.float16).tolist()):
        show_outcome(show, convert)


def _metadata_reprs(lib, show):
    """Checking what one has: sizes, dtypes, devices, number limits and the classes of layers and optimizers."""
    torch, nn = lib, lib.nn
    s = torch.Size([2, 3, 4])
    show(s, repr(s), s[1:], type(s[1:]), s + (5,), (1,) + s, s.numel(), s * 2, f"{s}", f"{s!r}")
    show_outcome(show, lambda: s + [5])
    show_outcome(show, lambda: torch.Size([2.5]))
    show(torch.float32, torch.int64, torch.bfloat16, torch.complex64, torch.bool, repr(torch.float), torch.double)
    show(torch.complex64.to_real(), torch.float32.to_complex(), torch.float16.itemsize, type(torch.float32))
    show(torch.device("cpu"), repr(torch.device("cpu")), repr(torch.device("cpu", 0)), repr(torch.device("cuda", 1)))
    show_outcome(show, lambda: torch.device("gpu"))
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        show(torch.finfo(dtype), torch.finfo(dtype).eps, torch.finfo(dtype).max)
    for dtype in (torch.int8, torch.uint8, torch.int64):
        show(torch.iinfo(dtype), torch.iinfo(dtype).max)
    show_outcome(show, lambda: torch.finfo(torch.int32))
    show_outcome(show, lambda: torch.iinfo(torch.float32))
    layers = [nn.Linear(2, 2), nn.BatchNorm2d(3), nn.InstanceNorm1d(3), nn.LayerNorm(3), nn.ZeroPad2d(1),
              nn.ReflectionPad1d(2), nn.Upsample(scale_factor=2), nn.MultiheadAttention(4, 2), nn.MaxUnpool2d(2),
              nn.LSTM(2, 3), nn.Embedding(4, 2)]
    show([type(layer) for layer in layers])
    show(torch.nn.SyncBatchNorm, torch.nn.LazyLinear, torch.nn.LazyConv2d, torch.nn.CrossMapLRN2d)
    show(torch.optim.Adafactor, torch.optim.Adam, torch.optim.lr_scheduler.StepLR, torch.autograd.set_multithreading_enabled)
    show(torch.Tensor, type(nn.Parameter(torch.ones(1))), torch.return_types.max, torch.Size, torch.dtype)


def _cnn_print_model(lib, show):
    """``print(model)`` of a small ResNet-like CNN with every Conv2d option, BatchNorm variants and a block with its
    own extra_repr; then the repr of single parts."""
    torch, nn = lib, lib.nn
    torch.manual_seed(234)

    class Block(nn.Module):
        def __init__(self, c, scale=0.5):
            super().__init__()
            self.c, self.scale = c, scale
            self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
            self.downsample = None
            self.register_buffer("mask", torch.ones(c))

        def extra_repr(self):
            return f"c={self.c}, scale={self.scale}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, kernel_size=(3, 5), stride=2, padding=(1, 2), dilation=2, bias=False,
                                  padding_mode="reflect")
            self.blocks = nn.ModuleList([Block(8), Block(8), Block(8, scale=1.0)])
            self.pool = nn.AdaptiveAvgPool2d((1, None))
            self.head = nn.ModuleDict({"cls": nn.Linear(8, 10), "aux": nn.Sequential(nn.Dropout(0.3), nn.Linear(8, 2))})
            self.alpha = nn.Parameter(torch.zeros(1))

        def extra_repr(self):
            return "multi\nline"

    net = Net()
    show(net)
    show(repr(net.blocks[0]), str(net.head), net.stem.extra_repr())
    for layer in (nn.Conv2d(4, 8, 3, padding="same", groups=2), nn.Conv1d(4, 8, 3, padding="valid"),
                  nn.ConvTranspose2d(4, 8, 3, stride=2, output_padding=1), nn.Conv3d(1, 2, 3, padding_mode="circular", padding=1),
                  nn.BatchNorm2d(8, momentum=None, affine=False, track_running_stats=False), nn.BatchNorm1d(8, eps=1e-3),
                  nn.GroupNorm(2, 8), nn.InstanceNorm2d(3, affine=True), nn.LayerNorm([4, 5], elementwise_affine=False),
                  nn.MaxPool2d(2, ceil_mode=True), nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)):
        show(layer)
    seq = nn.Sequential(OrderedDict([("conv", nn.Conv2d(1, 2, 3)), ("act", nn.ReLU(inplace=True)), ("pool", nn.MaxPool2d(2))]))
    show(seq, seq[1:], seq.conv)
    seq.append(nn.Flatten())
    show(seq)


def _sequence_model_print(lib, show):
    """A tagger built from an Embedding with padding_idx, a bidirectional LSTM and a head, printed whole; its packed
    input and the outputs as a notebook shows them."""
    torch, nn = lib, lib.nn
    torch.manual_seed(235)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(6, 2, padding_idx=0)
            self.rnn = nn.LSTM(2, 3, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)
            self.heads = nn.ModuleList([nn.Linear(6, 4) for _ in range(3)] + [nn.Linear(6, 2)])
            self.extra = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(3, 2, dtype=torch.float64))])
            self.table = nn.ParameterDict({"scale": nn.Parameter(torch.ones(1))})

    model = Tagger()
    show(model)
    for layer in (nn.LSTM(10, 20, proj_size=5), nn.GRU(3, 4, bias=False), nn.RNN(3, 4, nonlinearity="relu"),
                  nn.LSTMCell(3, 4), nn.Embedding(10, 3, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True),
                  nn.EmbeddingBag(10, 3, mode="max"), nn.Identity(3, k=4)):
        show(layer)
    seqs = torch.tensor([[1, 2, 3], [4, 5, 0]])
    packed = nn.utils.rnn.pack_padded_sequence(model.emb(seqs), torch.tensor([3, 2]), batch_first=True)
    show(packed.batch_sizes, packed.sorted_indices, type(packed).__name__)
    show(repr(model.emb(seqs)[1]))
    pl = nn.ParameterList([nn.Parameter(torch.ones(2), requires_grad=False), 5, "s"])
    show(pl, len(pl), pl[1])
    md = nn.ModuleDict()
    md["x"] = nn.ReLU()
    md.update({"y": nn.Tanh()})
    show(md, list(md.keys()), nn.Sequential(), nn.ModuleList())


def _optimizer_print(lib, show):
    """An optimizer with per-layer groups printed before and after a step, its state, and schedulers' state_dicts."""
    torch, nn = lib, lib.nn
    torch.manual_seed(236)
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    opt = torch.optim.SGD([{"params": model[0].parameters()},
                           {"params": model[2].parameters(), "lr": 0.01, "momentum": 0.9}], lr=0.1, weight_decay=1e-4)
    show(opt)
    show(torch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=True), torch.optim.AdamW(model.parameters()))
    show(torch.optim.Adam([{"params": [model[0].weight], "name": "w"}], lr=torch.tensor(0.01)))
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    show(sched.state_dict())
    model(torch.ones(4, 2)).pow(2).mean().backward()
    for _ in range(3):
        opt.step()
        sched.step()
    show(sched.state_dict(), sched.get_last_lr())
    show(opt.state_dict()["param_groups"], sorted(opt.state_dict()["state"]))
    show(opt.param_groups[1]["params"][1])
    show(torch.optim.lr_scheduler.CosineAnnealingLR(opt, 10).state_dict())
    show(torch.optim.lr_scheduler.ReduceLROnPlateau(opt).state_dict())
    show(torch.optim.lr_scheduler.MultiStepLR(opt, [2, 4]).state_dict())
    show(torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.9 ** e).state_dict())


def _state_dict_and_return_types(lib, show):
    """A checkpoint's state_dict printed whole, and the named tuples of reductions as a notebook shows them."""
    torch, nn = lib, lib.nn
    torch.manual_seed(237)
    model = nn.Sequential(nn.Conv2d(1, 2, 2), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 2))
    model(torch.rand(3, 1, 3, 3))
    sd = model.state_dict()
    show(sd)
    show(list(sd.keys()), type(sd), repr(sd["1.num_batches_tracked"]), repr(sd["1.running_var"]))
    show(list(model.named_buffers())[-1], repr(dict(model.named_parameters())["3.bias"]))
    a = torch.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    show(torch.max(a, 1), a.sort(dim=1), torch.topk(a, 2), torch.min(a, dim=0, keepdim=True))
    show(torch.kthvalue(a, 2), torch.median(a, 1), torch.mode(a, 1), a.cummax(1), torch.aminmax(a))
    show(torch.std_mean(a, 1), torch.var_mean(a), torch.frexp(torch.tensor([8.0])))
    r = torch.max(a, 1)
    values, indices = r
    show(type(r), repr(r.values), repr(r[1]), len(r), repr(values), repr(indices))
    show(torch.histogram(torch.tensor([1.0, 2, 1]), bins=2), torch.unique(torch.tensor([1, 2, 1]), return_counts=True))
    show(torch.linalg.slogdet(torch.eye(2)), torch.linalg.eigh(torch.eye(2)))


def _large_summaries(lib, show):
    """Printing whole datasets and weight matrices by mistake: what the summaries show for each dtype."""
    torch = lib
    torch.manual_seed(238)
    show(repr(torch.arange(2000)), repr(torch.randn(100, 100)), repr(torch.arange(2000.0).reshape(2, 1000)))
    show(repr(torch.randn(2000) * 1e6), repr(torch.randn(2000).half()), repr(torch.randn(3000).bfloat16()))
    show(repr(torch.randn(1500, dtype=torch.float64) * 1e-7), repr(torch.randint(-100000, 100000, (40, 40))))
    show(repr(torch.randn(40, 40) > 0), repr(torch.randn(1100, dtype=torch.complex64)))
    show(repr(torch.arange(24.0).reshape(2, 3, 4)), repr(torch.arange(60.0).reshape(3, 4, 5)))
    torch.set_printoptions(threshold=10, edgeitems=2)
    try:
        show(repr(torch.arange(120).reshape(2, 3, 4, 5)), repr(torch.ones(30, dtype=torch.bool)))
        show(repr(torch.arange(100, dtype=torch.uint8)), repr(torch.arange(20.0) * 1e10))
        w = torch.randn(50, 50, requires_grad=True)
        show(repr(w), repr(w * 2), repr(w[:, :3].t()))
    finally:
        torch.set_printoptions(profile="default")


PROGRAMS = [_print_options_tour, _dtype_gallery, _magnitudes, _empty_and_scalars, _autograd_suffixes, _format_specs,
            _metadata_reprs, _cnn_print_model, _sequence_model_print, _optimizer_print, _state_dict_and_return_types,
            _large_summaries]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_program(program, one_thread):
    assert_same_printout(program)
