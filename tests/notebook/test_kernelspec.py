"""The "Python 3 (tracegrad)" kernel spec: the CLI installs it, and a notebook run on it has the magics
without %load_ext."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tracegrad.notebook.__main__ import main
from tracegrad.notebook.kernelspec import DISPLAY_NAME, KERNEL_NAME, kernel_spec
from tracegrad.notebook.protocol import MIME_GRAPH

REPO = Path(__file__).resolve().parents[2]


def test_checked_in_spec_is_the_one_the_cli_writes():
    assert json.loads((REPO / "kernel" / KERNEL_NAME / "kernel.json").read_text()) == kernel_spec()
    assert kernel_spec()["display_name"] == DISPLAY_NAME == "Python 3 (tracegrad)"
    assert "--ext=tracegrad" in kernel_spec()["argv"]


def test_cli_help():
    out = subprocess.run([sys.executable, "-m", "tracegrad.notebook", "install-kernel", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for option in ("--user", "--sys-prefix", "--prefix"):
        assert option in out
    bad = subprocess.run([sys.executable, "-m", "tracegrad.notebook", "install-kernel", "--user", "--prefix", "x"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "not allowed with" in bad.stderr


def test_install_into_prefix_and_run_a_notebook_on_it(tmp_path, monkeypatch, capsys):
    prefix = tmp_path / "prefix"
    assert main(["install-kernel", "--prefix", str(prefix)]) == 0
    assert "Python 3 (tracegrad)" in capsys.readouterr().out
    installed = json.loads((prefix / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json").read_text())
    assert installed == kernel_spec(sys.executable)

    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import tracegrad as torch\n"
                                  "x = torch.ones(2, requires_grad=True)\ny = (x.exp() * x).sum()"),
        nbformat.v4.new_code_cell("%autograd_graph y"),  # no %load_ext: the kernel spec preloaded it
    ]
    NotebookClient(notebook, timeout=120, kernel_name=KERNEL_NAME,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    (output,) = notebook.cells[1].outputs
    assert output["output_type"] == "execute_result"
    assert {n["name"] for n in output["data"][MIME_GRAPH]["nodes"]} >= {"SumBackward0", "ExpBackward0"}


@pytest.mark.parametrize("flag", ["--user", "--sys-prefix"])
def test_install_locations(flag, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr("tracegrad.notebook.__main__.install_kernel_spec",
                        lambda **kw: calls.append(kw) or str(tmp_path))
    assert main(["install-kernel", flag]) == 0
    assert calls == [{"user": True, "prefix": None} if flag == "--user" else {"user": False, "prefix": sys.prefix}]
