// Model and tool output is untrusted: markdown is rendered by marked and
// the HTML sanitised by DOMPurify before it reaches the page (no script,
// no event handler, no javascript: or other non-web URL, no form, no
// style); links open in a new tab without a referrer. Code blocks are
// highlighted after sanitising (highlight.js adds text spans only).

import { Marked } from './vendor/marked.esm.js';
import DOMPurify from './vendor/purify.es.mjs';
import { highlightAll } from './highlight.js';

const marked = new Marked({ gfm: true, breaks: false, async: false });

const SAFE_URL = /^(?:https?:|mailto:|#|\/(?!\/)|\.{0,2}\/|[^:]*$)/i;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  for (const attr of ['href', 'src', 'xlink:href', 'action']) {
    const value = node.getAttribute?.(attr);
    if (value !== null && value !== undefined && !SAFE_URL.test(value.trim())) {
      node.removeAttribute(attr);
    }
  }
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

const POLICY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style', 'srcset', 'action', 'formaction'],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/** `text` (markdown) as a sanitised DOM fragment. */
export function renderMarkdown(text) {
  let html;
  try {
    html = marked.parse(text || '');
  } catch {
    const pre = document.createElement('pre');
    pre.textContent = text;
    return pre;
  }
  const fragment = DOMPurify.sanitize(html, POLICY);
  highlightAll(fragment);
  return fragment;
}

// ---- incremental rendering -------------------------------------------
//
// A streamed reply grows at its end: its finished top-level blocks are
// rendered once and kept, and only the open last block is rendered again
// each frame. A block is finished at a blank line outside a code fence
// followed by an unindented line (which starts a new top-level block).
// Every piece goes through the same sanitiser.

const FENCE = /^\s*(`{3,}|~{3,})/;
const CLOSE = /^\s*(`{3,}|~{3,})\s*$/;
// A link reference definition: a later block may use it, so a text that
// has one is rendered whole.
const REF_DEF = /^ {0,3}\[[^\]\n]+\]:/m;

/** The offset (after `from`) where the last finished block of `text`
 * ends, or `from` when none has finished since. */
export function lastBoundary(text, from = 0) {
  let cut = from;
  let fence = null;
  let blank = false;
  for (let i = from; i < text.length;) {
    const end = text.indexOf('\n', i);
    const line = text.slice(i, end < 0 ? text.length : end);
    if (fence) {
      const m = CLOSE.exec(line);
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
    } else if (!line.trim()) {
      blank = true;
    } else {
      if (blank && /^\S/.test(line)) cut = i;
      blank = false;
      const m = FENCE.exec(line);
      if (m && end >= 0) fence = m[1];
    }
    if (end < 0) break;
    i = end + 1;
  }
  return cut;
}

/** Renders `text` into `el`, reusing what `state` (an object kept per
 * element, empty at first) says was drawn for its unchanged start. */
export function renderMarkdownInto(el, state, text) {
  if (REF_DEF.test(text)) {
    el.replaceChildren(renderMarkdown(text));
    Object.assign(state, { done: 0, doneText: '', tail: [], whole: true });
    return;
  }
  if (state.whole || !state.tail || (state.done || 0) > text.length || !text.startsWith(state.doneText || '')) {
    el.replaceChildren();
    Object.assign(state, { done: 0, doneText: '', tail: [], whole: false });
  }
  for (const node of state.tail) node.remove();
  const cut = lastBoundary(text, state.done);
  if (cut > state.done) {
    el.append(renderMarkdown(text.slice(state.done, cut)));
    state.done = cut;
    state.doneText = text.slice(0, cut);
  }
  const tail = renderMarkdown(text.slice(state.done));
  state.tail = tail instanceof DocumentFragment ? [...tail.childNodes] : [tail];
  el.append(tail);
}
