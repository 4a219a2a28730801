// Building DOM nodes without HTML strings: every string becomes a text
// node, so a hostile name renders as text. Only markdown.js produces HTML,
// and it sanitises it first.

/** An element `tag` with `attrs` (`class`, `on*` handlers as functions,
 * other attributes as strings) and `children` (nodes or strings). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      el.className = value;
    } else if (name === 'value') {
      el.value = value;
    } else if (name === 'checked') {
      el.checked = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Shows `message` briefly at the bottom of the page. */
export function toast(message, kind = 'error') {
  const box = document.getElementById('toasts');
  const item = h('div', { class: `toast ${kind}`, role: 'status' }, message);
  box.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 3000);
}

/** A modal dialog with `title` and `body`; resolves when it closes. */
export function modal(title, body, { wide = false } = {}) {
  const dialog = h('dialog', { class: wide ? 'modal wide' : 'modal' },
    h('header', {}, h('h2', {}, title),
      h('button', { class: 'icon', type: 'button', 'aria-label': 'Close', onclick: () => dialog.close() }, '×')),
    body);
  document.body.append(dialog);
  dialog.addEventListener('close', () => dialog.remove());
  dialog.showModal();
  return dialog;
}

/** A short, readable time for an ISO stamp. */
export function when(stamp) {
  if (!stamp) return '';
  const date = new Date(stamp.endsWith('Z') || stamp.includes('+') ? stamp : `${stamp}Z`);
  return Number.isNaN(date.getTime()) ? stamp : date.toLocaleString();
}

/** A byte count for people. */
export function bytes(n) {
  if (n === null || n === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}
