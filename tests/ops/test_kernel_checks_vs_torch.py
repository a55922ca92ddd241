"""What an operator checks of its arguments past torch's parser, and how it says so, as torch does.

Each snippet runs against tracegrad and torch with ``x = ones(2, 3)``; both must refuse it with the same exception
type and message, or both accept it with the same values, dtype and warnings (torch's "(Triggered internally at
...)" suffix left out).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests._lib import raised, tg, torch, warning_texts

SNIPPETS = [
    # where takes a bool condition (a uint8 one with a warning torch gives once per process: see below)
    "x.where(x, 1.5)", "x.where(x, x)", "torch.where(x, x, 2)", "torch.where(x.int(), 1, x)", "x.where(x > 0, 2)",
    # isin has no kernel for bool or complex, a number counting as its default dtype
    "torch.isin(x, True)", "torch.isin(True, x)", "torch.isin(x.bool(), x)", "torch.isin(x, x.bool())",
    "torch.isin(x.to(torch.complex64), x)", "torch.isin(x, 1j)", "torch.isin(1.5, x.bool())", "torch.isin(x, 1)",
    # norm_except_dim moves dim to the front with transpose, which checks it (-1 is "every dim")
    "torch.norm_except_dim(x, 1, 3)", "torch.norm_except_dim(x, 2, -3)", "torch.norm_except_dim(x, 2, -2)",
    "torch.norm_except_dim(x, 2, -1)", "torch.norm_except_dim(x, 2, 1)",
    # is_pinned's deprecated device is still read: an int is an accelerator's index
    "x.is_pinned(3)", "x.is_pinned(-1)", "x.is_pinned('cpu')", "x.is_pinned(torch.device('cpu'))", "x.is_pinned()",
    "torch.device(-1)", "x.to(-1)",
    # a Tensor bound beside a Number one: only a 0-d tensor not requiring grad reads as a number
    "torch.clamp(x, x, 1.5)", "torch.clamp(x, 1, x)", "torch.clamp(x, x, True)", "x.clamp(x, 3)", "x.clamp_(x, 3)",
    "x.clip(x, 3)", "x.clip_(x, 3)", "torch.clip(x, 1, x)", "torch.clamp_(x, x, 3)",
    "torch.clamp(x, torch.tensor(0.5), 0.7)", "torch.clamp(x, 0.5, torch.tensor(0.7))",
    "torch.clamp(x, torch.tensor([0.5]), 0.7)", "torch.clamp(x, torch.tensor(0.5, requires_grad=True), 0.7)",
    "x.clamp_(torch.tensor(0.5), 0.7)", "torch.clamp(x, x, None)", "torch.clamp(x, None, x * 0)",
    "torch.clamp(x.requires_grad_(), torch.tensor(0.5), 0.7).grad_fn.name()",
    # a tensor for a float or Number parameter: a 0-d one is its number, any other is refused
    "torch.nan_to_num(x, x)", "x.nan_to_num(x, 1.5)", "x.nan_to_num_(x)", "torch.nan_to_num(x, torch.tensor(2.0))",
    "torch.nan_to_num(x / 0, 1.0, torch.tensor(2.0))", "x.nan_to_num(torch.tensor(1.0, requires_grad=True))",
    "torch.threshold(x, x, 1.5)", "torch.nn.functional.threshold_(x, x, 1.5)",
    "torch.threshold(x, torch.tensor(0.5), 1.5)", "torch.nn.functional.softplus(x, x, 1)",
    "torch.nn.functional.softplus(x, torch.tensor(2.0), 1)", "x.normal_(x, 1.5)", "x.cauchy_(x, 1.5)",
    "x.log_normal_(x, 1.5)", "x.log_normal_(torch.tensor([1.0]), 1.5)", "x.uniform_(x, 1.5)", "x.exponential_(x)",
    "x.normal_(torch.tensor(1.0), torch.tensor(0.0))",
    # the method's ints after the first are more indices (torch's ``*indices``)
    "x.hsplit(1, True)", "x.hsplit(1, 3)", "x.hsplit(1, 1, 3)", "x.vsplit(1, 3)", "x.vsplit(1, True)",
    "x.dsplit(1, 2)", "torch.hsplit(x, 1, 3)", "x.hsplit(1, 1.5)", "x.hsplit(1, [2])", "x.hsplit(sections=3)",
    "x.hsplit(indices=[1])", "torch.vsplit(x, indices=[1])", "torch.hsplit(x, 2)", "torch.hsplit(x, 1, sections=2)",
    "x.hsplit(1, sections=2)",
    # sub's deprecated order (input, alpha, other), with its warning; subtract and rsub take (other, alpha)
    "torch.sub(x, 1, 1.5)", "torch.sub(x, 2, x)", "torch.sub(x, 1, True)", "torch.sub(x, 1, 3)",
    "torch.sub(x.int(), 1.5, x.int())", "torch.sub(x, x, 2)", "torch.sub(x, torch.tensor(2.0), x)",
    "torch.sub(x, 1, 1.5, alpha=2)", "x.sub(1, 1.5)", "x.sub(2, x)", "x.sub(1, True)", "x.sub_(1, 1.5)",
    "x.sub_(2, x)", "torch.subtract(x, 1, 1.5)", "torch.subtract(x, 1, True)", "torch.subtract(x, 2, x)",
    "x.subtract(1, True)", "x.subtract(1, 1.5)", "x.subtract_(1, 3)", "x.subtract_(2, x)", "torch.rsub(x, 1, 1.5)",
    "torch.rsub(x, 1, True)", "torch.rsub(x, 2, x)", "torch.rsub(x, x, 2)", "torch.rsub(x.int(), 1, 1.5)",
    # a bool alpha is for bool results only
    "torch.sub(x, 1, alpha=True)", "x.sub_(x, alpha=True)", "torch.add(x, 1, alpha=True)",
    "torch.add(x.bool(), x.bool(), alpha=True)",
    # where's uint8 condition, warned about (torch once per process: the test turns warn-always on)
    "torch.where(x.to(torch.uint8), x, 2)", "x.where(x.to(torch.uint8), 2)",
    # ``to(number)``: an int alone is a device index, another number goes to ``to(Tensor other)`` as a tensor
    "x.to(1.5)", "x.to(1, True)", "x.to(1)", "x.to(True)", "x.to(1.5, True)", "x.to(2, False, True)", "x.to(1j)",
    "x.to(1, copy=True)", "x.to(1, torch.float64)", "x.to(1, None)", "x.to(torch.float64, True)",
    # the older single tolerance, by position: absolute for matrix_rank, relative for pinv; hermitian after it
    "torch.linalg.matrix_rank(x, 1.5)", "torch.linalg.matrix_rank(x, True)", "torch.linalg.matrix_rank(x, 3)",
    "torch.linalg.matrix_rank(x, torch.tensor(0.1))", "torch.linalg.matrix_rank(x, tol=0.1)",
    "torch.linalg.matrix_rank(x, 0.1, True)", "torch.linalg.matrix_rank(x, x, True)",
    "torch.linalg.matrix_rank(x, 0.1, atol=0.2)", "torch.linalg.matrix_rank(torch.eye(2), 0.1, True)",
    "torch.linalg.matrix_rank(torch.tensor([[2.0, 0], [0, 0.5]]), 1.0)", "torch.linalg.pinv(x, 1.5)",
    "torch.linalg.pinv(x, 1, True)", "torch.linalg.pinv(x, x, True)", "torch.linalg.pinv(x, 0.1, rtol=0.2)",
    "torch.linalg.pinv(x, rcond=0.1)", "torch.linalg.pinv(x, hermitian=True)",
    "torch.linalg.pinv(torch.tensor([[2.0, 0], [0, 0.5]]), 0.3)", "torch.linalg.pinv(torch.eye(2), 0.1, True)",
    # torch's C++ elu_ takes its scales by position; its C++ hardtanh_ does not compare the bounds
    "torch.nn.functional.elu_(x, 1, 1.5)", "torch.nn.functional.elu_(-x, 1, 1.5, 2)",
    "torch.nn.functional.elu_(x, scale=2)", "torch.nn.functional.elu_(x, 1, 1, 1, 1)",
    "torch.nn.functional.hardtanh_(x, 1.5)", "torch.nn.functional.hardtanh_(x * 0.5, 0, 0.3)",
    "torch.nn.functional.hardtanh(x, 1.5)",
    # special.softmax takes dtype by position
    "torch.special.softmax(x, 1, None)", "torch.special.softmax(x, 1, torch.float64)",
    "torch.special.softmax(x, 1, True)",
    # cond's invalid norm is printed as a Scalar, its square check's as std::to_string; a bool ord is an int
    "torch.linalg.cond(x, 1.5)", "torch.linalg.cond(x, 1e20)", "torch.linalg.cond(x, 0.1)", "torch.linalg.cond(x, 3)",
    "torch.linalg.cond(x, True)", "torch.linalg.cond(x, 1.0)", "torch.linalg.cond(torch.eye(2), True)",
    # the legacy cholesky checks the shape in its own name
    "torch.cholesky(x, True)", "torch.cholesky(torch.eye(2))",
    # calls torch's parser reads otherwise than Python would: deprecated orders (with the warning), a method's ints
    # as one list, keywords named as torch names them, and what no signature takes, whatever the values
    "torch.add(x, 2, x * 3)", "x.add(2, x)", "x.clone().add_(2, x)", "torch.addcmul(x, 0.5, x, x)",
    "x.addcmul(0.5, x, x)", "torch.addmm(0.5, torch.eye(2), 2, torch.ones(2, 3), torch.ones(3, 2))",
    "torch.eye(2).addmm(0.5, 2, torch.ones(2, 3), torch.ones(3, 2))", "torch.sub(x, 2, other=x)",
    "x.squeeze(0, 1)", "x.squeeze(1, True)", "x.count_nonzero(0, 1)", "x.broadcast_to(2, 2, 3)",
    "x.sum_to_size(1, 3)", "x.flip(1, 1, 3)", "x.clone().copy_(other=x * 2)", "torch.isin(x, test_element=1.0)",
    "x.tensor_split(sections=3)", "torch.randint_like(x, high=3).shape",
    "torch.linalg.lstsq(torch.eye(2), b=torch.ones(2, 1)).solution", "x.median(keepdim=True)",
    "torch.prod(x, keepdim=True)", "x.sort(1, stable=True)", "torch.randint_like(x, low=3)",
    "torch.normal(x, device=None)", "x.new_zeros(device=None)", "torch.zeros_like(x, requires_grad=None)",
    "torch.asarray(x, requires_grad=None)",
    # a new tensor's device is looked for first (an int is an accelerator's index), then its pinned memory, which
    # needs an accelerator; torch.tensor names what it cannot pin; as_tensor and asarray of a tensor move it
    "torch.zeros_like(x, device=3)", "torch.zeros_like(x, pin_memory=True)", "torch.ones_like(x, pin_memory=True)",
    "torch.empty_like(x, pin_memory=True)", "torch.full_like(x, 2, device=3)", "torch.rand_like(x, device=3)",
    "torch.randn_like(x, pin_memory=True)", "torch.randint_like(x, 3, pin_memory=True)",
    "torch.zeros_like(x, device=3, pin_memory=True)", "torch.zeros_like(x, device='cuda')",
    "torch.ones_like(x, device='cpu', requires_grad=True)", "x.new_zeros(1, pin_memory=True)",
    "x.new_zeros(1, device=3)", "x.new_ones(1, pin_memory=True)", "x.new_empty(1, pin_memory=True)",
    "x.new_full((1,), 2, pin_memory=True)", "torch.zeros(2, pin_memory=True)", "torch.full((2,), 1, pin_memory=True)",
    "torch.randint(3, (2,), pin_memory=True)", "torch.normal(1., 1., (2,), pin_memory=True)",
    "torch.tensor(x, pin_memory=True)", "torch.tensor(x.numpy(), pin_memory=True)",
    "torch.tensor([1], pin_memory=True)",
    "torch.tensor(x, device=3, pin_memory=True)", "torch.as_tensor(x, device=3)", "torch.as_tensor(x, device='cuda')",
    "torch.as_tensor(x, device='cpu') is x", "torch.asarray(x, device=3)", "torch.asarray(x, device='cuda')",
    "torch.asarray(x, device='cpu') is x",
    # linspace and logspace take a tensor bound only 0-d
    "torch.linspace(x, x, 3)", "torch.linspace(torch.tensor([0.]), 1, 3)", "torch.logspace(1, x, 3)",
    "torch.linspace(torch.tensor(0.), torch.tensor(1.), 3)",
    # repeat_interleave: repeats' dims before the dim, an int's output size checked
    "torch.repeat_interleave(x, x, 3)", "x.repeat_interleave(x, 3)", "torch.repeat_interleave(x, 1, output_size=3)",
    "torch.repeat_interleave(x, 2, 0, output_size=4)", "torch.repeat_interleave(x, 2, 0, output_size=-1)",
    # to(Tensor other, bool non_blocking, bool copy) takes no dtype or device, None included
    "x.to(x, dtype=None)", "x.to(x, None)", "x.to(x, True, True)", "x.to(1.5, dtype=None)", "x.to(1, dtype=None)",
    # what torch's parser refuses that the operators took: the deprecated in-place addcmul_ order, a None format
    "x.addcmul_(1, tensor2=x)", "x.addcdiv_(1, tensor2=x)", "x.addcmul_(0.5, x, x)", "x.contiguous(memory_format=None)",
    "x.is_contiguous(memory_format=None)", "x.contiguous(memory_format=torch.preserve_format)",
    "x.t().contiguous(memory_format=torch.preserve_format)",
    # positional or optional arguments torch takes: histogramdd's range, gradient's None spacing, trapz's float dx,
    # and any int reduction in the torch-level losses (only 1 and 2 reduce)
    "torch.histogramdd(x, 1, None)", "torch.histogramdd(x, 1, [True])", "torch.gradient(x, spacing=None)",
    "torch.trapz(x, dx=True)", "torch.kl_div(x, x, 3)", "torch.binary_cross_entropy_with_logits(x, x, reduction=3)",
    "torch.hinge_embedding_loss(x, x, reduction=3)",
    # the checks in torch's order and words
    "torch.cholesky_solve(x, x, True)", "torch.cholesky_solve(x, torch.eye(3))",
    "torch.cholesky_solve(x.double(), torch.eye(2))",
    "torch.conv2d(x, x, None)", "torch.conv3d(x, x, None)", "torch.conv_transpose2d(x, x, None)",
    "torch.conv1d(x[0], x, None)", "torch.conv1d(x, x, None)", "torch.lu_unpack(x, x, True)",
    "torch.max_pool1d_with_indices(x, 1, 1, 3)", "torch.max_pool1d_with_indices(x, 3, 1, 0, 2)",
    "torch.nn.functional.max_pool2d(x[None], (1, 3), 1, (0, 2), (1, 2))", "torch.nn.functional.avg_pool2d(x, 3)",
    "torch.nn.functional.avg_pool2d(x, 1, None)", "torch.nn.functional.avg_pool2d(torch.ones(1, 1, 0, 1), 1)",
    "torch.nn.functional.max_pool2d(x, 1)", "torch.nuclear_norm(x, 1, True)", "torch.nuclear_norm(x, True)",
    "torch.linalg.matrix_norm(x, 'nuc', (1, -1))", "torch.searchsorted(x, 1.5)", "torch.searchsorted(x[0], 3)",
    "torch.take_along_dim(x, x, None)", "torch.take_along_dim(x, x.int(), 1)", "torch.tensor_split(x, x, 3)",
    "torch.tensor_split(x, 0, 3)", "torch.linalg.tensorinv(x, 3)", "x.geometric_(True)",
    # a repeated dim against one out of range: the reductions wrap every dim first, the dim bitsets one by one
    *(f"x.{name}((1, 1, 3))" for name in ("sum", "mean", "amax", "amin", "logsumexp", "all", "any", "count_nonzero",
                                           "nanmean", "std", "var", "nansum", "flip", "squeeze", "var_mean")),
    # baddbmm/addbmm read the result's sizes from the batches (an IndexError for a missing dim) and expand self to
    # them, even with beta=0, before they check the batches are 3-D and fit; a structured in-place form's own words
    "torch.baddbmm(x, x, x)", "torch.addbmm(x, x, x)", "x.addbmm_(x, x)", "x.baddbmm_(x, x)",
    "torch.baddbmm(x, torch.ones(2, 3, 4), torch.ones(2, 4, 4))", "torch.baddbmm(x.double(), torch.ones(2, 3), x)",
    "torch.baddbmm(torch.ones(2, 3, 4), torch.ones(3), torch.ones(2, 3, 4))",
    "torch.baddbmm(torch.ones(2, 3, 4), torch.tensor(1.0), torch.ones(2, 4, 4))",
    "torch.addbmm(torch.ones(2, 3, 4), torch.ones(2, 3), torch.ones(2, 3, 4))",
    "torch.addbmm(x, torch.ones(2, 3, 4), torch.ones(2, 4, 4), beta=0)",
    "torch.addbmm(torch.ones(3, 4), torch.ones(2, 3, 5), torch.ones(2, 4, 4))",
    "torch.addbmm(torch.ones(3, 4), torch.ones(2, 3, 4), torch.ones(3, 4, 4))",
    "torch.addbmm(torch.ones(4), torch.ones(2, 3, 4), torch.ones(2, 4, 4), beta=0.5, alpha=2)",
    "torch.ones(1, 3, 4).baddbmm_(torch.ones(2, 3, 4), torch.ones(2, 4, 4))",
    "torch.ones(1, 4).addmm_(torch.ones(3, 4), torch.ones(4, 4))",
    # bilinear checks dtypes, then sizes read with size() (a 2-D weight fails there), a 4-D weight in _trilinear
    "torch.bilinear(x, x, x)", "torch.nn.functional.bilinear(x, x, torch.ones(2, 3, 3, 3))",
    "torch.bilinear(x, x, torch.ones(2, 3, 3).double())", "torch.bilinear(x, x, torch.ones(2, 3, 3), torch.ones(3))",
    "torch.bilinear(x, torch.ones(4, 3), torch.ones(2, 3, 3))", "torch.bilinear(x, x[None], torch.ones(2, 3, 3))",
    "torch.bilinear(x, x, torch.tensor(1.0))", "torch.bilinear(x, x, torch.ones(2, 3, 3), torch.ones(()))",
    "torch.bilinear(x, x * 2, torch.arange(18.0).reshape(2, 3, 3), torch.ones(2))",
    # group_norm's refusal of a bias prints the weight's shape ([0] when there is none)
    "torch.group_norm(x, 1, bias=x)", "torch.group_norm(x, 1, torch.ones(3), x)",
    "torch.native_group_norm(x, None, torch.ones(4), 2, 3, 1, 1, 1e-5)",
    # histogram and histogramdd: PyTorch's checks in their order (edges given are checked before the bin count, a
    # bin count before the range, the range before the extrema's dtype and the weight)
    "torch.histogram(x, x)", "torch.histogram(x, torch.ones(1))", "torch.histogram(x, torch.ones(0))",
    "torch.histogram(x, range=[True])", "torch.histogram(x, 1, range=[1, 2, 3])", "x.histogram(x, weight=x)",
    "torch.histogram(x, 3, weight=torch.ones(5))", "torch.histogram(x, 3, weight=torch.ones(6).double())",
    "torch.histogram(x, torch.arange(3.0), weight=torch.ones(5))", "torch.histogram(x, 3, weight=torch.ones(()))",
    "torch.histogram(x.long(), 3, range=[1])", "torch.histogram(x.long(), 3, range=[0, 1])",
    "torch.histogram(x.long(), torch.arange(3.0))", "torch.histogram(x.long(), torch.arange(1))",
    "torch.histogram(torch.tensor([1.0, float('nan')]), 3)", "torch.histogram(x, 3, range=[float('inf'), 1])",
    "torch.histogram(x.cos(), 4, weight=x.sin(), density=True)", "torch.histogram(x.cos(), x[0].cos().sort()[0])",
    "torch.histogramdd(x, 1, weight=x)", "torch.histogramdd(x, [1, 2])", "torch.histogramdd(x, [torch.ones(2)] * 2)",
    "torch.histogramdd(x, [torch.ones(2, 2)] * 3)", "torch.histogramdd(x, [torch.ones(0)] * 3)",
    "torch.histogramdd(x, [torch.ones(1)] * 3)", "torch.histogramdd(x, 0)", "torch.histogramdd(x, -1)",
    "torch.histogramdd(x, [1, -2, 1])", "torch.histogramdd(x, 2, range=[2.0, 1.0] * 3)", "torch.histogramdd(x[0], 2)",
    "torch.histogramdd(x.long(), 2)", "torch.histogramdd(x.long(), 2, range=[0.0, 1.0] * 3)",
    "torch.histogramdd(x, [torch.ones(2).double()] * 3)", "torch.histogramdd(x, 2, weight=torch.ones(2).double())",
    "torch.histogramdd(torch.arange(6.0).reshape(3, 2).sin(), [2, 3], weight=torch.arange(3.0), density=True)",
    "torch.histogramdd(torch.arange(6.0).reshape(3, 2), [torch.tensor([0.0, 2, 5]), torch.tensor([1.0, 3, 4])])",
    # searchsorted checks its sorter first: shape, long dtype, then its indices
    "torch.searchsorted(x, x, sorter=x)", "torch.searchsorted(x, 1, sorter=x)",
    "torch.searchsorted(x, x, sorter=x.int())", "torch.searchsorted(x, x, sorter=x.long() * 5)",
    "torch.searchsorted(x, x[0], sorter=x)", "torch.searchsorted(x, x, sorter=torch.ones(3))",
    "torch.searchsorted(torch.tensor([3.0, 1, 2]), torch.tensor([1.5, 2.5]), sorter=torch.tensor([1, 2, 0]))",
    # ormqr: other's size against input's, then tau's length against LAPACK's, before the ranks and dtypes
    "torch.ormqr(x, x, x)", "x.ormqr(x, x, False)", "torch.ormqr(torch.ones(3, 3), torch.tensor(1.0), x)",
    "torch.ormqr(torch.ones(3, 3), torch.ones(1, 3), torch.ones(3, 3))",
    # linalg.lu_solve checks the dtypes (pivots' included) before the shapes
    "torch.linalg.lu_solve(x, x, x)", "torch.lu_solve(x, x, x)", "x.lu_solve(x, x)",
    "torch.linalg.lu_solve(x, x[0].int(), x)", "torch.linalg.lu_solve(x.long(), x[0].int(), x.long())",
    "torch.linalg.lu_solve(torch.ones(3, 3), torch.ones(2).int(), torch.ones(3, 3))",
    "torch.linalg.lu_solve(torch.ones(2, 3, 3), torch.ones(3).int(), torch.ones(3, 3))",
    # repeat_interleave(repeats) dispatches on the dtype before it looks at the rank
    "torch.repeat_interleave(x)", "torch.repeat_interleave(x, output_size=3)", "torch.repeat_interleave(x.long())",
    # put_ checks its arguments before it refuses an overlap
    "x.put_(x, x)", "x.put_(x.long(), x)", "x.put_(x[0].long(), x)", "torch.ones(0).put_(x[0, :1].long(), x[0, :1])",
    # data given by position and keyword: torch's parser counts the positional arguments first
    "torch.tensor(x, x, data=x)", "torch.tensor(1, data=None)", "torch.as_tensor(x, 1, data=x)",
    "torch.asarray(x, obj=x)", "torch.asarray(x, x, obj=x)", "torch.tensor(data=[2], dtype=torch.float64)",
    # matrix_rank and pinv: tolerances of several values broadcast with the batch, as torch's get_atol_rtol
    "torch.linalg.matrix_rank(x, atol=x)", "torch.linalg.matrix_rank(x, rtol=x)", "torch.linalg.matrix_rank(x, tol=x)",
    "torch.linalg.pinv(x, atol=x)", "torch.linalg.pinv(x, rtol=x)", "torch.linalg.pinv(x, rcond=x)",
    "torch.linalg.pinv(x, x, hermitian=True)",
    "torch.linalg.matrix_rank(torch.arange(24.0).reshape(2, 3, 4).sin(), atol=torch.tensor([0.5, 2.0]))",
    "torch.linalg.matrix_rank(torch.arange(24.0).reshape(2, 3, 4).sin(), rtol=torch.tensor([[0.5], [0.01]]))",
    "torch.linalg.matrix_rank(torch.arange(24.0).reshape(2, 3, 4).sin(), atol=torch.tensor([0.5, 2.0, 1.0]))",
    "torch.linalg.pinv(torch.arange(24.0).reshape(2, 3, 4).sin(), atol=torch.tensor([0.5, 0.01]))",
    "torch.linalg.pinv(torch.arange(24.0).reshape(2, 3, 4).sin(), torch.tensor([0.5, 0.01]))",
    "torch.linalg.pinv(torch.arange(24.0).reshape(2, 3, 4).sin().double(), rtol=torch.tensor([[0.5], [0.01]]))",
    "torch.linalg.pinv(torch.arange(24.0).reshape(2, 3, 4).sin(), atol=torch.tensor(0.5), rtol=0.1)",
    "torch.linalg.pinv(torch.ones(2, 3, 4), atol=torch.ones(3), rtol=0.5)",
    "torch.linalg.pinv(x, atol=torch.ones(3, requires_grad=True))", "torch.linalg.pinv(x, atol=torch.tensor(0.5j))",
    "torch.linalg.matrix_rank(x.long(), atol=x[0], rtol=x[0])", "torch.linalg.matrix_rank(torch.ones(2, 0, 3), atol=x)",
    # randint_like(t, high) takes a 0-d tensor high only
    "torch.randint_like(x, x)", "torch.randint_like(x, torch.tensor([5]))", "torch.randint_like(x, x, device=3)",
    "torch.randint_like(x, torch.tensor(5)).shape", "torch.randint_like(x, 5, requires_grad=True).requires_grad",
    # addmm/addmv/addr expand self to the result even with beta=0; addmv holds self to a vector of the result's
    # length (or one element) in its own words; addmm_ is structured, addr_ keeps self unexpanded, and addbmm_
    # resizes a self that expands to the result
    "torch.addmm(torch.ones(3), x, torch.ones(3, 2), beta=0)", "torch.addmm(torch.ones(3, 2), x, x.t(), beta=0)",
    "torch.addmm(torch.ones(2, 2, 2), x, x.t(), beta=0)", "torch.addmm(torch.ones(1, 2), x, x.t(), beta=0)",
    "torch.addmv(torch.ones(3), x, x[0], beta=0)", "torch.addmv(torch.ones(3), x, x[0])",
    "torch.addmv(torch.ones(()), x, x[0, :2])", "torch.addmv(torch.ones(1, 2), x, x[0])",
    "torch.addmv(torch.ones(1), x, x[0], beta=0)", "torch.ones(3).addmv_(x, x[0], beta=0)",
    "torch.addr(torch.ones(3), x[0], x[0], beta=0)", "torch.addr(torch.ones(2, 2, 3), x[0], x[0], beta=0)",
    "torch.addr(torch.ones(3).int(), x[0], x[0], beta=0)", "torch.ones(1, 3).addr_(x[:, 0], x[0])",
    "torch.ones(3).addr_(x[:, 0], x[0])", "torch.ones(3, 3).addr_(x[:, 0], x[0], beta=0)",
    "torch.ones(2, 3).addr_(x, x[0], beta=0)", "torch.ones(3, 3).addmm_(x, x.t(), beta=0)",
    "torch.ones(3, 2).addmm_(x, x.t())", "torch.ones(1, 4).addbmm_(torch.ones(2, 3, 4), torch.ones(2, 4, 4))",
    "torch.ones(3, 1).addbmm_(torch.ones(2, 3, 4), torch.ones(2, 4, 4), beta=0.5, alpha=2)",
    "torch.ones(4).addbmm_(torch.ones(2, 3, 4), torch.ones(2, 4, 4), beta=0)",
    "torch.ones(1, 4).addbmm_(0.5, torch.ones(2, 3, 4), torch.ones(2, 4, 4))",
    "torch.ones(5, 4).addbmm_(torch.ones(2, 3, 4), torch.ones(2, 4, 4))",
    # an in-place add/sub refuses a result type it cannot write into self before it looks at alpha
    "x.long().add_(x, alpha=True)", "x.long().sub_(x, alpha=True)", "x.long().add_(1.5, alpha=True)",
    "x.bool().add_(x.long(), alpha=True)", "x.long().add_(1j, alpha=True)", "x.long().add_(x.long(), alpha=True)",
    "x.bool().sub_(x.long(), alpha=True)", "x.int().add_(x.long(), alpha=True)",
    # a factory asked for an integer tensor requiring grad says so in its own words (not requires_grad_'s)
    "torch.zeros_like(x.long(), requires_grad=True)", "x.long().new_zeros(2, requires_grad=True)",
    "torch.ones_like(x.long(), requires_grad=True)", "torch.empty_like(x.long(), requires_grad=True)",
    "torch.full_like(x.long(), 2, requires_grad=True)", "x.new_zeros(2, dtype=torch.long, requires_grad=True)",
    "torch.zeros_like(x, dtype=torch.long, requires_grad=True)", "torch.asarray(x.long(), requires_grad=True)",
    "torch.asarray(x.long().numpy(), requires_grad=True)", "x.long().requires_grad_()",
    "torch.frombuffer(bytearray(8), dtype=torch.int32, requires_grad=True)",
    # histc checks bins (in histogram's words), then its range (finite, then ordered), then the input's dtype
    "torch.histc(x.long(), 3, 2, 1)", "torch.histc(x.bool(), 3, 2, 1)", "torch.histc(x.long(), 0, 2, 1)",
    "torch.histc(x, 0)", "torch.histc(x.long(), 3, float('inf'), 1)", "torch.histc(x.long(), 3, float('nan'), 2)",
    "torch.histc(x.long(), 3, 1, 1)", "torch.histc(x, 3, 1e20, 1.5)", "torch.histc(x.long(), 3)",
    "torch.histc(torch.tensor([0.1, 0.5, 0.7, 0.3]), 4, 0.1, 0.7)",
    # embedding's max_norm renorms the sorted rows with select(), which refuses the first out of range
    "torch.nn.functional.embedding(torch.tensor([10]), torch.ones(10, 3), max_norm=1.0)",
    "torch.nn.functional.embedding(torch.tensor([-11, 2]), torch.ones(10, 3), max_norm=1.0)",
    "torch.nn.functional.embedding(torch.tensor([-1, 9]), torch.ones(10, 3) * 2, max_norm=1.0)",
    "torch.embedding_renorm_(torch.ones(10, 3), torch.tensor([12, 3, -1, 11]), 1.0, 2.0)",
    # histogramdd of points with no coordinates: a 0-d histogram that counts nothing
    "torch.histogramdd(torch.ones(3, 0), 2)", "torch.histogramdd(torch.ones(3, 0), [], density=True).hist.isnan()",
    "torch.histogramdd(torch.ones(3, 0), 2, weight=torch.ones(3))", "torch.histogramdd(torch.ones(3, 0), [1, 2])",
    # searchsorted and bucketize hold out= to the index dtype out_int32 names, after their other checks
    "torch.searchsorted(x[0], x[0], out=torch.ones(3))", "torch.searchsorted(x[0], x[0], out=torch.ones(3).int())",
    "torch.searchsorted(x[0], x[0], out_int32=True, out=torch.ones(3).long())",
    "torch.searchsorted(x[0], x[0], out_int32=True, out=torch.ones(3).int())",
    "torch.searchsorted(x[0], x[0], side='mid', out=torch.ones(3))", "torch.searchsorted(x, x[0], out=torch.ones(3))",
    "torch.bucketize(x[0], x[0], out=torch.ones(3))", "torch.bucketize(x[0], x, out=torch.ones(3))",
    "torch.bucketize(x[0], x[0], out=torch.ones(3).long())",
    # feature dropout checks the rank only when it draws; native_dropout scales an integer input by a float in place
    "torch.feature_dropout(torch.arange(4), 0.5, False)", "torch.feature_dropout(torch.arange(4), 1.0, True)",
    "torch.feature_dropout(torch.arange(4.0), 0.5, True)", "torch.feature_alpha_dropout(torch.arange(4), 0.5, True)",
    "torch.native_dropout(torch.arange(4), 0.5, True)", "torch.native_dropout(torch.arange(4), 0.0, None)",
    "torch.native_dropout(torch.arange(4).bool(), 0.5, True)", "torch.native_dropout(torch.arange(4), 1.5, True)",
    "torch.native_dropout(torch.arange(4), 0.5, False)", "torch.native_dropout(torch.ones(0).long(), 0.5, True)",
    "torch.native_dropout(torch.ones(0), 1.5, True)",
    # narrow and narrow_copy: a 0-d input, then the start's range, then start + length (narrow_copy's dim its own way)
    "torch.narrow_copy(torch.arange(4), 1, 1, 2)", "torch.narrow_copy(torch.arange(4), 0, -5, 2)",
    "torch.narrow_copy(torch.arange(4), 0, 1, -1)", "torch.narrow_copy(torch.tensor(1), 0, 0, 1)",
    "torch.arange(4).narrow_copy(0, 5, 0)", "torch.arange(4).narrow_copy(0, 4, 0)", "x.narrow_copy(1, -2, 2)",
    "torch.narrow(torch.arange(4), 0, -5, 2)", "torch.narrow(torch.arange(4), 0, 1, -1)",
    "torch.narrow(torch.arange(4), 0, 5, 0)", "torch.narrow(torch.tensor(1), 0, 0, 1)", "x.narrow(1, -3, 3)",
    # svd's own rank check; svdvals (and cond through it) in linalg.svd's words, a driver refused on the CPU;
    # svd's compute_uv=False gives full-sized zeros
    "torch.svd(torch.arange(4))", "torch.svd(torch.tensor(1.0))", "torch.svd(x[0], compute_uv=False)",
    "torch.svd(x, compute_uv=False)", "torch.svd(torch.ones(2, 4, 3), some=False, compute_uv=False)",
    "torch.svd(x.long(), compute_uv=False)", "torch.linalg.svdvals(torch.arange(4))",
    "torch.linalg.svdvals(torch.arange(4).reshape(2, 2))", "torch.linalg.svdvals(x, driver='gesvd')",
    "torch.linalg.svdvals(torch.ones(0, 3), driver='gesvd')", "torch.linalg.svd(x, driver='gesvd')",
    "torch.linalg.cond(torch.arange(4).reshape(2, 2))",
    # matrix_norm checks the order, A (rank, dtype), the dims, then dtype= as check_linalg_norm_dtype
    "torch.linalg.matrix_norm(x, 3.0)", "torch.linalg.matrix_norm(x[0], 3)", "torch.linalg.matrix_norm(x.long(), 3)",
    "torch.linalg.matrix_norm(x, 'abc', dim=(0, 0))", "torch.linalg.matrix_norm(x, 1e20)",
    "torch.linalg.matrix_norm(x.long(), dtype=torch.float64)", "torch.linalg.matrix_norm(x.long(), 1, dim=(0, 0))",
    "torch.linalg.matrix_norm(x, dtype=torch.long)", "torch.linalg.matrix_norm(x.double(), dtype=torch.float32)",
    "torch.linalg.matrix_norm(x, dtype=torch.complex64)", "torch.linalg.matrix_norm(x, 2, dtype=torch.float64)",
    "torch.linalg.matrix_norm(x.to(torch.complex64), dtype=torch.float64)",
    "torch.linalg.norm(x.long(), 'fro', dtype=torch.float64)",
]


def _outcome(lib, snippet: str):
    """The error torch-style, or (values, dtype) with the warnings given on the way (those torch gives once per
    process too: warn-always is on)."""
    result = []

    def run(lib):
        result.append(eval(snippet, {"torch": lib, "x": lib.ones(2, 3)}))  # noqa: S307 - the snippets above

    was = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = raised(lib, run)
    finally:
        lib.set_warn_always(was)
    return error if error is not None else (_plain(result[0]), warning_texts(caught))


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "detach"):
        return np.round(value.detach().numpy().astype(np.complex128), 5).tolist(), str(value.dtype).split(".")[-1]
    return value


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_kernel_check_as_torch(snippet):
    assert _outcome(tg, snippet) == _outcome(torch, snippet)
