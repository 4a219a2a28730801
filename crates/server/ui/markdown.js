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
