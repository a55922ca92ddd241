"""``tracegrad.optim``: optimizers and learning-rate schedulers (PyTorch's ``torch.optim``)."""

from __future__ import annotations

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
