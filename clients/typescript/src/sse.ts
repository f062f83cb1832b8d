/**
 * Server-Sent Events: an incremental parser of the text/event-stream format.
 *
 * Feed it bytes as they arrive, in pieces of any size (a frame, a line or a
 * UTF-8 character may be split anywhere); it returns the events completed so
 * far. Lines end with LF, CRLF or CR; the `data:` lines of one event are
 * joined with a newline; comments (`: hb`, the server's heartbeats) and
 * unknown fields are ignored; an event is dispatched at a blank line, and one
 * left incomplete at the end of the stream is dropped, as the specification
 * says. What the server sends is bounded: a line or an event larger than
 * maxEventBytes (in UTF-16 code units) is an error.
 */

export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024;

export interface SSEEvent {
  event: string;
  data: string;
  id?: string;
}

export class SSEError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SSEError";
  }
}

export class SSEParser {
  private readonly max: number;
  private readonly decoder = new TextDecoder("utf-8"); // drops a leading BOM
  private parts: string[] = []; // the line read so far
  private lineLen = 0;
  private afterCR = false; // the last piece ended with CR: a LF next completes its CRLF
  private event = "";
  private data: string[] = [];
  private size = 0;
  private id: string | undefined;

  constructor(maxEventBytes: number = DEFAULT_MAX_EVENT_BYTES) {
    this.max = maxEventBytes;
  }

  /** Parses the next bytes; returns the events they completed. */
  feed(chunk: Uint8Array): SSEEvent[] {
    const text = this.decoder.decode(chunk, { stream: true });
    const out: SSEEvent[] = [];
    let pos = 0;
    if (this.afterCR && text.length > 0) {
      this.afterCR = false;
      if (text[0] === "\n") pos = 1;
    }
    const eol = /[\r\n]/g;
    for (;;) {
      eol.lastIndex = pos;
      const m = eol.exec(text);
      if (!m) break;
      const i = m.index;
      this.add(text.slice(pos, i));
      this.endLine(out);
      if (text[i] === "\r" && i + 1 === text.length) this.afterCR = true;
      pos = text.startsWith("\r\n", i) ? i + 2 : i + 1;
    }
    this.add(text.slice(pos));
    return out;
  }

  private add(piece: string): void {
    if (!piece) return;
    this.lineLen += piece.length;
    this.check(this.lineLen);
    this.parts.push(piece);
  }

  private check(extra: number): void {
    if (this.size + extra > this.max) throw new SSEError(`event larger than ${this.max} bytes`);
  }

  private endLine(out: SSEEvent[]): void {
    const line = this.parts.join("");
    this.parts = [];
    this.lineLen = 0;
    if (line === "") return this.dispatch(out);
    if (line.startsWith(":")) return; // a comment: the server's heartbeat
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") {
      this.event = value;
    } else if (name === "data") {
      this.size += value.length + 1;
      this.check(0);
      this.data.push(value);
    } else if (name === "id" && !value.includes("\0")) {
      this.id = value;
    } // "retry" and unknown fields are ignored
  }

  private dispatch(out: SSEEvent[]): void {
    if (this.data.length > 0) {
      const ev: SSEEvent = { event: this.event || "message", data: this.data.join("\n") };
      if (this.id !== undefined) ev.id = this.id;
      out.push(ev);
    }
    this.event = "";
    this.data = [];
    this.size = 0;
  }
}
