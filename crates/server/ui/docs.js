// The interactive API reference at /docs: every operation of
// /openapi.json grouped by tag, with its parameters, request body and
// responses, and a form that sends it as the signed-in caller (the API
// key as a bearer header, or the development user as `x-user-id`).

import { loadAuth } from './api.js';
import { h, mount } from './dom.js';
import { example, schemaView } from './schema-view.js';

const METHODS = ['get', 'post', 'patch', 'put', 'delete'];
/** The most text of an answer shown (the rest is cut). */
const SHOWN = 256 * 1024;

// A page-level record of anything the policy blocked (tests read it).
window.oxiscopeViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.oxiscopeViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});

const root = document.getElementById('docs');
const theme = localStorage.getItem('oxiscope.theme')
  || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
document.documentElement.dataset.theme = theme;

/** The caller's identity fields (filled from the UI's sign-in). */
const who = { key: null, user: null };

function identityBox(doc) {
  const auth = loadAuth();
  const keys = Object.keys(doc.components?.securitySchemes || {}).length > 0;
  const input = keys
    ? h('input', { id: 'docs-key', type: 'password', autocomplete: 'off', placeholder: 'an API key', value: auth?.key || '' })
    : h('input', { id: 'docs-user', type: 'text', placeholder: 'a user name', value: auth?.user || '' });
  if (keys) who.key = input; else who.user = input;
  return h('div', { class: 'field docs-identity' },
    h('label', { for: input.id }, keys ? 'API key (sent as Authorization: Bearer)' : 'User (sent as x-user-id)'),
    input,
    h('small', { class: 'help' }, auth ? 'Filled in from your sign-in to the UI.' : 'Sign in at / to fill this in.'));
}

/** The operations of `doc`, grouped by their first tag, in document order. */
function byTag(doc) {
  const groups = new Map();
  for (const [path, item] of Object.entries(doc.paths || {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] || 'default';
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag).push({ method, path, op });
    }
  }
  return groups;
}

function paramRows(doc, params) {
  return h('table', { class: 'docs-table' },
    h('thead', {}, h('tr', {}, ['Name', 'In', 'Type', ''].map((t) => h('th', {}, t)))),
    h('tbody', {}, params.map((p) => h('tr', {},
      h('td', {}, h('code', {}, p.name), p.required ? h('span', { class: 'req' }, ' *') : null),
      h('td', {}, p.in),
      h('td', {}, schemaView(doc, p.schema, 1)),
      h('td', { class: 'muted' }, p.description || '')))));
}

function responsesView(doc, responses) {
  return h('ul', { class: 'plain-list docs-responses' }, Object.entries(responses || {}).map(([status, res]) => {
    const content = Object.entries(res.content || {});
    return h('li', {}, h('span', { class: `status s${status[0]}` }, status), ' ',
      content.length ? content.map(([type, media]) => h('div', { class: 'media' },
        h('span', { class: 'muted' }, type), schemaView(doc, media.schema, 2))) : h('span', { class: 'muted' }, res.description || 'no body'));
  }));
}

/** The try-it form of one operation. */
function tryIt(doc, { method, path, op }) {
  const params = (op.parameters || []).map((p) => {
    const start = p.name === 'x-user-id' ? (who.user?.value || '') : '';
    const input = h('input', { name: p.name, 'data-in': p.in, value: start, placeholder: p.required ? 'required' : 'optional' });
    if (p.name === 'x-user-id' && who.user) who.user.addEventListener('input', () => { input.value = who.user.value; });
    return { p, input };
  });
  const [media, body] = Object.entries(op.requestBody?.content || {})[0] || [];
  let bodyFields = [];
  let bodyText = null;
  if (media === 'multipart/form-data') {
    const schema = doc.components?.schemas?.[body.schema?.$ref?.split('/').pop()] || body.schema || {};
    bodyFields = Object.keys(schema.properties || {}).map((name) => ({
      name,
      input: /^files?$/.test(name)
        ? h('input', { type: 'file', name, multiple: name === 'files' })
        : h('input', { type: 'text', name }),
    }));
  } else if (media) {
    bodyText = h('textarea', { class: 'mono', name: 'body', rows: 6 });
    bodyText.value = JSON.stringify(example(doc, body.schema), null, 2);
  }
  const out = h('div', { class: 'try-result', 'aria-live': 'polite' });
  const stop = h('button', { type: 'button', class: 'small hidden' }, 'Stop');
  let controller = null;
  stop.addEventListener('click', () => controller?.abort());
  const send = async () => {
    controller?.abort();
    controller = new AbortController();
    const headers = {};
    const q = new URLSearchParams();
    let url = path;
    for (const { p, input } of params) {
      const value = input.value;
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(value));
      else if (value === '') continue;
      else if (p.in === 'query') q.set(p.name, value);
      else if (p.in === 'header') headers[p.name] = value;
    }
    if (who.key?.value) headers.Authorization = `Bearer ${who.key.value}`;
    const init = { method: method.toUpperCase(), headers, credentials: 'omit', signal: controller.signal };
    if (bodyText) {
      headers['Content-Type'] = media;
      init.body = bodyText.value;
    } else if (bodyFields.length) {
      const form = new FormData();
      for (const { name, input } of bodyFields) {
        if (input.type === 'file') for (const file of input.files) form.append(name, file);
        else if (input.value !== '') form.append(name, input.value);
      }
      init.body = form;
    }
    const full = q.toString() ? `${url}?${q}` : url;
    const started = performance.now();
    mount(out, h('div', { class: 'muted' }, `${init.method} ${full} …`));
    try {
      const res = await fetch(full, init);
      const head = h('div', { class: 'try-status' }, h('span', { class: `status s${String(res.status)[0]}` }, String(res.status)),
        ` ${res.statusText} · ${Math.round(performance.now() - started)} ms · ${res.headers.get('content-type') || 'no body'}`);
      const pre = h('pre', { class: 'try-body' });
      mount(out, head, pre);
      stop.classList.remove('hidden');
      await readInto(res, pre);
    } catch (e) {
      if (e.name !== 'AbortError') mount(out, h('div', { class: 'error-box' }, `The request failed: ${e.message}`));
    } finally {
      stop.classList.add('hidden');
    }
  };
  return h('form', { class: 'try stack', onsubmit: (e) => { e.preventDefault(); send(); } },
    h('h4', {}, 'Try it'),
    params.map(({ p, input }) => h('div', { class: 'field' }, h('label', {}, `${p.name} (${p.in})`, p.required ? h('span', { class: 'req' }, ' *') : null), input)),
    bodyText ? h('div', { class: 'field' }, h('label', {}, `Body (${media})`), bodyText) : null,
    bodyFields.map(({ name, input }) => h('div', { class: 'field' }, h('label', {}, `${name} (form field)`), input)),
    h('div', { class: 'row' }, h('button', { class: 'primary try-send', type: 'submit' }, 'Send'), stop),
    out);
}

/** Reads `res` into `pre` as it arrives (an event stream keeps going
 * until stopped), pretty-printing a JSON answer once it is complete. */
async function readInto(res, pre) {
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!reader) return;
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    if (text.length > SHOWN) {
      reader.cancel();
      text = `${text.slice(0, SHOWN)}\n… (cut)`;
      break;
    }
    pre.textContent = text;
  }
  if ((res.headers.get('content-type') || '').includes('json')) {
    try { text = JSON.stringify(JSON.parse(text), null, 2); } catch { /* as it came */ }
  }
  pre.textContent = text;
}

function operationView(doc, entry) {
  const { method, path, op } = entry;
  const id = `${method.toUpperCase()} ${path}`;
  let filled = false;
  const body = h('div', { class: 'op-body' });
  const el = h('details', { class: 'op', 'data-op': id, id: `op-${method}-${path.replace(/[^a-z0-9]+/gi, '-')}` },
    h('summary', {}, h('span', { class: `method m-${method}` }, method.toUpperCase()),
      h('code', { class: 'op-path' }, path),
      op.summary ? h('span', { class: 'muted' }, op.summary) : null,
      op.security && op.security.length === 0 ? h('span', { class: 'badge' }, 'public') : null),
    body);
  // Filled on first open: the document has about a hundred operations.
  el.addEventListener('toggle', () => {
    if (!el.open || filled) return;
    filled = true;
    mount(body,
      op.description ? h('p', {}, op.description) : null,
      op.parameters?.length ? [h('h4', {}, 'Parameters'), paramRows(doc, op.parameters)] : null,
      op.requestBody ? [h('h4', {}, 'Request body'), Object.entries(op.requestBody.content || {}).map(([type, media]) => h('div', { class: 'media' },
        h('span', { class: 'muted' }, type), schemaView(doc, media.schema, 3)))] : null,
      h('h4', {}, 'Responses'), responsesView(doc, op.responses),
      tryIt(doc, entry));
  });
  return el;
}

async function main() {
  let doc;
  try {
    doc = await fetch('/openapi.json', { credentials: 'omit' }).then((r) => r.json());
  } catch (e) {
    mount(root, h('p', { class: 'error-box' }, `Could not read /openapi.json: ${e.message}`));
    return;
  }
  const groups = byTag(doc);
  const filter = h('input', { type: 'search', id: 'docs-filter', placeholder: 'Filter operations (path or method)', 'aria-label': 'Filter operations' });
  const sections = [...groups].map(([tag, ops]) => h('section', { class: 'tag', id: `tag-${tag}` },
    h('h2', {}, tag), ops.map((entry) => operationView(doc, entry))));
  filter.addEventListener('input', () => {
    const needle = filter.value.trim().toLowerCase();
    for (const op of root.querySelectorAll('.op')) op.classList.toggle('hidden', !!needle && !op.dataset.op.toLowerCase().includes(needle));
    for (const s of sections) s.classList.toggle('hidden', !s.querySelector('.op:not(.hidden)'));
  });
  mount(root, h('div', { class: 'docs' },
    h('header', { class: 'docs-head' },
      h('div', { class: 'brand big' }, h('img', { src: '/ui/icon.svg', alt: '' }), `${doc.info?.title || 'API'} API`),
      h('span', { class: 'muted' }, `version ${doc.info?.version || '?'} · OpenAPI ${doc.openapi} · `,
        h('a', { href: '/openapi.json' }, 'openapi.json'), ' · ', h('a', { href: '/' }, 'back to the UI'))),
    identityBox(doc), filter,
    h('nav', { class: 'docs-tags' }, [...groups.keys()].map((tag) => h('a', { href: `#tag-${tag}` }, tag))),
    sections));
}

main();
