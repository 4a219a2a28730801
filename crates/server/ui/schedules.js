// Schedules: a cron rule in a time zone that starts a run of an agent.
// The list (enable, disable, delete, the sessions a schedule started) and
// a new one, with its next fire times shown as the rule is typed.

import { api } from './api.js';
import { h, modal, mount, toast, when } from './dom.js';
import { inZone, nextFires } from './cron.js';
import { modelPicker } from './panels.js';

/** The fire times of `cron` in `tz` as a list (or why there are none). */
function firesView(cron, tz) {
  try {
    const times = nextFires(cron, tz, 3);
    if (!times.length) return h('span', { class: 'muted' }, 'never fires');
    return h('ul', { class: 'plain-list fires' }, times.map((t) => h('li', {}, `${inZone(t, tz)} (${tz})`)));
  } catch (e) {
    return h('span', { class: 'error-text' }, e.message);
  }
}

/** The schedules dialog. `agents` are the user's; `openSession(agentId,
 * sessionId)` opens a session a schedule started. */
export async function schedulesDialog(agents, currentAgent, openSession) {
  const body = h('div', { class: 'stack schedules' });
  const dialog = modal('Schedules', body, { wide: true });
  const agentName = (id) => agents.find((a) => a.id === id)?.data.name || id;
  const list = h('ul', { class: 'plain-list schedule-list' });
  const refresh = async () => {
    const { schedules } = await api('GET', '/schedule/');
    mount(list, schedules.length ? schedules.map((s) => scheduleRow(s)) : h('li', { class: 'muted' }, 'No schedules yet.'));
  };
  const scheduleRow = (s) => {
    const d = s.data;
    const sessions = h('div', { class: 'schedule-sessions' });
    const path = `/schedule/${encodeURIComponent(s.id)}`;
    return h('li', { class: 'schedule', 'data-schedule': s.id },
      h('div', { class: 'row' },
        h('strong', { class: 'grow' }, d.name || s.id),
        h('span', { class: `badge ${d.enabled ? 'state-success' : ''}` }, d.enabled ? 'enabled' : 'disabled'),
        h('button', { class: 'small toggle', type: 'button', onclick: async () => {
          try { await api('PATCH', path, { enabled: !d.enabled }); await refresh(); } catch (e) { toast(e.message); }
        } }, d.enabled ? 'Disable' : 'Enable'),
        h('button', { class: 'small show-sessions', type: 'button', onclick: async () => {
          try {
            const { sessions: rows } = await api('GET', `${path}/sessions`);
            mount(sessions, rows.length ? h('ul', { class: 'plain-list' }, rows.map((r) => h('li', {},
              h('a', { href: '#', onclick: (e) => { e.preventDefault(); dialog.close(); openSession(r.agent_id, r.id); } },
                r.config?.name || r.id), ' ', h('span', { class: 'muted' }, when(r.created_at)))))
              : h('p', { class: 'muted' }, 'It has started no session yet.'));
          } catch (e) { toast(e.message); }
        } }, 'Sessions'),
        h('button', { class: 'danger small delete', type: 'button', onclick: async () => {
          if (!confirm(`Delete the schedule “${d.name}”?`)) return;
          try { await api('DELETE', path); await refresh(); } catch (e) { toast(e.message); }
        } }, 'Delete')),
      h('div', { class: 'muted' }, h('code', {}, d.cron_expression), ` in ${d.timezone} · ${agentName(s.agent_id)}`,
        d.description ? ` · ${d.description}` : ''),
      d.enabled ? firesView(d.cron_expression, d.timezone) : null,
      sessions);
  };
  await refresh();
  mount(body, list, h('h3', {}, 'New schedule'), await createForm(agents, currentAgent, refresh));
  return dialog;
}

async function createForm(agents, currentAgent, onCreated) {
  const picker = await modelPicker();
  if (!picker) return h('p', { class: 'muted' }, 'Add a credential first.');
  const name = h('input', { name: 'schedule-name', required: true });
  const prompt = h('input', { name: 'schedule-description', placeholder: 'what the run is about' });
  const cron = h('input', { name: 'schedule-cron', required: true, value: '0 9 * * 1-5', class: 'mono' });
  const zones = Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : [];
  const tz = h('input', { name: 'schedule-timezone', required: true, list: 'time-zones', value: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' });
  const zoneList = h('datalist', { id: 'time-zones' }, ['UTC', ...zones].map((z) => h('option', { value: z })));
  const agent = h('select', { name: 'schedule-agent' }, agents.map((a) => h('option', { value: a.id }, a.data.name)));
  if (currentAgent) agent.value = currentAgent;
  const enabled = h('input', { type: 'checkbox', name: 'schedule-enabled', checked: true });
  const stateful = h('input', { type: 'checkbox', name: 'schedule-stateful' });
  const preview = h('div', { class: 'fires-preview' });
  const showFires = () => mount(preview, h('span', { class: 'muted' }, 'Next: '), firesView(cron.value, tz.value.trim() || 'UTC'));
  cron.addEventListener('input', showFires);
  tz.addEventListener('change', showFires);
  tz.addEventListener('input', () => { if (zones.includes(tz.value) || tz.value === 'UTC') showFires(); });
  showFires();
  return h('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    const config = picker.config();
    if (!config) { toast('Pick a model.'); return; }
    try {
      await api('POST', '/schedule/', {
        name: name.value.trim(), description: prompt.value.trim(), cron_expression: cron.value.trim(),
        timezone: tz.value.trim(), agent_id: agent.value, chat_model_config: config,
        enabled: enabled.checked, stateful: stateful.checked,
      });
      toast('Schedule saved.', 'info');
      name.value = '';
      await onCreated();
    } catch (err) { toast(err.message); }
  } },
  h('div', { class: 'field' }, h('label', {}, 'Name'), name),
  h('div', { class: 'field' }, h('label', {}, 'Description'), prompt),
  h('div', { class: 'row' },
    h('div', { class: 'field grow' }, h('label', {}, 'Cron (minute hour day month weekday)'), cron),
    h('div', { class: 'field grow' }, h('label', {}, 'Time zone'), tz, zoneList)),
  preview,
  h('div', { class: 'field' }, h('label', {}, 'Agent'), agent),
  picker.fields,
  h('div', { class: 'field check' }, enabled, h('label', {}, 'Enabled')),
  h('div', { class: 'field check' }, stateful, h('label', {}, 'Stateful (each run continues the same session)')),
  h('button', { class: 'primary', type: 'submit' }, 'Create schedule'));
}

