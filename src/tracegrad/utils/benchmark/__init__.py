"""``torch.utils.benchmark``: ``Timer`` to time tracegrad statements, ``Measurement`` for its results, ``Compare`` to
print many of them as tables, and the fuzzers (``Fuzzer`` and its parameter and tensor specs) that draw the inputs
to time. (``FuzzedSparseTensor`` refuses: tracegrad has no sparse tensors.)"""

from .utils.common import *  # noqa: F403
from .utils.compare import *  # noqa: F403
from .utils.fuzzer import *  # noqa: F403
from .utils.sparse_fuzzer import *  # noqa: F403
from .utils.timer import *  # noqa: F403
from .utils.valgrind_wrapper.timer_interface import *  # noqa: F403
