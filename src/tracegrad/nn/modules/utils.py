"""torch.nn.modules.utils: the argument tuples layers build (``_pair`` and friends) and the prefix a
DataParallel/DistributedDataParallel checkpoint puts on every key."""

from __future__ import annotations

from typing import Any

from ..functional import _list_with_default  # noqa: F401 - torch.nn.modules.utils has it too
from ..grad import _ntuple, _pair, _single, _triple  # noqa: F401 - (an iterable as a tuple, anything else repeated)

__all__ = ["consume_prefix_in_state_dict_if_present"]

_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed, each item repeated ``n`` times: a layer's padding as F.pad reads it."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``), in place, as torch's."""
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata):
        # '' is the wrapper's own entry (kept); 'module' (the prefix without its dot) is the wrapped model's
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)

