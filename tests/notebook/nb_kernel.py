"""A real ipykernel driven over ZeroMQ with jupyter_client, the way JupyterLab drives it."""

from __future__ import annotations

import uuid
from typing import Any

from jupyter_client.manager import KernelManager

TARGET = "tracegrad.inspector"


class Kernel:
    """Start a kernel (by default the python3 spec with ``--ext=tracegrad``), run cells, talk on comms."""

    def __init__(self, extra_arguments: tuple[str, ...] = ("--ext=tracegrad",), timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(extra_arguments=list(extra_arguments))
        self._connect()

    def _connect(self) -> None:
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=self.timeout)

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def restart(self) -> None:
        self.kc.stop_channels()
        self.km.restart_kernel(now=True)
        self._connect()

    # ---- requests ---------------------------------------------------------------------------------------

    def execute(self, code: str, cell_id: str | None = None) -> tuple[dict, list[dict]]:
        """Run a cell (cell id in the request metadata, as JupyterLab sends it); returns the reply content and
        the comm messages (data) that arrived while it ran."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}
        metadata = {"cellId": cell_id} if cell_id else {}
        msg_id = self._send("execute_request", content, metadata)
        comm_data = self._collect(msg_id)
        reply = self.kc.get_shell_msg(timeout=self.timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=self.timeout)
        return reply["content"], comm_data

    def open_comm(self, data: dict | None = None) -> tuple[str, list[dict]]:
        comm_id = uuid.uuid4().hex
        msg_id = self._send("comm_open", {"comm_id": comm_id, "target_name": TARGET, "data": data or {}})
        return comm_id, self._collect(msg_id)

    def send_comm(self, comm_id: str, data: dict) -> list[dict]:
        return self._collect(self._send("comm_msg", {"comm_id": comm_id, "data": data}))

    def close_comm(self, comm_id: str) -> list[dict]:
        return self._collect(self._send("comm_close", {"comm_id": comm_id, "data": {}}))

    # ---- plumbing ---------------------------------------------------------------------------------------

    def _send(self, msg_type: str, content: dict, metadata: dict | None = None) -> str:
        msg = self.kc.session.msg(msg_type, content, metadata=metadata or {})
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def _collect(self, parent_id: str) -> list[dict]:
        """IOPub comm_msg data sent in answer to ``parent_id``, until the kernel goes idle for it."""
        comm_data: list[dict] = []
        while True:
            msg: dict[str, Any] = self.kc.get_iopub_msg(timeout=self.timeout)
            if msg["parent_header"].get("msg_id") != parent_id:
                continue
            if msg["msg_type"] == "comm_msg":
                comm_data.append(msg["content"]["data"])
            elif msg["msg_type"] == "error":
                comm_data.append({"type": "__kernel_error__", "traceback": msg["content"]["traceback"]})
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return comm_data
