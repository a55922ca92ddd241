"""``Node._input_metadata`` entries: the shape and dtype of each gradient a node receives."""

from __future__ import annotations

from typing import NamedTuple


class InputMetadata(NamedTuple):
    shape: tuple
    np_dtype: object

    @property
    def dtype(self):
        from ..backend.dtypes import from_numpy_dtype

        return from_numpy_dtype(self.np_dtype)

    @property
    def device(self):
        from ..backend.device import CPU

        return CPU
