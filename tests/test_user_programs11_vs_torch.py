"""An eleventh set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: the utility APIs people use around their models. Pruning
a small CNN (random, l1 and ln-structured pruning, the PruningContainer of repeated pruning, global pruning with
importance scores, custom masks, the forward pre-hooks and buffers, a training step through the masks, remove and
the refusals); profiling a model with record_shapes and record_function ranges (key_averages' names, counts and
input shapes, the table's headers, the legacy autograd.profiler); torch.testing in a test suite (assert_close's
default tolerances per dtype and its messages for values, shapes, dtypes, strides, NaN and containers, msg strings
and callables, make_tensor); printing under set_printoptions profiles, precision and sci_mode; reproducibility
settings (use_deterministic_algorithms, warn_only and debug modes, the memory deterministic mode fills,
set_default_dtype(float64/float16) with factories and layers); debugging autograd (detect_anomaly with and
without check_nan, node pre- and post-hooks, saved-tensor hooks, register_multi_grad_hook); module plumbing
(get/set_submodule and friends, remove_duplicate=False, functional_call with tied weights, skip_init, to_empty);
seeded samplers for imbalanced data; stepping optimizers in backward from post-accumulate-grad hooks; state-dict
hooks of a checkpoint converter; and parametrized layers (the class a module becomes, right_inverse into two
originals, chained and unsafe parametrizations, caching). Everything is drawn from the seeded global generator (or
seeded generators), which is torch's; values are compared to a tolerance (matrix products are not bit for bit),
and profiles are compared by names, counts and shapes, never by times.

Differences these programs found, now fixed (``tests/ops/test_program11_findings_vs_torch.py``):
- under ``use_deterministic_algorithms(True)`` torch fills what ``empty``/``empty_like``/``new_empty``/
  ``empty_strided``/``resize_`` leave uninitialised (NaN, an integer type's largest value, True) unless
  ``torch.utils.deterministic.fill_uninitialized_memory`` is off; tracegrad gave zeros and had no
  ``torch.utils.deterministic``;
- the Tensor class printed as ``<class 'tracegrad._tensor.Tensor'>`` where torch's is ``<class 'torch.Tensor'>``
  (``assert_close``'s refusal of a tensor beside a list named it);
- ``torch._tensor_str.PRINT_OPTS`` did not exist;
- ``set_default_dtype`` of a non-dtype lacked torch's "invalid dtype object: " prefix;
- a node's ``register_hook``/``register_prehook``/``name`` with wrong arguments failed in a Python method's words
  where torch's are CPython's for a C method (``TanhBackward0.register_hook() takes exactly one argument (2
  given)``).

Left: ``torch.complex32`` does not exist (torch makes ``tensor(1j)`` ComplexHalf under a float16 default, with a
warning); ``torch.utils.benchmark`` (Timer, Measurement, Compare) does not exist.
"""

from __future__ import annotations

import copy
import importlib

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _pruning_a_cnn(lib, show):
    """Pruning a small CNN the way the pruning tutorial does: l1/random/ln-structured pruning of single layers,
    iterative pruning (a PruningContainer), global magnitude pruning with importance scores, custom masks, the
    forward pre-hooks and buffers it leaves, a training step through the mask, then making it permanent."""
    torch, nn = lib, lib.nn
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
    torch.manual_seed(1101)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
    conv, fc = model[0], model[3]
    show(list(conv.named_parameters()) == [], [n for n, _ in conv.named_parameters()], list(conv.named_buffers()))
    returned = prune.random_unstructured(conv, name="weight", amount=0.3)
    show(returned is conv, [n for n, _ in conv.named_parameters()], [n for n, _ in conv.named_buffers()])
    show(conv.weight_mask.sum(), conv.weight_mask.dtype, conv.weight.grad_fn.name(), type(conv.weight).__name__)
    show([type(h).__name__ for h in conv._forward_pre_hooks.values()])
    hook = next(iter(conv._forward_pre_hooks.values()))
    show(hook._tensor_name, hook.amount, prune.is_pruned(conv), prune.is_pruned(fc))
    prune.l1_unstructured(conv, name="bias", amount=2)
    show(conv.bias_mask, conv.bias)
    prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)
    container = [h for h in conv._forward_pre_hooks.values() if getattr(h, "_tensor_name", "") == "weight"][0]
    show(type(container).__name__, [type(h).__name__ for h in container], container._tensor_name)
    show(conv.weight_mask.sum(dim=(1, 2, 3)), conv.weight_mask.sum())
    show(list(model.state_dict().keys()))
    scores = {fc: fc.weight.abs() * torch.linspace(0.5, 1.5, 64)}
    prune.global_unstructured([(conv, "weight"), (fc, "weight")], pruning_method=prune.L1Unstructured,
                              importance_scores=scores, amount=0.4)
    show(conv.weight_mask.sum(), fc.weight_mask.sum(), (fc.weight == 0).float().mean())
    prune.custom_from_mask(fc, "bias", mask=torch.tensor([1.0, 0.0] * 5))
    show(fc.bias_mask, fc.bias)
    prune.identity(nn.Linear(2, 2), "weight")
    x = torch.randn(8, 1, 6, 6)
    loss = model(x).logsumexp(1).mean()
    loss.backward()
    show(loss, fc.weight_orig.grad[0, :8], conv.bias_orig.grad, fc.weight.grad)
    show((fc.weight_orig.grad[fc.weight_mask == 0] == 0).all())
    for module, name in [(conv, "weight"), (conv, "bias"), (fc, "weight"), (fc, "bias")]:
        prune.remove(module, name)
    show(list(model.state_dict().keys()), prune.is_pruned(model), len(conv._forward_pre_hooks))
    show(type(conv.weight).__name__, conv.weight.requires_grad, (conv.weight == 0).sum())
    show_outcome(show, lambda: prune.remove(conv, "weight"))
    show_outcome(show, lambda: prune.l1_unstructured(fc, "weight", amount=1.5))
    show_outcome(show, lambda: prune.l1_unstructured(fc, "weight", amount=-1))
    show_outcome(show, lambda: prune.l1_unstructured(fc, "weight", amount=1000))
    show_outcome(show, lambda: prune.ln_structured(fc, "weight", amount=0.5, n=2, dim=5))
    show_outcome(show, lambda: prune.global_unstructured([(fc, "weight")], pruning_method=prune.LnStructured,
                                                         amount=0.1))


def _profiling_a_model(lib, show):
    """Profiling a small MLP's training step the way the profiler recipe does: record_shapes, record_function
    ranges, key_averages (grouped by input shape too) and the table's headers, the events of a range, and the
    older autograd.profiler API. Timings differ run to run, so only names, counts and shapes are shown."""
    torch, nn = lib, lib.nn
    from importlib import import_module
    profiler = import_module(lib.__name__ + ".profiler")
    torch.manual_seed(1102)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    x = torch.randn(4, 8)
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        with profiler.record_function("model_inference"):
            out = model(x)
        with profiler.record_function("my_loss"):
            loss = out.pow(2).mean()
    show(loss)
    averages = prof.key_averages()
    counts = {e.key: e.count for e in averages}
    show(sorted(k for k in counts if not k.startswith("aten::") or k in ("aten::linear", "aten::relu")))
    show(counts.get("model_inference"), counts.get("my_loss"), counts.get("aten::linear"), counts.get("aten::relu"))
    table = averages.table(sort_by="cpu_time_total", row_limit=5)
    header = [line for line in table.splitlines() if "Name" in line][0]
    show(header.split())
    show(table.splitlines()[-1].split(":")[0], set(table.splitlines()[-2]))
    by_shape = {(e.key, e.input_shapes and str(e.input_shapes)) for e in prof.key_averages(group_by_input_shape=True)
                if e.key in ("aten::linear", "aten::relu")}
    show(sorted(by_shape))
    events = [e for e in prof.events() if e.name == "model_inference"]
    show(len(events), type(events[0]).__name__, events[0].cpu_time_total >= 0)
    show(type(averages).__name__, type(averages[0]).__name__)
    with torch.autograd.profiler.profile(record_shapes=True) as old, \
            torch.autograd.profiler.record_function("legacy_range"):
        torch.relu(x)
    names = [e.key for e in old.key_averages()]
    show("legacy_range" in names, "aten::relu" in names, type(old).__name__)
    show_outcome(show, lambda: averages.table(sort_by="no_such_column"))


def _testing_helpers(lib, show):
    """A test suite's use of torch.testing: assert_close with its default tolerances per dtype, the messages of
    value, shape, dtype, stride and NaN mismatches, equal_nan, check_dtype=False, a msg string and callable, and
    make_tensor with bounds, exclude_zero, noncontiguous and requires_grad."""
    torch = lib
    testing = torch.testing
    torch.manual_seed(1103)

    def check(actual, expected, **kwargs):
        try:
            testing.assert_close(actual, expected, **kwargs)
            show("close")
        except Exception as e:  # noqa: BLE001 - the message is what is compared
            show(type(e).__name__, e)

    a = torch.tensor([1.0, 2.0, 3.0])
    check(a, a + 1e-6)
    check(a, a + 1e-4)
    check(a.double(), a.double() + 1e-6)
    check(a.half(), (a + 1e-3).half())
    check(a, torch.tensor([1.0, 2.5, 3.0]))
    check(a, torch.tensor([1.0, 2.5, 3.0]), rtol=0.5, atol=0)
    check(a, a.double())
    check(a, a.double(), check_dtype=False)
    check(a, a[:2])
    check(torch.ones(2, 3).t(), torch.ones(3, 2), check_stride=True)
    check(torch.ones(2, 3).t(), torch.ones(3, 2))
    check(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]))
    check(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]), equal_nan=True)
    check(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
    check(a, [1.0, 2.0, 3.0])
    check(a, a, rtol=1e-3)
    check(a, a * 2, msg="weights drifted")
    check(a, a * 2, msg=lambda default: f"step 3: {default.splitlines()[0]}")
    check({"w": a, "b": torch.zeros(2)}, {"w": a, "b": torch.ones(2)})
    check((a, 1.0), (a, 1.5))
    check(torch.zeros(2, 2), torch.eye(2))
    t = testing.make_tensor((3, 4), dtype=torch.float32, device="cpu", low=-2, high=2)
    show(t.shape, t.dtype, bool((t >= -2).all() and (t < 2).all()))
    i = testing.make_tensor((50,), dtype=torch.int64, device="cpu", low=-3, high=3, exclude_zero=True)
    show(i.dtype, bool((i != 0).all()), bool((i >= -3).all() and (i < 3).all()))
    n = testing.make_tensor((2, 3), dtype=torch.float64, device="cpu", noncontiguous=True, requires_grad=True)
    show(n.is_contiguous(), n.requires_grad, n.dtype, n.shape)
    b = testing.make_tensor((4,), dtype=torch.bool, device="cpu")
    show(b.dtype, b.shape)
    show_outcome(show, lambda: testing.make_tensor((2,), dtype=torch.float32, device="cpu", low=3, high=1))
    show_outcome(show, lambda: testing.assert_close(a, a, rtol=1e-3, atol=None))


def _print_options(lib, show):
    """How a notebook prints tensors of very different magnitudes under set_printoptions: precision, sci_mode,
    the short/full/default profiles, threshold and edgeitems summarising, linewidth wrapping, and printing an
    integer, a boolean and a half tensor along the way; the options are restored at the end."""
    torch = lib
    torch.manual_seed(1104)
    mixed = torch.tensor([1e-5, 0.5, 123.456, 1e6])
    small = torch.tensor([0.001234, 0.5, 3.25])
    big = torch.arange(2000, dtype=torch.float32).reshape(40, 50) / 7
    try:
        show(str(mixed), str(small))
        torch.set_printoptions(precision=2)
        show(str(mixed), str(small), str(small.double()))
        torch.set_printoptions(sci_mode=False)
        show(str(mixed), str(torch.tensor([1e-9, 1.0])))
        torch.set_printoptions(sci_mode=True)
        show(str(small), str(torch.tensor([1, 2])))
        torch.set_printoptions(profile="short")
        show(str(small), str(big)[:200])
        torch.set_printoptions(profile="default")
        show(str(big).splitlines()[:3], len(str(big).splitlines()))
        torch.set_printoptions(threshold=10, edgeitems=2)
        show(str(torch.arange(20)), str(torch.arange(24).reshape(2, 12)))
        torch.set_printoptions(profile="full")
        show(len(str(torch.arange(1200)).splitlines()))
        torch.set_printoptions(profile="default", linewidth=40)
        show(str(torch.linspace(0, 1, 12)))
        torch.set_printoptions(profile="default")
        show(str(torch.tensor([0.1, 2.5]).half()), str(torch.tensor([True, False])), repr(torch.tensor(3.5)))
        show(str(torch.tensor([float("inf"), float("nan"), -0.0, 1e20])))
        show(str(torch.tensor([1.0, 2.0], requires_grad=True) * 2))
        show(torch._tensor_str.PRINT_OPTS.precision, torch._tensor_str.PRINT_OPTS.threshold)
        show_outcome(show, lambda: torch.set_printoptions(profile="medium"))
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)


def _determinism_and_default_dtype(lib, show):
    """Reproducibility settings a training script turns on: use_deterministic_algorithms (with warn_only), the
    flags it leaves, a seeded run repeated; then set_default_dtype(float64) with factories, Python scalars,
    complex numbers and freshly built layers, and the refusals of set_default_dtype; the defaults are restored."""
    torch, nn = lib, lib.nn
    before = torch.get_default_dtype()
    try:
        show(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
        torch.use_deterministic_algorithms(True)
        show(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
        show(torch.get_deterministic_debug_mode())
        torch.use_deterministic_algorithms(True, warn_only=True)
        show(torch.get_deterministic_debug_mode(), torch.is_deterministic_algorithms_warn_only_enabled())

        def run():
            torch.manual_seed(1105)
            net = nn.Sequential(nn.Linear(3, 5), nn.Dropout(0.3), nn.Linear(5, 1))
            target = torch.zeros(6, 5).index_add_(0, torch.tensor([0, 0, 2]), torch.ones(3, 5))
            return net(torch.randn(6, 3)).sum() + target.sum()

        show(run(), torch.equal(run(), run()))
        buffer = torch.arange(3, dtype=torch.int32)
        buffer.resize_(5)
        show(torch.empty(3), torch.empty(2, dtype=torch.int64), torch.empty_like(torch.ones(2, dtype=torch.bool)),
             torch.ones(2).new_empty(3), torch.empty_strided((2, 2), (1, 2)), buffer)
        show(torch.utils.deterministic.fill_uninitialized_memory)
        torch.utils.deterministic.fill_uninitialized_memory = False
        show(torch.utils.deterministic.fill_uninitialized_memory, torch.empty(0))
        show_outcome(show, lambda: setattr(torch.utils.deterministic, "fill_uninitialized_memory", 1))
        torch.utils.deterministic.fill_uninitialized_memory = True
        torch.use_deterministic_algorithms(False)
        torch.set_deterministic_debug_mode("warn")
        show(torch.get_deterministic_debug_mode(), torch.are_deterministic_algorithms_enabled())
        torch.set_deterministic_debug_mode(0)
        show_outcome(show, lambda: torch.set_deterministic_debug_mode("loud"))
        show_outcome(show, lambda: torch.use_deterministic_algorithms("yes"))
        torch.set_default_dtype(torch.float64)
        show(torch.get_default_dtype(), torch.tensor([1.0, 2.0]).dtype, torch.tensor(1).dtype,
             torch.tensor(1 + 2j).dtype, torch.zeros(2).dtype, torch.arange(3.0).dtype, torch.arange(3).dtype)
        show(torch.linspace(0, 1, 3), torch.randn(2).dtype, torch.full((2,), 1.5).dtype, torch.empty(1).dtype)
        show(torch.as_tensor([0.5]).dtype, torch.ones(2, dtype=torch.int32) * 0.5, torch.tensor([1, 2]) / 2)
        layer = nn.Linear(2, 3)
        show(layer.weight.dtype, layer(torch.ones(1, 2)).dtype, nn.BatchNorm1d(3).running_mean.dtype)
        show(torch.float32.is_floating_point, torch.finfo().eps, torch.finfo().dtype)
        torch.set_default_dtype(torch.float16)
        show(torch.tensor([0.1]).dtype, torch.ones(1).dtype, torch.arange(2.0).dtype)
        show_outcome(show, lambda: torch.set_default_dtype(torch.int64))
        show_outcome(show, lambda: torch.set_default_dtype(torch.complex64))
        show_outcome(show, lambda: torch.set_default_dtype(float))
    finally:
        torch.set_default_dtype(before)
        torch.use_deterministic_algorithms(False)
        torch.utils.deterministic.fill_uninitialized_memory = True
    show(torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled())


def _debugging_autograd(lib, show):
    """Finding where a NaN gradient comes from: detect_anomaly with and without check_nan, the node hooks on
    grad_fn (pre-hooks that print and replace), saved-tensor hooks that log what the forward saves, the graph's
    next_functions and a node's metadata, register_multi_grad_hook, and is_anomaly_enabled flags."""
    torch = lib
    torch.manual_seed(1106)
    show(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        show(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        y = torch.sqrt(x).sum()
        y.backward()
    show(x.grad)
    x.grad = None
    try:
        with torch.autograd.detect_anomaly():
            z = (torch.sqrt(x) * 0).sum()
            z.backward()
    except RuntimeError as e:
        show("RuntimeError", str(e))
    show(x.grad)
    packed: list = []

    def pack(t):
        packed.append((tuple(t.shape), t.dtype, t.requires_grad))
        return t

    w = torch.randn(3, 2, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        h = torch.tanh(x.detach().unsqueeze(0) @ w)
        out = (h * h).sum()
    show(packed, out.grad_fn.name(), [n[0].name() if n[0] else None for n in out.grad_fn.next_functions])
    seen: list = []
    node = h.grad_fn
    node.register_prehook(lambda gout: seen.append(("pre", gout[0].shape)))
    handle = node.register_hook(lambda gin, gout: seen.append(("post", gin[0].shape, gout[0].shape)))
    h.grad_fn.next_functions[0][0].register_prehook(lambda gout: (gout[0] * 0,))
    out.backward(retain_graph=True)
    show(seen, w.grad)
    handle.remove()
    seen.clear()
    fired: list = []
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    torch.autograd.graph.register_multi_grad_hook((a, b), lambda grads: fired.append([g is None for g in grads]))
    (a * 2).sum().backward()
    (a * b).sum().backward()
    show(fired, seen)
    show(node.name(), type(node).__name__, node.metadata, node._saved_result.shape, torch.is_anomaly_enabled())
    show(isinstance(node, torch.autograd.graph.Node), node.next_functions[0][0].name())
    show_outcome(show, lambda: node.register_hook(lambda *a, **k: None, 3))


def _module_utilities(lib, show):
    """Model plumbing a research codebase uses: get_submodule/get_parameter/get_buffer/set_submodule and their
    errors, named_modules/named_parameters with remove_duplicate=False on shared layers, functional_call with
    swapped parameters (strict, tie_weights), skip_init, to_empty, and apply/zero_grad(set_to_none=False)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1107)
    shared = nn.Linear(4, 4)
    model = nn.Sequential()
    model.add_module("enc", nn.Sequential(shared, nn.ReLU()))
    model.add_module("dec", nn.Sequential(shared, nn.BatchNorm1d(4)))
    model.add_module("head", nn.Linear(4, 2))
    show(model.get_submodule("enc.0") is shared, model.get_parameter("head.bias").shape,
         model.get_buffer("dec.1.running_var"))
    show_outcome(show, lambda: model.get_submodule("enc.5"))
    show_outcome(show, lambda: model.get_submodule("head.weight"))
    show_outcome(show, lambda: model.get_parameter("dec.1.running_mean"))
    show_outcome(show, lambda: model.get_parameter("head.scale"))
    show_outcome(show, lambda: model.get_buffer("head.bias"))
    show([n for n, _ in model.named_modules()])
    show([n for n, _ in model.named_modules(remove_duplicate=False)])
    show([n for n, _ in model.named_parameters(remove_duplicate=False)], len(list(model.parameters())))
    model.set_submodule("head", nn.Linear(4, 3))
    show(model.head, model(torch.randn(5, 4)).shape)
    show_outcome(show, lambda: model.set_submodule("enc.7", nn.Tanh()))
    show_outcome(show, lambda: model.set_submodule("enc.1", nn.Tanh(), strict=True))
    show_outcome(show, lambda: model.set_submodule("head.bias", nn.Tanh()))
    model.set_submodule("enc.1", nn.Tanh())
    show(model.enc)
    fc = nn.Linear(3, 2)
    x = torch.ones(1, 3)
    params = {"weight": torch.zeros(2, 3, requires_grad=True), "bias": torch.tensor([1.0, -1.0])}
    out = torch.func.functional_call(fc, params, (x,))
    out.sum().backward()
    show(out, params["weight"].grad, fc.weight.grad)
    show(torch.func.functional_call(fc, {"bias": torch.zeros(2)}, x).shape)
    show_outcome(show, lambda: torch.func.functional_call(fc, {"bias": torch.zeros(2)}, x, strict=True))
    show_outcome(show, lambda: torch.func.functional_call(fc, {"scale": torch.zeros(2)}, x, strict=True))
    show_outcome(show, lambda: torch.func.functional_call(fc, ({"bias": torch.zeros(2)}, {"bias": torch.ones(2)}), x))
    tied = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 5, bias=False))
    tied[1].weight = tied[0].weight
    new = torch.arange(15.0).reshape(5, 3)
    res = torch.func.functional_call(tied, {"0.weight": new}, (torch.tensor([1]),))
    show(res, torch.func.functional_call(tied, {"0.weight": new}, (torch.tensor([1]),), tie_weights=False))
    lazy = nn.utils.skip_init(nn.Linear, 3, 2)
    show(lazy.weight.shape, lazy.bias.shape, lazy.weight.requires_grad, type(lazy).__name__)
    show_outcome(show, lambda: nn.utils.skip_init(torch.optim.SGD, []))
    empty = nn.Linear(2, 2).to_empty(device="cpu")
    show(empty.weight.shape, empty.weight.dtype, type(empty.weight).__name__)
    model.zero_grad(set_to_none=False)
    show(shared.weight.grad, model.head.bias.grad)
    touched: list = []
    model.apply(lambda m: touched.append(type(m).__name__))
    show(touched)


def _seeded_samplers(lib, show):
    """Imbalanced-data loading: WeightedRandomSampler from class frequencies (with and without replacement, with a
    generator), SubsetRandomSampler for a validation split, SequentialSampler, RandomSampler with num_samples,
    BatchSampler's drop_last, a DataLoader with a generator and a sampler, and the samplers' refusals."""
    torch = lib
    data = importlib.import_module(lib.__name__ + ".utils.data")
    torch.manual_seed(1108)
    labels = torch.tensor([0] * 12 + [1] * 3 + [2] * 1)
    class_count = torch.bincount(labels)
    weights = (1.0 / class_count.float())[labels]
    g = torch.Generator().manual_seed(7)
    sampler = data.WeightedRandomSampler(weights, num_samples=20, replacement=True, generator=g)
    drawn = list(sampler)
    show(drawn, torch.bincount(labels[drawn], minlength=3), len(sampler), type(drawn[0]).__name__)
    no_rep = data.WeightedRandomSampler(weights.tolist(), num_samples=6, replacement=False,
                                        generator=torch.Generator().manual_seed(3))
    show(list(no_rep), no_rep.weights.dtype)
    show(list(data.WeightedRandomSampler([0.1, 0.9], 5)))
    split = torch.randperm(16, generator=torch.Generator().manual_seed(11)).tolist()
    val = data.SubsetRandomSampler(split[:4], generator=torch.Generator().manual_seed(5))
    show(split[:4], list(val), list(val), len(val))
    show(list(data.SequentialSampler(range(5))), list(data.RandomSampler(range(6), num_samples=9)))
    show(list(data.RandomSampler(range(6), replacement=True, num_samples=4, generator=torch.Generator().manual_seed(2))))
    show(list(data.BatchSampler(data.SequentialSampler(range(7)), 3, drop_last=False)),
         list(data.BatchSampler(range(7), 3, drop_last=True)), len(data.BatchSampler(range(7), 3, drop_last=True)))
    ds = data.TensorDataset(torch.arange(16.0).unsqueeze(1), labels)
    loader = data.DataLoader(ds, batch_size=5, sampler=sampler)
    show([y.tolist() for _, y in loader])
    shuffled = data.DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(4))
    show([x.squeeze(1).tolist() for x, _ in shuffled])
    show_outcome(show, lambda: data.WeightedRandomSampler(weights, num_samples=0))
    show_outcome(show, lambda: data.WeightedRandomSampler(weights, num_samples=20, replacement=False).__iter__()
                 .__next__())
    show_outcome(show, lambda: data.WeightedRandomSampler(torch.ones(2, 2), num_samples=2))
    show_outcome(show, lambda: data.RandomSampler(range(4), num_samples=-1))
    show_outcome(show, lambda: data.BatchSampler(range(4), 0, False))
    show_outcome(show, lambda: data.DataLoader(ds, sampler=sampler, shuffle=True))


def _optimizer_in_backward(lib, show):
    """Stepping each parameter's optimizer from register_post_accumulate_grad_hook (the memory-saving recipe) and
    checking it against an ordinary step, with a hook on a non-leaf refused, gradient clearing inside the hook, and
    the order the hooks fire in."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1109)
    base = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1))
    twin = copy.deepcopy(base)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt = torch.optim.AdamW(base.parameters(), lr=0.05)
    for _ in range(3):
        opt.zero_grad()
        nn.functional.mse_loss(base(x), y).backward()
        opt.step()
    order: list = []
    names = {p: n for n, p in twin.named_parameters()}
    per_param = {p: torch.optim.AdamW([p], lr=0.05) for p in twin.parameters()}

    def step_now(p):
        order.append(names[p])
        per_param[p].step()
        per_param[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step_now) for p in twin.parameters()]
    for _ in range(3):
        nn.functional.mse_loss(twin(x), y).backward()
    show(order[:4], len(order))
    show([p.grad for p in twin.parameters()])
    for a, b in zip(base.parameters(), twin.parameters()):
        show(a, b)
    for h in handles:
        h.remove()
    nn.functional.mse_loss(twin(x), y).backward()
    show(len(order), twin[0].bias.grad is not None)
    hidden = twin[0](x)
    show_outcome(show, lambda: hidden.register_post_accumulate_grad_hook(lambda t: None))
    leaf = torch.zeros(2, requires_grad=True)
    show_outcome(show, lambda: torch.zeros(2).register_post_accumulate_grad_hook(lambda t: None))
    leaf.register_post_accumulate_grad_hook(lambda t: show("accumulated", t.grad))
    leaf.register_hook(lambda g: show("pre-accumulate", g) or g * 10)
    (leaf * 3).sum().backward()
    show(leaf.grad)


def _state_dict_hooks(lib, show):
    """A checkpoint converter written with module state-dict hooks: a state_dict pre-hook and post-hook that
    rename and drop keys, a load_state_dict pre-hook (public and private forms) that upgrades old key names, a
    post-hook that clears expected missing keys, and the results and messages of strict loading."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1110)
    log: list = []

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)
            self.register_buffer("steps", torch.tensor(0))
            self.register_buffer("cache", torch.zeros(1), persistent=False)

    block = Block()
    block.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))

    def post(module, state_dict, prefix, local_metadata):
        log.append(("post", prefix, sorted(state_dict), local_metadata))
        state_dict.pop(prefix + "steps")
        return None

    block.register_state_dict_post_hook(post)
    outer = nn.Sequential(block)
    sd = outer.state_dict(keep_vars=True)
    show(list(sd), log, type(sd).__name__, sd._metadata)
    log.clear()

    def upgrade(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        log.append(("load-pre", prefix, strict, sorted(state_dict)))
        old = prefix + "linear.weight"
        if old in state_dict:
            state_dict[prefix + "proj.weight"] = state_dict.pop(old)

    block._register_load_state_dict_pre_hook(upgrade)
    block.register_load_state_dict_pre_hook(
        lambda module, state_dict, prefix, *rest: log.append(("public-pre", type(module).__name__, prefix)))

    def forgive_steps(module, incompatible):
        log.append(("load-post", list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
        if "0.steps" in incompatible.missing_keys:
            incompatible.missing_keys.remove("0.steps")

    block.register_load_state_dict_post_hook(forgive_steps)
    old_ckpt = {"0.linear.weight": torch.eye(2), "0.proj.bias": torch.ones(2)}
    result = outer.load_state_dict(old_ckpt)
    show(result, log, block.proj.weight, block.proj.bias)
    log.clear()
    show(outer.load_state_dict({"0.proj.weight": torch.eye(2), "0.proj.bias": torch.ones(2), "0.extra": 1},
                               strict=False))
    show(log)
    show_outcome(show, lambda: outer.load_state_dict({"0.proj.weight": torch.eye(2), "0.extra": torch.ones(1)}))
    show_outcome(show, lambda: outer.load_state_dict({"0.proj.weight": torch.ones(3, 2), "0.proj.bias": torch.ones(2)}))
    show_outcome(show, lambda: outer.load_state_dict([("0.proj.bias", torch.ones(2))]))


def _parametrized_layers(lib, show):
    """Constraining a layer with torch.nn.utils.parametrize: the class the module becomes (its name, repr and
    bases), a right_inverse that splits a weight into two originals, chained parametrizations, unsafe=True that
    changes the shape, caching with cached(), and deepcopy/state_dict of the parametrized module."""
    torch, nn = lib, lib.nn
    P = nn.utils.parametrize
    torch.manual_seed(1111)

    class LowRank(nn.Module):
        def forward(self, A, B):
            return A @ B

        def right_inverse(self, W):
            return W[:, :1].clone(), torch.eye(1, W.shape[1])

    class Scale(nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = s

        def forward(self, W):
            return W * self.s

    layer = nn.Linear(3, 4)
    plain_type = type(layer)
    P.register_parametrization(layer, "weight", LowRank())
    show(type(layer).__name__, type(layer).__bases__[0].__name__, type(layer) is plain_type, isinstance(layer, nn.Linear))
    show(layer)
    show([n for n, _ in layer.named_parameters()], layer.weight.shape, layer.weight.grad_fn.name())
    show(layer.parametrizations.weight.original0, layer.parametrizations.weight.original1)
    P.register_parametrization(layer, "weight", Scale(2.0))
    show(len(layer.parametrizations.weight), layer.weight[:, 0])
    show(list(layer.state_dict()))
    calls: list = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X.tanh()

    counted = nn.Linear(2, 2)
    P.register_parametrization(counted, "weight", Counting())
    counted.weight, counted.weight
    with P.cached():
        counted.weight, counted.weight
        counted(torch.ones(1, 2))
    show(len(calls))
    clone = copy.deepcopy(counted)
    show(type(clone).__name__, torch.equal(clone.weight, counted.weight), P.is_parametrized(clone))

    class Widen(nn.Module):
        def forward(self, X):
            return torch.cat([X, X], dim=1)

    wide = nn.Linear(2, 2)
    show_outcome(show, lambda: P.register_parametrization(wide, "weight", Widen()))
    P.register_parametrization(wide, "weight", Widen(), unsafe=True)
    show(wide.weight.shape, type(wide).__name__)
    show_outcome(show, lambda: P.register_parametrization(nn.Linear(2, 2), "scale", Scale(1.0)))

    class NoGrad(nn.Module):
        def forward(self, X):
            return X.detach().long()

    show_outcome(show, lambda: P.register_parametrization(nn.Linear(2, 2), "weight", NoGrad()))
    P.remove_parametrizations(layer, "weight")
    show(type(layer).__name__, type(layer) is plain_type, [n for n, _ in layer.named_parameters()])
    show_outcome(show, lambda: P.remove_parametrizations(layer, "bias"))


PROGRAMS = [
    _pruning_a_cnn,
    _profiling_a_model,
    _testing_helpers,
    _print_options,
    _determinism_and_default_dtype,
    _debugging_autograd,
    _module_utilities,
    _seeded_samplers,
    _optimizer_in_backward,
    _state_dict_hooks,
    _parametrized_layers,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
