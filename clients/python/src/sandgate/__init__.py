"""sandgate: the client of sandgate's HTTP API (standard library only).

    import sandgate
    client = sandgate.Client()          # $SANDGATE_URL, $SANDGATE_TOKEN
    print(client.run("def main():\\n    return 6 * 7\\n").value)
"""
from ._client import Client
from ._errors import (APIError, BadRequest, Busy, Conflict, ExecutorFailed, ExecutorUnreachable,
                      FileNotFound, Forbidden, JobEnded, JobNotFound, NoCellRunning, NotFound,
                      PayloadTooLarge, PolicyViolation, RateLimited, SandgateError, SessionBusy,
                      SessionLost, SessionNotFound, TooManySessions, TransportError, Unauthorized)
from ._session import Session
from ._sse import SSEError, SSEEvent, SSEParser
from ._stream import EventStream
from ._types import Analysis, Artifact, Event, FileInfo, Result, RunResult, Stderr, Stdout, Violation

__version__ = "0.1.0"

__all__ = [
    "Client", "Session", "EventStream", "RunResult", "Analysis", "Artifact", "Violation",
    "FileInfo", "Event", "Stdout", "Stderr", "Result", "SSEParser", "SSEEvent", "SSEError",
    "SandgateError", "TransportError", "APIError", "BadRequest", "Unauthorized", "Forbidden",
    "NotFound", "JobNotFound", "SessionNotFound", "FileNotFound", "Conflict", "JobEnded",
    "SessionBusy", "NoCellRunning", "SessionLost", "PayloadTooLarge", "RateLimited",
    "TooManySessions", "ExecutorUnreachable", "ExecutorFailed", "Busy", "PolicyViolation",
    "__version__",
]
