"""Structseqs (tuples with read-only named fields) returned by multi-output operators: ``torch.return_types.max``
and friends, each of torch's there as an attribute (``tracegrad.return_types.topk``), those of out= calls included
(``max_out``)."""

from __future__ import annotations

import operator
from collections.abc import Callable

# torch 2.13's torch.return_types: each structseq's name and fields
_TORCH_FIELDS: dict[str, tuple[str, ...]] = {
    "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams": ("output", "mask"),
    "_fused_moving_avg_obs_fq_helper": ("output", "mask"), "_linalg_det": ("result", "LU", "pivots"),
    "_linalg_det_out": ("result", "LU", "pivots"), "_linalg_eigh": ("eigenvalues", "eigenvectors"),
    "_linalg_eigh_out": ("eigenvalues", "eigenvectors"), "_linalg_slogdet": ("sign", "logabsdet", "LU", "pivots"),
    "_linalg_slogdet_out": ("sign", "logabsdet", "LU", "pivots"), "_linalg_solve_ex": ("result", "LU", "pivots",
    "info"), "_linalg_solve_ex_out": ("result", "LU", "pivots", "info"), "_linalg_svd": ("U", "S", "Vh"),
    "_linalg_svd_out": ("U", "S", "Vh"), "_lu_with_info": ("LU", "pivots", "info"),
    "_scaled_dot_product_cudnn_attention": ("output", "logsumexp", "cum_seq_q", "cum_seq_k", "max_q", "max_k",
    "philox_seed", "philox_offset", "debug_attn_mask"), "_scaled_dot_product_efficient_attention": ("output",
    "log_sumexp", "philox_seed", "philox_offset"), "_scaled_dot_product_flash_attention": ("output", "logsumexp",
    "cum_seq_q", "cum_seq_k", "max_q", "max_k", "rng_state", "unused", "debug_attn_mask"),
    "_scaled_dot_product_flash_attention_for_cpu": ("output", "logsumexp"), "_unpack_dual": ("primal", "tangent"),
    "aminmax": ("min", "max"), "aminmax_out": ("min", "max"), "cummax": ("values", "indices"), "cummax_out":
    ("values", "indices"), "cummin": ("values", "indices"), "cummin_out": ("values", "indices"), "frexp": ("mantissa",
    "exponent"), "frexp_out": ("mantissa", "exponent"), "geqrf": ("a", "tau"), "geqrf_out": ("a", "tau"), "histogram":
    ("hist", "bin_edges"), "histogram_out": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"), "kthvalue":
    ("values", "indices"), "kthvalue_out": ("values", "indices"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_cholesky_ex_out": ("L", "info"), "linalg_eig": ("eigenvalues", "eigenvectors"), "linalg_eig_out":
    ("eigenvalues", "eigenvectors"), "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_eigh_out":
    ("eigenvalues", "eigenvectors"), "linalg_inv_ex": ("inverse", "info"), "linalg_inv_ex_out": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_ldl_factor_ex_out": ("LD", "pivots", "info"), "linalg_ldl_factor_out": ("LD", "pivots"), "linalg_lstsq":
    ("solution", "residuals", "rank", "singular_values"), "linalg_lstsq_out": ("solution", "residuals", "rank",
    "singular_values"), "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex":
    ("LU", "pivots", "info"), "linalg_lu_factor_ex_out": ("LU", "pivots", "info"), "linalg_lu_factor_out": ("LU",
    "pivots"), "linalg_lu_out": ("P", "L", "U"), "linalg_qr": ("Q", "R"), "linalg_qr_out": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"), "linalg_slogdet_out": ("sign", "logabsdet"), "linalg_solve_ex":
    ("result", "info"), "linalg_solve_ex_out": ("result", "info"), "linalg_svd": ("U", "S", "Vh"), "linalg_svd_out":
    ("U", "S", "Vh"), "lu_unpack": ("P", "L", "U"), "lu_unpack_out": ("P", "L", "U"), "max": ("values", "indices"),
    "max_out": ("values", "indices"), "median": ("values", "indices"), "median_out": ("values", "indices"), "min":
    ("values", "indices"), "min_out": ("values", "indices"), "mode": ("values", "indices"), "mode_out": ("values",
    "indices"), "nanmedian": ("values", "indices"), "nanmedian_out": ("values", "indices"), "qr": ("Q", "R"),
    "qr_out": ("Q", "R"), "slogdet": ("sign", "logabsdet"), "slogdet_out": ("sign", "logabsdet"), "sort": ("values",
    "indices"), "sort_out": ("values", "indices"), "svd": ("U", "S", "V"), "svd_out": ("U", "S", "V"), "topk":
    ("values", "indices"), "topk_out": ("values", "indices"), "triangular_solve": ("solution", "cloned_coefficient"),
    "triangular_solve_out": ("solution", "cloned_coefficient"),
}

_BY_NAME: dict[str, type] = {}  # every return type made so far, by name
_LISTENERS: list[Callable[[type], None]] = []  # told of each new one (the pytree registry, as torch registers them)
__all__ = ["pytree_register_structseq", "all_return_types"]
all_return_types: list[type] = []  # (as torch's: the public ones)


class _StructSeqClass(type):
    """The class of these tuples, for what CPython gives its C structseq types: two names (CPython's own messages
    name a type by its C-level ``tp_name``, "'torch.return_types.max' object has no attribute 'item'", which for
    torch's structseqs is qualified while their ``__name__`` is bare, "max"; a class made in Python has one name
    for both, so each is made under the qualified name and this property answers ``__name__`` with the bare one,
    its ``__qualname__``), and immutability (a C type's attributes cannot be set)."""

    @property
    def __name__(cls) -> str:
        return cls.__qualname__

    def __setattr__(cls, name: str, value) -> None:
        raise TypeError(f"cannot set '{name}' attribute of immutable type '{_tp_name(cls)}'")

    def __delattr__(cls, name: str) -> None:
        # (CPython says "set" for a deletion too)
        raise TypeError(f"cannot set '{name}' attribute of immutable type '{_tp_name(cls)}'")


def _tp_name(cls: type) -> str:
    return f"torch.return_types.{cls.__qualname__}"


def _structseq_repr(self) -> str:
    # PyTorch's structseq: the qualified type name, then one field per line
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self))
    return f"{_tp_name(type(self))}(\n{fields})"


def _reduce(self) -> tuple:
    # (the class says it is torch's, ``__module__`` "torch.return_types": its instances pickle through this module)
    return _unpickled, (type(self).__name__, type(self).__match_args__, tuple(self))


def _unpickled(name: str, fields: tuple, values: tuple) -> tuple:
    return return_type(name, fields)(values)


_NO_DICT = object()  # (structseq's ``dict`` argument not given: None is refused as no dict)
_PARAMETERS = ("sequence", "dict")  # structseq's, as Argument Clinic names and checks them


def _structseq_arguments(args: tuple, kwargs: dict) -> tuple:
    """(sequence, dict) of a call ``cls(*args, **kwargs)``, refused as CPython's Argument Clinic refuses
    ``structseq(sequence, dict=NULL)``'s arguments, in its order of checks."""
    given = len(args) + len(kwargs)
    if given > len(_PARAMETERS):
        raise TypeError(f"structseq() takes at most 2 {'' if args else 'keyword '}arguments ({given} given)")
    bound, left = list(args), dict(kwargs)
    for position, name in enumerate(_PARAMETERS[len(args):], start=len(args) + 1):
        if name in left:
            bound.append(left.pop(name))
        elif position == 1:
            raise TypeError(f"structseq() missing required argument '{name}' (pos {position})")
        else:
            bound.append(_NO_DICT)
    for key in left:
        if key in _PARAMETERS:
            raise TypeError(f"argument for structseq() given by name ('{key}') and position "
                            f"({_PARAMETERS.index(key) + 1})")
        raise TypeError(f"'{key}' is an invalid keyword argument for structseq()")
    return bound[0], bound[1]


def _structseq_new(cls, *args, **kwargs):
    """``cls(sequence)``, as CPython's structseq_new: any iterable of exactly ``n_fields`` values (a dict as second
    argument allowed, and unused: these types have no unnamed fields). tracegrad's own calls pass one tuple."""
    if not kwargs and len(args) == 1 and type(args[0]) is tuple and len(args[0]) == cls.n_fields:
        return tuple.__new__(cls, args[0])
    sequence, mapping = _structseq_arguments(args, kwargs)
    try:
        values = iter(sequence)
    except TypeError:
        raise TypeError("constructor requires a sequence") from None
    values = tuple(values)
    if mapping is not _NO_DICT and not isinstance(mapping, dict):
        raise TypeError(f"{_tp_name(cls)}() takes a dict as second arg, if any")
    if len(values) != cls.n_fields:
        raise TypeError(f"{_tp_name(cls)}() takes a {cls.n_fields}-sequence ({len(values)}-sequence given)")
    return tuple.__new__(cls, values)


def _readonly(self, *value) -> None:
    raise AttributeError("readonly attribute")


def _refuse_subclass(cls, **kwargs) -> None:
    raise TypeError(f"type '{_tp_name(cls.__mro__[1])}' is not an acceptable base type")


def _structseq_class(name: str, fields: tuple[str, ...]) -> type:
    """torch's structseq ``torch.return_types.<name>`` over ``fields``: a tuple, built from one sequence, its
    fields read-only, with no ``__dict__`` and none of a named tuple's helpers (``_fields``, ``_make``...), named
    "torch.return_types.<name>" where CPython names it, printed and pickled as torch's."""
    namespace = {field: property(operator.itemgetter(k), _readonly, _readonly, None) for k, field in enumerate(fields)}
    namespace.update(__module__="torch.return_types", __qualname__=name, __doc__=None, __slots__=(),
                     __new__=_structseq_new, __repr__=_structseq_repr, __reduce__=_reduce,
                     __init_subclass__=classmethod(_refuse_subclass), __match_args__=tuple(fields),
                     n_fields=len(fields), n_sequence_fields=len(fields), n_unnamed_fields=0)
    cls = _StructSeqClass(f"torch.return_types.{name}", (tuple,), namespace)
    type.__delattr__(cls, "__slots__")  # (the layout stays: a C type has no __slots__ to show)
    return cls


def return_type(name: str, fields=None) -> type:
    """The ``torch.return_types.<name>`` structseq, printed and named as PyTorch's: one class per name, an
    attribute of this module. ``fields`` are needed only for a name torch does not have."""
    cls = _BY_NAME.get(name)
    if cls is not None:
        if fields is not None and tuple(fields) != cls.__match_args__:
            raise ValueError(f"return type {name} has fields {cls.__match_args__}, not {tuple(fields)}")
        return cls
    cls = _structseq_class(name, tuple(_TORCH_FIELDS[name] if fields is None else fields))
    _BY_NAME[name] = globals()[name] = cls
    if not name.startswith("_") and name in _TORCH_FIELDS:  # (not tracegrad's own: log_sigmoid_forward's)
        __all__.append(name)
        all_return_types.append(cls)
    for listener in _LISTENERS:
        listener(cls)
    return cls


def is_return_type(cls: type) -> bool:
    """Whether ``cls`` is one of these classes (torch's structseqs)."""
    return _BY_NAME.get(getattr(cls, "__name__", None)) is cls


def is_torch_return_type(cls: type) -> bool:
    """Whether ``cls`` is one of torch's structseqs (not one only tracegrad has), which a torch file names."""
    return is_return_type(cls) and cls.__name__ in _TORCH_FIELDS


def out_type(cls: type) -> type:
    """The return type of the ``out=`` form of a call returning a ``cls``: ``max_out`` for ``max``."""
    return return_type(f"{cls.__name__}_out", cls.__match_args__)


def out_return(result, outs: tuple, out):
    """What an ``out=`` call returns: torch's ``<name>_out`` return type over the ``out`` tensors where the plain
    call returns ``<name>`` (``torch.max(x, 0, out=(v, i))`` is a ``max_out``), else ``out`` itself."""
    return out_type(type(result))(tuple(outs)) if is_return_type(type(result)) else out


def on_return_type(listener: Callable[[type], None]) -> None:
    """Call ``listener`` with each return type, those made so far now and those made later when they are made."""
    _LISTENERS.append(listener)
    for cls in list(_BY_NAME.values()):
        listener(cls)


def pytree_register_structseq(cls: type) -> None:
    """``torch.return_types.pytree_register_structseq``: ``cls`` a pytree node, as torch registers its structseqs."""
    from .utils._pytree import register_structseq_node

    register_structseq_node(cls)


def make_return(schema, outs: tuple):
    names = tuple(r.name for r in schema.returns)
    if all(names):
        return return_type(schema.name.rstrip("_"), names)(tuple(outs))
    return tuple(outs)


for _name in _TORCH_FIELDS:
    return_type(_name)
del _name
