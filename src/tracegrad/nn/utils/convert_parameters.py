"""Flatten parameters into one vector and back, as torch's Python does it (the same tensor methods in the same
order, so a non-contiguous parameter, a non-tensor or a wrong size fails as it does in torch)."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor

# the device types whose parameters torch compares by index (its private-use backend answers to this name)
_INDEXED_DEVICE_TYPES = ("cuda", "privateuseone")


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened (``view(-1)``) and concatenated (differentiable)."""
    from ... import cat

    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the next slice of ``vec`` (a view of it, in its dtype), without autograd."""
    if not isinstance(vec, Tensor):
        from ..modules.module import typename

        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The device index of the first parameter (-1 for the CPU), refusing a later one on another device. It reads
    ``param.device.type`` first, which is what a non-tensor fails on (a NumPy array's ``device`` is a string)."""
    if old_param_device is None:
        return param.get_device() if param.device.type in _INDEXED_DEVICE_TYPES else -1
    if param.device.type in _INDEXED_DEVICE_TYPES:
        moved = param.get_device() != old_param_device
    else:
        moved = old_param_device != -1
    if moved:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
