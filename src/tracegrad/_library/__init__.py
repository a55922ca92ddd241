"""The machinery under ``tracegrad.library`` (PyTorch's ``torch._library``): schema inference, operators defined
by users and their dispatch tables, ``custom_op``'s operator objects."""
