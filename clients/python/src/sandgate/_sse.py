"""Server-Sent Events: an incremental parser of the text/event-stream format.

Feed it bytes as they arrive, in pieces of any size (a frame, a line or a
UTF-8 character may be split anywhere); it returns the events completed so
far. Lines end with LF, CRLF or CR; `data:` lines of one event are joined with
a newline; comments (`: hb`, the server's heartbeats) and unknown fields are
ignored; an event is dispatched at a blank line, and one left incomplete at
the end of the stream is dropped, as the specification says. What the server
sends is bounded: a line or an event larger than max_event_bytes is an error.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import List, Optional

DEFAULT_MAX_EVENT_BYTES = 64 << 20


class SSEError(ValueError):
    """The event stream broke a bound of the parser."""


@dataclass(frozen=True)
class SSEEvent:
    event: str
    data: str
    id: Optional[str] = None


_EOL = re.compile("[\r\n]")


class SSEParser:
    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._max = max_event_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: List[str] = []  # the line read so far
        self._line_len = 0
        self._after_cr = False  # the last piece ended with CR: a LF next is its CRLF
        self._started = False
        self._event = ""
        self._data: List[str] = []
        self._size = 0
        self._id: Optional[str] = None

    def feed(self, chunk: bytes) -> List[SSEEvent]:
        """Parse the next bytes; returns the events they completed."""
        text = self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        out: List[SSEEvent] = []
        pos, n = 0, len(text)
        if self._after_cr and n:
            self._after_cr = False
            if text[0] == "\n":
                pos = 1
        while True:
            m = _EOL.search(text, pos)
            if m is None:
                break
            i = m.start()
            self._add(text[pos:i])
            self._end_line(out)
            if text[i] == "\r" and i + 1 == n:
                self._after_cr = True
            pos = i + 2 if text.startswith("\r\n", i) else i + 1
        self._add(text[pos:])
        return out

    def _add(self, piece: str) -> None:
        if piece:
            self._line_len += len(piece)
            self._check(self._line_len)
            self._parts.append(piece)

    def _check(self, extra: int) -> None:
        if self._size + extra > self._max:
            raise SSEError(f"event larger than {self._max} bytes")

    def _end_line(self, out: List[SSEEvent]) -> None:
        line = "".join(self._parts)
        self._parts, self._line_len = [], 0
        if line == "":
            self._dispatch(out)
            return
        if line.startswith(":"):
            return  # a comment: the server's heartbeat
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._size += len(value) + 1
            self._check(0)
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        # "retry" and unknown fields are ignored

    def _dispatch(self, out: List[SSEEvent]) -> None:
        if self._data:
            out.append(SSEEvent(self._event or "message", "\n".join(self._data), self._id))
        self._event, self._data, self._size = "", [], 0
