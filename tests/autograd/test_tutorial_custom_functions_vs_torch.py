"""PyTorch's "Extending torch.autograd" note and the tutorials "Double backward with custom functions" and
"Fusing convolution and batch norm using custom function", run under tracegrad and torch.

Each program follows its document: the LinearFunction with a separate ``setup_context`` and
``ctx.needs_input_grad``, MulConstant with a non-tensor argument, ``set_materialize_grads`` with
``once_differentiable``, ``mark_non_differentiable``, ``mark_dirty``, ``vjp``/``jvp`` with ``save_for_forward``,
saving inputs, outputs or intermediate results for double backward, and the fused convolution + batch norm,
each checked with ``gradcheck``/``gradgradcheck`` as the documents do. What they show (gradients, the nodes
and their ``next_functions``, errors) must be torch's.

The difference these programs found, now fixed: a custom Function's node printed as ``<MyFnBackward object at
...>``; torch's is a Python object of ``torch.autograd.function`` (``<torch.autograd.function.MyFnBackward
object at ...>``), and the class lives in that module.
"""

from __future__ import annotations

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript


def _t(lib, shape, seed, requires_grad=True):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=lib.float64,
                      requires_grad=requires_grad)


def test_linear_function_with_setup_context():
    def program(lib, show):
        class LinearFunction(lib.autograd.Function):
            @staticmethod
            def forward(input, weight, bias):
                output = input.mm(weight.t())
                if bias is not None:
                    output += bias.unsqueeze(0).expand_as(output)
                return output

            @staticmethod
            def setup_context(ctx, inputs, output):
                input, weight, bias = inputs
                ctx.save_for_backward(input, weight, bias)

            @staticmethod
            def backward(ctx, grad_output):
                input, weight, bias = ctx.saved_tensors
                grad_input = grad_weight = grad_bias = None
                show("needs_input_grad", ctx.needs_input_grad)
                if ctx.needs_input_grad[0]:
                    grad_input = grad_output.mm(weight)
                if ctx.needs_input_grad[1]:
                    grad_weight = grad_output.t().mm(input)
                if bias is not None and ctx.needs_input_grad[2]:
                    grad_bias = grad_output.sum(0)
                return grad_input, grad_weight, grad_bias

        x, w, b = _t(lib, (4, 3), 0), _t(lib, (2, 3), 1), _t(lib, (2,), 2)
        out = LinearFunction.apply(x, w, b)
        show(out.grad_fn, out.grad_fn.next_functions, type(out.grad_fn).__module__)
        out.sum().backward()
        show(x.grad, w.grad, b.grad)
        show(lib.autograd.gradcheck(LinearFunction.apply, (x, w, b), eps=1e-6, atol=1e-4))
        LinearFunction.apply(x.detach(), w, None).sum().backward()
        show(w.grad)

    log = assert_same_transcript(program)
    assert log[0][0] == ("text", "<torch.autograd.function.LinearFunctionBackward object at 0x…>")


def test_mul_constant_and_gradient_counts():
    def program(lib, show):
        class MulConstant(lib.autograd.Function):
            @staticmethod
            def forward(tensor, constant):
                return tensor * constant

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.constant = inputs[1]

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant, None

        class TooFew(MulConstant):
            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant

        x = _t(lib, (3,), 0)
        y = MulConstant.apply(x, 5.0)
        y.sum().backward()
        show(x.grad, y.grad_fn, y.grad_fn.next_functions)
        TooFew.apply(x, 5.0).sum().backward()

    log = assert_same_transcript(program)
    assert log[-1][0][0] == "raised"


def test_materialize_grads_and_once_differentiable():
    def program(lib, show):
        class SimpleFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                ctx.save_for_backward(x)
                return x.clone(), x.clone()

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g1, g2):
                x, = ctx.saved_tensors
                show("grads", g1, g2)
                grad_input = lib.zeros_like(x)
                if g1 is not None:
                    grad_input += g1
                if g2 is not None:
                    grad_input += g2
                return grad_input

        a = _t(lib, (2,), 0)
        b, _ = SimpleFunc.apply(a)
        b.sum().backward()
        show(a.grad)
        b, _ = SimpleFunc.apply(a)
        g, = lib.autograd.grad((b * a).sum(), a, create_graph=True)  # b's gradient, a, requires grad
        show(g.requires_grad, g.grad_fn, g.grad_fn.next_functions)
        g.sum().backward()

    log = assert_same_transcript(program)
    assert "differentiate twice" in log[-1][0][2]


def test_mark_non_differentiable_and_mark_dirty():
    def program(lib, show):
        class Sort(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                sorted, idx = x.sort()
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(x, idx)
                return sorted, idx

            @staticmethod
            def backward(ctx, g1, g2):
                x, idx = ctx.saved_tensors
                show("g2", g2)
                grad_input = lib.zeros_like(x)
                grad_input.index_add_(0, idx, g1)
                return grad_input

        class Double_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = _t(lib, (4,), 0)
        values, idx = Sort.apply(x)
        show(values.requires_grad, idx.requires_grad, idx.grad_fn, values.grad_fn)
        (values * lib.arange(4.0, dtype=lib.float64)).sum().backward()
        show(x.grad)
        y = x.clone()
        z = Double_.apply(y)
        show(z is y, z.grad_fn, z.grad_fn.next_functions, y._version)
        z.sum().backward()
        show(x.grad)
        Double_.apply(x)  # a leaf that requires grad

    log = assert_same_transcript(program)
    assert log[-1][0][0] == "raised"


def test_vjp_and_jvp_staticmethods():
    def program(lib, show):
        class MyExp(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x.exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(output)
                ctx.save_for_forward(output)

            @staticmethod
            def vjp(ctx, g):
                result, = ctx.saved_tensors
                return g * result

            @staticmethod
            def jvp(ctx, t):
                result, = ctx.saved_tensors
                return t * result

        fwAD = lib.autograd.forward_ad
        x, t = _t(lib, (3,), 0), _t(lib, (3,), 1, requires_grad=False)
        with fwAD.dual_level():
            out = MyExp.apply(fwAD.make_dual(x, t))
            show(fwAD.unpack_dual(out).tangent)
        y = MyExp.apply(x)
        y.sum().backward()
        show(x.grad, y.grad_fn)
        show(lib.autograd.gradcheck(MyExp.apply, (x,), check_forward_ad=True))

    assert_same_transcript(program)


@pytest.mark.parametrize("saves", ["inputs", "outputs", "intermediate", "intermediate_on_ctx"])
def test_double_backward_tutorial(saves):
    """Saving inputs (Cube, with its own backward Function), outputs (Exp), intermediate results returned as
    outputs (Sinh), and the tutorial's wrong way: intermediates stashed on ctx, which gradgradcheck catches."""

    def program(lib, show):
        class CubeBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, grad_out, x):
                ctx.save_for_backward(x, grad_out)
                return grad_out * 3 * x ** 2

            @staticmethod
            def backward(ctx, grad_out):
                x, sav_grad_out = ctx.saved_tensors
                return grad_out * 3 * x ** 2, grad_out * sav_grad_out * 6 * x

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad_out):
                x, = ctx.saved_tensors
                return CubeBackward.apply(grad_out, x)

        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = lib.exp(x)
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad_out):
                result, = ctx.saved_tensors
                return result * grad_out

        class Sinh(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                expx, expnegx = lib.exp(x), lib.exp(-x)
                ctx.save_for_backward(expx, expnegx)
                return (expx - expnegx) / 2, expx, expnegx

            @staticmethod
            def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
                expx, expnegx = ctx.saved_tensors
                grad_input = grad_out * (expx + expnegx) / 2
                grad_input += _grad_out_exp * expx
                grad_input -= _grad_out_negexp * expnegx
                return grad_input

        class SinhBad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.expx, ctx.expnegx = lib.exp(x), lib.exp(-x)
                return (ctx.expx - ctx.expnegx) / 2

            @staticmethod
            def backward(ctx, grad_out):
                return grad_out * (ctx.expx + ctx.expnegx) / 2

        fn = {"inputs": Cube.apply, "outputs": Exp.apply, "intermediate": lambda x: Sinh.apply(x)[0],
              "intermediate_on_ctx": SinhBad.apply}[saves]
        x = _t(lib, (2,), 0)
        out = fn(x)
        grad_x, = lib.autograd.grad(out.sum(), x, create_graph=True)
        show(grad_x, grad_x.grad_fn, grad_x.grad_fn.next_functions if grad_x.grad_fn is not None else None)
        show(lib.autograd.gradcheck(fn, x))
        if saves == "intermediate_on_ctx":
            show(lib.autograd.gradgradcheck(fn, x, raise_exception=False))
        else:
            show(lib.autograd.gradgradcheck(fn, x))
            grad_x.sum().backward()
            show(x.grad)

    assert_same_transcript(program)


def test_fused_convolution_and_batch_norm():
    def program(lib, show):
        F = lib.nn.functional

        def convolution_backward(grad_out, X, weight):
            grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
            grad_X = F.conv_transpose2d(grad_out, weight)
            return grad_X, grad_input

        def unsqueeze_all(t):
            return t[None, :, None, None]

        def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
            tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
            tmp *= -1
            d_denom = tmp / (sqrt_var + eps) ** 2
            d_var = d_denom / (2 * sqrt_var)
            d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
            d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
            grad_input = X * unsqueeze_all(d_var * N)
            grad_input += unsqueeze_all(-d_var * sum)
            grad_input *= 2 / ((N - 1) * N)
            grad_input += d_mean_dx
            grad_input *= unsqueeze_all(sqrt_var + eps)
            grad_input += grad_out
            grad_input /= unsqueeze_all(sqrt_var + eps)
            return grad_input

        class FusedConvBN2DFunction(lib.autograd.Function):
            @staticmethod
            def forward(ctx, X, conv_weight, eps=1e-3):
                ctx.save_for_backward(X, conv_weight)
                X = F.conv2d(X, conv_weight)
                sum = X.sum(dim=(0, 2, 3))
                var = X.var(unbiased=True, dim=(0, 2, 3))
                N = X.numel() / X.size(1)
                sqrt_var = lib.sqrt(var)
                ctx.eps, ctx.sum, ctx.N, ctx.sqrt_var = eps, sum, N, sqrt_var
                out = X - unsqueeze_all(sum / N)
                out /= unsqueeze_all(sqrt_var + eps)
                return out

            @staticmethod
            def backward(ctx, grad_out):
                X, conv_weight = ctx.saved_tensors
                X_conv_out = F.conv2d(X, conv_weight)
                grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
                grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
                return grad_X, grad_input, None

        class FusedConvBN(lib.nn.Module):
            def __init__(self, in_channels, out_channels, kernel_size, eps=1e-3):
                super().__init__()
                self.conv_weight = lib.nn.Parameter(
                    lib.empty(out_channels, in_channels, kernel_size, kernel_size, dtype=lib.float64))
                self.eps = eps

            def forward(self, X):
                return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

        weight, X = _t(lib, (5, 3, 3, 3), 0), _t(lib, (2, 3, 4, 4), 1)
        show(lib.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight)))
        model = FusedConvBN(3, 5, 3)
        with lib.no_grad():
            model.conv_weight.copy_(weight)
        out = model(X)
        show(out.grad_fn, out.grad_fn.next_functions)
        (out ** 2).sum().backward()
        show(model.conv_weight.grad, X.grad)

    assert_same_transcript(program)
