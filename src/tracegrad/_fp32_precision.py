"""PyTorch's float32 precision settings: the state ATen's ``Context`` keeps and the rules by which its two APIs
read and write it. NumPy's kernels compute in full float32 whatever is set; what is kept here is what torch's
CPU build reports, refuses and warns about.

The new API is a tree of precisions, one per (backend, operator) node::

    generic/all -> cuda/all   -> cuda/matmul, cuda/conv, cuda/rnn
                -> mkldnn/all -> mkldnn/matmul, mkldnn/conv, mkldnn/rnn

each "none" (take the parent's), "ieee", "tf32" or "bf16". cuDNN's convolution and RNN nodes start unset: they
take their parents' too, but read as tf32 where those say "none"; once set, no API unsets them. The legacy API
keeps two values of its own beside the tree, which its setters also write into it: the matmul precision
("highest", "high", "medium") and cuDNN's allow_tf32 flag. Legacy reads check that the tree still agrees with
them and refuse to answer when a mix of the two APIs has made them disagree.
"""

from __future__ import annotations

from typing import Any

from ._warnings import warn_at_caller

BACKENDS = ("generic", "cuda", "mkldnn")
OPS = ("all", "conv", "rnn", "matmul")
PRECISIONS = ("none", "ieee", "tf32", "bf16")
MATMUL_PRECISIONS = ("highest", "high", "medium")

# ATen's enums print as their numbers in its "Invalid (backend, op) pair" message
_BACKEND_NUMBER = {name: number for number, name in enumerate(BACKENDS)}
_OP_NUMBER = {name: number for number, name in enumerate(OPS)}
_DOCS = "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices"


def _fresh_tree() -> dict[tuple[str, str], str | None]:
    """The tree as a new process has it: cuDNN's convolution and RNN nodes never set (None), all else "none"."""
    tree: dict[tuple[str, str], str | None] = {("generic", "all"): "none"}
    for backend in ("cuda", "mkldnn"):
        tree.update({(backend, op): "none" for op in OPS})
    tree["cuda", "conv"] = tree["cuda", "rnn"] = None
    return tree


class Fp32PrecisionState:
    """Everything the two APIs read and write."""

    def __init__(self) -> None:
        self.tree = _fresh_tree()
        self.matmul_precision = "highest"  # the legacy value (torch's float32_matmul_precision)
        self.cudnn_allow_tf32 = True  # the legacy flag (torch's allow_tf32_cudnn)


STATE = Fp32PrecisionState()


# ---- the tree (torch's float32Precision / setFloat32Precision) ------------------------------------------

def _node(backend: str, op: str) -> tuple[str, str]:
    """The (backend, op) node, after torch's checks of the names (the operator's first, as its C++ evaluates
    them) and of the pair."""
    if op not in OPS:
        raise RuntimeError(f"Unknown op: {op}")
    if backend not in BACKENDS:
        raise RuntimeError(f"Unknown backend: {backend}")
    if (backend, op) not in STATE.tree:
        raise RuntimeError(f"Invalid (backend, op) pair: ({_BACKEND_NUMBER[backend]}, {_OP_NUMBER[op]})")
    return backend, op


def precision(backend: str, op: str) -> str:
    """The precision in force at a node: its own, else its backend's, else the generic one; where all of them
    are "none", a cuDNN node never set reads as tf32 (torch's default for cuDNN). CUDA has no bf16: one inherited
    reads as "none" there."""
    node = _node(backend, op)
    own = STATE.tree[node]
    value = own or "none"
    for parent in ((backend, "all"), ("generic", "all")):
        if value == "none":
            value = STATE.tree[parent]
    if value == "none" and own is None:
        value = "tf32"
    return "none" if backend == "cuda" and value == "bf16" else value


def set_precision(backend: str, op: str, value: str) -> str:
    """Write a node's own precision (the name of the precision is checked first); return it."""
    if value not in PRECISIONS:
        raise RuntimeError(f"Unknown precision: {value}")
    node = _node(backend, op)
    if backend == "cuda" and value == "bf16":
        raise RuntimeError("backend 'cuda' does not support precision 'bf16'")
    STATE.tree[node] = value
    return value


# ---- the legacy API -----------------------------------------------------------------------------------

# what each legacy matmul precision writes into the tree: (cuda/matmul, mkldnn/matmul)
_MATMUL_NODES = {"highest": ("ieee", "ieee"), "high": ("tf32", "tf32"), "medium": ("tf32", "bf16")}


def float32_matmul_precision() -> str:
    """The legacy matmul precision, refused where the tree's matmul nodes no longer say the same."""
    cuda, mkldnn = precision("cuda", "matmul"), precision("mkldnn", "matmul")
    legacy = STATE.matmul_precision
    if ((cuda == "tf32" and legacy == "highest") or (mkldnn == "bf16" and legacy != "medium")
            or (mkldnn == "tf32" and legacy != "high")):
        raise RuntimeError(
            "PyTorch is checking the matmul precision without a specific backend name,Current status indicate "
            "that you have used mix of the legacy and new APIs to set the matmul precision. We suggest only using "
            f"the new API for matmul precision. See also: {_DOCS}")
    return legacy


def set_float32_matmul_precision(value: Any) -> None:
    """Set the legacy value and both matmul nodes; an unknown value (torch does not fold its case) only warns."""
    value = checked_str("set_float32_matmul_precision", value)
    if value not in MATMUL_PRECISIONS:
        warn_at_caller(f"{value} is not one of 'highest', 'high', or 'medium'; the current"
                       "setFloat32MatmulPrecision call has no effect.", UserWarning)
        return
    STATE.matmul_precision = value
    cuda, mkldnn = _MATMUL_NODES[value]
    set_precision("cuda", "matmul", cuda)
    set_precision("mkldnn", "matmul", mkldnn)


def allow_tf32_cublas() -> bool:
    """``torch.backends.cuda.matmul.allow_tf32``: the legacy value and the cuda/matmul node must agree."""
    allowed = precision("cuda", "matmul") == "tf32"
    if allowed != (STATE.matmul_precision != "highest"):
        raise RuntimeError(
            "PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul,Current status indicate that "
            "you have used mix of the legacy and new APIs to set the TF32 status for cublas matmul. We suggest only "
            f"using the new API to set the TF32 flag. See also: {_DOCS}")
    return allowed


def set_allow_tf32_cublas(allowed: Any) -> None:
    allowed = checked_bool("set_allow_tf32_cublas", allowed)
    STATE.matmul_precision = "high" if allowed else "highest"
    set_precision("cuda", "matmul", "tf32" if allowed else "ieee")


def allow_tf32_cudnn() -> bool:
    """``torch.backends.cudnn.allow_tf32``: the legacy flag and both cuDNN nodes must agree."""
    rnn, conv = precision("cuda", "rnn") == "tf32", precision("cuda", "conv") == "tf32"
    if not rnn == conv == STATE.cudnn_allow_tf32:
        raise RuntimeError(
            "PyTorch is checking whether allow_tf32 is enabled for cuDNN without a specific operator name,but the "
            "current flag(s) indicate that cuDNN conv and cuDNN RNN have different TF32 flags.This combination "
            "indicates that you have used a mix of the legacy and new APIs to set the TF32 flags. We suggest only "
            f"using the new API to set the TF32 flag(s). See also: {_DOCS}")
    return STATE.cudnn_allow_tf32


def set_allow_tf32_cudnn(allowed: Any) -> None:
    allowed = checked_bool("set_allow_tf32_cublas", allowed)  # (torch's message names cuBLAS here too)
    for op in ("rnn", "conv"):
        set_precision("cuda", op, "tf32" if allowed else "none")
    STATE.cudnn_allow_tf32 = allowed


# ---- argument conversion, in the words of torch's binding layers ---------------------------------------

def checked_bool(name: str, value: Any) -> bool:
    """torch's C++ setters of a flag take a bool and nothing else."""
    if not isinstance(value, bool):
        raise RuntimeError(f"{name} expects a bool, but got {type(value).__name__}")
    return value


def checked_str(name: str, value: Any) -> str:
    """torch's C++ setters of a string (bytes are read as a string too)."""
    if isinstance(value, (bytes, str)):
        return _as_str(value)
    raise RuntimeError(f"{name} expects a str, but got {type(value).__name__}")


def _as_str(value: str | bytes | bytearray) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def pybind_strings(name: str, args: tuple, kwargs: dict, count: int) -> list[str]:
    """pybind11's conversion of ``count`` positional strings (its ``std::string``: str, bytes or bytearray);
    anything else is its TypeError."""
    if kwargs or len(args) != count or not all(isinstance(a, (str, bytes, bytearray)) for a in args):
        signature = ", ".join(f"arg{i}: str" for i in range(count))
        given = ", ".join(repr(a) for a in args)
        if kwargs:
            given += ("; " if args else "") + "kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise TypeError(f"{name}(): incompatible function arguments. The following argument types are "
                        f"supported:\n    1. ({signature}) -> str\n\nInvoked with: {given}")
    return [_as_str(a) for a in args]


def get_fp32_precision_getter(*args: Any, **kwargs: Any) -> str:
    """``torch._C._get_fp32_precision_getter(backend, op)``."""
    return precision(*pybind_strings("_get_fp32_precision_getter", args, kwargs, 2))


def set_fp32_precision_setter(*args: Any, **kwargs: Any) -> str:
    """``torch._C._set_fp32_precision_setter(backend, op, precision)``."""
    return set_precision(*pybind_strings("_set_fp32_precision_setter", args, kwargs, 3))
