/** The client of sandgate's HTTP API. */
import { TransportError } from "./errors.js";
import { DEFAULT_MAX_RESPONSE_BYTES, NO_RETRY, Transport, seg } from "./http.js";
import { Session, type SessionOptions } from "./session.js";
import { DEFAULT_MAX_EVENT_BYTES } from "./sse.js";
import { EventStream, readResult } from "./stream.js";
import { toAnalysis, toBase64, type Analysis, type Json, type RunResult } from "./types.js";

export const DEFAULT_URL = "http://127.0.0.1:9385";
const CANCEL_TIMEOUT_MS = 5000;

export interface ClientOptions {
  /** Default: $SANDGATE_URL (Node), else http://127.0.0.1:9385. */
  url?: string;
  /** Default: $SANDGATE_TOKEN (Node), else none (a trusted network needs none). */
  token?: string | null;
  /** How often a request that provably did not start is sent again (default 3). */
  retries?: number;
  /** The longest wait before a retry, whatever Retry-After says (default 10 000 ms). */
  maxRetryDelayMs?: number;
  maxResponseBytes?: number;
  maxEventBytes?: number;
  /** Another fetch (default: the global one). */
  fetch?: typeof fetch;
}

export interface JobOptions {
  language?: "python" | "nodejs" | "javascript" | string;
  arguments?: Record<string, unknown>;
  /** Input files placed in the job's working directory. */
  files?: Record<string, Uint8Array | string>;
  policy?: string;
  limits?: { timeout_ms?: number; memory_mb?: number };
  network?: Json;
  /** Aborting it stops the job (cancel and hang-up); the call rejects with its reason. */
  signal?: AbortSignal;
}

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name] || undefined;
}

/** sandgate's API: one-shot jobs, streams, cancel, analysis, sessions.
 *
 * A request is sent again (at most `retries` times, waiting the answer's
 * Retry-After up to maxRetryDelayMs) only when it provably did not start:
 * the connection was refused, 502 executor_unreachable, 409 session_busy,
 * a 503 with Retry-After. Never when the job may have run. */
export class Client {
  private readonly t: Transport;
  private readonly maxEventBytes: number;

  constructor(opts: ClientOptions = {}) {
    const f = opts.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("no fetch: Node >= 18 or a browser is needed");
    this.t = new Transport({
      url: opts.url ?? env("SANDGATE_URL") ?? DEFAULT_URL,
      token: opts.token !== undefined ? opts.token : env("SANDGATE_TOKEN") ?? null,
      retries: Math.max(0, opts.retries ?? 3), maxRetryDelayMs: opts.maxRetryDelayMs ?? 10000,
      maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      fetch: f.bind(globalThis),
    });
    this.maxEventBytes = opts.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  }

  get url(): string {
    return this.t.base;
  }

  private job(code: string | Uint8Array, o: JobOptions): Record<string, unknown> {
    const body: Record<string, unknown> = { language: o.language ?? "python" };
    if (typeof code === "string") body.code = code;
    else body.code_b64 = toBase64(code);
    if (o.arguments !== undefined) body.arguments = o.arguments;
    if (o.files !== undefined) {
      body.files = Object.fromEntries(Object.entries(o.files).map(([k, v]) => [k, toBase64(v)]));
    }
    if (o.policy !== undefined) body.policy = o.policy;
    if (o.limits !== undefined) body.limits = o.limits;
    if (o.network !== undefined) body.network = o.network;
    return body;
  }

  /** Runs a job in a fresh sandbox; its result, whatever the program did
   * (check .ok / .status). Throws PolicyViolation when the policy rejects
   * the code, an APIError subclass for a refusal. */
  async run(code: string | Uint8Array, opts: JobOptions = {}): Promise<RunResult> {
    if (opts.signal) return (await this.stream(code, opts)).wait(); // cancellable: needs the id at once
    const resp = await this.t.open("POST", "/v1/run", {
      body: JSON.stringify(this.job(code, opts)), headers: { "Content-Type": "application/json" },
    });
    return readResult(this.t, resp);
  }

  /** Runs a job and streams its output: `for await (const ev of stream)`
   * gives stdout / stderr pieces as the program writes them, then one
   * result. .jobId is known at once. Ending it early cancels the job. */
  async stream(code: string | Uint8Array, opts: JobOptions = {}): Promise<EventStream> {
    const body = { ...this.job(code, opts), stream: true };
    return this.openStream("/v1/run", body, (id) => this.cancelQuietly(id), opts.signal);
  }

  /** @internal */
  async openStream(path: string, body: unknown, cancel: (id: string | null) => Promise<void>,
                   signal?: AbortSignal): Promise<EventStream> {
    const hangUp = new AbortController();
    const onAbort = () => hangUp.abort(signal?.reason);
    if (signal?.aborted) throw signal.reason;
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const resp = await this.t.open("POST", path, {
        body: JSON.stringify(body), signal: hangUp.signal,
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      });
      const id = resp.headers.get("x-request-id");
      return new EventStream(resp, hangUp, () => cancel(id), this.maxEventBytes, signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private async cancelQuietly(jobId: string | null): Promise<void> {
    if (!jobId) return;
    await this.t.json("POST", `/v1/jobs/${seg(jobId)}/cancel`, undefined, {
      retryCodes: NO_RETRY, signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
    });
  }

  /** Stops a running job of the caller's tenant (it ends as cancelled, its
   * sandbox destroyed). Throws JobNotFound or JobEnded. */
  async cancel(jobId: string): Promise<void> {
    await this.t.json("POST", `/v1/jobs/${seg(jobId)}/cancel`, undefined, { retryCodes: NO_RETRY });
  }

  /** The policy's verdict on the code and every violation; runs nothing. */
  async analyze(code: string | Uint8Array,
                opts: { language?: string; policy?: string } = {}): Promise<Analysis> {
    return toAnalysis(await this.t.json("POST", "/v1/analyze", this.job(code, opts)));
  }

  /** Per language: interpreter, packages, what each of the caller's policies lets a job import. */
  async runtimes(): Promise<any> {
    return this.t.json("GET", "/v1/runtimes");
  }

  /** The caller's tenant, policies, rate limit and maxima. */
  async whoami(): Promise<any> {
    return this.t.json("GET", "/v1/whoami");
  }

  async policies(): Promise<any> {
    return this.t.json("GET", "/v1/policies");
  }

  /** Opens a session (one sandbox kept for many cells); close() it, or
   * `await using` it where the runtime has Symbol.asyncDispose. */
  async session(opts: SessionOptions = {}): Promise<Session> {
    const body: Record<string, unknown> = { language: opts.language ?? "python" };
    if (opts.policy !== undefined) body.policy = opts.policy;
    if (opts.timeoutMs !== undefined) body.limits = { timeout_ms: opts.timeoutMs };
    if (opts.idleTimeoutS !== undefined) body.idle_timeout_s = opts.idleTimeoutS;
    if (opts.maxLifetimeS !== undefined) body.max_lifetime_s = opts.maxLifetimeS;
    if (opts.network !== undefined) body.network = opts.network;
    const info = await this.t.json("POST", "/v1/sessions", body);
    if (typeof info?.session_id !== "string") {
      throw new TransportError(`not a session: ${JSON.stringify(info)?.slice(0, 300)}`);
    }
    return new Session(this.t, info, (path, b, cancel, signal) =>
      this.openStream(path, b, cancel, signal));
  }
}
