// Knowledge bases: the list, a new one (the embedding model from a
// credential's cards or the built-in offline model), a base's documents
// (uploaded with progress, their indexing followed until ready), and a
// search.

import { api, ApiError, authHeaders, query } from './api.js';
import { bytes, h, modal, mount, toast, when } from './dom.js';

const DONE = new Set(['ready', 'error']);

/** The knowledge bases dialog. */
export async function knowledgeDialog() {
  const body = h('div', { class: 'stack kb' });
  const dialog = modal('Knowledge bases', body, { wide: true });
  const showList = async () => {
    let list;
    try {
      list = await api('GET', `/knowledge_bases/?${query({ page_size: 100 })}`);
    } catch (e) { mount(body, h('p', { class: 'error-box' }, e.message)); return; }
    mount(body,
      h('ul', { class: 'plain-list kb-list' }, list.knowledge_bases.length ? list.knowledge_bases.map((kb) => h('li', { class: 'row' },
        h('button', { class: 'grow kb-open', type: 'button', 'data-kb': kb.id, onclick: () => showBase(kb) },
          h('strong', {}, kb.name), ' ', h('span', { class: 'muted' },
            `${kb.document_count} documents · ${kb.chunk_count} chunks · ${kb.embedding_model_config.model}`)),
        h('button', { class: 'danger small', type: 'button', onclick: async () => {
          if (!confirm(`Delete the knowledge base “${kb.name}” and its documents?`)) return;
          try { await api('DELETE', `/knowledge_bases/${encodeURIComponent(kb.id)}`); showList(); } catch (e) { toast(e.message); }
        } }, 'Delete'))) : h('li', { class: 'muted' }, 'No knowledge bases yet.')),
      h('h3', {}, 'New knowledge base'),
      await createForm(showList));
  };
  const showBase = (kb) => mount(body, basePanel(kb, showList));
  await showList();
  return dialog;
}

async function createForm(onCreated) {
  const { providers } = await api('GET', '/knowledge_bases/embedding_models');
  const options = providers.flatMap((p) => p.models.map((m) => ({ credential: p.credential, model: m })));
  const model = h('select', { name: 'kb-model', 'aria-label': 'Embedding model' }, options.map((o, i) => h('option', { value: String(i) },
    `${o.model.label || o.model.name} — ${o.credential.data.name || o.credential.id}`)));
  const dims = h('input', { name: 'kb-dimensions', type: 'number', min: '1', step: '1' });
  const pickDims = () => { const o = options[Number(model.value)]; dims.value = o ? String(o.model.dimensions) : ''; };
  model.addEventListener('change', pickDims);
  pickDims();
  const name = h('input', { name: 'kb-name', required: true });
  const description = h('input', { name: 'kb-description' });
  return h('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    const o = options[Number(model.value)];
    if (!o) { toast('No embedding model: add a credential that has one.'); return; }
    try {
      await api('POST', '/knowledge_bases/', {
        name: name.value.trim(),
        description: description.value.trim(),
        embedding_model_config: {
          type: o.credential.data.type, credential_id: o.credential.id, model: o.model.name, dimensions: Number(dims.value),
        },
      });
      toast('Knowledge base created.', 'info');
      onCreated();
    } catch (err) { toast(err.message); }
  } },
  h('div', { class: 'field' }, h('label', {}, 'Name'), name),
  h('div', { class: 'field' }, h('label', {}, 'Description'), description),
  h('div', { class: 'field' }, h('label', {}, 'Embedding model'), model),
  h('div', { class: 'field' }, h('label', {}, 'Dimensions'), dims),
  h('button', { class: 'primary', type: 'submit' }, 'Create'));
}

/** One base: its documents, an upload, a search. */
function basePanel(kb, back) {
  const base = `/knowledge_bases/${encodeURIComponent(kb.id)}`;
  const docs = h('ul', { class: 'plain-list kb-docs' });
  const progress = h('div', { class: 'kb-progress' });
  const file = h('input', { type: 'file', name: 'kb-file', multiple: true });
  const results = h('ol', { class: 'kb-results' });
  const q = h('input', { type: 'search', name: 'kb-query', placeholder: 'Ask the knowledge base' });
  let polling = null;
  const rows = new Map();
  const row = (d) => h('li', { class: 'row kb-doc', 'data-doc': d.id },
    h('span', { class: 'grow' }, d.filename),
    h('span', { class: 'muted' }, bytes(d.size)),
    h('span', { class: `badge state-${d.status === 'ready' ? 'success' : d.status}` }, d.status),
    d.error ? h('span', { class: 'error-text' }, d.error) : null);
  const show = (list) => {
    rows.clear();
    for (const d of list) rows.set(d.id, d);
    mount(docs, list.length ? list.map(row) : h('li', { class: 'muted' }, 'No documents yet.'));
  };
  const poll = async () => {
    const open = [...rows.values()].filter((d) => !DONE.has(d.status)).map((d) => d.id);
    if (!open.length || !docs.isConnected) { polling = null; return; }
    try {
      const { items } = await api('GET', `${base}/documents/status?${query({ ids: open.join(',') })}`);
      for (const d of items) rows.set(d.id, d);
      show([...rows.values()]);
    } catch (e) { toast(e.message); }
    polling = setTimeout(poll, 1000);
  };
  const follow = () => { if (!polling) polling = setTimeout(poll, 500); };
  const reload = async () => {
    const { documents } = await api('GET', `${base}/documents?${query({ page_size: 100 })}`);
    show(documents);
    follow();
  };
  const upload = async () => {
    for (const f of file.files) {
      const bar = h('progress', { max: '100', value: '0' });
      const line = h('div', { class: 'row' }, h('span', { class: 'grow' }, f.name), bar);
      progress.append(line);
      try {
        const res = await send(`${base}/documents`, f, (p) => { bar.value = String(Math.round(p * 100)); });
        rows.set(res.document_id, { id: res.document_id, filename: res.filename, status: res.status, size: f.size });
        show([...rows.values()]);
        follow();
      } catch (e) { toast(`${f.name}: ${e.message}`); }
      line.remove();
    }
    file.value = '';
  };
  const search = async () => {
    if (!q.value.trim()) return;
    try {
      const { results: hits } = await api('POST', `${base}/search`, { query: q.value.trim(), top_k: 5 });
      mount(results, hits.length ? hits.map((hit) => h('li', { class: 'kb-hit' },
        h('div', { class: 'muted' }, `${(hit.score ?? 0).toFixed(3)} · ${rows.get(hit.document_id)?.filename || hit.document_id}`),
        h('div', { class: 'kb-hit-text' }, hitText(hit)))) : h('li', { class: 'muted' }, 'Nothing found.'));
    } catch (e) { toast(e.message); }
  };
  reload().catch((e) => toast(e.message));
  return h('div', { class: 'stack' },
    h('div', { class: 'row' }, h('button', { class: 'small', type: 'button', onclick: back }, '← All'),
      h('h3', { class: 'grow' }, kb.name), h('span', { class: 'muted' }, `created ${when(kb.created_at)}`)),
    kb.description ? h('p', { class: 'muted' }, kb.description) : null,
    docs,
    h('div', { class: 'row' }, file, h('button', { class: 'primary kb-upload', type: 'button', onclick: upload }, 'Upload')),
    progress,
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); search(); } }, q, h('button', { type: 'submit', class: 'kb-search' }, 'Search')),
    results);
}

function hitText(hit) {
  const content = hit.chunk?.content;
  if (typeof content === 'string') return content;
  if (content?.text) return content.text;
  return JSON.stringify(content ?? hit);
}

/** Uploads `file` as multipart with progress (`fetch` reports none). */
function send(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); });
    xhr.addEventListener('load', () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch { data = xhr.responseText; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, data?.detail ?? data ?? xhr.statusText));
    });
    xhr.addEventListener('error', () => reject(new Error('the upload failed')));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
