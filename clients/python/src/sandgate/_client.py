"""The client of sandgate's HTTP API."""
from __future__ import annotations

import base64
import json
import os
from typing import Any, Dict, Mapping, Optional, Union

from ._errors import TransportError
from ._http import DEFAULT_MAX_RESPONSE_BYTES, Transport, path_segment
from ._session import Session
from ._sse import DEFAULT_MAX_EVENT_BYTES
from ._stream import EventStream, read_result
from ._types import Analysis, RunResult

DEFAULT_URL = "http://127.0.0.1:9385"
CANCEL_TIMEOUT = 5.0

FileData = Union[bytes, str]


def _files(files: Optional[Mapping[str, FileData]]) -> Optional[Dict[str, str]]:
    if files is None:
        return None
    return {name: base64.b64encode(data.encode() if isinstance(data, str) else data).decode()
            for name, data in files.items()}


class Client:
    """sandgate's API: one-shot jobs, streams, cancel, analysis, sessions.

    url and token default to $SANDGATE_URL (else http://127.0.0.1:9385) and
    $SANDGATE_TOKEN (else none: a trusted network needs no token). timeout
    is each socket read's or write's, in seconds; connect_timeout the
    connection's. A request is sent again (at most `retries` times, waiting
    the answer's Retry-After up to max_retry_delay seconds) only when it
    provably did not start: the connection could not be made, 502
    executor_unreachable, 409 session_busy, a 503 with Retry-After. Never
    when the job may have run.
    """

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, *,
                 timeout: float = 300.0, retries: int = 3, max_retry_delay: float = 10.0,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
                 connect_timeout: float = 10.0) -> None:
        url = url or os.environ.get("SANDGATE_URL") or DEFAULT_URL
        token = token if token is not None else os.environ.get("SANDGATE_TOKEN") or None
        self._t = Transport(url, token, timeout, retries, max_retry_delay, max_response_bytes,
                            connect_timeout)
        self.max_event_bytes = max_event_bytes

    @property
    def url(self) -> str:
        return f"{self._t.scheme}://{self._t.host}:{self._t.port}{self._t.prefix}"

    @staticmethod
    def _job(code: Union[str, bytes], language: str, arguments: Optional[Mapping[str, Any]],
             files: Optional[Mapping[str, FileData]], policy: Optional[str],
             limits: Optional[Mapping[str, int]], network: Any) -> Dict[str, Any]:
        body: Dict[str, Any] = {"language": language}
        if isinstance(code, bytes):
            body["code_b64"] = base64.b64encode(code).decode()
        else:
            body["code"] = code
        optional = {"arguments": arguments, "files": _files(files), "policy": policy,
                    "limits": limits, "network": network}
        body.update({k: v for k, v in optional.items() if v is not None})
        return body

    def run(self, code: Union[str, bytes], language: str = "python",
            arguments: Optional[Mapping[str, Any]] = None,
            files: Optional[Mapping[str, FileData]] = None, policy: Optional[str] = None,
            limits: Optional[Mapping[str, int]] = None, network: Any = None) -> RunResult:
        """Runs a job in a fresh sandbox and returns its result (any outcome
        of the program: check .status or .ok). Raises PolicyViolation when
        the policy rejects the code, an APIError subclass for a refusal."""
        body = self._job(code, language, arguments, files, policy, limits, network)
        resp = self._t.open("POST", "/v1/run", json.dumps(body).encode(),
                            {"Content-Type": "application/json"})
        return read_result(self._t, resp)

    def stream(self, code: Union[str, bytes], language: str = "python",
               arguments: Optional[Mapping[str, Any]] = None,
               files: Optional[Mapping[str, FileData]] = None, policy: Optional[str] = None,
               limits: Optional[Mapping[str, int]] = None, network: Any = None) -> EventStream:
        """Runs a job and streams its output: an iterator of Stdout / Stderr
        pieces as the program writes them, then one Result. .job_id is known
        at once. Closing it before the Result cancels the job."""
        body = self._job(code, language, arguments, files, policy, limits, network)
        body["stream"] = True
        resp = self._t.open("POST", "/v1/run", json.dumps(body).encode(),
                            {"Content-Type": "application/json", "Accept": "text/event-stream"})
        job = resp.headers.get("x-request-id")
        return EventStream(self._t, resp, lambda: self._quiet_cancel(job), self.max_event_bytes)

    def _quiet_cancel(self, job_id: Optional[str]) -> None:
        if job_id:
            self._t.call("POST", f"/v1/jobs/{path_segment(job_id)}/cancel",
                         timeout=CANCEL_TIMEOUT, retry_codes=frozenset())

    def cancel(self, job_id: str) -> None:
        """Stops a running job of the caller's tenant (it ends as cancelled,
        its sandbox destroyed). Raises JobNotFound or JobEnded."""
        self._t.call("POST", f"/v1/jobs/{path_segment(job_id)}/cancel",
                     retry_codes=frozenset())

    def analyze(self, code: Union[str, bytes], language: str = "python",
                policy: Optional[str] = None) -> Analysis:
        """The policy's verdict on the code and every violation; runs nothing."""
        body = self._job(code, language, None, None, policy, None, None)
        return Analysis.from_json(self._t.call("POST", "/v1/analyze", body))

    def runtimes(self) -> Dict[str, Any]:
        """Per language: interpreter, installed packages, and what each of
        the caller's policies lets a job import (GET /v1/runtimes)."""
        return self._t.call_object("GET", "/v1/runtimes")

    def whoami(self) -> Dict[str, Any]:
        """The caller's tenant, policies, rate limit and maxima."""
        return self._t.call_object("GET", "/v1/whoami")

    def policies(self) -> Dict[str, Any]:
        return self._t.call_object("GET", "/v1/policies")

    def session(self, language: str = "python", policy: Optional[str] = None,
                timeout_ms: Optional[int] = None, idle_timeout_s: Optional[int] = None,
                max_lifetime_s: Optional[int] = None, network: Any = None) -> Session:
        """Opens a session (one sandbox kept for many cells). Use it as a
        context manager, or close() it: closing destroys the sandbox."""
        body: Dict[str, Any] = {"language": language}
        optional = {"policy": policy, "idle_timeout_s": idle_timeout_s,
                    "max_lifetime_s": max_lifetime_s, "network": network,
                    "limits": {"timeout_ms": timeout_ms} if timeout_ms is not None else None}
        body.update({k: v for k, v in optional.items() if v is not None})
        info = self._t.call_object("POST", "/v1/sessions", body)
        if not isinstance(info.get("session_id"), str):
            raise TransportError(f"not a session: {info!r:.300}")
        return Session(self._t, info, self.max_event_bytes)
