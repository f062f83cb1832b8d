"""A session: one sandbox kept for many cells."""
from __future__ import annotations

import base64
import json
import time
from typing import Any, Dict, List, Optional, Union

from ._errors import NoCellRunning, NotFound, SessionLost, TransportError
from ._http import Transport, path_segment
from ._stream import EventStream, read_result
from ._types import FileInfo, RunResult

CANCEL_TIMEOUT = 5.0
STOP_WAIT = 10.0


class Session:
    """Variables, imports and workspace files persist from one cell to the
    next. Every cell passes the session's policy first (PolicyViolation when
    it does not: nothing ran). Close it (or leave its `with` block) to
    destroy its sandbox; SessionLost once its interpreter or executor died."""

    def __init__(self, transport: Transport, info: Dict[str, Any], max_event_bytes: int):
        self._t = transport
        self.id: str = info["session_id"]
        self.language: Optional[str] = info.get("language")
        self.created: Dict[str, Any] = info
        self._max_event_bytes = max_event_bytes
        self._path = f"/v1/sessions/{path_segment(self.id)}"
        self.closed = False

    def exec(self, code: Union[str, bytes], timeout_ms: Optional[int] = None) -> RunResult:
        """Runs one cell; its final expression's value is .value."""
        resp = self._t.open("POST", self._path + "/exec", self._cell(code, timeout_ms, False),
                            {"Content-Type": "application/json"})
        return read_result(self._t, resp)

    def exec_stream(self, code: Union[str, bytes],
                    timeout_ms: Optional[int] = None) -> EventStream:
        """Runs one cell, streaming its output (as Client.stream). Closing the
        stream before its Result interrupts the cell (as interrupt()) and
        returns once the session is idle again."""
        resp = self._t.open("POST", self._path + "/exec", self._cell(code, timeout_ms, True),
                            {"Content-Type": "application/json", "Accept": "text/event-stream"})
        return EventStream(self._t, resp, self._stop_cell, self._max_event_bytes)

    @staticmethod
    def _cell(code: Union[str, bytes], timeout_ms: Optional[int], stream: bool) -> bytes:
        body: Dict[str, Any] = ({"code_b64": base64.b64encode(code).decode()}
                                if isinstance(code, bytes) else {"code": code})
        if timeout_ms is not None:
            body["timeout_ms"] = timeout_ms
        if stream:
            body["stream"] = True
        return json.dumps(body).encode()

    def interrupt(self) -> bool:
        """Interrupts the running cell (KeyboardInterrupt; the session lives on
        when the program lets it). False when no cell was running."""
        try:
            self._t.call("POST", self._path + "/cancel", retry_codes=frozenset())
        except NoCellRunning:
            return False
        return True

    def _stop_cell(self) -> None:
        """Interrupts a streamed cell closed early, then waits (at most
        STOP_WAIT seconds) until the session is idle again, so the next call
        does not find it busy."""
        try:
            self._t.call("POST", self._path + "/cancel", timeout=CANCEL_TIMEOUT,
                         retry_codes=frozenset())
        except NoCellRunning:
            pass  # it had ended
        deadline = time.monotonic() + STOP_WAIT
        while time.monotonic() < deadline:
            if self._t.call_object("GET", self._path, timeout=CANCEL_TIMEOUT).get("state") != "busy":
                return
            time.sleep(0.05)

    def upload(self, name: str, data: Union[bytes, str]) -> None:
        """Writes a file into the session's working directory."""
        raw = data.encode() if isinstance(data, str) else data
        self._t.read_all(self._t.open("PUT", f"{self._path}/files/{path_segment(name)}", raw,
                                      {"Content-Type": "application/octet-stream"}))

    def download(self, name: str) -> bytes:
        """A file of the session's working directory (FileNotFound if none)."""
        return self._t.read_all(self._t.open("GET", f"{self._path}/files/{path_segment(name)}",
                                             headers={"Accept": "application/octet-stream"}))

    def files(self) -> List[FileInfo]:
        """The regular files in the session's working directory."""
        b = self._t.call("GET", self._path + "/files")
        items = b.get("files") if isinstance(b, dict) else None
        if not isinstance(items, list):
            raise TransportError(f"not a file listing: {b!r:.300}")
        return [FileInfo(str(f.get("name")), int(f.get("size", 0)))
                for f in items if isinstance(f, dict)]

    def info(self) -> Dict[str, Any]:
        """The session's record: state (idle, busy, lost), cells_run, memory, expiry."""
        return self._t.call_object("GET", self._path)

    def close(self) -> None:
        """Destroys the session's sandbox. Closing a session that is gone
        (lost, expired, closed) is not an error."""
        if self.closed:
            return
        try:
            self._t.call("DELETE", self._path)
        except (NotFound, SessionLost):
            pass
        self.closed = True

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
