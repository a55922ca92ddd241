"""Gradient interface (PyTorch's ``torch.nn.grad``): the gradients of ``conv{1,2,3}d`` with respect to their
input or weight, each one ``aten.convolution_backward`` call as torch's, so the values, the refusals and the
graph (a ``ConvolutionBackwardBackward0`` node, differentiable again) are the operator's."""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.nn_ops._common import ntuple


def _ntuple(n: int, name: str = "parse"):
    def parse(x):
        return ntuple(x, n)

    parse.__name__ = name
    return parse


# torch.nn.modules.utils's: an iterable as a tuple of its items, anything else repeated
_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")


def _convolution_gradient(expand_params, which: int, grad_output: Tensor, input, weight, stride, padding, dilation,
                          groups) -> Tensor:
    """One gradient (0: input's, 1: weight's) of a convolution, the other operand standing in as a size only (an
    expanded one-element tensor, as torch passes it)."""
    from .. import ops

    output_mask = (which == 0, which == 1, False)
    return ops.aten.convolution_backward(grad_output, input, weight, None, expand_params(stride),
                                         expand_params(padding), expand_params(dilation), False, [0], groups,
                                         output_mask)[which]


def _stand_in(grad_output: Tensor, size) -> Tensor:
    # (torch's ``new_empty(1)`` is whatever memory held, and the double backward multiplies it by zero-valued
    # terms: zeroed here, which keeps that from giving NaN now and then; made as torch's, which a non-tensor refuses)
    return grad_output.new_empty(1).zero_().expand(size)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its input (of size ``input_size``)."""
    input = _stand_in(grad_output, input_size)
    return _convolution_gradient(_single, 0, grad_output, input, weight, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to its weight (of size ``weight_size``)."""
    weight = _stand_in(grad_output, weight_size)
    return _convolution_gradient(_single, 1, grad_output, input, weight, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its input (of size ``input_size``)."""
    input = _stand_in(grad_output, input_size)
    return _convolution_gradient(_pair, 0, grad_output, input, weight, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to its weight (of size ``weight_size``)."""
    weight = _stand_in(grad_output, weight_size)
    return _convolution_gradient(_pair, 1, grad_output, input, weight, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its input (of size ``input_size``)."""
    input = _stand_in(grad_output, input_size)
    return _convolution_gradient(_triple, 0, grad_output, input, weight, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to its weight (of size ``weight_size``)."""
    weight = _stand_in(grad_output, weight_size)
    return _convolution_gradient(_triple, 1, grad_output, input, weight, stride, padding, dilation, groups)
