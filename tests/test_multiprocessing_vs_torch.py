"""``torch.multiprocessing`` and shared memory against torch: ``share_memory_()`` moves a storage into shared memory
in place (views, versions, autograd state kept; ``is_shared()`` True only then), forked children write the same
memory (PyTorch's Hogwild example), tensors sent through queues or as ``Process`` arguments to spawned children
arrive over the same memory (Parameters and requires_grad kept, non-leaves refused), and ``spawn`` reports a
child's failure in torch's words.

Process starts are what costs: torch runs its programs in forked children only (a spawned child would import torch,
seconds), tracegrad in spawned ones where the start method matters, with the children's code in _mp_children.py
(which imports no torch). The outcome of these programs does not depend on the start method.
"""

from __future__ import annotations

import gc
import glob
import importlib
import multiprocessing
import os
import sys
from multiprocessing.reduction import ForkingPickler

import _mp_children
import pytest
import torch
from _lib import raised

import tracegrad as tg

LIBRARIES = {"tracegrad": tg, "torch": torch}


def _multiprocessing(lib):
    return importlib.import_module(lib.__name__ + ".multiprocessing")


# ---- share_memory_ in one process ----------------------------------------------------------------------------------


def _sharing_in_place(lib) -> list:
    x = lib.arange(6.0).reshape(2, 3)
    x.add_(1)
    view = x[1]
    x.requires_grad_()
    storage = x.untyped_storage()
    seen = [x.is_shared(), view.is_shared(), storage.is_shared(), x._version, view._version]
    returned = x.share_memory_()
    seen += [returned is x, x.is_shared(), view.is_shared(), storage.is_shared(), x.untyped_storage() is storage,
             x._version, view._version, x.requires_grad, x.is_leaf, view.data_ptr() - x.data_ptr(), x.stride(),
             view.tolist()]
    with lib.no_grad():
        x[1, 0] = 50.0  # (the view sees a write through its base, as before)
    seen += [view.tolist(), x._version, view._version, (x * 2).sum().item()]
    y = lib.zeros(3)
    y.untyped_storage().share_memory_()  # (through the storage: the tensor over it is shared too)
    empty = lib.empty(0).share_memory_()
    return seen + [y.is_shared(), empty.is_shared()]


def test_share_memory_moves_the_storage_in_place_with_its_views():
    assert _sharing_in_place(tg) == _sharing_in_place(torch)


def _module_sharing(lib) -> list:
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    model[0].weight.grad = lib.ones(2, 2)
    before = [t.is_shared() for t in (model[0].weight, model[0].weight.grad, model[1].running_mean)]
    returned = model.share_memory()
    after = [t.is_shared() for t in (model[0].weight, model[0].weight.grad, model[0].bias, model[1].running_mean)]
    return [before, returned is model, after, model[0].weight.tolist(), model[0].weight.requires_grad]


def test_module_share_memory_shares_parameters_grads_and_buffers():
    assert _module_sharing(tg) == _module_sharing(torch)


def test_a_forked_child_writes_the_parents_memory():
    def program(lib) -> list:
        x = lib.zeros(4)
        view = x[1:3]
        x.share_memory_()
        child = multiprocessing.get_context("fork").Process(target=_write_both, args=(x, view))
        child.start()
        child.join()
        return [x.tolist(), view.tolist(), x._version, child.exitcode]

    assert program(tg) == program(torch) == [[1.0, 6.0, 6.0, 1.0], [6.0, 6.0], 0, 0]


def _write_both(base, view) -> None:
    view.add_(1).mul_(5)
    base.add_(1)


# ---- the Hogwild example -------------------------------------------------------------------------------------------


def _hogwild(lib, start_method: str) -> list:
    """PyTorch's Hogwild example with ranks 0 and 1 trained one after the other (so that the outcome is one
    number): each by a child of its own where children fork, both by one child where they are spawned (a spawned
    child imports the library: a second one would only cost another import)."""
    mp = _multiprocessing(lib)
    context = mp.get_context(start_method)
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    model.share_memory()
    if start_method == "fork":
        targets = [(_mp_children.hogwild_train, rank) for rank in range(2)]
    else:
        targets = [(_mp_children.hogwild_train_in_turn, (0, 1))]
    exitcodes = []
    for target, ranks in targets:
        child = context.Process(target=target, args=(model, ranks, lib.__name__))
        child.start()
        child.join()
        exitcodes.append(child.exitcode)
    return [model.weight.tolist(), model.bias.tolist(), model.weight.is_shared(), set(exitcodes)]


@pytest.fixture(scope="module")
def torch_hogwild() -> list:
    # (torch's optimizers import much on first use: done here once rather than in each forked child)
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1).step()
    return _hogwild(torch, "fork")


def test_hogwild_children_train_the_parents_model_fork(torch_hogwild):
    assert _hogwild(tg, "fork") == torch_hogwild


def test_hogwild_children_train_the_parents_model_spawn(torch_hogwild):
    assert _hogwild(tg, "spawn") == torch_hogwild


# ---- queues ---------------------------------------------------------------------------------------------------------


def _through_a_queue(lib, start_method: str) -> list:
    mp = _multiprocessing(lib)
    context = mp.get_context(start_method)
    inbox, outbox = context.Queue(), context.Queue()
    whole = lib.zeros(6, requires_grad=True)
    with lib.no_grad():
        whole.add_(1)
    param = lib.nn.Parameter(lib.ones(2))
    shared_before = [whole.is_shared(), param.is_shared()]
    child = context.Process(target=_mp_children.add_what_arrives, args=(inbox, outbox))
    child.start()
    inbox.put({"whole": whole, "view": whole.detach()[2:4], "param": param, "library": lib.__name__})
    answer = outbox.get(timeout=60)
    mine = answer.pop("mine")
    seen = [shared_before, answer, mine.tolist(), mine.is_shared()]
    inbox.put(None)
    child.join()
    return seen + [whole.tolist(), param.tolist(), whole.is_shared(), param.is_shared(), whole._version,
                   child.exitcode]


@pytest.fixture(scope="module")
def torch_queue() -> list:
    return _through_a_queue(torch, "fork")


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_tensors_sent_through_a_queue_share_memory_fork(torch_queue, strategy):
    mp = _multiprocessing(tg)
    mp.set_sharing_strategy(strategy)
    before = set(glob.glob("/dev/shm/tracegrad_*"))
    try:
        assert _through_a_queue(tg, "fork") == torch_queue
    finally:
        mp.set_sharing_strategy("file_descriptor")
    gc.collect()
    # each file this process or its (ended) child made is removed once its memory is freed; files of other live
    # processes (a parallel test worker) are theirs
    left = set(glob.glob("/dev/shm/tracegrad_*")) - before
    assert [name for name in left if not _made_by_a_live_stranger(name)] == []


def _made_by_a_live_stranger(shm_name: str) -> bool:
    """Whether a ``tracegrad_<pid>_<hex>`` segment was made by a live process other than this one."""
    pid = int(shm_name.rsplit("/", 1)[-1].split("_")[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_tensors_sent_through_a_queue_share_memory_spawn(torch_queue):
    assert _through_a_queue(tg, "spawn") == torch_queue


def test_a_non_leaf_requiring_grad_is_refused():
    def program(lib):
        return ForkingPickler.dumps(lib.ones(2, requires_grad=True) * 2)

    assert raised(tg, program) == raised(torch, program)
    assert raised(tg, program)[0] == "RuntimeError"


# ---- spawn and its errors ------------------------------------------------------------------------------------------


def _failure(lib, target, start_method: str) -> tuple:
    mp = _multiprocessing(lib)
    try:
        if start_method == "spawn":
            mp.spawn(target, args=(0,), nprocs=1)
        else:
            mp.start_processes(target, args=(0,), nprocs=1, start_method=start_method)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return (type(exc).__name__, type(exc).__mro__[1].__name__, exc.error_index, isinstance(exc.error_pid, int),
                getattr(exc, "exit_code", None), _message_shape(str(exc)))
    return None


def _message_shape(message: str) -> list:
    """A child's traceback in the parent's error, without its indented lines (files and code: each library's own)."""
    return [line for line in message.splitlines() if not line.startswith(" ")]


def test_spawn_raises_the_childs_exception_with_its_traceback():
    ours = _failure(tg, _mp_children.fail_on_rank, "spawn")
    assert ours == _failure(torch, _mp_children.fail_on_rank, "fork")
    assert ours[0] == "ProcessRaisedException"
    assert ours[-1][:4] == ["", "", "-- Process 0 terminated with the following error:",
                            "Traceback (most recent call last):"]
    assert ours[-1][-1] == "ValueError: rank 0 failed"


def test_a_child_that_exits_is_reported_with_its_exit_code():
    ours = _failure(tg, _mp_children.exit_on_rank, "fork")
    assert ours == _failure(torch, _mp_children.exit_on_rank, "fork")
    assert ours[-1] == ["process 0 terminated with exit code 3"]


def test_the_module_surface():
    def surface(lib) -> list:
        mp = _multiprocessing(lib)
        names = [name for name in multiprocessing.__all__ if getattr(mp, name, None) is None]
        refused = raised(lib, lambda _: mp.set_sharing_strategy("shm"))
        return [names, sorted(mp.get_all_sharing_strategies()), mp.get_sharing_strategy(), refused,
                sorted(set(mp.__all__)), mp.ProcessContext.join.__code__.co_varnames[:3]]

    assert surface(tg) == surface(torch)
    assert sys.modules["tracegrad.multiprocessing"] is tg.multiprocessing


def _sending_moves_every_alias(lib) -> list:
    lonely = lib.ones(3)  # (nothing else over its memory)
    x = lib.arange(4.0)
    alias, view = x.detach(), x[1:]
    ForkingPickler.dumps([lonely, x])
    return [lonely.is_shared(), x.is_shared(), alias.is_shared(), view.is_shared(), view.data_ptr() - x.data_ptr(),
            x._version, lonely.tolist(), view.tolist()]


def test_a_tensor_sent_is_moved_to_shared_memory_with_its_aliases():
    assert _sending_moves_every_alias(tg) == _sending_moves_every_alias(torch)


# ---- DataLoader workers ----------------------------------------------------------------------------------------------


class _Squares:
    def __init__(self, lib) -> None:
        self.lib = lib

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        return self.lib.full((2,), float(i * i))


def test_dataloader_batches_from_workers_arrive_in_shared_memory():
    def batches(lib) -> list:
        loader = lib.utils.data.DataLoader(_Squares(lib), batch_size=2, num_workers=1,
                                           multiprocessing_context="fork")
        return [(batch.tolist(), batch.is_shared()) for batch in loader]

    assert batches(tg) == batches(torch)
