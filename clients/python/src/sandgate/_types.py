"""Typed views of the API's answers. Each keeps the answer itself in `raw`,
so fields this version does not name are still there."""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from ._errors import TransportError

JSON = Any


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


@dataclass(frozen=True)
class Violation:
    """One finding of the policy: rule id, position, message. phase is
    "runtime" for what the sandbox stopped while the job ran."""
    rule: str
    message: str
    severity: str = "error"
    line: Optional[int] = None
    column: Optional[int] = None
    end_line: Optional[int] = None
    end_column: Optional[int] = None
    snippet: Optional[str] = None
    phase: Optional[str] = None
    target: Optional[str] = None

    @classmethod
    def from_json(cls, v: JSON) -> "Violation":
        if not isinstance(v, dict):
            raise TransportError(f"a violation is not an object: {v!r:.200}")
        return cls(rule=_str(v.get("rule")) or "", message=_str(v.get("message")) or "",
                   severity=_str(v.get("severity")) or "error", line=_int(v.get("line")),
                   column=_int(v.get("column")), end_line=_int(v.get("end_line")),
                   end_column=_int(v.get("end_column")), snippet=_str(v.get("snippet")),
                   phase=_str(v.get("phase")), target=_str(v.get("target")))


@dataclass(frozen=True)
class Artifact:
    """A file the program wrote under artifacts/."""
    name: str
    data: bytes
    mime_type: Optional[str] = None

    @classmethod
    def from_json(cls, a: JSON) -> "Artifact":
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            raise TransportError(f"an artifact is not an object with a name: {a!r:.200}")
        try:
            data = base64.b64decode(a.get("content_b64") or "", validate=True)
        except (binascii.Error, TypeError, ValueError) as e:
            raise TransportError(f"artifact {a['name']!r}: bad base64: {e}") from None
        return cls(name=a["name"], data=data, mime_type=_str(a.get("mime_type")))


@dataclass(frozen=True)
class RunResult:
    """The answer of a job (POST /v1/run) or of a session cell."""
    status: str
    stdout: str
    stderr: str
    exit_code: Optional[int]
    detail: Optional[str]
    value: JSON                  # the value main() (or the cell's last expression) returned
    has_value: bool              # False when there was none (value is then None)
    artifacts: List[Artifact]
    violations: List[Violation]
    job_id: Optional[str]
    timings: Dict[str, Any]      # analysis_ms, exec_ms, total_ms, executor
    policy: Optional[Dict[str, Any]]
    time_used_ms: Optional[float]
    memory_used_kb: Optional[int]
    resource_limit_type: Optional[str]
    unauthorized_access_type: Optional[str]
    runtime_error_type: Optional[str]
    session_id: Optional[str] = None
    session_lost: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @property
    def rejected(self) -> bool:
        """The policy rejected the code before it ran."""
        return self.exit_code == -999 and self.detail == "Code is unsafe" and any(
            v.phase != "runtime" for v in self.violations)

    @classmethod
    def from_json(cls, b: JSON) -> "RunResult":
        if not isinstance(b, dict) or not isinstance(b.get("status"), str):
            raise TransportError(f"not a job result: {b!r:.300}")
        raw_res = b.get("result")
        res: Dict[str, Any] = raw_res if isinstance(raw_res, dict) else {}
        t = b.get("time_used_ms")
        return cls(
            status=b["status"], stdout=_str(b.get("stdout")) or "",
            stderr=_str(b.get("stderr")) or "", exit_code=_int(b.get("exit_code")),
            detail=_str(b.get("detail")), value=res.get("value"),
            has_value=res.get("present") is True,
            artifacts=[Artifact.from_json(a) for a in b.get("artifacts") or []],
            violations=[Violation.from_json(v) for v in b.get("violations") or []],
            job_id=_str(b.get("job_id")),
            timings=b["timings"] if isinstance(b.get("timings"), dict) else {},
            policy=b["policy"] if isinstance(b.get("policy"), dict) else None,
            time_used_ms=float(t) if isinstance(t, (int, float)) else None,
            memory_used_kb=_int(b.get("memory_used_kb")),
            resource_limit_type=_str(b.get("resource_limit_type")),
            unauthorized_access_type=_str(b.get("unauthorized_access_type")),
            runtime_error_type=_str(b.get("runtime_error_type")),
            session_id=_str(b.get("session_id")), session_lost=b.get("session_lost") is True,
            raw=b)


@dataclass(frozen=True)
class Analysis:
    """The answer of POST /v1/analyze: nothing ran."""
    verdict: str
    violations: List[Violation]
    policy: Optional[Dict[str, Any]]
    stats: Dict[str, Any]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def accepted(self) -> bool:
        return self.verdict == "accept"

    @classmethod
    def from_json(cls, b: JSON) -> "Analysis":
        if not isinstance(b, dict) or not isinstance(b.get("verdict"), str):
            raise TransportError(f"not an analysis: {b!r:.300}")
        return cls(verdict=b["verdict"],
                   violations=[Violation.from_json(v) for v in b.get("violations") or []],
                   policy=b["policy"] if isinstance(b.get("policy"), dict) else None,
                   stats=b["stats"] if isinstance(b.get("stats"), dict) else {}, raw=b)


@dataclass(frozen=True)
class Stdout:
    """A piece of the program's standard output, as it was written."""
    text: str


@dataclass(frozen=True)
class Stderr:
    """A piece of the program's standard error."""
    text: str


@dataclass(frozen=True)
class Result:
    """The last event of a stream: the whole answer."""
    result: RunResult


Event = Union[Stdout, Stderr, Result]


@dataclass(frozen=True)
class FileInfo:
    name: str
    size: int
