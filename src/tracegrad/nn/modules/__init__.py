"""The layer classes of ``tracegrad.nn``."""

from __future__ import annotations

from . import (
    _torch_homes,  # noqa: F401 - names torch's files as the homes of classes written elsewhere
    activation,
    adaptive,
    attention,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    lazy,
    legacy,
    linear,
    linear_cross_entropy_options,
    loss,
    normalization,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    unpool,
    utils,  # noqa: F401 - torch.nn.modules.utils
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .attention import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .lazy import *  # noqa: F403
from .legacy import *  # noqa: F403
from .linear import *  # noqa: F403
from .linear_cross_entropy_options import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module
from .normalization import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .unpool import *  # noqa: F403

__all__ = [
    "Module",
    *linear.__all__,
    *conv.__all__,
    *normalization.__all__,
    *dropout.__all__,
    *sparse.__all__,
    *flatten.__all__,
    *fold.__all__,
    *distance.__all__,
    *container.__all__,
    *activation.__all__,
    *transformer.__all__,
    *lazy.__all__,
    *adaptive.__all__,
    *attention.__all__,
    *loss.__all__,
    *linear_cross_entropy_options.__all__,
    *pooling.__all__,
    *pixelshuffle.__all__,
    *channelshuffle.__all__,
    *rnn.__all__,
    *unpool.__all__,
    *legacy.__all__,
]
