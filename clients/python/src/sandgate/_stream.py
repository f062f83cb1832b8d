"""A streamed answer as an iterator of Stdout / Stderr / Result events."""
from __future__ import annotations

import collections
import http.client
import json
from typing import Callable, Deque, Iterator, Optional

from ._errors import PolicyViolation, SandgateError, TransportError, error_class
from ._http import Response, Transport
from ._sse import SSEError, SSEEvent, SSEParser
from ._types import Event, Result, RunResult, Stderr, Stdout

READ_BYTES = 64 << 10


def result_or_raise(body: object, request_id: Optional[str]) -> RunResult:
    """The job's answer; a policy rejection raises PolicyViolation, an error
    sent after the stream began raises its error class."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        e = body["error"]
        code, msg = str(e.get("code", "executor_failed")), str(e.get("message", ""))
        raise error_class(502, code)(502, code, msg, request_id, body)
    result = RunResult.from_json(body)
    if result.rejected:
        raise PolicyViolation([v for v in result.violations if v.phase != "runtime"], result)
    return result


def read_result(transport: Transport, resp: Response) -> RunResult:
    """The result in a JSON answer (as result_or_raise)."""
    data = transport.read_all(resp)
    try:
        body = json.loads(data)
    except ValueError:
        raise TransportError(f"the answer is not JSON: {data[:200]!r}") from None
    return result_or_raise(body, resp.headers.get("x-request-id"))


class EventStream(Iterator[Event]):
    """Events as they arrive: Stdout and Stderr pieces, then one Result.
    Closing it before the Result (close(), leaving a `with` block, or
    dropping it) stops the job: the client asks for the cancel and hangs up,
    and the gateway destroys the sandbox."""

    def __init__(self, transport: Transport, resp: Response,
                 cancel: Callable[[], None], max_event_bytes: int) -> None:
        self._transport = transport
        self._resp = resp
        self._cancel = cancel
        self._parser = SSEParser(max_event_bytes)
        self._pending: Deque[SSEEvent] = collections.deque()
        self._done = False
        self.job_id: Optional[str] = resp.headers.get("x-request-id")
        self.result: Optional[RunResult] = None
        ctype = resp.headers.get("content-type", "")
        self._sse = ctype.startswith("text/event-stream")

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> Event:
        while not self._done:
            if not self._sse:  # a JSON answer: the result alone
                self._done = True  # read_result reads the answer and closes it
                self.result = read_result(self._transport, self._resp)
                return Result(self.result)
            if not self._pending:
                self._read()
                continue
            ev = self._pending.popleft()
            if ev.event == "stdout":
                return Stdout(self._text(ev))
            if ev.event == "stderr":
                return Stderr(self._text(ev))
            if ev.event == "result":
                try:
                    body = json.loads(ev.data)
                except ValueError:
                    self._end()
                    raise TransportError("the result event is not JSON") from None
                return self._final(body)
            # another event name: a later version's, skipped
        raise StopIteration

    def _read(self) -> None:
        try:
            chunk = self._resp.resp.readline(READ_BYTES)
            if not chunk:
                self._end()
                raise TransportError("the stream ended before its result event")
            self._pending.extend(self._parser.feed(chunk))
        except (OSError, http.client.HTTPException, SSEError) as e:
            self._end()
            raise TransportError(f"reading the stream: {e}") from None

    def _text(self, ev: SSEEvent) -> str:
        try:
            text = json.loads(ev.data)["text"]
        except (ValueError, TypeError, KeyError):
            text = None
        if not isinstance(text, str):
            self._end()
            raise TransportError(f"a {ev.event} event without text: {ev.data[:200]!r}")
        return text

    def _final(self, body: object) -> Result:
        self._end()
        self.result = result_or_raise(body, self.job_id)
        return Result(self.result)

    def _end(self) -> None:
        self._done = True
        self._resp.close()

    def wait(self) -> RunResult:
        """Reads the rest of the stream; returns the result."""
        for _ in self:
            pass
        if self.result is None:
            raise TransportError("the stream ended before its result event")
        return self.result

    def close(self) -> None:
        """Stops the job if it has not ended, then hangs up."""
        if self._done:
            return
        self._done = True
        try:
            self._cancel()
        except SandgateError:
            pass  # it ended meanwhile, or the gateway is gone: the hang-up still counts
        finally:
            self._resp.close()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass
