"""The Tensor type: a NumPy (or CuPy) array plus autograd metadata.

Only data and autograd bookkeeping live here. Operators and Python operator methods are attached by
``_tensor_methods`` so that every one of them goes through the dispatcher.

Hot attributes are slots; rarely used ones (hooks, retained grads, view replay data) fall back to class
defaults and only allocate an instance ``__dict__`` when a tensor actually uses them.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._state import STATE
from .backend import device_of
from .backend.dtypes import from_numpy_dtype


class Tensor:
    # _vc: the version counter, a one-element list shared by views and detached aliases (None until needed).
    # _gfn: the grad_fn slot; ``_grad_fn`` (below the class) is the same slot behind a property that refuses
    # deletion. Hot paths use ``_gfn`` directly.
    # No ``__delattr__``: defining it would route every attribute write through a Python-level lookup
    # (about 60 ns each, several per operator call); deletion is refused per attribute instead.
    __slots__ = ("_data", "_rg", "_gfn", "_vc", "__dict__", "__weakref__")

    # Written only for some tensors, so they live in the instance dict (created on first write) with these
    # class defaults: a fresh tensor costs four slot writes.
    _output_nr = 0
    _base = None  # root base of a view

    # Rare attributes, stored in the instance dict only when set.
    _grad = None
    _hooks = None  # leaf tensor hooks: dict handle_id -> fn
    _post_acc_hooks = None  # dict handle_id -> fn
    _acc_ref = None  # weakref to this leaf's AccumulateGrad node
    _view_replay = None  # tuple of (view_op, args) turning _base into this view
    _view_version = 0  # base version at which this view's grad_fn was made
    _creation_meta = 0  # see autograd.views.CreationMeta
    _is_param = False
    _inference = False
    _fw_grads = None  # forward-AD tangents: dict level -> Tensor
    _retains_grad = False

    def __init__(self, data=None, *args, **kwargs) -> None:
        # ``torch.Tensor(...)`` legacy constructor: accept data or sizes.
        from . import _factories

        src = _factories.legacy_tensor_constructor(data, *args, **kwargs)
        _init_from(self, src._data)

    # ---- autograd attributes ---------------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        # As PyTorch, a view requires grad when its base does, even if made in no_grad mode.
        return self._rg or (self._base is not None and self._base._rg)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._gfn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._rg = bool(value)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        _refuse_delete("requires_grad")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        if self._base is not None:
            from .autograd import views

            views.refresh_view_grad_fn(self)
        return self._gfn

    @grad_fn.deleter
    def grad_fn(self) -> None:
        _refuse_delete("grad_fn")

    @property
    def is_leaf(self) -> bool:
        return self._gfn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    def _bump_version(self) -> None:
        vc = self._vc
        if vc is None:
            self._vc = [1]
        else:
            vc[0] += 1

    def _version_counter(self) -> list:
        vc = self._vc
        if vc is None:
            vc = self._vc = [0]
        return vc

    @property
    def grad(self):
        if self._gfn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                "instead. See github.com/pytorch/pytorch/pull/30531 for more informations.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            expected = self.__dict__.get("_grad_dtype", self.dtype) if self._gfn is None else self.dtype
            if expected is not None and value.dtype is not expected:
                if "_grad_dtype" in self.__dict__:
                    raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with "
                                       f"grad_dtype '{_type_name(expected)}'. The gradient must match the tensor's "
                                       "grad_dtype (defaults to the tensor's dtype).")
                raise RuntimeError("assigned grad has data of a different type")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return bool(self._retains_grad)

    @property
    def data(self) -> Tensor:
        # Shares storage but not the version counter (changes through .data are invisible to autograd).
        return _wrap(self._data)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._rg and value._data.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("cannot delete the data of a Tensor")

    @property
    def _backward_hooks(self):
        """The leaf tensor hooks (PyTorch's ``_backward_hooks`` dict)."""
        return self._hooks

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        self._hooks = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        _refuse_delete("_backward_hooks")

    @property
    def grad_dtype(self):
        if self._gfn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        if "_grad_dtype" in self.__dict__:
            return self._grad_dtype
        return self.dtype

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if self._gfn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        from .backend.dtypes import dtype as _dtype

        if value is not None and not isinstance(value, _dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        grad = self._grad
        if value is not None and grad is not None and grad.dtype is not value:
            current = _CPP_TYPE_NAMES.get(grad._data.dtype.name, grad._data.dtype.name)
            raise RuntimeError(
                f"Cannot set grad_dtype to '{_type_name(value)}' because there is already a gradient with "
                f"dtype '{current}'. Please clear the gradient (.grad = None) before changing grad_dtype, or "
                "ensure the new grad_dtype matches the existing gradient's dtype.")
        self.__dict__["_grad_dtype"] = value

    @property
    def real(self) -> Tensor:
        from .ops.complex_ops import real

        return real(self)

    @real.setter
    def real(self, value) -> None:
        from .ops.complex_ops import real

        real(self).copy_(value)

    @property
    def imag(self) -> Tensor:
        from .ops.complex_ops import imag

        return imag(self)

    @imag.setter
    def imag(self, value) -> None:
        from .ops.complex_ops import imag

        imag(self).copy_(value)

    def set_(self, source: Tensor | None = None, *args) -> Tensor:
        """Make this tensor use ``source``'s storage; the tensor gets a fresh gradient accumulator."""
        if source is None:
            self._data = self._data[:0].copy()
        else:
            self._data = source._data
            self._vc = source._version_counter()
        self._bump_version()
        self._acc_ref = None
        return self

    # ---- array metadata --------------------------------------------------------------------------------

    @property
    def dtype(self):
        return from_numpy_dtype(self._data.dtype)

    @property
    def shape(self):
        from .size import Size

        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        from .size import Size

        if dim is None:
            return Size(self._data.shape)
        from .ops._util import wrap_dim

        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def stride(self, dim: int | None = None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        if dim is None:
            return strides
        from .ops._util import wrap_dim

        return strides[wrap_dim(dim, self._data.ndim)]

    def storage_offset(self) -> int:
        base = self._data
        while isinstance(base.base, np.ndarray):
            base = base.base
        return (self._data.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // max(
            self._data.itemsize, 1)

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format is None:
            return bool(self._data.flags["C_CONTIGUOUS"])
        from .memory_format import is_in_format

        return is_in_format(self._data, memory_format)

    @property
    def device(self):
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def layout(self):
        from . import strided

        return strided

    def is_inference(self) -> bool:
        return bool(self._inference)

    def _is_view(self) -> bool:
        return self._base is not None

    # ---- conversion ------------------------------------------------------------------------------------

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._rg and not force and STATE.grad_enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        if not isinstance(self._data, np.ndarray):
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() "
                                "to copy the tensor to host memory first.")
            return self._data.get()
        return self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy() if not self._rg else self._data
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (np.array(self._data), self._rg, self._grad))

    def __deepcopy__(self, memo):
        if self._gfn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment.  If you were attempting to deepcopy a module, "
                               "this may be because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        new = type(self).__new__(type(self))
        _init_from(new, self._data.copy())
        new._rg = self._rg
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if self.__dict__:
            for k, v in self.__dict__.items():
                if k not in ("_grad", "_acc_ref", "_hooks", "_post_acc_hooks"):
                    new.__dict__[k] = v
        memo[id(self)] = new
        return new

    def __dir__(self):
        return sorted(set(super().__dir__()) - {"__dict__"})


def _refuse_delete(name: str) -> None:
    raise RuntimeError(f"cannot delete attribute {name} of a Tensor")


# ``_grad_fn``: the ``_gfn`` slot under its historical name, readable and writable (through the slot's own
# C-level accessors) but not deletable.
_gfn_slot = Tensor.__dict__["_gfn"]
Tensor._grad_fn = property(_gfn_slot.__get__, _gfn_slot.__set__, lambda self: _refuse_delete("_grad_fn"))

_new = object.__new__


def _share_hot_keys() -> None:
    """Make ``_base`` and ``_output_nr`` keys of the Tensor class's shared instance-dict keys.

    CPython (3.11+) keeps an instance's dict entries in a per-object values array indexed by keys shared
    by the class, and only names added while the class is young become shared keys. Operator outputs
    write these two on creation (``fresh_output`` below), so that every operator's reads of them are
    specialized slot-like loads instead of a dict miss followed by the class-default lookup. Tensors made
    elsewhere still read the class defaults: this is only about speed."""
    t = _new(Tensor)
    t._base = None
    t._output_nr = 0
    t._inference = False


_share_hot_keys()


# caffe2 TypeMeta names, which some PyTorch messages print.
_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
                   "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                   "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _type_name(d) -> str:
    from .backend.dtypes import scalar_type_name

    return scalar_type_name(d)


def _init_from(t: Tensor, data) -> None:
    t._data = data
    t._rg = False
    t._gfn = None
    t._vc = None


def _wrap(data) -> Tensor:
    """Fast constructor: a fresh leaf that owns ``data`` (no copy)."""
    t = _new(Tensor)
    t._data = data
    t._rg = False
    t._gfn = None
    t._vc = None
    t._base = None  # (written for fast reads by the operators taking it: see _share_hot_keys)
    t._output_nr = 0
    if STATE.special and STATE.inference:
        t._inference = True
    return t


def _rebuild(data, requires_grad, grad):
    t = _wrap(data)
    t._rg = requires_grad
    if grad is not None:
        t._grad = grad
    return t

