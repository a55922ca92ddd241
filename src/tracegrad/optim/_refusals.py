"""The option combinations PyTorch's optimizers refuse on CPU, refused here with its exception types and words and
at the moment it refuses them: at construction (``fused`` with ``differentiable`` or ``foreach``) or at ``step``
(``capturable``, which needs an accelerator; ``differentiable``, whose update runs under autograd).
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor

__all__ = ["refuse_fused_combinations", "refuse_at_step", "unpack_betas", "refuse_real_states", "check_fused_dtype",
           "check_first_fused_dtype"]

# What ``torch.optim.optimizer._get_capturable_supported_devices`` lists; a CPU-only library supports none.
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
# What ``torch.utils._foreach_utils._get_fused_kernels_supported_devices`` lists
_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]
FOREACH_AUTOGRAD_ERROR = "_foreach ops don't support autograd"


def check_fused_dtype(p) -> None:
    """PyTorch's ``_device_dtype_check_for_fused``: the fused updates take floating-point parameters only."""
    if not p.is_floating_point():
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of supported devices: "
                           f"{_FUSED_DEVICES} but {p.dtype} and cpu")


def check_first_fused_dtype(opt, group: dict[str, Any]) -> None:
    """SGD's and Adagrad's ``check_fused_dtype``: of a fused group's first parameter with a gradient, once in the
    optimizer's life (the later parameters meet their fused kernel's own refusal)."""
    if not group["fused"] or not getattr(opt, "_need_device_dtype_check_for_fused", True):
        return
    for p in group["params"]:
        if p._grad is not None:
            check_fused_dtype(p)
            opt._need_device_dtype_check_for_fused = False
            return


def refuse_fused_combinations(defaults: dict[str, Any]) -> None:
    """SGD's, Adam's and Adagrad's checks after ``Optimizer.__init__`` (so parameter errors come first)."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def refuse_at_step(opt, group: dict[str, Any]) -> None:
    """Raise what PyTorch's update of ``group`` raises on CPU before writing anything, if anything.

    The plain cases pay two dict look-ups: everything below needs the group's ``capturable`` or ``differentiable``."""
    if "betas" in opt.defaults:
        unpack_betas(group)
    if group.get("capturable") or group.get("differentiable"):
        _refuse_rare_options(opt, group)


def unpack_betas(group: dict[str, Any]) -> tuple[Any, Any]:
    """PyTorch's ``beta1, beta2 = group["betas"]``, the first thing its Adam-like steps (Adam, AdamW, Adamax,
    NAdam, RAdam, SparseAdam) do for each group, with or without gradients: a group holding other than two betas
    fails there (Python's ValueError), before any refusal or update."""
    beta1, beta2 = group["betas"]
    return beta1, beta2


def refuse_real_states(opt, p: Tensor) -> None:
    """PyTorch's ``view_as_real`` of a complex parameter's states, made before some single-tensor updates write
    anything: a real state (loaded: see ``state_as_real``) is refused there. (The foreach updates view their lists
    as real themselves, one dtype after the other.)"""
    if p._data.dtype.kind != "c":
        return
    state = opt.state.get(p, {})
    for key in opt._states_viewed_as_real:
        value = state.get(key)
        if isinstance(value, Tensor) and value._data.dtype.kind != "c":
            raise RuntimeError("view_as_real is only supported for complex tensors")


def _refuse_rare_options(opt, group: dict[str, Any]) -> None:
    params = [p for p in group["params"] if p._grad is not None]
    if not params:  # (PyTorch's update functions return before any check)
        return
    error = _refusal(opt, group)
    if error is not None:
        opt._init_group_state(group)  # (PyTorch's ``_init_group`` runs before its update function checks)
        raise error


def _refusal(opt, group: dict[str, Any]) -> BaseException | None:
    foreach = bool(group.get("foreach")) and not group.get("fused")
    if foreach and not opt._foreach_capturable_first:
        error = _foreach_autograd_error(opt, group)
        if error is not None:
            return error
    # (the fused update checks no devices; SGD and Adagrad have no ``capturable``: a group's key is ignored)
    if group.get("capturable") and not group.get("fused") and opt._has_capturable:
        return AssertionError(_capturable_message(opt, foreach))
    if foreach:
        return _foreach_autograd_error(opt, group)
    return None


def _foreach_autograd_error(opt, group: dict[str, Any]) -> BaseException | None:
    if group.get("differentiable") and opt._foreach_refuses_autograd:
        return AssertionError(FOREACH_AUTOGRAD_ERROR)
    return None


def _capturable_message(opt, foreach: bool) -> str:
    what = (foreach and opt._foreach_capturable_what) or opt._capturable_what
    xla = opt._foreach_capturable_xla if foreach else opt._capturable_xla
    devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
    return f"If capturable=True, {what} must be on supported devices: {devices}."
