"""``torch.library``: custom_op and Library operators, run the same way on tracegrad and torch.

Operator registrations are global and cannot be undone in torch, so every test defines its operators in a
namespace of its own (``fresh_ns``), one per library."""


import re
import uuid
import warnings
from typing import Optional, Sequence  # noqa: UP035 - the hints users write

import pytest
from _lib import raised, tg, torch, warning_texts


def fresh_ns() -> str:
    return "t" + uuid.uuid4().hex[:10]


def both(program):
    """``program(lib, ns)`` for each library, each in a fresh namespace; the results with namespaces and library
    names made alike."""
    outcomes = []
    for lib in (tg, torch):
        ns = fresh_ns()
        outcome = program(lib, ns)
        outcomes.append(_normalised(outcome, ns))
    return outcomes


def _normalised(value, ns: str):
    if isinstance(value, str):
        value = value.replace(ns, "NS").replace("tracegrad._tensor.Tensor", "torch.Tensor")
        value = re.sub(r"<module '(tracegrad|torch)\._library\.custom_ops' from '[^']*'>", "<module>", value)
        return value.replace("tracegrad", "torch")
    if isinstance(value, (list, tuple)):
        return type(value)(_normalised(v, ns) for v in value)
    if isinstance(value, dict):
        return {k: _normalised(v, ns) for k, v in value.items()}
    return value


def rounded(t) -> list:
    """Values to 6 digits: tracegrad's float sin and exp (MKL's in torch) may differ in the last bit."""
    return [round(v, 6) for v in t.tolist()]


def sin_op(lib, ns: str, with_autograd: bool = True):
    @lib.library.custom_op(f"{ns}::mysin", mutates_args=())
    def mysin(x: lib.Tensor) -> lib.Tensor:
        return x.sin()

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()

    if with_autograd:
        mysin.register_autograd(backward, setup_context=setup_context)
    return mysin


def test_custom_op_values_grads_node_and_handles():
    def program(lib, ns):
        mysin = sin_op(lib, ns)
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = mysin(x)
        packet = getattr(lib.ops, ns).mysin
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return (repr(mysin), repr(packet), repr(packet.default), str(packet.default), packet.default.name(),
                rounded(y), y.grad_fn.name(), len(y.grad_fn.next_functions), rounded(g), g.grad_fn.name(),
                rounded(gg), rounded(packet(x)), rounded(packet.default(x)), mysin(x.detach()).grad_fn)

    ours, theirs = both(program)
    assert ours == theirs


def test_backward_without_registered_formula_fails_at_backward():
    def program(lib, ns):
        mysin = sin_op(lib, ns, with_autograd=False)
        x = lib.ones(2, requires_grad=True)
        y = mysin(x)
        return y.grad_fn.name(), raised(lib, lambda _: y.sum().backward())

    ours, theirs = both(program)
    assert ours == theirs


def test_needs_input_grad_non_tensor_args_and_wrong_gradient_count():
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::lin", mutates_args=())
        def lin(x: lib.Tensor, w: lib.Tensor, k: int, b: lib.Tensor) -> lib.Tensor:
            return x * w * k + b

        seen = []

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], inputs[1])
            ctx.k = inputs[2]

        def backward(ctx, g):
            x, w = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            return g * w * ctx.k, g * x * ctx.k, None, g

        lin.register_autograd(backward, setup_context=setup_context)
        x, w, b = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0]), lib.ones(2, requires_grad=True)
        y = lin(x, w, 2, b=b)
        y.sum().backward()
        edges = [e[0] is None for e in y.grad_fn.next_functions]
        lin.register_autograd(lambda ctx, g: (g, g), setup_context=setup_context)
        wrong = raised(lib, lambda _: lin(x, w, 2, b).sum().backward())
        missing = raised(lib, lambda _: lin(x, w, 2))
        return x.grad.tolist(), b.grad.tolist(), seen, edges, wrong, missing

    ours, theirs = both(program)
    assert ours == theirs


def test_tensor_list_inputs():
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::lsum", mutates_args=())
        def lsum(xs: list[lib.Tensor]) -> lib.Tensor:
            return xs[0] + xs[1]

        seen = []

        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return [g, g * 2]

        lsum.register_autograd(backward)
        p, q = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        r = lsum([p, q])
        r.sum().backward()
        return r.grad_fn.name(), len(r.grad_fn.next_functions), p.grad.tolist(), q.grad.tolist(), seen

    ours, theirs = both(program)
    assert ours == theirs


def test_mutated_args_bump_versions_and_aliases_are_refused():
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::addto", mutates_args=("out",))
        def addto(x: lib.Tensor, out: lib.Tensor, k: float) -> None:
            out.add_(x * k)

        @lib.library.custom_op(f"{ns}::ident", mutates_args=())
        def ident(x: lib.Tensor) -> lib.Tensor:
            return x

        @lib.library.custom_op(f"{ns}::viewy", mutates_args=())
        def viewy(x: lib.Tensor) -> lib.Tensor:
            return x.view(-1)

        x, out = lib.ones(3), lib.zeros(3)
        result = addto(x, out, 2.0)
        return (result, out._version, x._version, out.tolist(), raised(lib, lambda _: ident(x)),
                raised(lib, lambda _: viewy(lib.ones(2, 2))),
                raised(lib, lambda _: addto.register_autograd(lambda ctx, g: g)))

    ours, theirs = both(program)
    assert ours == theirs


def test_custom_op_errors():
    def f(lib):
        def f(x: lib.Tensor) -> lib.Tensor:
            return x.clone()
        return f

    def program(lib, ns):
        def g1(x: lib.Tensor, y: tuple[int, int]) -> lib.Tensor:
            return x

        def g2(x: lib.Tensor, n: int) -> lib.Tensor:
            return x

        def g3(x: lib.Tensor):
            return x

        def g4(x: lib.Tensor, *, y: lib.Tensor) -> lib.Tensor:
            return x

        def g5(x: lib.Tensor) -> dict:
            return x

        def define(fn, name, mutates=()):
            return lib.library.custom_op(f"{ns}::{name}", fn, mutates_args=mutates)

        errors = [raised(lib, lambda _: lib.library.custom_op(f"{ns}::a")(f(lib))),
                  raised(lib, lambda _: define(f(lib), "bad-name")),
                  raised(lib, lambda _: define(f(lib), "1bad")),
                  raised(lib, lambda _: lib.library.custom_op("nocolon", f(lib), mutates_args=())),
                  raised(lib, lambda _: define(g2, "g2", ("n",))), raised(lib, lambda _: define(g2, "g2b", ("zz",))),
                  raised(lib, lambda _: define(g3, "g3")), raised(lib, lambda _: define(g4, "g4"))]
        # the list of valid types prints each library's own classes: compared up to it
        cut = [(kind, message.split("The valid types are")[0])
               for kind, message in (raised(lib, lambda _: define(g1, "g1")), raised(lib, lambda _: define(g5, "g5")))]
        return errors, cut

    ours, theirs = both(program)
    assert ours == theirs


def test_infer_schema():
    def program(lib, ns):
        Tensor = lib.Tensor

        def h(a: Tensor, b: Optional[Tensor], c: list[Tensor], d: int, e: float, f: bool, s: str,  # noqa: UP045
              q: Sequence[int], r: Optional[int] = None, z: float = 2.0, *, k: int = 3,  # noqa: UP045
              dt: lib.dtype = lib.float32, dev: lib.device = lib.device("cpu"), ss: str = "hi") -> tuple[Tensor, Tensor]:
            return a, a

        def one(x: Tensor) -> tuple[Tensor]:
            return (x,)

        def nothing(x: Tensor) -> None:
            return None

        infer = lib.library.infer_schema
        return (infer(h, mutates_args=()), infer(h, mutates_args="unknown"), infer(h, mutates_args=("a", "c"),
                op_name="hh"), infer(one, mutates_args=()), infer(nothing, mutates_args=()))

    ours, theirs = both(program)
    assert ours == theirs


def test_library_define_impl_and_errors():
    def program(lib, ns):
        library = lib.library.Library(ns, "DEF")
        name = library.define("foo(Tensor x, float k=2.0) -> Tensor")
        library.impl("foo", lambda x, k=2.0: x * k, "CPU")
        library.define("cim(Tensor x) -> Tensor")
        library.impl("cim", lambda x: x.sin() * 2, "CompositeImplicitAutograd")
        library.define("ov.Scalar(Tensor x, Scalar s) -> Tensor")
        library.impl("ov.Scalar", lambda x, s: x + s, "CompositeExplicitAutograd")
        ops = getattr(lib.ops, ns)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        errors = [raised(lib, lambda _: library.define("foo(Tensor x) -> Tensor")),
                  raised(lib, lambda _: lib.library.Library(ns, "DEF")),
                  raised(lib, lambda _: lib.library.Library(ns, "BAD")),
                  raised(lib, lambda _: library.define("bar(Tensor x) -> Tensor", alias_analysis="WRONG")),
                  raised(lib, lambda _: library.define("other::baz(Tensor x) -> Tensor")),
                  raised(lib, lambda _: library.impl("foo", lambda x: x, "Bogus")),
                  raised(lib, lambda _: ops.nothere), raised(lib, lambda _: ops.ov.default),
                  raised(lib, lambda _: lib.library.define("nocolon", "(Tensor x) -> Tensor"))]
        return (repr(library), name, ops.foo(x).tolist(), ops.foo(x, k=3.0).tolist(), ops.cim(x).grad_fn.name(),
                ops.ov.Scalar(x, 2).tolist(), ops.ov(x, 2).tolist(), ops.ov.overloads(), ops.foo.default.name(),
                repr(lib.library.Library(ns, "IMPL", "CPU")), errors)

    ours, theirs = both(program)
    assert ours == theirs


def test_autograd_fallback_warns_at_backward():
    def program(lib, ns):
        library = lib.library.Library(ns, "DEF")
        library.define("foo(Tensor x) -> Tensor")
        library.impl("foo", lambda x: x * 2, "CPU")
        library.define("bar(Tensor x) -> Tensor")
        library.impl("bar", lambda x: lib.tensor(x.tolist()) * 2, "CPU")
        ops = getattr(lib.ops, ns)
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = ops.foo(x)
            after_forward = len(caught)
            y.sum().backward()
            z = ops.bar(x)
            z.sum().backward()
        return (after_forward, warning_texts(caught), y.grad_fn.name(), z.grad_fn.name(),
                len(z.grad_fn.next_functions), x.grad.tolist())

    ours, theirs = both(program)
    assert ours == theirs


def test_functional_api_register_autograd_and_opcheck():
    def program(lib, ns):
        library = lib.library.Library(ns, "FRAGMENT")
        lib.library.define(f"{ns}::qq", "(Tensor x) -> Tensor", lib=library)
        lib.library.impl(f"{ns}::qq", "cpu", lambda x: x.exp(), lib=library)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        lib.library.register_autograd(f"{ns}::qq", lambda ctx, g: g * ctx.saved_tensors[0],
                                      setup_context=setup_context, lib=library)
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        y = getattr(lib.ops, ns).qq(x)
        y.sum().backward()
        mysin = sin_op(lib, ns)
        checks = lib.library.opcheck(mysin, (lib.ones(2, requires_grad=True),), raise_exception=False)
        no_fake = {k: v if isinstance(v, str) else (type(v).__name__, str(v)) for k, v in checks.items()}
        mysin.register_fake(lambda x: lib.empty_like(x))
        return (y.grad_fn.name(), rounded(x.grad), no_fake, lib.library.opcheck(mysin, (lib.ones(2),)),
                raised(lib, lambda _: lib.library.register_autograd(f"{ns}::missing", lambda ctx, g: g)),
                lib.library.get_ctx())

    ours, theirs = both(program)
    assert ours == theirs


def test_register_kernel_and_set_kernel_enabled():
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::twice", mutates_args=())
        def twice(x: lib.Tensor) -> lib.Tensor:
            return x * 2

        twice.register_kernel("cpu")(lambda x: x * 3)
        values = [twice(lib.ones(1)).tolist()]
        with twice.set_kernel_enabled("cpu", False):
            values.append(twice(lib.ones(1)).tolist())
        values.append(twice(lib.ones(1)).tolist())
        return values, raised(lib, lambda _: twice.register_kernel("tpu")(lambda x: x))

    ours, theirs = both(program)
    assert ours == theirs


def test_observers_see_custom_op_under_its_name():
    from tracegrad import _events

    ns = fresh_ns()
    mysin = sin_op(tg, ns)
    seen = []
    unsubscribe = _events.subscribe(lambda event, payload: seen.append((event, payload.get("op"))), ["op", "node_created"])
    try:
        mysin(tg.ones(2, requires_grad=True))
    finally:
        unsubscribe()
    assert (("op", f"{ns}::mysin") in seen and ("node_created", f"{ns}::mysin") in seen
            and not any(op and op.startswith("GeneratedBackwardFor") for _, op in seen))


def test_register_torch_dispatch_is_refused():
    mysin = sin_op(tg, fresh_ns())
    with pytest.raises(NotImplementedError, match="no __torch_dispatch__"):
        mysin.register_torch_dispatch(object, lambda *a: None)


def test_arguments_checked_as_torch_parser_checks_them():
    """Every call is read as PyTorch's boxed-call parser reads it: the count (more arguments than the schema has
    were dropped silently), positional values for keyword-only parameters, unknown and repeated keywords, and
    each value's type (an int for a Tensor reached the kernel, a float for an int was taken)."""
    import numpy as np

    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: lib.Tensor, y: Optional[lib.Tensor], n: int, a: float, b: bool, s: str, *,  # noqa: UP045
              k: int = 3, ls: Optional[Sequence[int]] = None,  # noqa: UP045
              z: Optional[float] = None) -> lib.Tensor:  # noqa: UP045
            return x * a + (0 if y is None else y) + n + k + sum(ls or ()) + (z or 0) + b + len(s)

        @lib.library.custom_op(f"{ns}::g", mutates_args=())
        def g(xs: list[lib.Tensor], w: float) -> list[lib.Tensor]:
            return [t * w for t in xs]

        x = lib.ones(2)
        packet = getattr(lib.ops, ns).f
        calls = [lambda: f(x, None, 1, 2.0, True, "ab", k=1, ls=[4], z=0.5),
                 lambda: f(x, y=x, n=lib.tensor(2), a=2, b=False, s="s"),
                 lambda: f(x, None, np.int64(1), np.float64(2.0), 1, "s"),
                 lambda: f(x, x), lambda: f(x, None, 1, 2.0, True, "s", 4),
                 lambda: f(x, None, 1, 2.0, True, "s", k=1, q=2), lambda: f(x, None, 1, 2.0, True, "s", n=2),
                 lambda: f(x, None, 1.5, 2.0, True, "s"), lambda: f(x, None, 1, "a", True, "s"),
                 lambda: f(x, None, 1, 2.0, [1], "s"), lambda: f(x, None, 1, 2.0, True, 3),
                 lambda: f(3, None, 1, 2.0, True, "s"), lambda: f(x, 3, 1, 2.0, True, "s"),
                 lambda: f(np.ones(2), None, 1, 2.0, True, "s"), lambda: f(x, None, 1, 2.0, True, "s", k=2.5),
                 lambda: f(x, None, 1, 2.0, True, "s", ls=(1, 2.5)), lambda: f(x, None, 1, 2.0, True, "s", ls=5),
                 lambda: f(x, None, 1, 2.0, True, "s", z="q"), lambda: packet.default(x, None, 1, 2.0, True),
                 lambda: packet(y=x), lambda: g(x, 2.0), lambda: g([x, 1], 2.0), lambda: g((x,), 2)]
        return [raised(lib, lambda _, call=call: call()) for call in calls]

    ours, theirs = both(program)
    assert ours == theirs


def test_backward_returning_a_list_is_one_gradient_without_tensor_lists():
    """PyTorch spreads a backward's list of gradients only for an operator with a tensor list; elsewhere a list is
    one (wrong) gradient, refused by the gradient count (tracegrad spread it, and took it)."""
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::mul2", mutates_args=())
        def mul2(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            return x * y

        mul2.register_autograd(lambda ctx, g: [g, g], setup_context=lambda ctx, inputs, output: None)
        x = lib.ones(2, requires_grad=True)
        return raised(lib, lambda lib: lib.autograd.grad(mul2(x, x).sum(), x))

    ours, theirs = both(program)
    assert ours == theirs and theirs is not None


def test_aten_implementations_are_refused_and_impl_returns_none():
    """A kernel for an aten operator would replace the built-in one in PyTorch: tracegrad, whose built-in kernels
    are not Python functions, refuses it (it kept it aside, silently unused). ``torch.library.impl`` returns None,
    as PyTorch's, also as a decorator."""
    L = tg.library.Library("aten", "IMPL")
    with pytest.raises(NotImplementedError, match="built-in operators take no registrations"):
        L.impl("sin", lambda x: x * 0, "CPU")
    assert tg.sin(tg.tensor([1.0])).item() == pytest.approx(0.841470985)

    def program(lib, ns):
        lib.library.define(f"{ns}::h", "(Tensor x) -> Tensor")
        returned = lib.library.impl(f"{ns}::h", "cpu", lambda x: x + 1)
        decorated = lib.library.impl(f"{ns}::h", "CompositeExplicitAutograd")(lambda x: x + 2)
        return returned, decorated, getattr(lib.ops, ns).h(lib.zeros(1)).tolist()

    ours, theirs = both(program)
    assert ours == theirs


def test_opcheck_mutation_message_and_unknown_test_utils():
    """test_schema's refusal of an undeclared mutation in PyTorch's words (tracegrad prefixed the operator's name);
    an unknown test is a ValueError naming the known ones (tracegrad reported a KeyError as a failed test)."""
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::sneaky", mutates_args=())
        def sneaky(x: lib.Tensor) -> lib.Tensor:
            x.add_(1)
            return x.clone()

        x = lib.ones(3)
        return (raised(lib, lambda lib: lib.library.opcheck(sneaky, (x,), test_utils="test_schema")),
                raised(lib, lambda lib: lib.library.opcheck(sneaky, (x,), test_utils="nope")))

    ours, theirs = both(program)
    assert ours == theirs


def test_setup_context_gets_keyword_only_inputs():
    """An operator with keyword-only parameters hands them to setup_context as ``keyword_only_inputs`` (tracegrad
    never did: a setup_context written for PyTorch failed, and one without the parameter was accepted)."""
    def program(lib, ns):
        @lib.library.custom_op(f"{ns}::scale", mutates_args=())
        def scale(x: lib.Tensor, *, s: float = 2.0) -> lib.Tensor:
            return x * s

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.s = keyword_only_inputs["s"]

        scale.register_autograd(lambda ctx, g: g * ctx.s, setup_context=setup_context)
        x = lib.ones(2, requires_grad=True)
        grads = [lib.autograd.grad(scale(x, s=3.0).sum(), x)[0].tolist(),
                 lib.autograd.grad(scale(x).sum(), x)[0].tolist()]
        scale.register_autograd(lambda ctx, g: g, setup_context=lambda ctx, inputs, output: None)
        return grads, raised(lib, lambda lib: scale(x, s=3.0))

    ours, theirs = both(program)
    assert ours == theirs
