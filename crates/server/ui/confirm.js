// A parked reply's questions to the person: tool calls to confirm (allow
// once, always allow the suggested rule, deny; all at once when there are
// several), and tool calls to run outside the agent, whose results the
// person types in.

import { h } from './dom.js';
import { argsView } from './tools.js';

export function ruleText(rule) {
  if (typeof rule === 'string') return rule;
  const tool = rule.tool_name || rule.tool || rule.name || '';
  const content = rule.rule_content ?? rule.content ?? rule.pattern;
  return content ? `${tool}(${content})` : tool || JSON.stringify(rule);
}

/** The confirmation card of `ask` (`{reply_id, tool_calls}`); `answer`
 * gets one result per call once each is decided. */
export function confirmCard(ask, answer) {
  const answers = new Map();
  const rows = new Map();
  const decide = (call, confirmed, rules) => {
    answers.set(call.id, { confirmed, tool_call: call, ...(rules ? { rules } : {}) });
    rows.get(call.id)?.classList.add('decided');
    if (answers.size === ask.tool_calls.length) answer([...answers.values()]);
  };
  const all = (confirmed) => {
    for (const call of ask.tool_calls) if (!answers.has(call.id)) answers.set(call.id, { confirmed, tool_call: call });
    for (const row of rows.values()) row.classList.add('decided');
    answer([...answers.values()]);
  };
  for (const call of ask.tool_calls) {
    const rules = call.suggested_rules || [];
    rows.set(call.id, h('div', { class: 'confirm-call' },
      h('div', { class: 'confirm-title' }, 'Allow ', h('strong', {}, call.name), '?'),
      argsView(call.name, call.input),
      h('div', { class: 'confirm-actions' },
        h('button', { class: 'primary allow-once', type: 'button', onclick: () => decide(call, true) }, 'Allow once'),
        rules.length ? h('button', { class: 'allow-rule', type: 'button', title: rules.map(ruleText).join('\n'), onclick: () => decide(call, true, rules) },
          `Always allow ${rules.map(ruleText).join(', ')}`) : null,
        h('button', { class: 'danger deny', type: 'button', onclick: () => decide(call, false) }, 'Deny'))));
  }
  const several = ask.tool_calls.length > 1;
  return h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': 'Confirmation needed' },
    h('div', { class: 'confirm-head row' }, h('span', { class: 'grow' },
      several ? `The agent asks for your permission for ${ask.tool_calls.length} calls` : 'The agent asks for your permission'),
    several ? h('button', { class: 'primary allow-all', type: 'button', onclick: () => all(true) }, 'Allow all') : null,
    several ? h('button', { class: 'danger deny-all', type: 'button', onclick: () => all(false) }, 'Deny all') : null),
    [...rows.values()]);
}

/** The card of calls to run outside the agent (`{reply_id, tool_calls}`):
 * a result per call (its output and whether it succeeded); `submit` gets
 * the `execution_results`. */
export function externalCard(ask, submit) {
  const fields = ask.tool_calls.map((call) => {
    const output = h('textarea', { class: 'mono external-output', rows: 3, 'aria-label': `Result of ${call.name}` });
    const failed = h('input', { type: 'checkbox', class: 'external-failed' });
    return {
      call,
      el: h('div', { class: 'confirm-call external-call' },
        h('div', { class: 'confirm-title' }, 'Run ', h('strong', {}, call.name), ' and give its result'),
        argsView(call.name, call.input), output,
        h('label', { class: 'field check' }, failed, 'It failed')),
      result: () => ({ type: 'tool_result', id: call.id, name: call.name, output: output.value, state: failed.checked ? 'error' : 'success' }),
    };
  });
  return h('form', { class: 'confirm external', 'aria-label': 'External execution', onsubmit: (e) => {
    e.preventDefault();
    submit(fields.map((f) => f.result()));
  } },
  h('div', { class: 'confirm-head' }, 'These calls run outside the agent: run them, then send the results'),
  fields.map((f) => f.el),
  h('div', { class: 'confirm-actions' }, h('button', { class: 'primary send-results', type: 'submit' }, 'Send results')));
}
