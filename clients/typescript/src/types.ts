/** Typed views of the API's answers. Each keeps the answer itself in `raw`. */
import { TransportError } from "./errors.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

/** One finding of the policy. phase is "runtime" for what the sandbox stopped. */
export interface Violation {
  rule: string;
  message: string;
  severity: string;
  line: number | null;
  column: number | null;
  endLine: number | null;
  endColumn: number | null;
  snippet: string | null;
  phase: string | null;
  target: string | null;
}

/** A file the program wrote under artifacts/. */
export interface Artifact {
  name: string;
  data: Uint8Array;
  mimeType: string | null;
}

/** The answer of a job (POST /v1/run) or of a session cell. */
export interface RunResult {
  status: string;
  ok: boolean;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  detail: string | null;
  /** The value main() (or the cell's last expression) returned; null when none. */
  value: Json;
  hasValue: boolean;
  artifacts: Artifact[];
  violations: Violation[];
  jobId: string | null;
  timings: Obj;
  policy: { name: string; sha256: string } | null;
  timeUsedMs: number | null;
  memoryUsedKb: number | null;
  resourceLimitType: string | null;
  unauthorizedAccessType: string | null;
  runtimeErrorType: string | null;
  sessionId: string | null;
  sessionLost: boolean;
  /** The policy rejected the code before it ran. */
  rejected: boolean;
  raw: Obj;
}

/** The answer of POST /v1/analyze: nothing ran. */
export interface Analysis {
  verdict: "accept" | "reject";
  accepted: boolean;
  violations: Violation[];
  policy: { name: string; sha256: string } | null;
  stats: Obj;
  raw: Obj;
}

export type Event =
  | { type: "stdout"; text: string }
  | { type: "stderr"; text: string }
  | { type: "result"; result: RunResult };

export interface FileInfo {
  name: string;
  size: number;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const int = (v: unknown): number | null => (Number.isInteger(v) ? (v as number) : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function toViolation(v: unknown): Violation {
  if (!isObj(v)) throw new TransportError(`a violation is not an object: ${JSON.stringify(v)}`);
  return {
    rule: str(v.rule) ?? "", message: str(v.message) ?? "", severity: str(v.severity) ?? "error",
    line: int(v.line), column: int(v.column), endLine: int(v.end_line),
    endColumn: int(v.end_column), snippet: str(v.snippet), phase: str(v.phase),
    target: str(v.target),
  };
}

export function fromBase64(b64: string): Uint8Array {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    throw new TransportError("bad base64 in the answer");
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(data: Uint8Array | string): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

function toArtifact(a: unknown): Artifact {
  if (!isObj(a) || typeof a.name !== "string") {
    throw new TransportError(`an artifact is not an object with a name: ${JSON.stringify(a)}`);
  }
  return { name: a.name, data: fromBase64(str(a.content_b64) ?? ""), mimeType: str(a.mime_type) };
}

function policyOf(v: unknown): { name: string; sha256: string } | null {
  return isObj(v) && typeof v.name === "string" ? { name: v.name, sha256: String(v.sha256 ?? "") } : null;
}

export function toRunResult(b: unknown): RunResult {
  if (!isObj(b) || typeof b.status !== "string") {
    throw new TransportError(`not a job result: ${JSON.stringify(b)?.slice(0, 300)}`);
  }
  const res = obj(b.result);
  const violations = list(b.violations).map(toViolation);
  const exitCode = int(b.exit_code);
  const detail = str(b.detail);
  return {
    status: b.status, ok: b.status === "success", stdout: str(b.stdout) ?? "",
    stderr: str(b.stderr) ?? "", exitCode, detail, value: (res.value ?? null) as Json,
    hasValue: res.present === true, artifacts: list(b.artifacts).map(toArtifact), violations,
    jobId: str(b.job_id), timings: obj(b.timings), policy: policyOf(b.policy),
    timeUsedMs: typeof b.time_used_ms === "number" ? b.time_used_ms : null,
    memoryUsedKb: int(b.memory_used_kb), resourceLimitType: str(b.resource_limit_type),
    unauthorizedAccessType: str(b.unauthorized_access_type),
    runtimeErrorType: str(b.runtime_error_type), sessionId: str(b.session_id),
    sessionLost: b.session_lost === true,
    rejected: exitCode === -999 && detail === "Code is unsafe" &&
      violations.some((v) => v.phase !== "runtime"),
    raw: b,
  };
}

export function toAnalysis(b: unknown): Analysis {
  if (!isObj(b) || (b.verdict !== "accept" && b.verdict !== "reject")) {
    throw new TransportError(`not an analysis: ${JSON.stringify(b)?.slice(0, 300)}`);
  }
  return {
    verdict: b.verdict, accepted: b.verdict === "accept",
    violations: list(b.violations).map(toViolation), policy: policyOf(b.policy),
    stats: obj(b.stats), raw: b,
  };
}

export function toFiles(b: unknown): FileInfo[] {
  if (!isObj(b) || !Array.isArray(b.files)) {
    throw new TransportError(`not a file listing: ${JSON.stringify(b)?.slice(0, 300)}`);
  }
  return b.files.filter(isObj).map((f) => ({ name: String(f.name), size: Number(f.size ?? 0) }));
}
