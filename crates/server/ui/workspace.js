// The side pane of a session: its workspace files, the MCP servers
// attached to it (health and tools), its skills, and its team. The MCP
// and Skills tabs also attach what the person's library holds, and
// install a configured hub's card into the library and attach it.

import { api, query } from './api.js';
import { h, mount, toast } from './dom.js';
import { schemaForm } from './forms.js';
import { workspacePanel } from './panels.js';

/** The side pane of `ctx.session` (a list row of agent `ctx.agentId`);
 * `ctx.openSession(agentId, sessionId)` opens a member's session. */
export function sidePane(ctx) {
  const sessionId = ctx.session.session.id;
  const files = workspacePanel(ctx.agentId, sessionId);
  const where = query({ agent_id: ctx.agentId, session_id: sessionId });
  const tabs = {
    files: { label: 'Files', view: () => files.el },
    mcp: { label: 'MCP', view: () => attachable(KINDS.mcp, where) },
    skills: { label: 'Skills', view: () => attachable(KINDS.skill, where) },
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

/** What differs between attaching MCP servers and skills. */
const KINDS = {
  mcp: { kind: 'mcp', ids: 'mcp_ids', noun: 'MCP server', view: (where) => mcpView(where) },
  skill: { kind: 'skill', ids: 'skill_ids', noun: 'skill', view: (where) => skillsView(where) },
};

/** A tab of `kind`: what the workspace holds, then the library's entries
 * to attach, then the hubs' catalogues to install from. */
function attachable(kind, where) {
  const current = h('div', { class: 'attached' });
  const result = h('div', { class: 'attach-result', role: 'status' });
  const library = h('div', { class: 'library' });
  const showCurrent = () => mount(current, loading(kind.view(where)));
  const showLibrary = () => mount(library, loading(libraryView(kind, where, attach)));
  /** Attaches library entries `ids` and says what happened. */
  async function attach(ids) {
    mount(result, h('p', { class: 'muted' }, 'Attaching…'));
    try {
      const out = await api('POST', `/workspace/${kind.kind}/from-library?${where}`, { [kind.ids]: ids });
      const failed = Object.entries(out.failed || {});
      mount(result,
        out.added.length ? h('p', { class: 'ok-text' }, `Attached: ${out.added.join(', ')}`) : null,
        failed.map(([, why]) => h('p', { class: 'error-text' }, `Not attached: ${why}`)));
    } catch (e) {
      mount(result, h('p', { class: 'error-text' }, `Not attached: ${e.message}`));
    }
    showCurrent();
  }
  showCurrent();
  showLibrary();
  return h('div', { class: `attachable attach-${kind.kind}` }, current, result,
    h('h4', {}, 'From your library'), library,
    h('h4', {}, 'From a hub'), loading(hubsView(kind, async (id) => { showLibrary(); await attach([id]); }, result)));
}

/** The library's entries of `kind`, each with an Attach button. */
async function libraryView(kind, where, attach) {
  const entries = await api('GET', `/${kind.kind}`);
  if (!entries.length) return h('p', { class: 'muted' }, `Your library has no ${kind.noun}; install one from a hub.`);
  return h('ul', { class: 'plain-list library-list' }, entries.map((e) => h('li', { class: 'row library-item', 'data-name': e.name },
    h('span', { class: 'grow' }, h('strong', {}, e.display_name || e.name), ' ', h('span', { class: 'muted' }, e.description || ''),
      e.enabled ? null : h('span', { class: 'badge' }, 'off')),
    h('button', { class: 'small attach-item', type: 'button', disabled: !e.enabled, onclick: () => attach([e.id]) }, 'Attach'))));
}

/** The configured hubs of `kind`, each opening to its catalogue; a card
 * is installed into the library, then `installed(id)` is called. */
async function hubsView(kind, installed, result) {
  const hubs = await api('GET', `/hub/${kind.kind}`);
  if (!hubs.length) return h('p', { class: 'muted' }, 'No hub is configured.');
  return h('div', { class: 'hubs' }, hubs.map((hub) => {
    const box = h('div', {});
    const details = h('details', { class: 'hub', 'data-hub': hub.hub_id, ontoggle: () => {
      if (details.open && !box.childElementCount) mount(box, loading(cardsView(kind, hub, installed, result)));
    } }, h('summary', {}, hub.display_name || hub.hub_id), hub.description ? h('div', { class: 'muted' }, hub.description) : null, box);
    return details;
  }));
}

async function cardsView(kind, hub, installed, result) {
  const page = await api('GET', `/hub/${kind.kind}/${encodeURIComponent(hub.hub_id)}/cards?${query({ limit: 50 })}`);
  if (!page.cards.length) return h('p', { class: 'muted' }, 'This hub lists nothing.');
  return h('ul', { class: 'plain-list card-list' }, page.cards.map((card) => {
    const schema = card.inputs_schema || {};
    const form = kind.kind === 'mcp' && Object.keys(schema.properties || {}).length ? schemaForm(schema) : null;
    const path = `/hub/${kind.kind}/${encodeURIComponent(hub.hub_id)}/cards/${encodeURIComponent(card.id || card.name)}/install`;
    const install = async (e) => {
      e.preventDefault();
      try {
        const view = kind.kind === 'mcp' ? await api('POST', path, { values: form ? form.value() : {} }) : await api('POST', path);
        await installed(view.id);
      } catch (err) {
        mount(result, h('p', { class: 'error-text' }, `Not installed: ${err.message}`));
      }
    };
    return h('li', { class: 'hub-card', 'data-card': card.id || card.name },
      h('strong', {}, card.display_name || card.name), card.description ? h('div', { class: 'muted' }, card.description) : null,
      h('form', { class: 'install-form', onsubmit: install }, form ? form.el : null,
        h('button', { class: 'small install-card', type: 'submit' }, 'Install and attach')));
  }));
}

async function mcpView(where) {
  const servers = await api('GET', `/workspace/mcp?${where}`);
  if (!servers.length) return h('p', { class: 'muted' }, 'No MCP server is attached to this workspace.');
  return h('ul', { class: 'plain-list mcp-list' }, servers.map((s) => h('li', { class: 'mcp' },
    h('div', { class: 'row' }, h('strong', { class: 'grow' }, s.name ?? s.client?.name),
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
