"""``python -m tracegrad.notebook install-kernel [--user | --sys-prefix | --prefix P]``."""

from __future__ import annotations

import argparse
import sys

from .kernelspec import DISPLAY_NAME, KERNEL_NAME, install_kernel_spec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tracegrad.notebook",
                                     description="tracegrad's Jupyter integration.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    install = commands.add_parser(
        "install-kernel", help=f'install the "{DISPLAY_NAME}" kernel spec',
        description=f'Install the Jupyter kernel spec "{DISPLAY_NAME}" (name: {KERNEL_NAME}), an IPython kernel '
                    "that runs this Python with the tracegrad extension loaded. Without an option it goes into "
                    "the active virtual environment if there is one (--sys-prefix), else into your user "
                    "directory (--user).")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user only")
    where.add_argument("--sys-prefix", action="store_true", help=f"install into {sys.prefix} (this environment)")
    where.add_argument("--prefix", metavar="P", help="install into the prefix P (P/share/jupyter/kernels)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    in_venv = sys.prefix != sys.base_prefix
    if args.user or args.prefix:
        user, prefix = args.user, args.prefix
    else:
        user, prefix = (False, sys.prefix) if (args.sys_prefix or in_venv) else (True, None)
    try:
        path = install_kernel_spec(user=user, prefix=prefix)
    except ImportError as exc:
        print(f"error: {exc}; install ipykernel (pip install ipykernel)", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: could not install the kernel spec: {exc}", file=sys.stderr)
        return 1
    print(f'Installed kernel spec "{DISPLAY_NAME}" ({KERNEL_NAME}) in {path}')
    return 0


if __name__ == "__main__":
    sys.exit(main())
