// The API client: the caller's identity, JSON calls and the event stream.
// The API key lives in sessionStorage (or localStorage when remembered)
// and travels only in the Authorization header, never in a URL.

const STORE = 'oxiscope.auth';

/** The saved identity: `{mode: 'key', key}` or `{mode: 'dev', user}`. */
export function loadAuth() {
  const raw = sessionStorage.getItem(STORE) || localStorage.getItem(STORE);
  try { return raw ? JSON.parse(raw) : null; } catch { return null; }
}

export function saveAuth(auth, remember) {
  clearAuth();
  (remember ? localStorage : sessionStorage).setItem(STORE, JSON.stringify(auth));
}

export function clearAuth() {
  sessionStorage.removeItem(STORE);
  localStorage.removeItem(STORE);
}

/** The caller's identity headers (for requests `api` does not make). */
export function authHeaders() {
  return headers();
}

function headers(extra = {}) {
  const auth = loadAuth();
  const out = { ...extra };
  if (auth?.mode === 'key') out.Authorization = `Bearer ${auth.key}`;
  if (auth?.mode === 'dev') out['x-user-id'] = auth.user;
  return out;
}

/** An error answer: its status and the API's `detail`, as text. */
export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === 'string' ? detail : describe(detail));
    this.status = status;
    this.detail = detail;
  }
}

function describe(detail) {
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).join('.')}: ${d.msg}`).join('; ');
  }
  return JSON.stringify(detail);
}

/** A query string from `params` (undefined values left out). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, v);
  return q.toString();
}

/** `method path` with a JSON `body`; the answer's JSON (null when empty). */
export async function api(method, path, body) {
  const init = { method, headers: headers(), credentials: 'omit' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch { data = text; } }
  if (!res.ok) throw new ApiError(res.status, data?.detail ?? data ?? res.statusText);
  return data;
}

/** A file of the API as a Blob (authenticated by header). */
export async function blob(path) {
  const res = await fetch(path, { headers: headers(), credentials: 'omit' });
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail; } catch { /* not JSON */ }
    throw new ApiError(res.status, detail);
  }
  return res.blob();
}

/** Reads the SSE stream at `path`, calling `onEvent` with each event,
 * until `signal` aborts or the server ends it. Resolves when it ends. */
export async function stream(path, onEvent, signal) {
  const res = await fetch(path, { headers: headers({ Accept: 'text/event-stream' }), signal, credentials: 'omit' });
  if (!res.ok) throw new ApiError(res.status, (await res.json().catch(() => ({}))).detail);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (!data) continue;
      let event;
      try { event = JSON.parse(data); } catch { continue; }
      onEvent(event);
    }
  }
}
