// The app shell: sign-in, the agent and session lists, the chat, the
// workspace panel, the theme.

import { api, clearAuth, loadAuth, query, saveAuth } from './api.js';
import { ChatView } from './chat.js';
import { h, modal, mount, toast } from './dom.js';
import { knowledgeDialog } from './knowledge.js';
import { agentDialog, credentialsDialog, sessionDialog, usageDialog } from './panels.js';
import { schedulesDialog } from './schedules.js';
import { sidePane } from './workspace.js';

// A page-level record of anything the policy blocked (tests read it).
window.oxiscopeViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.oxiscopeViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});

const root = document.getElementById('app');
const state = { agents: [], agentId: null, sessions: [], sessionId: null, chat: null, filter: '' };

// ---- theme ---------------------------------------------------------------

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem('oxiscope.theme', theme);
}
applyTheme(localStorage.getItem('oxiscope.theme')
  || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));

// ---- sign-in -------------------------------------------------------------

/** Whether the server takes API keys (its OpenAPI document declares a
 * bearer scheme) or trusts `x-user-id` (development authentication). */
async function authMode() {
  try {
    const doc = await fetch('/openapi.json', { credentials: 'omit' }).then((r) => r.json());
    return Object.keys(doc.components?.securitySchemes || {}).length ? 'key' : 'dev';
  } catch {
    return 'key';
  }
}

async function signIn() {
  const mode = await authMode();
  const secret = h('input', {
    id: 'signin-secret', name: mode === 'key' ? 'api-key' : 'user', required: true,
    type: mode === 'key' ? 'password' : 'text', autocomplete: mode === 'key' ? 'current-password' : 'username',
    placeholder: mode === 'key' ? 'the key from `oxiscope keys create`' : 'e.g. alice',
  });
  const remember = h('input', { id: 'signin-remember', type: 'checkbox' });
  const form = h('form', { class: 'signin card stack', onsubmit: async (e) => {
    e.preventDefault();
    const value = secret.value.trim();
    const auth = mode === 'key' ? { mode, key: value } : { mode, user: value };
    saveAuth(auth, remember.checked);
    try {
      await api('GET', '/credential/');
      start();
    } catch (err) {
      clearAuth();
      toast(err.status === 401 ? 'That key is not valid.' : err.message);
    }
  } },
  h('div', { class: 'brand big' }, h('img', { src: '/ui/icon.svg', alt: '' }), 'Oxiscope'),
  h('p', { class: 'muted' }, `Connected to ${location.host}. `,
    mode === 'key' ? 'Sign in with your API key.' : 'This server runs with development authentication: pick a user name.'),
  h('div', { class: 'field' }, h('label', { for: 'signin-secret' }, mode === 'key' ? 'API key' : 'User'), secret),
  h('div', { class: 'field check' }, remember, h('label', { for: 'signin-remember' }, 'Remember on this browser')),
  h('button', { class: 'primary', type: 'submit', id: 'signin-submit' }, 'Sign in'));
  mount(root, h('main', { class: 'center-screen' }, form));
  secret.focus();
}

// ---- the shell -----------------------------------------------------------

const els = {};

function shell() {
  const auth = loadAuth();
  els.agentSelect = h('select', { id: 'agent-select', 'aria-label': 'Agent', onchange: () => selectAgent(els.agentSelect.value) });
  els.sessions = h('ul', { id: 'session-list', class: 'sessions plain-list' });
  els.search = h('input', { type: 'search', id: 'session-search', placeholder: 'Search sessions', 'aria-label': 'Search sessions', oninput: () => { state.filter = els.search.value.toLowerCase(); renderSessions(); } });
  els.main = h('div', { class: 'main-pane' });
  els.side = h('aside', { class: 'side-pane hidden' });
  els.title = h('h1', { class: 'session-title' });
  els.sidebar = h('nav', { class: 'sidebar' },
    h('div', { class: 'side-section' },
      h('label', { for: 'agent-select' }, 'Agent'),
      h('div', { class: 'row' }, els.agentSelect,
        h('button', { class: 'small', type: 'button', id: 'edit-agent', title: 'Edit agent', onclick: editAgent }, 'Edit'),
        h('button', { class: 'small', type: 'button', id: 'new-agent', onclick: () => agentDialog(null, reloadAgents) }, 'New'))),
    h('div', { class: 'side-section grow-col' },
      h('div', { class: 'row' }, h('strong', { class: 'grow' }, 'Sessions'),
        h('button', { class: 'small primary', type: 'button', id: 'new-session', onclick: newSession }, '+ New')),
      els.search, els.sessions),
    h('div', { class: 'side-section' },
      h('button', { class: 'wide', type: 'button', id: 'open-credentials', onclick: () => credentialsDialog() }, 'Credentials'),
      h('button', { class: 'wide', type: 'button', id: 'open-knowledge', onclick: () => knowledgeDialog().catch((e) => toast(e.message)) }, 'Knowledge bases'),
      h('button', { class: 'wide', type: 'button', id: 'open-schedules', onclick: () => schedulesDialog(state.agents, state.agentId, openAnySession).catch((e) => toast(e.message)) }, 'Schedules'),
      h('button', { class: 'wide', type: 'button', id: 'open-usage', onclick: () => usageDialog(state.sessions).catch((e) => toast(e.message)) }, 'Usage'),
      h('a', { class: 'docs-link', href: '/docs', target: '_blank', rel: 'opener' }, 'API reference')));
  mount(root, h('div', { class: 'layout' },
    h('header', { class: 'topbar' },
      h('button', { class: 'icon menu', type: 'button', 'aria-label': 'Menu', onclick: () => document.body.classList.toggle('nav-open') }, '☰'),
      h('div', { class: 'brand' }, h('img', { src: '/ui/icon.svg', alt: '' }), 'Oxiscope'),
      els.title,
      h('span', { class: 'grow' }),
      h('button', { class: 'small', type: 'button', id: 'toggle-files', onclick: toggleFiles }, 'Workspace'),
      h('button', { class: 'small', type: 'button', id: 'toggle-theme', 'aria-label': 'Toggle theme', onclick: () => applyTheme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark') }, '◐'),
      h('span', { class: 'who muted' }, auth.mode === 'dev' ? auth.user : 'API key'),
      h('button', { class: 'small', type: 'button', onclick: () => { clearAuth(); state.chat?.close(); signIn(); } }, 'Sign out')),
    h('div', { class: 'body' }, els.sidebar, els.main, els.side)));
}

async function reloadAgents(selectId) {
  const { agents } = await api('GET', '/agent/');
  state.agents = agents;
  mount(els.agentSelect, agents.length ? agents.map((a) => h('option', { value: a.id }, a.data.name)) : h('option', { value: '' }, 'no agents yet'));
  const wanted = selectId || state.agentId || localStorage.getItem('oxiscope.agent');
  const pick = agents.find((a) => a.id === wanted) || agents[0];
  if (pick) {
    els.agentSelect.value = pick.id;
    await selectAgent(pick.id);
  } else {
    emptyMain('Create an agent to begin: add a credential (Credentials), then New agent.');
  }
}

function editAgent() {
  const agent = state.agents.find((a) => a.id === state.agentId);
  if (agent) agentDialog(agent, reloadAgents);
}

async function selectAgent(id) {
  state.agentId = id;
  localStorage.setItem('oxiscope.agent', id);
  await reloadSessions();
  const wanted = state.sessions.find((s) => s.session.id === localStorage.getItem('oxiscope.session'));
  if (wanted) openSession(wanted.session.id);
  else if (state.sessions[0]) openSession(state.sessions[0].session.id);
  else { closeChat(); emptyMain('No sessions yet: start one with “+ New”.'); }
}

async function reloadSessions() {
  if (!state.agentId) return;
  const { sessions } = await api('GET', `/sessions/?${query({ agent_id: state.agentId })}`);
  state.sessions = sessions.sort((a, b) => (b.session.updated_at || '').localeCompare(a.session.updated_at || ''));
  renderSessions();
}

function renderSessions() {
  const shown = state.sessions.filter((s) => !state.filter || (s.session.config.name || '').toLowerCase().includes(state.filter));
  mount(els.sessions, shown.length ? shown.map((s) => {
    const id = s.session.id;
    const name = s.session.config.name || id;
    return h('li', { class: `session ${id === state.sessionId ? 'active' : ''}`, 'data-session': id },
      h('button', { class: 'session-open grow', type: 'button', onclick: () => openSession(id) },
        h('span', { class: 'session-name' }, name),
        s.status && s.status !== 'idle' ? h('span', { class: `badge state-${s.status}` }, s.status.replaceAll('_', ' ')) : null),
      h('button', { class: 'icon rename', type: 'button', title: 'Rename', 'aria-label': `Rename ${name}`, onclick: () => renameSession(s) }, '✎'),
      h('button', { class: 'icon delete', type: 'button', title: 'Delete', 'aria-label': `Delete ${name}`, onclick: () => deleteSession(s) }, '✕'));
  }) : h('li', { class: 'muted' }, state.filter ? 'No session matches.' : 'None yet.'));
}

function sessionPath(id) {
  return `/sessions/${encodeURIComponent(id)}?${query({ agent_id: state.agentId })}`;
}

function renameSession(s) {
  const input = h('input', { name: 'new-name', value: s.session.config.name || '', required: true });
  const dialog = modal('Rename session', h('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api('PATCH', sessionPath(s.session.id), { name: input.value.trim() });
      dialog.close();
      setSessionName(s.session.id, input.value.trim());
    } catch (err) { toast(err.message); }
  } }, input, h('button', { class: 'primary', type: 'submit' }, 'Rename')));
  input.select();
}

async function deleteSession(s) {
  if (!confirm(`Delete the session “${s.session.config.name}” and its messages?`)) return;
  try {
    await api('DELETE', sessionPath(s.session.id));
    if (state.sessionId === s.session.id) { closeChat(); emptyMain('Session deleted.'); }
    await reloadSessions();
  } catch (e) { toast(e.message); }
}

function setSessionName(id, name) {
  const s = state.sessions.find((x) => x.session.id === id);
  if (s) s.session.config.name = name;
  renderSessions();
  if (id === state.sessionId) els.title.textContent = name;
}

function newSession() {
  if (!state.agentId) { toast('Create an agent first.', 'info'); return; }
  sessionDialog(state.agentId, state.sessions.length > 0, async (id) => {
    await reloadSessions();
    openSession(id);
  }).catch((e) => toast(e.message));
}

function closeChat() {
  state.chat?.close();
  state.chat = null;
  state.sessionId = null;
  els.title.textContent = '';
}

function emptyMain(text) {
  mount(els.main, h('div', { class: 'empty muted' }, text));
  mount(els.side);
}

function openSession(id) {
  const s = state.sessions.find((x) => x.session.id === id);
  if (!s) return;
  localStorage.setItem('oxiscope.session', id);
  openChat(state.agentId, s, s.session.config.name || id);
}

/** Opens session `sessionId` of `agentId`: one of the user's agents (it
 * becomes the selected one), or a team member's agent. */
async function openAnySession(agentId, sessionId) {
  if (state.agents.some((a) => a.id === agentId)) {
    if (state.agentId !== agentId) {
      els.agentSelect.value = agentId;
      state.agentId = agentId;
      localStorage.setItem('oxiscope.agent', agentId);
    }
    await reloadSessions();
    openSession(sessionId);
    return;
  }
  const { sessions } = await api('GET', `/sessions/?${query({ agent_id: agentId })}`);
  const row = sessions.find((x) => x.session.id === sessionId);
  if (!row) throw new Error('That session is gone.');
  const member = row.team?.members?.find((m) => m.session_id === sessionId)?.agent?.data?.name;
  openChat(agentId, row, `${member ? `${member}: ` : ''}${row.session.config.name || sessionId}`);
}

function openChat(agentId, s, title) {
  closeChat();
  state.sessionId = s.session.id;
  state.chatAgentId = agentId;
  state.chatRow = s;
  document.body.classList.remove('nav-open');
  els.title.textContent = title;
  renderSessions();
  state.chat = new ChatView({
    agentId,
    session: s,
    onRename: setSessionName,
    onActivity: () => { state.files?.refresh(); reloadSessions().catch(() => {}); },
  });
  mount(els.main, state.chat.el);
  state.chat.open();
  if (!els.side.classList.contains('hidden')) showFiles();
  state.chat.input.focus();
}

function showFiles() {
  if (!state.sessionId) { mount(els.side, h('p', { class: 'muted' }, 'Open a session to see its files.')); return; }
  state.files = sidePane({ agentId: state.chatAgentId, session: state.chatRow, openSession: openAnySession });
  mount(els.side, state.files.el);
}

function toggleFiles() {
  els.side.classList.toggle('hidden');
  if (!els.side.classList.contains('hidden')) showFiles();
}

async function start() {
  shell();
  try {
    await reloadAgents();
  } catch (e) {
    if (e.status === 401) { clearAuth(); signIn(); return; }
    toast(e.message);
  }
}

if (loadAuth()) start(); else signIn();
