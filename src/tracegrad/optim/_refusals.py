"""The option combinations PyTorch's optimizers refuse on CPU, refused here with its exception types and words and
at the moment it refuses them: at construction (``fused`` with ``differentiable`` or ``foreach``) or at ``step``
(``capturable``, which needs an accelerator; ``differentiable``, whose update runs under autograd).
"""

from __future__ import annotations

from typing import Any

from ..autograd.views import LEAF_INPLACE_ERROR

__all__ = ["refuse_fused_combinations", "refuse_at_step"]

# What ``torch.optim.optimizer._get_capturable_supported_devices`` lists; a CPU-only library supports none.
_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
FOREACH_AUTOGRAD_ERROR = "_foreach ops don't support autograd"


def refuse_fused_combinations(defaults: dict[str, Any]) -> None:
    """SGD's, Adam's and Adagrad's checks after ``Optimizer.__init__`` (so parameter errors come first)."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def refuse_at_step(opt, group: dict[str, Any]) -> None:
    """Raise what PyTorch's update of ``group`` raises on CPU before writing anything, if anything.

    The plain cases pay two dict look-ups: everything below needs ``capturable`` or ``differentiable``."""
    if group.get("capturable") or group.get("differentiable"):
        _refuse_rare_options(opt, group)


def _refuse_rare_options(opt, group: dict[str, Any]) -> None:
    params = [p for p in group["params"] if p._grad is not None]
    if not params:  # (PyTorch's update functions return before any check)
        return
    foreach = bool(group.get("foreach")) and not group.get("fused")
    if foreach and not opt._foreach_capturable_first:
        _refuse_foreach_autograd(opt, group)
    if group.get("capturable") and not group.get("fused"):  # (the fused update checks no devices)
        raise AssertionError(_capturable_message(opt, foreach))
    if foreach:
        _refuse_foreach_autograd(opt, group)
    if group.get("differentiable") and any(p.requires_grad and p.is_leaf for p in params):
        # the single-tensor update writes into the leaf under autograd (SGD's foreach one too)
        raise RuntimeError(LEAF_INPLACE_ERROR)


def _refuse_foreach_autograd(opt, group: dict[str, Any]) -> None:
    if group.get("differentiable") and opt._foreach_refuses_autograd:
        raise AssertionError(FOREACH_AUTOGRAD_ERROR)


def _capturable_message(opt, foreach: bool) -> str:
    what = (foreach and opt._foreach_capturable_what) or opt._capturable_what
    xla = opt._foreach_capturable_xla if foreach else opt._capturable_xla
    devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
    return f"If capturable=True, {what} must be on supported devices: {devices}."
