/**
 * The errors: one class per error class of sandgate's documented API. Every
 * HTTP error answer is {"error": {"code", "message"}} with a status; the code
 * picks the class (a code this version does not know falls back to the class
 * of its status), so `instanceof NotFound` holds for job_not_found,
 * session_not_found and file_not_found alike.
 */
import type { RunResult, Violation } from "./types.js";

export class SandgateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** No usable HTTP answer: the connection failed or broke, or the answer was
 * not what the API promises. When the request was sent it may have run: it
 * is never sent again. */
export class TransportError extends SandgateError {}

export interface APIErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | null;
  body?: unknown;
  retryAfter?: number | null;
}

/** An HTTP error answer of the gateway. */
export class APIError extends SandgateError {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly body: unknown;
  /** Retry-After in seconds, when the answer had one (429, 503). */
  readonly retryAfter: number | null;

  constructor(init: APIErrorInit) {
    super(`${init.status} ${init.code}: ${init.message}`);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.body = init.body;
    this.retryAfter = init.retryAfter ?? null;
  }
}

/** 400: the request is malformed (the message names the field). */
export class BadRequest extends APIError {}
/** 401: a missing or unknown token, from an address no tenant trusts. */
export class Unauthorized extends APIError {}
/** 403: policy_not_allowed, network_not_allowed. */
export class Forbidden extends APIError {}
/** 404: an unknown path, job, session or file (or another tenant's). */
export class NotFound extends APIError {}
export class JobNotFound extends NotFound {}
export class SessionNotFound extends NotFound {}
export class FileNotFound extends NotFound {}
/** 409. */
export class Conflict extends APIError {}
/** 409 job_ended: the job to cancel has ended. */
export class JobEnded extends Conflict {}
/** 409 session_busy: a cell or file operation of the session runs. */
export class SessionBusy extends Conflict {}
/** 409 no_cell_running: nothing to interrupt. */
export class NoCellRunning extends Conflict {}
/** 410 session_lost: the interpreter died, or its executor restarted or left. */
export class SessionLost extends APIError {}
/** 413: over a size cap. */
export class PayloadTooLarge extends APIError {}
/** 429 rate_limited: retryAfter is the gateway's Retry-After in seconds. */
export class RateLimited extends APIError {}
/** 429 too_many_sessions: the tenant has max_sessions sessions open. */
export class TooManySessions extends RateLimited {}
/** 502 executor_unreachable: the job did not start (already retried). */
export class ExecutorUnreachable extends APIError {}
/** 502 executor_failed: the job was sent and may have run; never sent again. */
export class ExecutorFailed extends APIError {}
/** 503 executor_busy, server_busy, pool_busy, sessions_full: nothing started. */
export class Busy extends APIError {}

/** The policy rejected the code: nothing ran. */
export class PolicyViolation extends SandgateError {
  readonly violations: Violation[];
  readonly result: RunResult;

  constructor(violations: Violation[], result: RunResult) {
    const lines = violations.map((v) => `line ${v.line}: ${v.message} [${v.rule}]`).join("; ");
    super(`code rejected by policy: ${lines}`);
    this.violations = violations;
    this.result = result;
  }
}

type APIErrorClass = new (init: APIErrorInit) => APIError;

const BY_CODE: Record<string, APIErrorClass> = {
  unauthorized: Unauthorized,
  job_not_found: JobNotFound,
  session_not_found: SessionNotFound,
  file_not_found: FileNotFound,
  job_ended: JobEnded,
  session_busy: SessionBusy,
  no_cell_running: NoCellRunning,
  session_lost: SessionLost,
  rate_limited: RateLimited,
  too_many_sessions: TooManySessions,
  executor_unreachable: ExecutorUnreachable,
  executor_failed: ExecutorFailed,
};

const BY_STATUS: Record<number, APIErrorClass> = {
  400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: BadRequest,
  409: Conflict, 410: SessionLost, 413: PayloadTooLarge, 414: PayloadTooLarge,
  431: PayloadTooLarge, 429: RateLimited, 503: Busy,
};

/** The error for an error answer. */
export function apiError(init: APIErrorInit): APIError {
  const cls = (Object.prototype.hasOwnProperty.call(BY_CODE, init.code) && BY_CODE[init.code]) ||
    BY_STATUS[init.status] || APIError;
  return new cls(init);
}
