// Tool calls as cards: the arguments (Write and Edit as a diff, Bash as a
// command line), then the result (Bash output as a terminal block). All
// text goes in as text nodes.

import { h, mount } from './dom.js';

/** The text of a tool result's output (a string or a list of blocks). */
export function outputText(output) {
  if (output === null || output === undefined) return '';
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output.map((b) => {
      if (typeof b === 'string') return b;
      if (b.type === 'text') return b.text;
      if (b.type === 'data') return `[${b.source?.media_type || 'data'}${b.name ? ` ${b.name}` : ''}]`;
      return JSON.stringify(b);
    }).join('\n');
  }
  return JSON.stringify(output, null, 2);
}

function parseArgs(input) {
  if (typeof input !== 'string') return input || {};
  try { return JSON.parse(input || '{}'); } catch { return null; }
}

/** Lines of `a` and `b` as a diff: [sign, line] with ' ', '-', '+'. */
export function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > 250000) {
    return [...x.map((l) => ['-', l]), ...y.map((l) => ['+', l])];
  }
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push([' ', x[i]]); i += 1; j += 1; } else if (lcs[i + 1][j] >= lcs[i][j + 1]) { out.push(['-', x[i]]); i += 1; } else { out.push(['+', y[j]]); j += 1; }
  }
  while (i < n) { out.push(['-', x[i]]); i += 1; }
  while (j < m) { out.push(['+', y[j]]); j += 1; }
  return out;
}

function diffView(rows) {
  return h('pre', { class: 'diff' }, rows.map(([sign, line]) => h('span', {
    class: sign === '+' ? 'add' : sign === '-' ? 'del' : 'ctx',
  }, `${sign} ${line}\n`)));
}

/** The arguments of a call to `name`, shown for people. */
export function argsView(name, input) {
  const args = parseArgs(input);
  if (args === null) return h('pre', { class: 'args' }, String(input));
  if (name === 'Write' && typeof args.content === 'string') {
    return h('div', {}, h('div', { class: 'path' }, String(args.file_path ?? '')),
      diffView(args.content.split('\n').map((l) => ['+', l])));
  }
  if (name === 'Edit' && typeof args.old_string === 'string') {
    return h('div', {}, h('div', { class: 'path' }, String(args.file_path ?? ''), args.replace_all ? ' (all occurrences)' : ''),
      diffView(lineDiff(args.old_string, String(args.new_string ?? ''))));
  }
  if (name === 'Bash' && typeof args.command === 'string') {
    return h('pre', { class: 'terminal' }, h('span', { class: 'prompt' }, '$ '), args.command);
  }
  return h('pre', { class: 'args' }, JSON.stringify(args, null, 2));
}

/** A card for a tool call; `update` refreshes it from `{call, result}`. */
export function toolCard() {
  const title = h('span', { class: 'tool-name' });
  const badge = h('span', { class: 'badge' });
  const args = h('div', { class: 'tool-args' });
  const result = h('div', { class: 'tool-result' });
  const el = h('details', { class: 'tool', open: true },
    h('summary', {}, h('span', { class: 'tool-icon' }, '⚙'), title, badge), args, result);
  let shownInput = null;
  return {
    el,
    update({ call, result: res }) {
      const name = call?.name || res?.name || 'tool';
      title.textContent = name;
      const state = res ? (res.state || 'running') : (call?.state || 'pending');
      badge.textContent = state;
      badge.className = `badge state-${state}`;
      if (call && call.input !== shownInput) {
        shownInput = call.input;
        mount(args, argsView(name, call.input));
      }
      if (res) {
        const text = outputText(res.output);
        const cls = name === 'Bash' ? 'terminal' : 'output';
        mount(result, text ? h('pre', { class: cls }, text) : null);
      }
    },
  };
}
