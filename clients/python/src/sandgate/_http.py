"""One HTTP exchange with the gateway, on a fresh connection, with the
retries the API makes safe: only when the request provably did not start."""
from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple
from urllib.parse import quote, urlsplit

from ._errors import APIError, TransportError, error_class

MAX_ERROR_BYTES = 1 << 20
DEFAULT_MAX_RESPONSE_BYTES = 256 << 20
# Answers after which nothing ran, so the same request may be sent again:
# no executor could be reached, a session was busy (its cell was not run),
# or something was full (a 503, retried only when it has Retry-After).
RETRY_CODES = frozenset({"executor_unreachable", "executor_busy", "server_busy", "pool_busy",
                         "sessions_full", "session_busy"})


def path_segment(s: str) -> str:
    return quote(s, safe="")


def _retry_after(value: Optional[str]) -> Optional[float]:
    try:
        secs = float(value) if value is not None else None
    except ValueError:
        return None
    return secs if secs is not None and 0 <= secs < 86400 else None


class Response:
    """An answer whose body is read by the caller (a stream)."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse):
        self.conn = conn
        self.resp = resp
        self.status = resp.status
        self.headers = {k.lower(): v for k, v in resp.getheaders()}

    def close(self) -> None:
        """Hang up at once: the socket, not only the response object."""
        sock = self.conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.conn.close()


class Transport:
    def __init__(self, url: str, token: Optional[str], timeout: float, retries: int,
                 max_retry_delay: float, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 connect_timeout: float = 10.0):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)
        self.retries = max(0, retries)
        self.max_retry_delay = max_retry_delay
        self.max_response_bytes = max_response_bytes
        self._ssl = ssl.create_default_context() if parts.scheme == "https" else None

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._ssl is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self._ssl)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _headers(self, extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
        h = {"User-Agent": "sandgate-python", "Accept": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(extra or {})
        return h

    def open(self, method: str, path: str, body: Optional[bytes] = None,
             headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
             retry_codes: FrozenSet[str] = RETRY_CODES) -> Response:
        """Sends the request and returns the answer with its body unread when
        it is a success; raises the API's error otherwise. Retries, within the
        budget, when the connection could not be made or the answer says the
        request did not start."""
        attempt = 0
        while True:
            delay, resp = self._attempt(method, path, body, headers, timeout, retry_codes)
            if resp is not None:
                return resp
            if attempt >= self.retries:
                raise delay[1]
            time.sleep(min(delay[0], self.max_retry_delay))
            attempt += 1

    def _attempt(self, method: str, path: str, body: Optional[bytes],
                 headers: Optional[Mapping[str, str]], timeout: Optional[float],
                 retry_codes: FrozenSet[str]) -> Tuple[Any, Optional[Response]]:
        conn = self._connection(self.connect_timeout)
        try:
            conn.connect()
            assert conn.sock is not None
            conn.sock.settimeout(self.timeout if timeout is None else timeout)
        except OSError as e:  # nothing was sent
            conn.close()
            return (0.2, TransportError(f"cannot connect to {self.host}:{self.port}: {e}")), None
        try:
            conn.request(method, self.prefix + path, body=body, headers=self._headers(headers))
            resp = Response(conn, conn.getresponse())
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise TransportError(f"{method} {path}: {e}") from None
        if resp.status < 400:
            return None, resp
        err = self._error(resp)
        if err.code in retry_codes and (err.status != 503 or err.retry_after is not None):
            return (err.retry_after if err.retry_after is not None else 0.2, err), None
        raise err

    def _error(self, resp: Response) -> APIError:
        try:
            raw = resp.resp.read(MAX_ERROR_BYTES)
        except (OSError, http.client.HTTPException):
            raw = b""
        finally:
            resp.close()
        code, message, body = f"http_{resp.status}", resp.resp.reason or "", None
        try:
            body = json.loads(raw)
            e = body.get("error") if isinstance(body, dict) else None
            if isinstance(e, dict) and isinstance(e.get("code"), str):
                code, message = e["code"], str(e.get("message", ""))
        except ValueError:
            message = raw[:200].decode("utf-8", "replace") or message
        cls = error_class(resp.status, code)
        return cls(resp.status, code, message, resp.headers.get("x-request-id"), body,
                   _retry_after(resp.headers.get("retry-after")))

    def read_all(self, resp: Response) -> bytes:
        try:
            data = resp.resp.read(self.max_response_bytes + 1)
        except (OSError, http.client.HTTPException) as e:
            raise TransportError(f"reading the answer: {e}") from None
        finally:
            resp.close()
        if len(data) > self.max_response_bytes:
            raise TransportError(f"answer larger than {self.max_response_bytes} bytes")
        return data

    def call(self, method: str, path: str, payload: Any = None, **kw: Any) -> Any:
        """A JSON request; returns the JSON answer (None for an empty one)."""
        body = None
        headers = dict(kw.pop("headers", None) or {})
        if payload is not None:
            body = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        data = self.read_all(self.open(method, path, body, headers, **kw))
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            raise TransportError(f"{method} {path}: the answer is not JSON: {data[:200]!r}") \
                from None

    def call_object(self, method: str, path: str, payload: Any = None, **kw: Any) -> Dict[str, Any]:
        """call() for an answer that must be a JSON object."""
        answer = self.call(method, path, payload, **kw)
        if not isinstance(answer, dict):
            raise TransportError(f"{method} {path}: the answer is not an object: {answer!r:.200}")
        return answer
