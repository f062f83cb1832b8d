/**
 * @sandgate/client: the client of sandgate's HTTP API (Node >= 18, browsers).
 *
 *     import { Client } from "@sandgate/client";
 *     const client = new Client(); // $SANDGATE_URL, $SANDGATE_TOKEN
 *     console.log((await client.run("def main():\n    return 6 * 7\n")).value);
 */
export { Client, DEFAULT_URL, type ClientOptions, type JobOptions } from "./client.js";
export { Session, type SessionOptions, type CellOptions } from "./session.js";
export { EventStream } from "./stream.js";
export { SSEParser, SSEError, type SSEEvent } from "./sse.js";
export type { Analysis, Artifact, Event, FileInfo, Json, RunResult, Violation } from "./types.js";
export {
  APIError, BadRequest, Busy, Conflict, ExecutorFailed, ExecutorUnreachable, FileNotFound,
  Forbidden, JobEnded, JobNotFound, NoCellRunning, NotFound, PayloadTooLarge, PolicyViolation,
  RateLimited, SandgateError, SessionBusy, SessionLost, SessionNotFound, TooManySessions,
  TransportError, Unauthorized,
} from "./errors.js";
export const VERSION = "0.1.0";
