/** A streamed answer: an async iterator of stdout / stderr / result events. */
import { PolicyViolation, TransportError, apiError } from "./errors.js";
import type { Transport } from "./http.js";
import { SSEParser, type SSEEvent } from "./sse.js";
import { toRunResult, type Event, type RunResult } from "./types.js";

/** The job's answer; a rejection throws PolicyViolation, an error sent after
 * the stream began throws its error class. */
export function resultOrThrow(body: unknown, requestId: string | null): RunResult {
  const err = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (err && typeof err === "object") {
    throw apiError({
      status: 502, code: String(err.code ?? "executor_failed"), message: String(err.message ?? ""),
      requestId, body,
    });
  }
  const result = toRunResult(body);
  if (result.rejected) {
    throw new PolicyViolation(result.violations.filter((v) => v.phase !== "runtime"), result);
  }
  return result;
}

/** The result in a JSON answer (as resultOrThrow). */
export async function readResult(t: Transport, resp: Response): Promise<RunResult> {
  const text = new TextDecoder().decode(await t.bytes(resp));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new TransportError(`the answer is not JSON: ${text.slice(0, 200)}`);
  }
  return resultOrThrow(body, resp.headers.get("x-request-id"));
}

const asyncDispose = (Symbol as { asyncDispose?: symbol }).asyncDispose;

/** Makes obj[Symbol.asyncDispose] call close() where the runtime has the
 * symbol (for `await using`). */
export function disposable(obj: object, close: () => Promise<void>): void {
  if (asyncDispose) Object.defineProperty(obj, asyncDispose, { value: close });
}

/**
 * Events as they arrive: stdout and stderr pieces, then one result.
 * Ending it before the result (break out of `for await`, close(), the
 * signal given to stream(), or `await using`) stops the job: the client asks
 * for the cancel and hangs up, and the gateway destroys the sandbox.
 */
export class EventStream implements AsyncIterableIterator<Event> {
  declare [Symbol.asyncDispose]: () => Promise<void>;
  readonly jobId: string | null;
  result: RunResult | null = null;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | null;
  private readonly parser: SSEParser;
  private readonly pending: SSEEvent[] = [];
  private readonly sse: boolean;
  private done = false;

  constructor(
    private readonly resp: Response,
    private readonly hangUp: AbortController,
    private readonly cancel: () => Promise<void>,
    maxEventBytes: number,
    private readonly signal?: AbortSignal,
  ) {
    this.jobId = resp.headers.get("x-request-id");
    this.sse = (resp.headers.get("content-type") ?? "").startsWith("text/event-stream");
    this.reader = this.sse && resp.body ? resp.body.getReader() : null;
    this.parser = new SSEParser(maxEventBytes);
    if (signal) {
      const onAbort = () => void this.close();
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
    disposable(this, () => this.close());
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Event, undefined>> {
    while (!this.done) {
      if (!this.sse) return { done: false, value: this.final(await this.resp.json().catch(() => null)) };
      const ev = this.pending.shift();
      if (!ev) {
        await this.read();
        continue;
      }
      if (ev.event === "stdout" || ev.event === "stderr") {
        return { done: false, value: { type: ev.event, text: this.text(ev) } };
      }
      if (ev.event === "result") {
        let body: unknown;
        try {
          body = JSON.parse(ev.data);
        } catch {
          this.end();
          throw new TransportError("the result event is not JSON");
        }
        return { done: false, value: this.final(body) };
      }
      // another event name: a later version's, skipped
    }
    if (this.signal?.aborted && this.result === null) throw this.signal.reason;
    return { done: true, value: undefined };
  }

  /** Called when a `for await` loop ends early: stops the job. */
  async return(): Promise<IteratorResult<Event, undefined>> {
    await this.close();
    return { done: true, value: undefined };
  }

  private async read(): Promise<void> {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await this.reader!.read();
      if (chunk.done) {
        this.end();
        if (this.signal?.aborted) throw this.signal.reason;
        throw new TransportError("the stream ended before its result event");
      }
      this.pending.push(...this.parser.feed(chunk.value));
    } catch (err) {
      this.end();
      if (this.signal?.aborted) throw this.signal.reason;
      if (err instanceof TransportError) throw err;
      throw new TransportError(`reading the stream: ${(err as Error)?.message ?? err}`);
    }
  }

  private text(ev: SSEEvent): string {
    let text: unknown;
    try {
      text = JSON.parse(ev.data)?.text;
    } catch {
      text = undefined;
    }
    if (typeof text !== "string") {
      this.end();
      throw new TransportError(`a ${ev.event} event without text: ${ev.data.slice(0, 200)}`);
    }
    return text;
  }

  private final(body: unknown): Event {
    this.end();
    this.result = resultOrThrow(body, this.jobId);
    return { type: "result", result: this.result };
  }

  private end(): void {
    this.done = true;
    this.hangUp.abort();
  }

  /** Reads the rest of the stream; the result. */
  async wait(): Promise<RunResult> {
    for await (const _ of this) {
      /* the pieces are in the result too */
    }
    if (this.result === null) throw new TransportError("the stream ended before its result event");
    return this.result;
  }

  /** Stops the job if it has not ended, then hangs up. */
  async close(): Promise<void> {
    if (this.done) return;
    this.done = true;
    try {
      await this.cancel();
    } catch {
      /* it ended meanwhile, or the gateway is gone: the hang-up still counts */
    } finally {
      this.hangUp.abort();
    }
  }
}
