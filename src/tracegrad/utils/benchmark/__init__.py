"""``torch.utils.benchmark``: ``Timer`` to time tracegrad statements, ``Measurement`` for its results and
``Compare`` to print many of them as tables. (The fuzzers are not provided.)"""

from .utils.common import *  # noqa: F403
from .utils.compare import *  # noqa: F403
from .utils.timer import *  # noqa: F403
from .utils.valgrind_wrapper.timer_interface import *  # noqa: F403
