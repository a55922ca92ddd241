"""``torch.nn.parallel``: ``DataParallel`` and ``data_parallel`` as torch's build behaves without a GPU."""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
