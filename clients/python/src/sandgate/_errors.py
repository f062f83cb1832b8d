"""The exceptions: one class per error class of sandgate's documented API.

Every HTTP error answer is {"error": {"code", "message"}} with a status; the
code picks the class (a code this version does not know falls back to the
class of its status), so `except sandgate.NotFound` catches job_not_found,
session_not_found and file_not_found alike.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Type

if TYPE_CHECKING:
    from ._types import RunResult, Violation


class SandgateError(Exception):
    """Base of every error this package raises."""


class TransportError(SandgateError):
    """No usable HTTP answer: the connection failed, broke or timed out, or
    the answer was not what the API promises. When the request was sent it
    may have run: it is never sent again."""


class APIError(SandgateError):
    """An HTTP error answer of the gateway."""

    def __init__(self, status: int, code: str, message: str,
                 request_id: Optional[str] = None, body: Any = None,
                 retry_after: Optional[float] = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.body = body
        self.retry_after = retry_after


class BadRequest(APIError):
    """400: the request is malformed (its message names the field)."""


class Unauthorized(APIError):
    """401: a missing or unknown token, from an address no tenant trusts."""


class Forbidden(APIError):
    """403: policy_not_allowed, network_not_allowed."""


class NotFound(APIError):
    """404: an unknown path, job, session or file (or another tenant's)."""


class JobNotFound(NotFound):
    pass


class SessionNotFound(NotFound):
    pass


class FileNotFound(NotFound):
    pass


class Conflict(APIError):
    """409."""


class JobEnded(Conflict):
    """409 job_ended: the job to cancel has ended."""


class SessionBusy(Conflict):
    """409 session_busy: a cell or file operation of the session runs."""


class NoCellRunning(Conflict):
    """409 no_cell_running: nothing to interrupt."""


class SessionLost(APIError):
    """410 session_lost: the session's interpreter died, or its executor
    restarted or left. Open a new session."""


class PayloadTooLarge(APIError):
    """413: over a size cap (body, code, arguments, files, session history)."""


class RateLimited(APIError):
    """429 rate_limited: the tenant is over its rate; retry_after is the
    gateway's Retry-After in seconds."""


class TooManySessions(RateLimited):
    """429 too_many_sessions: the tenant has max_sessions sessions open."""


class ExecutorUnreachable(APIError):
    """502 executor_unreachable: no executor could be reached; the job did
    not start (retried by the client before this is raised)."""


class ExecutorFailed(APIError):
    """502 executor_failed: the executor failed after the job was sent; it
    may have run, and is never sent again."""


class Busy(APIError):
    """503 executor_busy, server_busy, pool_busy, sessions_full: nothing
    started; retry_after says when to try again (the client already retried
    within its budget)."""


class PolicyViolation(SandgateError):
    """The policy rejected the code: nothing ran. violations lists each with
    its rule, line and column; result is the full answer."""

    def __init__(self, violations: "List[Violation]", result: "RunResult") -> None:
        lines = "; ".join(f"line {v.line}: {v.message} [{v.rule}]" for v in violations)
        super().__init__(f"code rejected by policy: {lines}")
        self.violations = violations
        self.result = result


_BY_CODE: Dict[str, Type[APIError]] = {
    "unauthorized": Unauthorized,
    "job_not_found": JobNotFound,
    "session_not_found": SessionNotFound,
    "file_not_found": FileNotFound,
    "job_ended": JobEnded,
    "session_busy": SessionBusy,
    "no_cell_running": NoCellRunning,
    "session_lost": SessionLost,
    "rate_limited": RateLimited,
    "too_many_sessions": TooManySessions,
    "executor_unreachable": ExecutorUnreachable,
    "executor_failed": ExecutorFailed,
}

_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: BadRequest,
    409: Conflict, 410: SessionLost, 413: PayloadTooLarge, 414: PayloadTooLarge,
    431: PayloadTooLarge, 429: RateLimited, 503: Busy,
}


def error_class(status: int, code: str) -> Type[APIError]:
    """The exception class for an error answer."""
    return _BY_CODE.get(code) or _BY_STATUS.get(status) or APIError
