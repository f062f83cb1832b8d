/** A session: one sandbox kept for many cells. */
import { NoCellRunning, NotFound, SessionLost } from "./errors.js";
import { NO_RETRY, Transport, seg } from "./http.js";
import { disposable, EventStream, readResult } from "./stream.js";
import { toBase64, toFiles, type FileInfo, type Json, type RunResult } from "./types.js";

const CANCEL_TIMEOUT_MS = 5000;
const STOP_WAIT_MS = 10000;

export interface SessionOptions {
  language?: "python" | "nodejs" | string;
  policy?: string;
  /** Each cell's default time limit. */
  timeoutMs?: number;
  idleTimeoutS?: number;
  maxLifetimeS?: number;
  network?: Json;
}

export interface CellOptions {
  timeoutMs?: number;
  /** Aborting it interrupts the cell. */
  signal?: AbortSignal;
}

type OpenStream = (path: string, body: unknown, cancel: (id: string | null) => Promise<void>,
                   signal?: AbortSignal) => Promise<EventStream>;

/** Variables, imports and workspace files persist from one cell to the
 * next. Every cell passes the session's policy first (PolicyViolation when
 * not: nothing ran). close() destroys its sandbox; SessionLost once its
 * interpreter or executor died. */
export class Session {
  declare [Symbol.asyncDispose]: () => Promise<void>;
  readonly id: string;
  readonly language: string | null;
  /** The record POST /v1/sessions answered. */
  readonly created: Record<string, unknown>;
  closed = false;
  private readonly path: string;

  constructor(private readonly t: Transport, info: Record<string, unknown>,
              private readonly openStream: OpenStream) {
    this.id = info.session_id as string;
    this.language = typeof info.language === "string" ? info.language : null;
    this.created = info;
    this.path = `/v1/sessions/${seg(this.id)}`;
    disposable(this, () => this.close());
  }

  private cell(code: string | Uint8Array, o: CellOptions, stream: boolean): Record<string, unknown> {
    const body: Record<string, unknown> =
      typeof code === "string" ? { code } : { code_b64: toBase64(code) };
    if (o.timeoutMs !== undefined) body.timeout_ms = o.timeoutMs;
    if (stream) body.stream = true;
    return body;
  }

  /** Runs one cell; its final expression's value is .value. */
  async exec(code: string | Uint8Array, opts: CellOptions = {}): Promise<RunResult> {
    if (opts.signal) return (await this.execStream(code, opts)).wait();
    const resp = await this.t.open("POST", `${this.path}/exec`, {
      body: JSON.stringify(this.cell(code, opts, false)),
      headers: { "Content-Type": "application/json" },
    });
    return readResult(this.t, resp);
  }

  /** Runs one cell, streaming its output (as Client.stream). Ending the
   * stream before its result interrupts the cell, and resolves once the
   * session is idle again. */
  async execStream(code: string | Uint8Array, opts: CellOptions = {}): Promise<EventStream> {
    return this.openStream(`${this.path}/exec`, this.cell(code, opts, true),
      () => this.stopCell(), opts.signal);
  }

  /** Interrupts a streamed cell ended early, then waits (at most STOP_WAIT_MS)
   * until the session is idle again, so the next call does not find it busy. */
  private async stopCell(): Promise<void> {
    try {
      await this.t.json("POST", `${this.path}/cancel`, undefined, {
        retryCodes: NO_RETRY, signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
      });
    } catch (err) {
      if (!(err instanceof NoCellRunning)) throw err; // else it had ended
    }
    const deadline = Date.now() + STOP_WAIT_MS;
    while (Date.now() < deadline) {
      const info = await this.t.json("GET", this.path, undefined,
        { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) });
      if (info?.state !== "busy") return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Interrupts the running cell; false when none was running. */
  async interrupt(): Promise<boolean> {
    try {
      await this.t.json("POST", `${this.path}/cancel`, undefined, { retryCodes: NO_RETRY });
      return true;
    } catch (err) {
      if (err instanceof NoCellRunning) return false;
      throw err;
    }
  }

  /** Writes a file into the session's working directory. */
  async upload(name: string, data: Uint8Array | string): Promise<void> {
    const body = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await this.t.bytes(await this.t.open("PUT", `${this.path}/files/${seg(name)}`, {
      body, headers: { "Content-Type": "application/octet-stream" },
    }));
  }

  /** A file of the session's working directory (FileNotFound when none). */
  async download(name: string): Promise<Uint8Array> {
    return this.t.bytes(await this.t.open("GET", `${this.path}/files/${seg(name)}`, {
      headers: { Accept: "application/octet-stream" },
    }));
  }

  /** The regular files in the session's working directory. */
  async files(): Promise<FileInfo[]> {
    return toFiles(await this.t.json("GET", `${this.path}/files`));
  }

  /** The session's record: state (idle, busy, lost), cells_run, memory, expiry. */
  async info(): Promise<any> {
    return this.t.json("GET", this.path);
  }

  /** Destroys the session's sandbox; a session already gone is not an error. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.t.json("DELETE", this.path);
    } catch (err) {
      if (!(err instanceof NotFound || err instanceof SessionLost)) throw err;
    }
    this.closed = true;
  }
}
