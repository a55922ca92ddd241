"""``torch.ops.aten.<name>.<overload>``: handles on tracegrad's registered operators (PyTorch's ``torch._ops``).

Design: tracegrad's operators are :class:`~tracegrad.ops.registry.OpDef` objects keyed by their schema's full
name (``"mm"``, ``"mul.Tensor"``). ``aten.mm.default`` is an :class:`OpOverload` standing for the operator
registered as ``mm``, ``aten.mul.Tensor`` the one registered as ``mul.Tensor``. There is exactly one handle per
name (they are cached), so handles compare and hash by identity, as PyTorch's do: ``op in [aten.mm.default]``
and ``op in {aten.detach.default}`` work for the handle an op interceptor is given (:func:`overload_of`).
A handle's name is the tracegrad operator's name, with one translation: tracegrad registers the Tensor-Tensor
overload of an operator that also has a ``.Scalar`` one under the bare name (``mul``), ATen as ``mul.Tensor``
(see :func:`_aten_overload`). Where tracegrad fuses or splits an operator differently from ATen (its internal
``_nn_*`` operators), the name shows it.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ._library import arguments

__all__ = ["OpOverload", "OpOverloadPacket", "aten", "overload_of"]

_NAMESPACE = "aten"


@functools.cache  # (one dict for good, and a packet call asks for it twice: the import each time would cost more)
def _registry() -> dict:
    from .ops.registry import REGISTRY  # (late: the registry imports the tensor module, which imports this)

    return REGISTRY


@functools.cache
def _decompositions() -> dict:
    """The overloads tracegrad computes through another operator, by operator name (``registry.Decomposition``)."""
    from .ops.registry import DECOMPOSITIONS

    return DECOMPOSITIONS


def _with_decompositions(names: list[str], decompositions: list) -> list[str]:
    """``names`` (the registered overloads) with the decomposed ones placed where torch lists them."""
    names = list(names)
    for decomposition in decompositions:
        overload = decomposition.schema.overload or "default"
        at = names.index(decomposition.before) if decomposition.before in names else len(names)
        names.insert(at, overload)
    return names


def _library_ops(namespace: str) -> dict:
    """The operators defined in ``namespace`` with ``torch.library``, keyed by ``name`` or ``name.overload``."""
    from ._library.operators import NAMESPACES

    return NAMESPACES.get(namespace, {})


def _aten_overload(full_name: str) -> str:
    """ATen's overload name of the operator registered as ``full_name``."""
    name, _, overload = full_name.partition(".")
    if overload:
        return overload
    registry = _registry()
    base = name
    while True:  # ``mul`` (beside ``mul.Scalar``) is ``mul.Tensor``; so are its in-place forms (``mul_``)
        if base + ".Scalar" in registry:
            return "Tensor"
        if not base.endswith("_"):
            return "default"
        base = base[:-1]


class OpOverload:
    """One overload of an operator, e.g. ``aten.mm.default``; calling it calls the operator."""

    def __init__(self, packet: OpOverloadPacket, overload_name: str, full_name: str) -> None:
        self._overloadpacket = packet
        self._overload_name = overload_name
        self._full_name = full_name  # the registry key
        self.__name__ = f"{packet.__name__}.{overload_name}"
        self.__qualname__ = self.__name__
        self.namespace = packet._namespace

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return self._overloadpacket

    @property
    def _op(self):
        """The registered :class:`~tracegrad.ops.registry.OpDef`."""
        if self.namespace != _NAMESPACE:
            return _library_ops(self.namespace)[self._full_name]
        return _registry()[self._full_name]

    @property
    def _opname(self) -> str:
        return self._overloadpacket.__name__

    @property
    def _overloadname(self) -> str:
        return self._overload_name

    @functools.cached_property
    def _schema(self):
        """The operator's schema, named as PyTorch prints it (``aten::add.Tensor(...)``): built-in schemas are
        registered without the namespace, some under other overload names (library operators' are as given)."""
        schema = self._op.schema
        if "::" in schema.name:
            return schema
        overload = "" if self._overloadname == "default" else self._overloadname
        head = f"{self.namespace}::{self._opname}" + (f".{overload}" if overload else "")
        from ._library.operators import with_printed_defaults

        text = with_printed_defaults(head + schema.text[schema.text.index("("):])
        return dataclasses.replace(schema, name=f"{self.namespace}::{self._opname}", overload=overload, text=text)

    def name(self) -> str:
        packet = self._overloadpacket._qualified_op_name
        return packet if self._overloadname == "default" else f"{packet}.{self._overloadname}"

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # (``self=`` is an operator's argument)
        op = self._op
        if "self" in kwargs and getattr(op, "param_names", ()) and op.param_names[0] == "self":
            # (an OpDef's bind, the public function's, knows the schema's self as ``input`` and refuses ``self=``)
            kwargs = {("input" if key == "self" else key): value for key, value in kwargs.items()}
        result = op(*args, **kwargs)
        at = self._output_mask_position
        if at is None:
            return result
        mask = args[at] if at < len(args) else kwargs["output_mask"]
        return tuple(out if asked else None for out, asked in zip(result, mask))

    @functools.cached_property
    def _output_mask_position(self) -> int | None:
        """Where the operator takes an ``output_mask`` (a fused backward, ``convolution_backward``): the results it
        leaves out are ATen's undefined tensors, None in Python (tracegrad's operator returns empty ones)."""
        names = [p.name for p in self._schema.params]
        return names.index("output_mask") if "output_mask" in names else None

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.namespace}.{self._overloadpacket.__name__}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self.namespace}.{self.__name__}"


class _DecomposedOverload(OpOverload):
    """An overload tracegrad computes through another operator (``registry.Decomposition``): its arguments are read
    against its own schema, as PyTorch's boxed call reads them, then handed on."""

    def __init__(self, packet: OpOverloadPacket, decomposition) -> None:
        super().__init__(packet, decomposition.schema.overload or "default", decomposition.schema.full_name)
        self._decomposition = decomposition

    @property
    def _op(self):
        return self._decomposition

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return self._decomposition.call(*arguments.bind(_Signature.of(self), args, kwargs))


# ATen operators whose packets take a Python number for a Tensor argument (python_arg_parser's
# should_allow_numbers_as_tensors): ``aten.add(x, 1)`` is ``add.Tensor``, ``aten.eq(x, 1)`` ``eq.Scalar``.
_NUMBERS_AS_TENSORS = frozenset(
    name + suffix for name in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide",
                               "floor_divide") for suffix in ("", "_", "_out")) | {"to", "_to_copy", "copy_", "_conj"}


@dataclasses.dataclass(frozen=True)
class _Signature:
    """What PyTorch's boxed-call parser reads of one overload: its schema, as PyTorch prints it."""

    schema: Any
    qualname: str
    param_names: tuple[str, ...]
    defaults: tuple

    @classmethod
    def of(cls, handle: OpOverload) -> _Signature:
        schema = handle._schema
        params = schema.params
        return cls(schema, schema.name, tuple(p.name for p in params), tuple(p.default for p in params))

    def declaration(self) -> str:
        return self.schema.text


class OpOverloadPacket:
    """All overloads of one operator name, e.g. ``aten.mul``; ``aten.mul.Tensor`` picks one."""

    def __init__(self, name: str, namespace: str = _NAMESPACE) -> None:
        self.__name__ = name
        self._namespace = namespace
        self._qualified_op_name = f"{namespace}::{name}"
        self._overloads: dict[str, OpOverload] = {}
        self._aten_names: tuple[tuple, list[str]] | None = None  # (the registry's size, the names then: a scan of
        # the whole registry per packet call would cost more than the call)

    def overloads(self) -> list[str]:
        if self._namespace != _NAMESPACE:
            return [key.partition(".")[2] or "default" for key in _library_ops(self._namespace)
                    if key.partition(".")[0] == self.__name__]
        registry = _registry()
        decompositions = _decompositions().get(self.__name__, ())
        size = (len(registry), len(decompositions))  # (both only grow)
        if self._aten_names is None or self._aten_names[0] != size:
            names = [_aten_overload(key) for key, op in registry.items()
                     if key == op.schema.full_name and key.partition(".")[0] == self.__name__]
            self._aten_names = (size, _with_decompositions(names, decompositions))
        return list(self._aten_names[1])

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):  # (copy, pickle and friends probe dunders)
            raise AttributeError(overload)
        handle = self._overloads.get(overload)
        if handle is None and self._namespace != _NAMESPACE:
            full_name = self.__name__ if overload == "default" else f"{self.__name__}.{overload}"
            if full_name not in _library_ops(self._namespace):
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
            handle = self._overloads[overload] = OpOverload(self, overload, full_name)
        if handle is None and self._namespace == _NAMESPACE:
            handle = self._decomposed(overload)
        if handle is None:
            registry = _registry()
            full_name = f"{self.__name__}.{overload}"
            if full_name not in registry and overload in ("default", "Tensor"):
                full_name = self.__name__  # (see _aten_overload)
            op = registry.get(full_name)
            if op is None or op.schema.full_name != full_name or _aten_overload(full_name) != overload:
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
            handle = self._overloads[overload] = OpOverload(self, overload, full_name)
        return handle

    def _decomposed(self, overload: str) -> OpOverload | None:
        for decomposition in _decompositions().get(self.__name__, ()):
            if (decomposition.schema.overload or "default") == overload:
                handle = self._overloads[overload] = _DecomposedOverload(self, decomposition)
                return handle
        return None

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # (``self=`` is an operator's argument)
        return self._overload_for(args, kwargs)(*args, **kwargs)

    def _overload_for(self, args: tuple, kwargs: dict) -> OpOverload:
        """PyTorch's packet call: the only overload as it is (its own errors), else the first whose schema takes
        the arguments, else each overload's refusal in one error."""
        names = self.overloads()
        if len(names) == 1:
            return getattr(self, names[0])
        handles = [getattr(self, name) for name in names]
        numbers_as_tensors = self._namespace == _NAMESPACE and self.__name__ in _NUMBERS_AS_TENSORS
        refusals = []
        for handle in handles:
            try:
                arguments.bind(_Signature.of(handle), args, kwargs, numbers_as_tensors)
            except RuntimeError as refusal:
                refusals.append(f"{refusal}\n\n")
            else:
                return handle
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n"
                           + "".join(refusals))

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._namespace}.{self.__name__}')>"

    def __str__(self) -> str:
        return f"{self._namespace}.{self.__name__}"


class _OpNamespace:
    """``torch.ops.aten``: ``aten.<name>`` is the :class:`OpOverloadPacket` of a registered operator."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        packet = self._packets.get(name)
        if packet is None and self.name != _NAMESPACE:
            if not any(key.partition(".")[0] == name for key in _library_ops(self.name)):
                raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")
            packet = self._packets[name] = OpOverloadPacket(name, self.name)
        if packet is None:
            registry = _registry()
            if name not in registry:  # (the registry also keys every operator by its bare name)
                raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")
            packet = self._packets[name] = OpOverloadPacket(name)
        return packet

    def __repr__(self) -> str:
        return f"<module 'tracegrad.ops.{self.name}' from 'tracegrad.ops'>"


aten = _OpNamespace(_NAMESPACE)
_NAMESPACES: dict[str, _OpNamespace] = {_NAMESPACE: aten}


def namespace(name: str) -> _OpNamespace:
    """``torch.ops.<name>``: any name is a namespace, as in PyTorch (its operators are those defined so far)."""
    found = _NAMESPACES.get(name)
    if found is None:
        found = _NAMESPACES[name] = _OpNamespace(name)
    return found


def overload_of(op) -> OpOverload:
    """The handle of the :class:`~tracegrad.ops.registry.OpDef` ``op`` (what an op interceptor hands on)."""
    full_name = op.schema.full_name
    return getattr(getattr(aten, full_name.partition(".")[0]), _aten_overload(full_name))
