"""The operator library (layer 2). ``MODULES`` lists every op module; each may export ``METHODS``
(Tensor methods) and ``PUBLIC`` (functions in the ``tracegrad`` namespace)."""

from __future__ import annotations

import importlib

from . import creation, indexing, linalg_core, pointwise, reductions, shape, views

_OPTIONAL = ("unary", "binary", "reductions_extra", "linalg", "shape_extra", "nn_ops", "random_ops",
             "variants", "complex_ops")

MODULES = [pointwise, creation, views, reductions, shape, indexing, linalg_core]
for _name in _OPTIONAL:
    try:
        MODULES.append(importlib.import_module(f"{__name__}.{_name}"))
    except ModuleNotFoundError as exc:  # a family not written yet
        if exc.name != f"{__name__}.{_name}":
            raise
    except Exception as exc:  # TEMPORARY while op families are being written in parallel
        import warnings

        warnings.warn(f"tracegrad.ops.{_name} failed to import: {exc!r}", ImportWarning, stacklevel=1)
