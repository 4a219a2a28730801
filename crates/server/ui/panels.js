// Dialogs and side panels: credentials, agents, a new session, the
// workspace's files and the caller's usage.

import { api, blob, query } from './api.js';
import { bytes, h, modal, mount, toast, when } from './dom.js';
import { schemaForm } from './forms.js';

/** The credentials dialog: the list (secrets masked by the server) and a
 * form from the credential schemas. `onChange` runs after a change. */
export async function credentialsDialog(onChange) {
  const [{ schemas }, list] = await Promise.all([api('GET', '/credential/schemas'), api('GET', '/credential/')]);
  const rows = h('ul', { class: 'plain-list' });
  const refresh = async () => {
    const { credentials } = await api('GET', '/credential/');
    mount(rows, credentials.length ? credentials.map((c) => h('li', { class: 'row' },
      h('span', { class: 'grow' }, h('strong', {}, c.data.name || '(unnamed)'), ' ', h('span', { class: 'muted' }, c.data.type)),
      h('button', { class: 'danger small', type: 'button', onclick: async () => {
        if (!confirm(`Delete the credential “${c.data.name}”?`)) return;
        try { await api('DELETE', `/credential/${encodeURIComponent(c.id)}`); await refresh(); onChange?.(); } catch (e) { toast(e.message); }
      } }, 'Delete'))) : h('li', { class: 'muted' }, 'No credentials yet.'));
  };
  const typeSelect = h('select', { name: 'credential-type', 'aria-label': 'Provider' },
    schemas.map((s) => h('option', { value: s.properties.type.const }, s.title)));
  const formBox = h('div');
  let form;
  const showForm = () => {
    const schema = schemas.find((s) => s.properties.type.const === typeSelect.value);
    form = schemaForm(schema, {});
    mount(formBox, schema.description ? h('p', { class: 'muted' }, schema.description) : null, form.el);
  };
  typeSelect.addEventListener('change', showForm);
  const save = h('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api('POST', '/credential/', { data: form.value() });
      toast('Credential saved.', 'info');
      showForm();
      await refresh();
      onChange?.();
    } catch (err) { toast(err.message); }
  } }, h('div', { class: 'field' }, h('label', {}, 'Provider'), typeSelect), formBox,
  h('button', { class: 'primary', type: 'submit' }, 'Save credential'));
  showForm();
  await refresh();
  void list;
  modal('Credentials', h('div', { class: 'stack' }, rows, h('h3', {}, 'Add a credential'), save), { wide: true });
}

/** Create (no `agent`) or edit an agent with a form from the agent schema. */
export async function agentDialog(agent, onSaved) {
  const { schema } = await api('GET', '/agent/schema/v2');
  const form = schemaForm(schema, agent?.data || {});
  const dialog = modal(agent ? 'Edit agent' : 'New agent', h('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    try {
      const body = form.value();
      const saved = agent
        ? await api('PATCH', `/agent/${encodeURIComponent(agent.id)}`, body)
        : await api('POST', '/agent/', body);
      dialog.close();
      onSaved?.(agent ? agent.id : saved.agent_id);
    } catch (err) { toast(err.message); }
  } }, form.el, h('button', { class: 'primary', type: 'submit' }, agent ? 'Save' : 'Create agent')), { wide: true });
}

/** A credential and one of its model cards (or a typed model name):
 * `fields` for a form, `config()` the `chat_model_config` (null when no
 * model is picked). `null` when the user has no credential. */
export async function modelPicker() {
  const { credentials } = await api('GET', '/credential/');
  if (!credentials.length) return null;
  const credSelect = h('select', { name: 'credential', 'aria-label': 'Credential' },
    credentials.map((c) => h('option', { value: c.id }, `${c.data.name || c.id} (${c.data.type})`)));
  const modelSelect = h('select', { name: 'model', 'aria-label': 'Model' });
  const custom = h('input', { name: 'model-custom', type: 'text', placeholder: 'or another model name' });
  const loadModels = async () => {
    const cred = credentials.find((c) => c.id === credSelect.value);
    try {
      const { models } = await api('GET', `/model/?${query({ provider: cred.data.type })}`);
      mount(modelSelect, models.map((m) => h('option', { value: m.name }, m.label || m.name)));
    } catch { mount(modelSelect); }
  };
  credSelect.addEventListener('change', loadModels);
  await loadModels();
  return {
    fields: [h('div', { class: 'field' }, h('label', {}, 'Credential'), credSelect),
      h('div', { class: 'field' }, h('label', {}, 'Model'), modelSelect, custom)],
    config() {
      const cred = credentials.find((c) => c.id === credSelect.value);
      const model = custom.value.trim() || modelSelect.value;
      return model ? { type: cred.data.type, credential_id: cred.id, model, parameters: {} } : null;
    },
  };
}

/** A new session of `agentId`: a credential and one of its model cards. */
export async function sessionDialog(agentId, hasSessions, onCreated) {
  const picker = await modelPicker();
  if (!picker) {
    toast('Add a credential first (Credentials, in the menu).', 'info');
    return;
  }
  const name = h('input', { name: 'session-name', type: 'text', placeholder: 'named after the first message' });
  const fresh = h('input', { name: 'fresh-workspace', type: 'checkbox', checked: hasSessions });
  const dialog = modal('New session', h('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    const config = picker.config();
    if (!config) { toast('Pick a model.'); return; }
    const body = { agent_id: agentId, chat_model_config: config };
    if (name.value.trim()) body.name = name.value.trim();
    if (fresh.checked) body.workspace_id = crypto.randomUUID().replaceAll('-', '');
    try {
      const { session_id: id } = await api('POST', '/sessions/', body);
      dialog.close();
      onCreated?.(id);
    } catch (err) { toast(err.message); }
  } },
  picker.fields,
  h('div', { class: 'field' }, h('label', {}, 'Name'), name),
  h('div', { class: 'field check' }, fresh, h('label', {}, 'Its own workspace (otherwise the agent’s shared one)')),
  h('button', { class: 'primary', type: 'submit' }, 'Start')));
}

/** The workspace panel of a session: directories to browse, files to
 * download (fetched with the caller's header, saved from a blob URL). */
export function workspacePanel(agentId, sessionId) {
  const crumbs = h('div', { class: 'crumbs' });
  const listing = h('ul', { class: 'files plain-list' });
  const el = h('div', { class: 'workspace' }, h('h3', {}, 'Workspace'), crumbs, listing);
  const base = { agent_id: agentId, session_id: sessionId };
  const open = async (path) => {
    let dir;
    try {
      dir = await api('GET', `/workspace/directories?${query({ ...base, path })}`);
    } catch (e) { mount(listing, h('li', { class: 'muted' }, e.message)); return; }
    const parts = path ? path.split('/') : [];
    mount(crumbs, h('a', { href: '#', onclick: (e) => { e.preventDefault(); open(''); } }, '/'),
      parts.map((p, i) => [' / ', h('a', { href: '#', onclick: (e) => { e.preventDefault(); open(parts.slice(0, i + 1).join('/')); } }, p)]));
    const entries = [...dir.entries].sort((a, b) => (b.is_dir - a.is_dir) || a.name.localeCompare(b.name));
    mount(listing, entries.length ? entries.map((entry) => {
      const child = path ? `${path}/${entry.name}` : entry.name;
      return h('li', { class: 'row file' },
        entry.is_dir
          ? h('a', { href: '#', class: 'grow dir', onclick: (e) => { e.preventDefault(); open(child); } }, `📁 ${entry.name}`)
          : h('span', { class: 'grow' }, `📄 ${entry.name}`),
        entry.is_dir ? null : h('span', { class: 'muted' }, bytes(entry.size_bytes)),
        entry.is_dir ? null : h('button', { class: 'small download', type: 'button', 'data-path': child, onclick: () => download(child, entry.name) }, 'Download'));
    }) : h('li', { class: 'muted' }, 'Empty.'));
  };
  const download = async (path, name) => {
    try {
      const data = await blob(`/workspace/files?${query({ ...base, path, download: true })}`);
      const url = URL.createObjectURL(data);
      const a = h('a', { href: url, download: name, class: 'hidden' });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (e) { toast(`Download failed: ${e.message}`); }
  };
  open('');
  return { el, refresh: () => open('') };
}

/** The caller's usage against the quota, and each listed session's. */
export async function usageDialog(sessions) {
  const usage = await api('GET', '/usage');
  const cell = (u) => [u.input_tokens, u.output_tokens, u.total_tokens, u.model_calls, u.runs].map((n) => h('td', { class: 'num' }, String(n ?? 0)));
  const head = h('tr', {}, h('th', {}, ''), ['Input', 'Output', 'Total', 'Model calls', 'Runs'].map((t) => h('th', {}, t)));
  const quota = usage.token_quota
    ? h('div', { class: 'quota' },
      h('progress', { max: String(usage.token_quota), value: String(Math.min(usage.window_usage.total_tokens, usage.token_quota)) }),
      ` ${usage.window_usage.total_tokens} of ${usage.token_quota} tokens this ${usage.window === 'total' ? 'quota' : usage.window}; ${usage.remaining_tokens} left`)
    : h('p', { class: 'muted' }, 'No token quota is set.');
  modal('Usage', h('div', { class: 'stack' }, quota,
    h('table', { class: 'usage' }, h('thead', {}, head), h('tbody', {},
      h('tr', {}, h('th', {}, 'All sessions'), cell(usage.total)),
      usage.window !== 'total' ? h('tr', {}, h('th', {}, `This ${usage.window}`), cell(usage.window_usage)) : null,
      sessions.map((s) => h('tr', {}, h('th', { class: 'name' }, s.session.config.name), cell(s.usage))))),
    h('p', { class: 'muted' }, `As of ${when(new Date().toISOString())}.`)), { wide: true });
}
