"""The chunked path of ``nn.functional.linear_cross_entropy`` (PyTorch's ``torch.nn.modules.linear_cross_entropy``).

torch runs the batch through ``linear`` + ``cross_entropy`` a chunk of rows at a time so that the whole
``(N, C)`` logits tensor never exists: the scalar reductions compute the loss *and* every gradient in the
forward pass (their backward only scales them by the upstream gradient), ``reduction='none'`` recomputes the
gradients in its backward. Two custom operators (``torch.library.custom_op``) carry it; their autograd nodes
are ``GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked[_no_reduction]_defaultBackward``, which
the two ``Function`` classes below reproduce (name, inputs, ``_gi``/``_gw``/``_gb`` and the other ctx fields,
the refusal of a second backward).

The loop is torch's CPU one, operation for operation and in its dtypes, so the values are torch's bits:
scratch buffers and ``out=`` writes, which only save memory, become plain results where the value is the same.
On every device the CPU's dispatch is taken (torch's CUDA path multiplies with ``out_dtype=`` instead).
"""

from __future__ import annotations

from ..._tensor import Tensor
from ...autograd.function import Function
from ...backend import dtypes as _dtypes

__all__: list[str] = []


class _ChunkedLoop:
    """Per-call state of the loop: which dtype each intermediate has, which gradients are asked for, and the
    per-row weights ``neg_weight_target`` (the class weight of each row's target, signed and normalised)."""

    def __init__(self, input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias, weight, reduction: str,
                 ignore_index: int, acc_policy: str, acc_dtype, compute: tuple, loss_grad_output=None) -> None:
        self.input, self.linear_weight, self.target = input, linear_weight, target
        self.linear_bias, self.weight, self.reduction = linear_bias, weight, reduction
        self.ignore_index, self.loss_grad_output = ignore_index, loss_grad_output
        self.compute_input_grad, self.compute_linear_weight_grad, self.compute_linear_bias_grad = compute
        self.dtype = dtype = input.dtype
        self.num_batches, self.in_features = input.shape
        self.num_classes = linear_weight.shape[0]
        self.acc_dtype = acc_dtype
        self.use_acc_dtype = use_acc = dtype != acc_dtype
        memory_like = acc_policy in ("balanced", "compact")
        if use_acc:  # half input, float accumulation (the only mixed pair _check_dtypes lets through)
            self.output_dtype = acc_dtype
            self.grad_input_dtype = dtype if memory_like else acc_dtype
            self.logits_dtype = dtype if memory_like else acc_dtype  # half logits keep half the memory
            self.weight_chunk_dtype = acc_dtype
        else:
            self.output_dtype = self.grad_input_dtype = self.logits_dtype = self.weight_chunk_dtype = dtype
        self.linear_weight_cast_dtype = self.logits_dtype if use_acc else dtype
        self.stages_weight_grad = self.compute_linear_weight_grad and not (
            acc_policy == "compact" and self.logits_dtype == dtype)
        self.stages_bias_grad = self.compute_linear_bias_grad and use_acc
        self.upcasts_input = use_acc and (self.compute_linear_weight_grad or dtype != self.logits_dtype)
        self.forward_uses_acc_input = use_acc and dtype != self.logits_dtype
        self.downcasts_logits = (self.compute_linear_weight_grad and not self.stages_weight_grad
                                 and self.logits_dtype != dtype)
        self.mask = target == ignore_index
        self._corrected_target = self._neg_weight_target = None

    # ---- per-row data, computed once --------------------------------------------------------------------

    def corrected_target(self) -> Tensor:
        """The target with an out-of-range ``ignore_index`` replaced by 0, so gathers stay in bounds."""
        if self._corrected_target is None:
            from ... import where

            out_of_range = self.ignore_index < 0 or self.ignore_index >= self.num_classes
            self._corrected_target = where(self.mask, 0, self.target) if out_of_range else self.target
        return self._corrected_target

    def neg_weight_target(self) -> Tensor:
        """-(weight[target] or 1) / d on kept rows, 0 on ignored ones; d: the kept weights' sum ('mean') or 1.
        The 'none' forward keeps it unsigned (the per-row loss weight); its backward folds in the upstream grad."""
        if self._neg_weight_target is None:
            self._neg_weight_target = self._signed(self._row_weights())
        return self._neg_weight_target

    def _row_weights(self) -> Tensor:
        from ... import where

        mask, target, weight, dtype = self.mask, self.corrected_target(), self.weight, self.weight_chunk_dtype
        if weight is None:
            return (~mask).to(dtype)
        if target.numel() > weight.numel():  # cast the shorter of the two first, as torch does
            return where(mask, 0, weight.to(dtype).index_select(0, target))
        return where(mask, 0, weight.index_select(0, target).to(dtype))

    def _signed(self, rows: Tensor) -> Tensor:
        from ... import where

        if self.reduction == "mean":
            d = rows.sum()
            rows.div_(where(d == 0, float("nan"), -d))
        elif self.reduction == "sum":
            rows.neg_()
        elif self.loss_grad_output is not None:
            rows.neg_().mul_(self.loss_grad_output.to(rows.dtype))
        return rows

    def linear_weight_cast(self) -> Tensor:
        if self.linear_weight_cast_dtype == self.dtype:  # (not cast to the input's: a mismatch fails in mm)
            return self.linear_weight
        return self.linear_weight.to(self.linear_weight_cast_dtype)

    def linear_bias_cast(self):
        return None if self.linear_bias is None else self.linear_bias.to(self.logits_dtype)

    def chunks(self, chunk_size: int):
        """(start, size) of each chunk of rows."""
        for start in range(0, self.num_batches, chunk_size):
            yield start, min(chunk_size, self.num_batches - start)

    # ---- the math of one chunk ----------------------------------------------------------------------------

    def shifted_logits(self, input_chunk: Tensor, linear_weight: Tensor, linear_bias) -> Tensor:
        """``input @ W.T (+ b)`` minus each row's max, in the logits dtype."""
        from ... import amax, mm

        input_rows = input_chunk.to(self.acc_dtype) if self.forward_uses_acc_input else input_chunk
        logits = mm(input_rows, linear_weight.T)
        if linear_bias is not None:
            logits.add_(linear_bias)
        return logits.sub_(amax(logits, dim=1, keepdim=True))

    def sumexp_(self, logits: Tensor) -> Tensor:
        """exp of the logits in place, their row sums in the accumulation dtype (a half sum could underflow)."""
        return logits.exp_().sum(1, dtype=self.acc_dtype)

    def weighted_input(self, input_chunk_acc: Tensor, weight_chunk: Tensor) -> Tensor:
        return input_chunk_acc * weight_chunk.unsqueeze(1)


def _loss_per_row(loop: _ChunkedLoop, chunk_size: int) -> Tensor:
    """reduction='none', forward: ``w[t] * (log sum exp - shifted logit of t)`` per row, no gradients."""
    from ... import empty

    out = empty(loop.num_batches, dtype=loop.dtype, device=loop.input.device)
    target, rows = loop.corrected_target(), loop.neg_weight_target()
    linear_weight, linear_bias = loop.linear_weight_cast(), loop.linear_bias_cast()
    for start, size in loop.chunks(chunk_size):
        logits = loop.shifted_logits(loop.input.narrow(0, start, size), linear_weight, linear_bias)
        target_logit = logits.gather(1, target.narrow(0, start, size).unsqueeze(1)).squeeze(1)  # before exp_
        denom = loop.sumexp_(logits)
        loss = denom.log_().sub_(target_logit.to(denom.dtype))
        out.narrow(0, start, size).copy_(loss.mul_(rows.narrow(0, start, size).to(denom.dtype)))
    return out


class _Gradients:
    """The three gradient accumulators (rank-matching empty tensors where not asked for, as torch's)."""

    def __init__(self, loop: _ChunkedLoop) -> None:
        from ... import empty, zeros

        device, dtype = loop.input.device, loop.dtype

        def shaped(shape, wanted: bool):
            return tuple(shape) if wanted else (0,) * len(shape)

        self.input = empty(shaped(loop.input.shape, loop.compute_input_grad), dtype=loop.grad_input_dtype,
                           device=device)
        self.linear_weight = zeros(shaped(loop.linear_weight.shape, loop.compute_linear_weight_grad), dtype=dtype,
                                   device=device)
        self.linear_bias = zeros(shaped(loop.linear_weight.shape[:-1], loop.compute_linear_bias_grad), dtype=dtype,
                                 device=device)


def _accumulate_input_grad(loop, grads, start, size, probs, linear_weight, target, rows) -> None:
    """grad_input rows = W[t] * w - (softmax * w) @ W, in W's cast dtype, then stored in grad_input's dtype."""
    from ... import addmm, index_select

    chunk = index_select(linear_weight, 0, target) * rows.to(loop.linear_weight_cast_dtype).unsqueeze(1)
    chunk = addmm(chunk, probs, linear_weight, alpha=-1)
    grads.input.narrow(0, start, size).copy_(chunk)


def _accumulate_bias_grad(loop, grads, bias_acc, probs, target, rows) -> None:
    """db_j += -sum_n softmax*w + sum over rows of class j of w (in the accumulation dtype where it differs)."""
    acc = bias_acc if bias_acc is not None else grads.linear_bias
    acc.sub_(probs.sum(0, dtype=loop.acc_dtype if loop.use_acc_dtype else loop.dtype))
    acc.index_add_(0, target, rows)
    if bias_acc is not None:
        grads.linear_bias.add_(bias_acc.to(grads.linear_bias.dtype))
        bias_acc.zero_()


def _accumulate_weight_grad(loop, grads, input_chunk, probs, target, rows) -> None:
    """dW += -(softmax * w).T @ x + (x * w) added at the target rows: staged in the accumulation dtype (the
    accurate/balanced policies), or straight into the gradient (compact)."""
    from ... import mm

    input_chunk_acc = input_chunk.to(loop.acc_dtype) if loop.upcasts_input else input_chunk
    if loop.stages_weight_grad:
        staged = mm(probs.to(loop.acc_dtype).T, input_chunk_acc)
        staged.index_add_(0, target, loop.weighted_input(input_chunk_acc, rows), alpha=-1)
        grads.linear_weight.sub_(staged)
        return
    logits_downcast = probs.to(loop.linear_weight.dtype) if loop.downcasts_logits else probs
    grads.linear_weight.addmm_(logits_downcast.T, input_chunk, alpha=-1)
    weighted = loop.weighted_input(input_chunk_acc, rows).to(grads.linear_weight.dtype)
    grads.linear_weight.index_add_(0, target, weighted, alpha=1)


def _loss_and_gradients(loop: _ChunkedLoop, chunk_size: int) -> tuple:
    """The scalar loss and, for the rows' weights, every asked gradient, one chunk at a time."""
    from ... import div, zeros

    grads = _Gradients(loop)
    output = zeros((), dtype=loop.output_dtype, device=loop.input.device)
    if loop.reduction == "mean" and loop.num_batches == 0:
        output.fill_(float("nan"))
    any_grad = loop.compute_input_grad or loop.compute_linear_weight_grad or loop.compute_linear_bias_grad
    bias_acc = (zeros(grads.linear_bias.shape, dtype=loop.acc_dtype, device=loop.input.device)
                if loop.stages_bias_grad else None)
    target_all, rows_all = loop.corrected_target(), loop.neg_weight_target()
    linear_weight, linear_bias = loop.linear_weight_cast(), loop.linear_bias_cast()
    for start, size in loop.chunks(chunk_size):
        input_chunk = loop.input.narrow(0, start, size)
        target, rows = target_all.narrow(0, start, size), rows_all.narrow(0, start, size)
        logits = loop.shifted_logits(input_chunk, linear_weight, linear_bias)
        output.add_(rows.dot(logits.gather(1, target.unsqueeze(1)).squeeze(1).to(rows.dtype)))
        denom = loop.sumexp_(logits)
        if any_grad:  # logits become softmax * w (the factor rounded to the logits' dtype, as torch's buffer)
            logits.mul_(div(rows, denom).to(loop.logits_dtype).unsqueeze(1))
        output.sub_(rows.to(denom.dtype).dot(denom.log_()))
        if loop.compute_linear_bias_grad:  # (before the weight's: torch's order)
            _accumulate_bias_grad(loop, grads, bias_acc, logits, target, rows)
        if loop.compute_input_grad:
            _accumulate_input_grad(loop, grads, start, size, logits, linear_weight, target, rows)
        if loop.compute_linear_weight_grad:
            _accumulate_weight_grad(loop, grads, input_chunk, logits, target, rows)
    return output.to(loop.dtype), grads.input.to(loop.dtype), grads.linear_weight, grads.linear_bias


def _check_chunked_arguments(input, linear_weight, target, linear_bias, reduction, label_smoothing,
                             acc_dtype) -> None:
    """torch's _ChunkContext.build validation (the public function has filtered most of it already)."""
    if target.dtype != _dtypes.int64:
        raise TypeError(f"linear_cross_entropy: target dtype must be torch.int64, got {target.dtype}.")
    if label_smoothing > 0.0:
        raise NotImplementedError("linear_cross_entropy does not support label smoothing")
    if reduction not in ("mean", "sum", "none"):
        raise NotImplementedError(f"linear_cross_entropy does not support {reduction=}")
    if linear_bias is not None and linear_bias.shape != linear_weight.shape[:-1]:
        raise RuntimeError(f"linear_cross_entropy: expected linear_bias shape {tuple(linear_weight.shape[:-1])}, "
                           f"got {tuple(linear_bias.shape)}.")
    dtype = input.dtype
    if dtype != acc_dtype and not (dtype == _dtypes.float16 and acc_dtype == _dtypes.float32):
        raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{acc_dtype} acc_dtype and {dtype} inputs.")


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing,
             batch_chunk_size, acc_policy, acc_dtype, compute, loss_grad_output=None) -> tuple:
    """(loss, grad_input, grad_linear_weight, grad_linear_bias): torch's _linear_cross_entropy_batch_chunked_
    accumulator, run without recording a graph (as a custom operator's kernel)."""
    from ...autograd.grad_mode import no_grad

    if acc_policy == "auto" or acc_dtype is None:
        raise RuntimeError(f"unresolved acc_policy={acc_policy!r} or acc_dtype={acc_dtype!r}; "
                           "use F.linear_cross_entropy.")
    _check_chunked_arguments(input, linear_weight, target, linear_bias, reduction, label_smoothing, acc_dtype)
    with no_grad():
        loop = _ChunkedLoop(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, acc_policy,
                            acc_dtype, compute, loss_grad_output)
        if reduction == "none" and loss_grad_output is None:
            return (_loss_per_row(loop, batch_chunk_size),) + _empty_gradients(loop)
        return _loss_and_gradients(loop, batch_chunk_size)


def _empty_gradients(loop: _ChunkedLoop) -> tuple:
    grads = _Gradients(loop)
    return grads.input.to(loop.dtype), grads.linear_weight, grads.linear_bias


_TWICE = ("linear_cross_entropy chunked backward called twice; retain_graph=True / double backward are not "
          "supported.")


def _scaled_stash(ctx, name: str, grad_output: Tensor) -> Tensor:
    """A gradient computed in the forward pass times the upstream gradient: in place, once, unless the options
    allowed retain_graph (then a new tensor, every time)."""
    if ctx.allow_retain_graph:
        return getattr(ctx, name) * grad_output
    stashed = getattr(ctx, name)
    setattr(ctx, name, None)
    if stashed is None:
        raise RuntimeError(_TWICE)
    return stashed.mul_(grad_output)


# The class names give torch's node names (``<name>Backward``), which custom_op generates from the operator's.
class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):  # noqa: N801
    """Scalar reductions: loss and gradients in the forward pass, scaled by the upstream gradient backward."""

    @staticmethod
    def forward(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing,
                batch_chunk_size, acc_policy, acc_dtype, allow_retain_graph, compute_input_grad,
                compute_linear_weight_grad, compute_linear_bias_grad):
        compute = (compute_input_grad, compute_linear_weight_grad, compute_linear_bias_grad)
        return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                        label_smoothing, batch_chunk_size, acc_policy, acc_dtype, compute)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        *_, ctx.allow_retain_graph, ctx.compute_input_grad, ctx.compute_linear_weight_grad, \
            ctx.compute_linear_bias_grad = inputs
        _, grad_input, grad_linear_weight, grad_linear_bias = output
        ctx._gi = grad_input.detach() if ctx.compute_input_grad else None
        ctx._gw = grad_linear_weight.detach() if ctx.compute_linear_weight_grad else None
        ctx._gb = grad_linear_bias.detach() if ctx.compute_linear_bias_grad else None

    @staticmethod
    def backward(ctx, grad_output, _gi_grad, _gw_grad, _gb_grad):
        result = [None] * 15
        if ctx.compute_input_grad:
            result[0] = _scaled_stash(ctx, "_gi", grad_output)
        if ctx.compute_linear_weight_grad:
            result[1] = _scaled_stash(ctx, "_gw", grad_output)
        if ctx.compute_linear_bias_grad:
            result[3] = _scaled_stash(ctx, "_gb", grad_output)
        return tuple(result)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(Function):  # noqa: N801
    """reduction='none': the per-row loss forward; backward recomputes the gradients, weighted by grad_output."""

    @staticmethod
    def forward(input, linear_weight, target, linear_bias, weight, ignore_index, batch_chunk_size, acc_policy,
                acc_dtype):
        return _chunked(input, linear_weight, target, linear_bias, weight, "none", ignore_index, 0.0,
                        batch_chunk_size, acc_policy, acc_dtype, (False, False, False))[0]

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        input, linear_weight, target, linear_bias, weight, *rest = inputs
        # detached: the backward recomputes from the values, it does not differentiate through them
        ctx.save_for_backward(input.detach(), linear_weight.detach(), target,
                              None if linear_bias is None else linear_bias.detach(),
                              None if weight is None else weight.detach())
        ctx._ignore_index, ctx._batch_chunk_size, ctx._acc_policy, ctx._acc_dtype = rest

    @staticmethod
    def backward(ctx, grad_output):
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        compute = (needs[0], needs[1], linear_bias is not None and needs[3])
        result = [None] * 9
        if not any(compute):
            return tuple(result)
        _, grad_input, grad_linear_weight, grad_linear_bias = _chunked(
            input, linear_weight, target, linear_bias, weight, "none", ctx._ignore_index, 0.0,
            ctx._batch_chunk_size, ctx._acc_policy, ctx._acc_dtype, compute, loss_grad_output=grad_output)
        for slot, wanted, grad in zip((0, 1, 3), compute, (grad_input, grad_linear_weight, grad_linear_bias)):
            if wanted:
                result[slot] = grad
        return tuple(result)


_linear_cross_entropy_batch_chunked = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default.apply
_linear_cross_entropy_batch_chunked_no_reduction = (
    GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default.apply)
