// The side pane of a session: its workspace files, the MCP servers
// attached to it (health and tools), its skills, and its team.

import { api, query } from './api.js';
import { h, mount, toast } from './dom.js';
import { workspacePanel } from './panels.js';

/** The side pane of `ctx.session` (a list row of agent `ctx.agentId`);
 * `ctx.openSession(agentId, sessionId)` opens a member's session. */
export function sidePane(ctx) {
  const sessionId = ctx.session.session.id;
  const files = workspacePanel(ctx.agentId, sessionId);
  const where = query({ agent_id: ctx.agentId, session_id: sessionId });
  const tabs = {
    files: { label: 'Files', view: () => files.el },
    mcp: { label: 'MCP', view: () => loading(mcpView(where)) },
    skills: { label: 'Skills', view: () => loading(skillsView(where)) },
    team: { label: 'Team', view: () => teamView(ctx) },
  };
  const content = h('div', { class: 'tab-content' });
  const bar = h('div', { class: 'tabs', role: 'tablist' });
  const show = (key) => {
    for (const b of bar.children) b.setAttribute('aria-selected', String(b.dataset.tab === key));
    mount(content, tabs[key].view());
  };
  for (const [key, tab] of Object.entries(tabs)) {
    bar.append(h('button', { type: 'button', role: 'tab', class: 'small tab', 'data-tab': key, onclick: () => show(key) }, tab.label));
  }
  show('files');
  return { el: h('div', { class: 'side' }, bar, content), refresh: files.refresh };
}

/** A box that shows `promise`'s node once it resolves. */
function loading(promise) {
  const box = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  promise.then((node) => mount(box, node), (e) => mount(box, h('p', { class: 'error-box' }, e.message)));
  return box;
}

async function mcpView(where) {
  const servers = await api('GET', `/workspace/mcp?${where}`);
  if (!servers.length) return h('p', { class: 'muted' }, 'No MCP server is attached to this workspace.');
  return h('ul', { class: 'plain-list mcp-list' }, servers.map((s) => h('li', { class: 'mcp' },
    h('div', { class: 'row' }, h('strong', { class: 'grow' }, s.client.name),
      h('span', { class: `badge ${s.is_healthy ? 'state-success' : 'state-error'}` }, s.is_healthy ? 'healthy' : 'unhealthy')),
    s.error ? h('div', { class: 'error-text' }, s.error) : null,
    h('details', {}, h('summary', {}, `${s.tools.length} tools`),
      h('ul', { class: 'tool-list' }, s.tools.map((t) => h('li', {}, h('code', {}, t.name), t.description ? ` — ${t.description}` : '')))))));
}

async function skillsView(where) {
  const skills = await api('GET', `/workspace/skill?${where}`);
  if (!skills.length) return h('p', { class: 'muted' }, 'No skills in this workspace.');
  return h('ul', { class: 'plain-list skill-list' }, skills.map((s) => h('li', { class: 'skill' },
    h('strong', {}, s.name), h('div', { class: 'muted' }, s.description))));
}

/** The roster of the session's team: the leader, then each member with
 * a link to their session. */
function teamView(ctx) {
  const team = ctx.session.team;
  if (!team) return h('p', { class: 'muted' }, 'This session is in no team.');
  const roles = new Map((team.team?.data?.members || []).map((m) => [m.agent_id, m.role]));
  const open = (agentId, sessionId) => h('button', { class: 'small open-member', type: 'button', onclick: () => {
    ctx.openSession(agentId, sessionId).catch((e) => toast(e.message));
  } }, 'Open');
  const leader = team.leader_agent;
  return h('div', { class: 'team' },
    h('h3', {}, team.team?.data?.name || 'Team'),
    h('ul', { class: 'plain-list roster' },
      h('li', { class: 'row' }, h('span', { class: 'grow' }, h('strong', {}, leader?.data?.name || 'leader'), ' ', h('span', { class: 'muted' }, 'leader')),
        team.team?.session_id && team.team.session_id !== ctx.session.session.id ? open(leader?.id, team.team.session_id) : null),
      (team.members || []).map((m) => h('li', { class: 'row member', 'data-member': m.agent?.data?.name || '' },
        h('span', { class: 'grow' }, m.agent?.data?.name || m.agent?.id, ' ', h('span', { class: 'muted' }, roles.get(m.agent?.id) || 'member')),
        m.session_id && m.session_id !== ctx.session.session.id ? open(m.agent?.id, m.session_id) : h('span', { class: 'muted' }, 'this session')))));
}
