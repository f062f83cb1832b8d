// api.js - every console call is an ordinary API call with the user's token
// (Authorization: Bearer), the same auth, rate limits and audit as curl's.
// The token lives in sessionStorage (this tab only, gone when it closes),
// never in a URL or a cookie.

const KEY = 'sandgate.token';

export const token = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(`${code || status}: ${message || ''}`);
    this.status = status;
    this.code = code;
  }
}

function headers(extra) {
  const h = { Accept: 'application/json', ...extra };
  const t = token.get();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function failure(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch (_) { /* not JSON */ }
  const e = body && body.error ? body.error : {};
  return new ApiError(resp.status, e.code || `http_${resp.status}`, e.message || resp.statusText);
}

/** GET/POST/DELETE path (JSON body), the parsed answer or an ApiError. */
export async function api(method, path, body, signal) {
  const init = { method, headers: headers(body ? { 'Content-Type': 'application/json' } : {}), signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  const resp = await fetch(path, init);
  if (!resp.ok) throw await failure(resp);
  if (resp.status === 204) return null;
  return resp.json();
}

/** Read one Server-Sent Events answer: onEvent(name, data) per event. */
async function readEvents(resp, onEvent) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
}

/** POST path with "stream": true; onEvent for stdout/stderr/result; returns
 * {requestId}. The job id is in X-Request-Id as soon as the stream starts. */
export async function stream(path, body, onEvent, onStart, signal) {
  const resp = await fetch(path, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify({ ...body, stream: true }),
    signal,
  });
  if (!resp.ok) throw await failure(resp);
  const id = resp.headers.get('X-Request-Id');
  if (onStart) onStart(id);
  const type = resp.headers.get('Content-Type') || '';
  if (!type.startsWith('text/event-stream')) {
    onEvent('result', await resp.json());
    return { requestId: id };
  }
  await readEvents(resp, onEvent);
  return { requestId: id };
}
