import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402 (after the path set-up the test modules rely on)


@pytest.fixture(autouse=True)
def one_thread():
    """Every test starts with both libraries on one thread, and whatever thread counts it sets are restored
    afterwards: where a thread's range ends decides which elements PyTorch's kernels take through their scalar
    loops (and, for histc, how far a half-precision count grows), so bit-for-bit comparisons pin it, and no test
    leaves a count to the tests after it. (Modules that name this fixture predate its being automatic.)"""
    import torch

    import tracegrad as tg

    before = (tg.get_num_threads(), torch.get_num_threads())
    tg.set_num_threads(1)
    torch.set_num_threads(1)
    yield
    tg.set_num_threads(before[0])
    torch.set_num_threads(before[1])


@pytest.fixture(autouse=True)
def _no_lingering_tensor_subclass():
    """A test that defines a Tensor subclass leaves its class to the cycle collector, and while the class lives
    the __torch_function__ protocol is live for the whole process (tracegrad/_torch_function.py): collect it
    after such a test, so later tests see the plain eager paths they were written for."""
    yield
    from tracegrad import _torch_function

    if _torch_function._live_subclasses:
        import gc

        gc.collect()
