/** One HTTP exchange with the gateway, with the retries the API makes safe:
 * only when the request provably did not start. */
import { APIError, TransportError, apiError } from "./errors.js";

export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;
const MAX_ERROR_BYTES = 1024 * 1024;
const CONNECT_RETRY_MS = 200;

/** Answers after which nothing ran, so the same request may be sent again:
 * no executor could be reached, a session was busy (its cell was not run),
 * or something was full (a 503, retried only when it has Retry-After). */
export const RETRY_CODES: ReadonlySet<string> = new Set([
  "executor_unreachable", "executor_busy", "server_busy", "pool_busy", "sessions_full",
  "session_busy",
]);
export const NO_RETRY: ReadonlySet<string> = new Set();

export interface TransportOptions {
  url: string;
  token: string | null;
  retries: number;
  maxRetryDelayMs: number;
  maxResponseBytes: number;
  fetch: typeof fetch;
}

export interface OpenOptions {
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  retryCodes?: ReadonlySet<string>;
}

export const seg = (s: string): string => encodeURIComponent(s);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Node's fetch says why a connection failed in err.cause: refused means
 * nothing was sent. A browser does not say; there it is not retried. */
function refused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string; errors?: { code?: string }[] } })?.cause;
  if (!cause) return false;
  if (cause.code === "ECONNREFUSED") return true;
  return Array.isArray(cause.errors) && cause.errors.length > 0 &&
    cause.errors.every((e) => e?.code === "ECONNREFUSED");
}

function retryAfter(v: string | null): number | null {
  if (v === null || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 && n < 86400 ? n : null;
}

export class Transport {
  readonly base: string;
  private readonly o: TransportOptions;

  constructor(o: TransportOptions) {
    const u = new URL(o.url);
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`not an http(s) URL: ${o.url}`);
    }
    this.base = o.url.replace(/\/+$/, "");
    this.o = o;
  }

  private headers(extra?: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { Accept: "application/json" };
    if (this.o.token) h.Authorization = `Bearer ${this.o.token}`;
    return { ...h, ...extra };
  }

  /** Sends the request; returns a success answer with its body unread, or
   * throws the API's error. */
  async open(method: string, path: string, opts: OpenOptions = {}): Promise<Response> {
    const codes = opts.retryCodes ?? RETRY_CODES;
    for (let attempt = 0; ; attempt++) {
      let resp: Response;
      try {
        resp = await this.o.fetch(this.base + path, {
          method, body: opts.body as BodyInit | undefined, headers: this.headers(opts.headers),
          signal: opts.signal,
        });
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        if (refused(err) && attempt < this.o.retries) {
          await sleep(Math.min(CONNECT_RETRY_MS, this.o.maxRetryDelayMs));
          continue;
        }
        throw new TransportError(`${method} ${path}: ${(err as Error)?.message ?? err}` +
          (refused(err) ? " (connection refused)" : ""));
      }
      if (resp.status < 400) return resp;
      const e = await this.error(resp);
      const retriable = codes.has(e.code) && (e.status !== 503 || e.retryAfter !== null);
      if (!retriable || attempt >= this.o.retries) throw e;
      const wait = e.retryAfter !== null ? e.retryAfter * 1000 : CONNECT_RETRY_MS;
      await sleep(Math.min(wait, this.o.maxRetryDelayMs));
    }
  }

  private async error(resp: Response): Promise<APIError> {
    let raw = "";
    try {
      raw = new TextDecoder().decode(await readCapped(resp, MAX_ERROR_BYTES, true));
    } catch {
      /* the status alone */
    }
    let code = `http_${resp.status}`;
    let message = resp.statusText;
    let body: unknown = undefined;
    try {
      body = JSON.parse(raw);
      const e = (body as { error?: { code?: unknown; message?: unknown } })?.error;
      if (e && typeof e.code === "string") {
        code = e.code;
        message = String(e.message ?? "");
      }
    } catch {
      message = raw.slice(0, 200) || message;
    }
    return apiError({
      status: resp.status, code, message, body, requestId: resp.headers.get("x-request-id"),
      retryAfter: retryAfter(resp.headers.get("retry-after")),
    });
  }

  async bytes(resp: Response): Promise<Uint8Array> {
    return readCapped(resp, this.o.maxResponseBytes, false);
  }

  /** A JSON request; the JSON answer (null for an empty one). */
  async json(method: string, path: string, payload?: unknown, opts: OpenOptions = {}): Promise<any> {
    const headers = { ...opts.headers };
    let body = opts.body;
    if (payload !== undefined) {
      body = JSON.stringify(payload);
      headers["Content-Type"] = "application/json";
    }
    const data = await this.bytes(await this.open(method, path, { ...opts, body, headers }));
    if (data.length === 0) return null;
    const text = new TextDecoder().decode(data);
    try {
      return JSON.parse(text);
    } catch {
      throw new TransportError(`${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`);
    }
  }
}

/** The body, at most max bytes (truncated when truncate, else an error). */
async function readCapped(resp: Response, max: number, truncate: boolean): Promise<Uint8Array> {
  if (!resp.body) return new Uint8Array(0);
  const reader = resp.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      n += value.length;
      if (n > max) {
        if (truncate) break;
        throw new TransportError(`answer larger than ${max} bytes`);
      }
    }
  } catch (err) {
    if (err instanceof TransportError) throw err;
    throw new TransportError(`reading the answer: ${(err as Error)?.message ?? err}`);
  } finally {
    reader.cancel().catch(() => {});
  }
  const out = new Uint8Array(Math.min(n, max));
  let off = 0;
  for (const p of parts) {
    const take = Math.min(p.length, out.length - off);
    out.set(p.subarray(0, take), off);
    off += take;
  }
  return out;
}
