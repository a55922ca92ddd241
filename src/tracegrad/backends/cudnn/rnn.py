"""``torch.backends.cudnn.rnn``: the float32 precision of cuDNN's RNNs (there is no cuDNN here to run them)."""

from __future__ import annotations

from .. import install_flags, precision_of

install_flags(__name__, {}, {"fp32_precision": precision_of("cuda", "rnn")})
