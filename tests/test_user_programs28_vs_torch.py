"""A twenty-eighth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared.

These run the extension points library authors and curious users reach for: custom ops whose schemas are
inferred from type hints (Optional, Sequence[Tensor], defaults, tuple returns), printed through ``torch.ops`` and
``.default``, and the hints and aliasing returns custom_op refuses; a custom op with register_autograd /
setup_context as a trained model's activation, checked by gradcheck, gradgradcheck and opcheck; ops that mutate
their arguments, device_types, register_fake / register_kernel / set_kernel_enabled; the Library API (define with
overloads and keyword-only defaults, impl for CompositeImplicitAutograd, CPU and Autograd, the registration
mistakes); an autograd.Function written with vjp/jvp and setup_context in both modes and through
autograd.functional; and torch.overrides as an author reads it (get_overridable_functions, get_ignored_functions,
resolve_name, has_torch_function*, handle_torch_function in a user function, a TorchFunctionMode logging a
model's forward and backward).

Differences these programs found, now fixed (``tests/ops/test_program28_findings_vs_torch.py``):
- a library operator's schema printed float and Scalar defaults as written (``float scale=2.0``, ``1e-3``) and
  str defaults in single quotes, where torch prints its C++ form (``2.``, ``0.001``, ``0.10000000000000001``,
  ``"mean"``), in ``_schema`` and in every argument error's "Declaration:"; ``torch.ops.aten.X.Y._schema`` printed
  ``add(...)`` for torch's ``aten::add.Tensor(...)`` (and aten's own float/str defaults as above);
- infer_schema's refusal of a lazy annotation naming a local name lacked torch's hint about
  ``from __future__ import annotations``, and its list of valid types printed ``typing.Union[int, float, bool]``
  for torch's ``int | float | bool``;
- Tensor's operator methods had the names of the closures behind them (``Tensor.__add__.__name__`` was
  ``'run'``, ``__eq__`` ``'_equal_dunder'``, ``__lt__`` ``'method'``), so a handler logging ``func.__name__``
  and ``resolve_name(Tensor.__add__)`` (``'torch.run'``) differed;
- ``resolve_name`` named a user's own function ``torch.<name>`` (torch: None) and ``linalg.norm``/``special.erf``
  /``fft.fft`` as ``torch.norm``/``torch.erf``/``torch.fft``; ``get_ignored_functions`` lacked the factories
  (``ones``, ``randn``, ``tensor``...) and Tensor's ignored methods (``__init__``, ``new_ones``...);
  ``get_overridable_functions`` returned a dict for torch's defaultdict.

Left: ``torch.utils._python_dispatch.TorchDispatchMode``, ``__torch_dispatch__`` subclasses and
``Tensor._make_wrapper_subclass`` do not exist (tracegrad has no ATen layer below autograd; ``OpInterceptor`` is
its own mechanism); ``torch.func.grad``/``vmap``/``jvp``/``jacrev`` do not exist; ``torch._C._AutoDispatchBelowAutograd``
(the documented way for an Autograd kernel to call the op's CPU kernel) does not exist; calling an overload
packet (``torch.ops.ns.op(...)``) binds its default overload only, where torch tries each overload and reports
"Overloaded torch operator invoked from Python failed to match any schema" with every overload's error; the
schema lexer's "expected eof" error for a name with a space points at the space (torch: at the next identifier);
an ``inf`` float default is accepted (torch: "invalid numeric default value"); infer_schema's list of valid types
lacks torch.distributed's GroupName (tracegrad's torch.distributed is a build without it); ``nn.ReLU`` hands a
TorchFunctionMode ``torch.relu`` (torch: ``torch.nn.functional.relu``); ``Tensor.__div__`` is named
``__truediv__``; a few aten schemas differ in their arguments (``_to_copy``, ``full_like``, ``count_nonzero``,
``rot90``'s ``[0,1]``, ``rrelu_with_noise``, ``native_layer_norm_backward``, ``_softmax_backward_data``).
"""


from typing import Optional, Sequence  # noqa: UP035 - the hints custom_op users write

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _custom_op_schemas(lib, show):
    """A library author's first custom ops: schemas inferred from type hints (Optional, Sequence[Tensor], int,
    float, bool, str, defaults), the op object and its overload printed, called through torch.ops, and the
    annotations and returns custom_op refuses."""
    torch = lib
    ns = "p28schema"

    @torch.library.custom_op(f"{ns}::scale_shift", mutates_args=())
    def scale_shift(x: torch.Tensor, scale: float = 2.0, shift: Optional[torch.Tensor] = None,  # noqa: UP045
                    clamp: bool = False, mode: str = "mul") -> torch.Tensor:
        out = x * scale if mode == "mul" else x + scale
        if shift is not None:
            out = out + shift
        return out.clamp(-1, 1) if clamp else out

    @torch.library.custom_op(f"{ns}::stack_sum", mutates_args=())
    def stack_sum(xs: Sequence[torch.Tensor], dim: int = 0) -> torch.Tensor:
        return torch.stack(list(xs), dim).sum(dim)

    @torch.library.custom_op(f"{ns}::split_two", mutates_args=())
    def split_two(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x[:1].clone(), x[1:].clone()

    show(type(scale_shift).__name__, scale_shift._name)
    show(torch.ops.p28schema.scale_shift)
    show(torch.ops.p28schema.scale_shift.default, type(torch.ops.p28schema.scale_shift.default).__name__)
    show(torch.ops.p28schema.scale_shift.default._schema)
    show(torch.ops.p28schema.stack_sum.default._schema)
    show(torch.ops.p28schema.split_two.default._schema)
    show(torch.library.infer_schema(scale_shift._init_fn, mutates_args=()))
    x = torch.tensor([0.25, -0.5, 1.0])
    show(scale_shift(x), scale_shift(x, 3.0, torch.ones(3), True))
    show(torch.ops.p28schema.scale_shift(x, mode="add"), torch.ops.p28schema.scale_shift.default(x, 0.5))
    show(stack_sum([x, x * 2, x * 3]), stack_sum((x, x), dim=0))
    show(split_two(torch.arange(4.0)))
    show(torch.ops.p28schema.split_two.default(torch.arange(3.0)))
    show_outcome(show, lambda: scale_shift(x, "big"))
    show_outcome(show, lambda: scale_shift([1.0, 2.0]))
    show_outcome(show, lambda: torch.ops.p28schema.scale_shift.default(x, 1.0, None, False, "mul", 5))

    def no_hint(x):
        return x

    def list_hint(x: list) -> torch.Tensor:
        return x[0]

    def bad_return(x: torch.Tensor) -> int:
        return 1

    def returns_input(x: torch.Tensor) -> torch.Tensor:
        return x

    for fn in (no_hint, list_hint, bad_return):
        try:
            torch.library.custom_op(f"{ns}::{fn.__name__}", fn, mutates_args=())
        except ValueError as e:  # (the list of valid types depends on whether torch.distributed is built)
            show(type(e).__name__, str(e).split(" The valid types are")[0])
    show_outcome(show, lambda: torch.library.custom_op("no_namespace", returns_input, mutates_args=()))
    show_outcome(show, lambda: torch.library.custom_op(f"{ns}::returns_input", returns_input))
    aliasing = torch.library.custom_op(f"{ns}::returns_input", returns_input, mutates_args=())
    try:
        aliasing(x)
    except RuntimeError as e:  # (the message names the library's file: its path is each install's own)
        show(type(e).__name__, str(e).split("): ", 1)[1])


def _custom_op_autograd_training(lib, show):
    """A custom op with its own backward (register_autograd with setup_context and needs_input_grad) used as the
    activation of a small model trained for a few steps, checked by gradcheck and opcheck."""
    torch, nn = lib, lib.nn
    torch.manual_seed(2801)
    ns = "p28train"
    calls: list = []

    @torch.library.custom_op(f"{ns}::soft_clip", mutates_args=())
    def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
        return limit * torch.tanh(x / limit)

    def setup_context(ctx, inputs, output):
        x, limit = inputs
        ctx.save_for_backward(x)
        ctx.limit = limit
        calls.append(("setup", type(inputs).__name__, len(inputs), type(output).__name__))

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        calls.append(("backward", ctx.needs_input_grad))
        return grad * (1 - torch.tanh(x / ctx.limit) ** 2), None

    soft_clip.register_autograd(backward, setup_context=setup_context)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)

        def forward(self, x):
            return self.fc2(soft_clip(self.fc1(x), 1.5))

    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for step in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5))
    show(calls[:2], len(calls))
    hidden = soft_clip(net.fc1(x), 1.5)
    show(hidden.grad_fn.name(), hidden.shape, hidden.requires_grad)
    show(net.fc1.weight.grad)
    leaf = torch.randn(5, dtype=torch.float64, requires_grad=True)
    show(torch.autograd.gradcheck(lambda t: soft_clip(t, 0.7), (leaf,)))
    show(torch.autograd.gradgradcheck(lambda t: soft_clip(t, 0.7), (leaf,)))
    show(sorted(torch.library.opcheck(soft_clip, (torch.randn(3, requires_grad=True), 2.0)).items()))
    with torch.no_grad():
        quiet = soft_clip(leaf, 1.0)
    show(quiet.requires_grad, quiet.grad_fn)
    show_outcome(show, lambda: soft_clip.register_autograd(backward, setup_context=None))


def _custom_op_mutation_and_devices(lib, show):
    """Custom ops that write into their arguments (mutates_args), with device-specific kernels
    (device_types="cpu", register_kernel), a fake kernel, set_kernel_enabled, and what a mutated leaf and a
    mutated input that requires grad do."""
    torch = lib
    ns = "p28mut"

    @torch.library.custom_op(f"{ns}::add_noise_", mutates_args={"buf"})
    def add_noise_(buf: torch.Tensor, amount: float) -> None:
        buf.add_(amount)

    @torch.library.custom_op(f"{ns}::cpu_only", mutates_args=(), device_types="cpu")
    def cpu_only(x: torch.Tensor) -> torch.Tensor:
        return x.flip(0)

    @torch.library.custom_op(f"{ns}::poly", mutates_args=())
    def poly(x: torch.Tensor) -> torch.Tensor:
        return x * x + 1

    @poly.register_fake
    def _(x):
        return torch.empty_like(x)

    @poly.register_kernel("cpu")
    def _(x):
        return x * x + 2

    show(torch.ops.p28mut.add_noise_.default._schema)
    buf = torch.zeros(3)
    v0 = buf._version
    out = add_noise_(buf, 0.5)
    show(out, buf, buf._version > v0)
    show(cpu_only(torch.arange(4.0)))
    show(poly(torch.tensor([1.0, 2.0])))
    with poly.set_kernel_enabled("cpu", False):
        show(poly(torch.tensor([1.0, 2.0])))
    show(poly(torch.tensor([1.0, 2.0])))
    leaf = torch.zeros(2, requires_grad=True)
    show_outcome(show, lambda: add_noise_(leaf, 1.0))
    w = torch.ones(2, requires_grad=True)
    h = w * 2
    add_noise_(h, 1.0)
    show(h, h.grad_fn is not None)
    show_outcome(show, lambda: h.sum().backward())
    show_outcome(show, lambda: torch.library.custom_op(f"{ns}::bad_mut", lambda x: None, mutates_args={"y"}))

    def bad_mut(x: torch.Tensor) -> None:
        x.zero_()

    show_outcome(show, lambda: torch.library.custom_op(f"{ns}::bad_mut", bad_mut, mutates_args={"y"}))
    show_outcome(show, lambda: torch.library.custom_op(f"{ns}::bad_dev", bad_mut, mutates_args={"x"},
                                                       device_types="gpu"))


def _library_define_and_impl(lib, show):
    """The lower-level API: a Library fragment, define with a schema string (overloads, defaults, keyword-only
    arguments), impl for CompositeImplicitAutograd (autograd through the decomposition), CPU with a separate
    Autograd kernel, calls through torch.ops and .default, and the registration mistakes."""
    torch = lib
    ns = "p28lib"
    my_lib = torch.library.Library(ns, "DEF")
    show(my_lib.define("smooth_l1(Tensor x, Tensor y, *, float beta=1.0) -> Tensor"))
    my_lib.define("smooth_l1.scaled(Tensor x, Tensor y, float scale, *, float beta=1e-1) -> Tensor")
    my_lib.define("cube(Tensor x) -> Tensor")

    def smooth_l1(x, y, *, beta=1.0):
        d = (x - y).abs()
        return torch.where(d < beta, 0.5 * d ** 2 / beta, d - 0.5 * beta).mean()

    my_lib.impl("smooth_l1", smooth_l1, "CompositeImplicitAutograd")
    my_lib.impl("smooth_l1.scaled", lambda x, y, scale, *, beta=0.1: smooth_l1(x * scale, y * scale, beta=beta),
                "CompositeImplicitAutograd")
    my_lib.impl("cube", lambda x: x * x * x, "CPU")

    class CubeBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x * x

    my_lib.impl("cube", CubeBackward.apply, "Autograd")
    ops = torch.ops.p28lib
    show(ops.smooth_l1, ops.smooth_l1.default, ops.smooth_l1.scaled)
    show(ops.smooth_l1.default._schema)
    show(ops.smooth_l1.scaled._schema)
    show(sorted(ops.smooth_l1.overloads()), ops.smooth_l1.default.name(), ops.smooth_l1.scaled.name())
    x = torch.tensor([0.2, -1.5, 3.0], requires_grad=True)
    y = torch.tensor([0.0, 0.0, 1.0])
    loss = ops.smooth_l1(x, y)
    show(loss, loss.grad_fn.name())
    loss.backward()
    show(x.grad)
    show(ops.smooth_l1.scaled(x, y, 2.0), ops.smooth_l1.default(x, y, beta=0.5))
    c = ops.cube(x)
    show(c, c.grad_fn.name())
    g, = torch.autograd.grad(c.sum(), x)
    show(g)
    show_outcome(show, lambda: ops.smooth_l1.default(x))
    show_outcome(show, lambda: ops.smooth_l1.scaled(x, y, 0.5))
    show_outcome(show, lambda: ops.smooth_l1.default(x, y, gamma=0.5))
    show_outcome(show, lambda: my_lib.define("cube(Tensor x) -> Tensor"))
    show_outcome(show, lambda: my_lib.define("9bad(Tensor x) -> Tensor"))
    show_outcome(show, lambda: my_lib.impl("missing", lambda x: x, "CPU"))
    show_outcome(show, lambda: my_lib.impl("cube", lambda x: x, "NotAKey"))
    show_outcome(show, lambda: ops.not_there)
    show_outcome(show, lambda: torch.library.Library(ns, "WRONG"))


def _autograd_function_vjp_jvp(lib, show):
    """An autograd.Function written with vjp/jvp staticmethods (vjp is backward's other name), used in reverse
    and forward mode and with torch.func, and what happens under vmap without generate_vmap_rule."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(2804)

    class Swish(torch.autograd.Function):
        @staticmethod
        def forward(x, beta):
            return x * torch.sigmoid(beta * x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, beta = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            ctx.beta = beta

        @staticmethod
        def vjp(ctx, grad):
            x, = ctx.saved_tensors
            s = torch.sigmoid(ctx.beta * x)
            return grad * (s + ctx.beta * x * s * (1 - s)), None

        @staticmethod
        def jvp(ctx, x_t, beta_t):
            x, = ctx.saved_tensors
            s = torch.sigmoid(ctx.beta * x)
            return x_t * (s + ctx.beta * x * s * (1 - s))

    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = Swish.apply(x, 1.5)
    show(y, y.grad_fn.name(), type(y.grad_fn).__name__)
    y.sum().backward()
    show(x.grad)
    show(torch.autograd.gradcheck(lambda t: Swish.apply(t, 1.5), (x,), check_forward_ad=True))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), torch.ones(4, dtype=torch.float64))
        out = Swish.apply(dual, 1.5)
        show(fwAD.unpack_dual(out).tangent)
    show(torch.autograd.functional.jacobian(lambda t: Swish.apply(t, 1.5), x.detach()[:2]))
    show(torch.autograd.functional.jvp(lambda t: Swish.apply(t, 1.5), x.detach(), torch.ones(4, dtype=torch.float64))[1])
    show(Swish.generate_vmap_rule, hasattr(Swish, "vmap"))

    class OldStyle(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    show(torch.autograd.functional.vjp(lambda t: OldStyle.apply(t).sum(), torch.ones(2)))

    class NoBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp()

    z = NoBackward.apply(torch.ones(2, requires_grad=True))
    show_outcome(show, lambda: z.sum().backward())
    with fwAD.dual_level():
        show_outcome(show, lambda: NoBackward.apply(fwAD.make_dual(torch.ones(2), torch.ones(2))))


def _overrides_introspection(lib, show):
    """torch.overrides as a library author reads it: is a function overridable, what is tensor-like, the name of
    a function, a user function that defers to __torch_function__, and a TorchFunctionMode logging a model's
    forward and backward."""
    torch, nn = lib, lib.nn
    ov = torch.overrides
    torch.manual_seed(2805)
    overridable = ov.get_overridable_functions()
    show(type(overridable).__name__, torch in overridable, torch.Tensor in overridable,
         torch.nn.functional in overridable)
    show(torch.add in overridable[torch], torch.Tensor.add in overridable[torch.Tensor])
    show(ov.is_tensor_like(torch.ones(1)), ov.is_tensor_like(3.0), ov.is_tensor_like(nn.Parameter(torch.ones(1))))
    show(ov.has_torch_function((torch.ones(1), 2)), ov.has_torch_function_unary(torch.ones(1)),
         ov.has_torch_function_variadic(torch.ones(1), torch.ones(1)))
    show(ov.is_tensor_method_or_property(torch.Tensor.shape.__get__),
         ov.is_tensor_method_or_property(torch.Tensor.size))
    show(ov.resolve_name(torch.add), ov.resolve_name(torch.Tensor.add), ov.resolve_name(torch.nn.functional.relu),
         ov.resolve_name(torch.Tensor.__add__))
    ignored = ov.get_ignored_functions()
    show(type(ignored).__name__, torch.ones in ignored, torch.add in ignored, torch.Tensor.__init__ in ignored)

    class Logger(ov.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names: list = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(ov.resolve_name(func) or getattr(func, "__name__", "?"))
            return func(*args, **(kwargs or {}))

    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3)
    with Logger() as log:
        loss = model(x).pow(2).mean()
    show(log.names)
    with Logger() as log:
        loss.backward()
    show(log.names, model[0].weight.grad)

    def clipped_dot(a, b, limit=1.0):
        if ov.has_torch_function_variadic(a, b):
            return ov.handle_torch_function(clipped_dot, (a, b), a, b, limit=limit)
        return torch.clamp((a * b).sum(), -limit, limit)

    with Logger() as log:
        r = clipped_dot(torch.ones(3), torch.ones(3), limit=2.0)
    show(r, log.names)
    show(clipped_dot(torch.ones(3), torch.ones(3)))
    show_outcome(show, lambda: ov.handle_torch_function(clipped_dot, (torch.ones(1),), 1, 2))


PROGRAMS = [
    _custom_op_schemas,
    _custom_op_autograd_training,
    _custom_op_mutation_and_devices,
    _library_define_and_impl,
    _autograd_function_vjp_jvp,
    _overrides_introspection,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
