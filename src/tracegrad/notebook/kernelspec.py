"""The "Python 3 (tracegrad)" kernel spec: an ipykernel that loads the tracegrad extension at start.

The same spec is checked in at ``kernel/tracegrad/kernel.json`` (shipped in the wheel as
``share/jupyter/kernels/tracegrad``); a test keeps the two equal. Installed by
``python -m tracegrad.notebook install-kernel``, which writes this interpreter's path into ``argv`` so the
kernel runs in the environment that has tracegrad, whichever Jupyter launches it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

KERNEL_NAME = "tracegrad"
DISPLAY_NAME = "Python 3 (tracegrad)"


def kernel_spec(python: str = "python") -> dict[str, Any]:
    """The kernel.json contents; ``python`` is argv[0] (Jupyter replaces a bare "python" by its own interpreter)."""
    return {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=tracegrad"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "metadata": {"debugger": True},
    }


def install_kernel_spec(*, user: bool = False, prefix: str | None = None, python: str | None = None) -> str:
    """Install the spec for the current user, or under ``prefix`` (``sys.prefix`` for a venv); returns its path."""
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / KERNEL_NAME
        source.mkdir()
        spec = kernel_spec(python or sys.executable)
        (source / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        return KernelSpecManager().install_kernel_spec(str(source), KERNEL_NAME, user=user, prefix=prefix)
