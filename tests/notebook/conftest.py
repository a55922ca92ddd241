"""Fixtures for the notebook layer: a real IPython shell with the extension loaded, and fake comms."""

from __future__ import annotations

import pytest
from IPython.testing.globalipapp import get_ipython

import tracegrad
from tracegrad.notebook import feed_for


class FakeComm:
    """Stands in for an ipykernel comm: records what the kernel sends, and lets a test play the frontend."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.closed = False
        self._on_msg = None
        self._on_close = None

    def send(self, data=None, metadata=None, buffers=None) -> None:
        self.sent.append(data)

    def on_msg(self, callback) -> None:
        self._on_msg = callback

    def on_close(self, callback) -> None:
        self._on_close = callback

    def close(self, data=None, metadata=None, buffers=None) -> None:
        self.closed = True

    def receive(self, data: dict) -> None:
        """The frontend sends ``data`` on this comm."""
        self._on_msg({"content": {"comm_id": "fake", "data": data}})

    def frontend_closes(self) -> None:
        self._on_close({"content": {"comm_id": "fake", "data": {}}})

    def messages(self) -> list[dict]:
        """Everything received, with batches unpacked."""
        return flatten(self.sent)

    def types(self) -> list[str]:
        return [m["type"] for m in self.messages()]


def flatten(messages: list[dict]) -> list[dict]:
    out = []
    for message in messages:
        out.extend(message["messages"] if message["type"] == "batch" else [message])
    return out


@pytest.fixture(scope="session")
def shell():
    return get_ipython()


@pytest.fixture
def ip(shell):
    """The shell with tracegrad loaded (and `torch` bound to tracegrad); names a test defines are removed after."""
    before = set(shell.user_ns)
    tracegrad.load_ipython_extension(shell)
    shell.user_ns["torch"] = tracegrad
    yield shell
    tracegrad.unload_ipython_extension(shell)
    for name in set(shell.user_ns) - before:
        del shell.user_ns[name]


@pytest.fixture
def feed(ip):
    return feed_for(ip)


@pytest.fixture
def comm(feed):
    """A frontend that opened tracegrad.inspector."""
    fake = FakeComm()
    feed.open_comm(fake, {})
    return fake
