"""``tracegrad.optim``: optimizers and learning-rate schedulers (PyTorch's ``torch.optim``)."""

from __future__ import annotations

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

# (as torch's: these two print as <class 'torch.optim.Adafactor'>, not by the file that defines them)
Adafactor.__module__ = Muon.__module__ = __name__

__all__ = [
    "Optimizer",
    "SGD",
    "SparseAdam",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "ASGD",
    "NAdam",
    "RAdam",
    "Rprop",
    "LBFGS",
    "Adafactor",
    "Muon",
    "lr_scheduler",
    "swa_utils",
]
