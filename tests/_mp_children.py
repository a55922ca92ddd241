"""What the child processes of test_multiprocessing_vs_torch.py run. A module of its own, importing the library
under test only, so that a spawned child need not import torch as the test module does (seconds a child)."""

from __future__ import annotations

import importlib


def hogwild_train(model, rank: int, library: str = "tracegrad") -> None:
    """PyTorch's Hogwild example: a few SGD steps on the parameters the parent shares."""
    torch = importlib.import_module(library)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        loss = model(torch.ones(4, 3) * (rank + 1)).pow(2).sum()
        loss.backward()
        optimizer.step()


def hogwild_train_in_turn(model, ranks: tuple, library: str = "tracegrad") -> None:
    """``hogwild_train`` for each of ``ranks`` in turn, in one process (a spawned child's import paid once)."""
    for rank in ranks:
        hogwild_train(model, rank, library)


def add_what_arrives(inbox, outbox) -> None:
    """Add to the tensors received, send back what they look like here and a tensor made here."""
    received = inbox.get()
    whole, view, param = received["whole"], received["view"], received["param"]
    view.add_(10)
    param.data.mul_(2)
    mine = importlib.import_module(received["library"]).ones(3) * 7
    outbox.put({"shared": [whole.is_shared(), view.is_shared(), param.is_shared()],
                "same_storage": view.untyped_storage() is whole.untyped_storage(),
                "param": [type(param).__name__, param.requires_grad, whole.requires_grad],
                "mine": mine})
    inbox.get()  # (stay alive until the parent has attached to ``mine``)


def fail_on_rank(rank: int, bad_rank: int) -> None:
    if rank == bad_rank:
        raise ValueError(f"rank {rank} failed")


def exit_on_rank(rank: int, bad_rank: int) -> None:
    if rank == bad_rank:
        raise SystemExit(3)
