"""Which of torch's ``torch.nn.modules.*`` files defines each layer class that tracegrad writes elsewhere.

A class's ``__module__`` is what ``print(type(layer))`` shows (``<class 'torch.nn.modules.batchnorm.BatchNorm2d'>``)
and where a pickle of a whole model looks the class up, so each class names torch's home and that module holds it.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    activation,
    attention,
    batchnorm,
    container,
    conv,
    instancenorm,
    lazy,
    legacy,
    linear,
    loss,
    normalization,
    padding,
    pooling,
    unpool,
    upsampling,
)


def _house(home: ModuleType, classes: tuple) -> None:
    """Say each class lives in ``home`` (as torch's does), and make ``home`` hold it."""
    for cls in classes:
        cls.__module__ = home.__name__
        setattr(home, cls.__name__, cls)


def _public(module: ModuleType) -> tuple:
    return tuple(getattr(module, name) for name in module.__all__) + module.PRIVATE_BASES


_HOMES = {
    batchnorm: _public(batchnorm),
    instancenorm: _public(instancenorm),
    padding: _public(padding),
    upsampling: _public(upsampling),
    activation: (attention.MultiheadAttention,),
    pooling: (unpool._MaxUnpoolNd, unpool.MaxUnpool1d, unpool.MaxUnpool2d, unpool.MaxUnpool3d),
    linear: (lazy.LazyLinear,),
    conv: (lazy.LazyConv1d, lazy.LazyConv2d, lazy.LazyConv3d, lazy.LazyConvTranspose1d, lazy.LazyConvTranspose2d,
           lazy.LazyConvTranspose3d),
    container: (legacy.Container,),
    loss: (legacy.NLLLoss2d,),
    normalization: (legacy.CrossMapLRN2d,),
}

for _home, _classes in _HOMES.items():
    _house(_home, _classes)
