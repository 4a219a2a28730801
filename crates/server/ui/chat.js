// One session's conversation: its history, then its live events.
//
// Opening reads the stored messages and subscribes to the stream after the
// page's `event_cursor`, so a reload in the middle of a reply picks up
// exactly where the history ends. Events are folded into the same message
// model the history uses (blocks keyed by id: a block seen again restarts
// instead of doubling its text). Only the newest messages are drawn at
// first; older ones as the person scrolls up to them, read a page at a
// time.

import { api, query, stream } from './api.js';
import { h, mount, toast } from './dom.js';
import { renderMarkdownInto } from './markdown.js';
import { confirmCard, externalCard } from './confirm.js';
import { toolCard } from './tools.js';

/** How many messages are drawn at a time: the newest on opening, more as
 * the person scrolls up (a long history opens without drawing it all). */
const BATCH = 24;

const uid = () => (crypto.randomUUID ? crypto.randomUUID().replaceAll('-', '') : `${Date.now()}${Math.random()}`.replace('.', ''));

export class ChatView {
  /** `ctx`: `{agentId, session (a list row), onRename(id, name), onActivity()}`. */
  constructor(ctx) {
    this.ctx = ctx;
    this.agentId = ctx.agentId;
    this.sessionId = ctx.session.session.id;
    this.messages = new Map();
    this.cards = new Map();
    this.pending = null;
    this.external = null;
    this.running = false;
    this.closed = false;
    this.attachments = [];
    this.list = h('div', { class: 'messages', 'aria-live': 'polite' });
    this.top = h('div', { class: 'history-top muted center' });
    this.older = [];
    this.olderMore = false;
    this.confirmBox = h('div', { class: 'confirm-box' });
    this.statusLine = h('div', { class: 'status-line' });
    this.input = h('textarea', {
      class: 'composer-input', rows: 2, placeholder: 'Message — Enter sends, Shift+Enter for a new line, Esc stops',
      'aria-label': 'Message', onkeydown: (e) => this.onKey(e),
    });
    this.fileInput = h('input', { type: 'file', multiple: true, class: 'hidden', onchange: () => this.addFiles() });
    this.chips = h('div', { class: 'chips' });
    this.sendBtn = h('button', { class: 'primary send', type: 'button', onclick: () => this.send() }, 'Send');
    this.stopBtn = h('button', { class: 'danger stop hidden', type: 'button', onclick: () => this.interrupt() }, 'Stop');
    this.el = h('section', { class: 'chat' },
      h('div', { class: 'scroller' }, this.list, this.confirmBox),
      h('div', { class: 'composer' }, this.statusLine, this.chips,
        h('div', { class: 'composer-row' },
          h('button', { class: 'icon attach', type: 'button', title: 'Attach files', 'aria-label': 'Attach files', onclick: () => this.fileInput.click() }, '+'),
          this.fileInput, this.input, this.stopBtn, this.sendBtn)));
    this.onGlobalKey = (e) => { if (e.key === 'Escape' && this.running && !document.querySelector('dialog[open]')) this.interrupt(); };
    document.addEventListener('keydown', this.onGlobalKey);
  }

  path(suffix) {
    return `/sessions/${encodeURIComponent(this.sessionId)}${suffix}?${query({ agent_id: this.agentId })}`;
  }

  /** Loads the history and follows the stream (again, after a drop). */
  async open() {
    this.abort?.abort();
    const controller = new AbortController();
    this.abort = controller;
    let page;
    let status;
    try {
      [page, { status }] = await Promise.all([
        api('GET', `${this.path('/messages')}&limit=200`),
        api('GET', this.path('/status')),
      ]);
    } catch (e) {
      toast(`Could not load the conversation: ${e.message}`);
      return;
    }
    if (controller.signal.aborted) return;
    this.messages.clear();
    this.cards.clear();
    this.setPending(null);
    this.setExternal(null);
    mount(this.list, this.top);
    this.older = page.messages.slice(0, Math.max(0, page.messages.length - BATCH));
    this.olderMore = page.has_more;
    for (const msg of page.messages.slice(this.older.length)) this.addMessage(msg);
    this.showTop();
    this.watchTop();
    this.setRunning(page.is_running);
    this.restoreAsk(status);
    this.scroll(true);
    // After the frame that draws the history's markdown (the benchmark reads it).
    requestAnimationFrame(() => performance.mark('oxiscope:history-drawn'));
    // A reply in progress (or parked) is not in the stored messages yet:
    // without a cursor the stream starts with what they do not hold. An
    // idle session follows exactly from the page's cursor.
    const live = page.is_running || status !== 'idle';
    const after = page.event_cursor && !live ? `&${query({ after: page.event_cursor })}` : '';
    stream(this.path('/stream') + after, (e) => this.onEvent(e), controller.signal)
      .catch((e) => { if (!controller.signal.aborted) console.warn('stream', e.message); })
      .finally(() => {
        if (!controller.signal.aborted && !this.closed) setTimeout(() => this.open(), 1000);
      });
  }

  close() {
    this.closed = true;
    this.abort?.abort();
    this.observer?.disconnect();
    document.removeEventListener('keydown', this.onGlobalKey);
  }

  /** A parked reply's calls (state `asking`, or `submitted` to run
   * outside) as the pending question, until the stream's own event
   * replaces it. */
  restoreAsk(status) {
    const last = [...this.messages.values()].reverse().find((m) => m.msg.role === 'assistant');
    const calls = (state) => last?.msg.content.filter((b) => b.type === 'tool_call' && b.state === state) || [];
    if (status === 'awaiting_permission' && !this.pending) {
      const asking = calls('asking');
      if (asking.length) this.setPending({ reply_id: last.msg.id, tool_calls: asking });
    } else if (status === 'awaiting_external_result' && !this.external) {
      const submitted = calls('submitted');
      if (submitted.length) this.setExternal({ reply_id: last.msg.id, tool_calls: submitted });
    }
  }

  // ---- the history window --------------------------------------------

  showTop() {
    this.top.textContent = this.older.length || this.olderMore ? 'Older messages load as you scroll up.' : '';
  }

  /** Draws older messages when the top of the list comes into view. */
  watchTop() {
    this.observer?.disconnect();
    const box = this.list.parentElement;
    if (!box || !('IntersectionObserver' in window)) return;
    this.observer = new IntersectionObserver((seen) => {
      if (seen.some((e) => e.isIntersecting)) this.drawOlder();
    }, { root: box, rootMargin: '600px 0px 0px 0px' });
    this.observer.observe(this.top);
  }

  async drawOlder() {
    if (this.drawing || (!this.older.length && !this.olderMore)) return;
    this.drawing = true;
    try {
      if (!this.older.length) {
        const first = [...this.messages.keys()][0];
        const page = await api('GET', `${this.path('/messages')}&${query({ limit: 200, before: first })}`);
        this.older = page.messages;
        this.olderMore = page.has_more;
      }
      const box = this.list.parentElement;
      const from = box.scrollHeight - box.scrollTop;
      const batch = this.older.splice(Math.max(0, this.older.length - BATCH));
      for (const msg of batch.reverse()) this.addMessage(msg, true);
      // Keep what the person was reading where it was.
      box.scrollTop = box.scrollHeight - from;
      this.showTop();
    } catch (e) {
      toast(`Could not load older messages: ${e.message}`);
    } finally {
      this.drawing = false;
    }
    // Still in view (a short batch): the next one.
    requestAnimationFrame(() => {
      const box = this.list.parentElement;
      if (box && this.top.getBoundingClientRect().bottom > box.getBoundingClientRect().top - 600) this.drawOlder();
    });
  }

  // ---- the message model --------------------------------------------

  /** Draws `msg` at the end of the list (at the start when `older`). */
  addMessage(msg, older = false) {
    const body = h('div', { class: 'msg-body' });
    const el = h('article', { class: `msg role-${msg.role}`, 'data-id': msg.id },
      h('div', { class: 'msg-name' }, msg.role === 'user' ? 'You' : (msg.name || msg.role)), body);
    const entry = { msg: { ...msg, content: [] }, el, body, blocks: new Map() };
    if (older) {
      this.messages = new Map([[msg.id, entry], ...this.messages]);
      this.top.after(el);
    } else {
      this.messages.set(msg.id, entry);
      this.list.append(el);
    }
    for (const block of msg.content || []) this.putBlock(entry, { ...block });
    if (msg.error) this.showError(entry, msg.error);
    return entry;
  }

  message(id, name) {
    return this.messages.get(id) || this.addMessage({ id, role: 'assistant', name, content: [] });
  }

  /** Adds `block` to `entry` (or replaces the block of the same id). */
  putBlock(entry, block) {
    if (block.type === 'tool_result') {
      const card = this.card(entry, block.id, null);
      card.result = block;
      card.view.update(card);
      return;
    }
    if (block.type === 'tool_call') {
      const card = this.card(entry, block.id, block);
      card.call = block;
      card.view.update(card);
      return;
    }
    const id = block.id || uid();
    const known = entry.blocks.get(id);
    if (known) {
      Object.assign(known.block, block);
      known.render();
      return;
    }
    const item = { block: { ...block, id }, el: null, render: () => {} };
    if (block.type === 'text') {
      item.el = h('div', { class: entry.msg.role === 'user' ? 'text plain' : 'text md' });
      item.render = () => this.renderText(entry, item);
    } else if (block.type === 'thinking') {
      const text = h('div', { class: 'thinking-text' });
      item.el = h('details', { class: 'thinking' }, h('summary', {}, 'Thinking'), text);
      item.render = () => { text.textContent = item.block.thinking || ''; };
    } else if (block.type === 'data') {
      item.el = h('div', { class: 'data' });
      item.render = () => mount(item.el, dataView(item.block));
    } else if (block.type === 'hint') {
      // Context the system added (reminders, team messages): collapsed.
      const text = h('div', { class: 'hint-text' });
      item.el = h('details', { class: 'hint muted' }, h('summary', {}, hintLabel(item.block.source)), text);
      item.render = () => { text.textContent = hintText(item.block); };
    } else {
      item.el = h('pre', { class: 'unknown' });
      item.render = () => { item.el.textContent = JSON.stringify(item.block, null, 2); };
    }
    entry.blocks.set(id, item);
    entry.msg.content.push(item.block);
    entry.body.append(item.el);
    item.render();
  }

  renderText(entry, item) {
    const text = item.block.text || '';
    if (entry.msg.role === 'user') {
      item.el.textContent = text;
      return;
    }
    // While streaming, render at most once a frame, and only the open
    // last block again (the finished ones are kept).
    if (item.frame) return;
    item.frame = requestAnimationFrame(() => {
      item.frame = null;
      item.md ||= {};
      renderMarkdownInto(item.el, item.md, item.block.text || '');
      this.scroll();
    });
  }

  card(entry, id, call) {
    let card = this.cards.get(id);
    if (!card) {
      card = { call, result: null, view: toolCard() };
      this.cards.set(id, card);
      entry.body.append(card.view.el);
      entry.msg.content.push(call || { type: 'tool_call', id });
    }
    return card;
  }

  showError(entry, error) {
    entry.body.append(h('div', { class: 'error-box' }, error.message || error.code || JSON.stringify(error)));
  }

  // ---- live events ---------------------------------------------------

  onEvent(e) {
    const reply = e.reply_id;
    switch (e.type) {
      case 'REPLY_START':
        this.message(reply, e.name);
        this.setRunning(true);
        break;
      case 'TEXT_BLOCK_START':
        this.startBlock(reply, { type: 'text', id: e.block_id, text: '' });
        break;
      case 'TEXT_BLOCK_DELTA':
        this.appendBlock(reply, e.block_id, 'text', e.delta);
        break;
      case 'TEXT_BLOCK_END':
        if (typeof e.text === 'string') this.startBlock(reply, { type: 'text', id: e.block_id, text: e.text });
        break;
      case 'THINKING_BLOCK_START':
        this.startBlock(reply, { type: 'thinking', id: e.block_id, thinking: '' });
        break;
      case 'THINKING_BLOCK_DELTA':
        this.appendBlock(reply, e.block_id, 'thinking', e.delta);
        break;
      case 'DATA_BLOCK_START':
        this.startBlock(reply, { type: 'data', id: e.block_id, name: e.name, source: { type: 'base64', media_type: e.media_type, data: '' } });
        break;
      case 'DATA_BLOCK_DELTA': {
        const item = this.messages.get(reply)?.blocks.get(e.block_id);
        if (item) {
          item.block.source = e.url ? { type: 'url', url: e.url, media_type: e.media_type }
            : { type: 'base64', media_type: e.media_type, data: (item.block.source?.data || '') + (e.data || '') };
        }
        break;
      }
      case 'DATA_BLOCK_END':
        this.messages.get(reply)?.blocks.get(e.block_id)?.render();
        break;
      case 'HINT_BLOCK':
        this.startBlock(reply, { type: 'hint', id: e.block_id, hint: e.hint });
        break;
      case 'TOOL_CALL_START':
        this.putBlock(this.message(reply), { type: 'tool_call', id: e.tool_call_id, name: e.tool_call_name, input: '', state: 'pending' });
        break;
      case 'TOOL_CALL_DELTA': {
        const card = this.cards.get(e.tool_call_id);
        if (card?.call) { card.call.input += e.delta; card.view.update(card); }
        break;
      }
      case 'TOOL_RESULT_START':
        this.putBlock(this.message(reply), { type: 'tool_result', id: e.tool_call_id, name: e.tool_call_name, output: '', state: 'running' });
        break;
      case 'TOOL_RESULT_TEXT_DELTA': {
        const card = this.cards.get(e.tool_call_id);
        if (card?.result) {
          card.result.output = (typeof card.result.output === 'string' ? card.result.output : '') + e.delta;
          card.view.update(card);
        }
        break;
      }
      case 'TOOL_RESULT_END': {
        const card = this.cards.get(e.tool_call_id);
        if (card?.result) { card.result.state = e.state; card.view.update(card); }
        break;
      }
      case 'REQUIRE_USER_CONFIRM':
        for (const call of e.tool_calls) {
          const card = this.cards.get(call.id);
          if (card?.call) { card.call.state = 'asking'; card.view.update(card); }
        }
        // Calls asked one event at a time add up to one question.
        if (this.pending?.reply_id === e.reply_id) {
          const known = new Set(this.pending.tool_calls.map((c) => c.id));
          this.setPending({ ...e, tool_calls: [...this.pending.tool_calls, ...e.tool_calls.filter((c) => !known.has(c.id))] });
        } else {
          this.setPending(e);
        }
        this.setRunning(false);
        break;
      case 'REQUIRE_EXTERNAL_EXECUTION':
        for (const call of e.tool_calls) {
          const card = this.cards.get(call.id);
          if (card?.call) { card.call.state = 'submitted'; card.view.update(card); }
        }
        this.setExternal(e);
        this.setRunning(false);
        break;
      case 'EXTERNAL_EXECUTION_RESULT':
        this.setExternal(null);
        break;
      case 'USER_CONFIRM_RESULT':
        this.setPending(null);
        break;
      case 'REPLY_END': {
        const entry = this.messages.get(reply);
        if (!entry && !this.pending) {
          // A reply that ended between the page and the subscription:
          // it is stored now, so read the page again.
          this.open();
          return;
        }
        if (entry && e.error && !entry.errorShown) { entry.errorShown = true; this.showError(entry, e.error); }
        if (entry && e.finished_reason === 'interrupted' && !entry.stopShown) {
          entry.stopShown = true;
          entry.body.append(h('div', { class: 'muted' }, 'Interrupted.'));
        }
        this.setRunning(false);
        this.ctx.onActivity?.();
        break;
      }
      case 'CUSTOM':
        if (e.name === 'session_updated' && e.value?.name) this.ctx.onRename(e.value.session_id || this.sessionId, e.value.name);
        break;
      default:
        break;
    }
    this.scroll();
  }

  startBlock(reply, block) {
    const entry = this.message(reply);
    const known = entry.blocks.get(block.id);
    if (known) { Object.assign(known.block, block); known.render(); } else this.putBlock(entry, block);
  }

  appendBlock(reply, blockId, field, delta) {
    const entry = this.message(reply);
    let item = entry.blocks.get(blockId);
    if (!item) {
      this.putBlock(entry, { type: field, id: blockId, [field]: '' });
      item = entry.blocks.get(blockId);
    }
    item.block[field] = (item.block[field] || '') + delta;
    item.render();
  }

  // ---- confirmations -------------------------------------------------

  setPending(ask) {
    this.pending = ask;
    this.showQuestion();
  }

  setExternal(ask) {
    this.external = ask;
    this.showQuestion();
  }

  /** The parked reply's question, if any: a confirmation or external calls. */
  showQuestion() {
    mount(this.confirmBox);
    if (this.pending) {
      const ask = this.pending;
      mount(this.confirmBox, confirmCard(ask, (results) => this.answer(ask, results)));
    } else if (this.external) {
      const ask = this.external;
      mount(this.confirmBox, externalCard(ask, (results) => this.sendResults(ask, results)));
    } else {
      return;
    }
    this.scroll(true);
  }

  async sendResults(ask, results) {
    try {
      await api('POST', '/chat/', {
        agent_id: this.agentId,
        session_id: this.sessionId,
        input: { type: 'EXTERNAL_EXECUTION_RESULT', reply_id: ask.reply_id, execution_results: results },
      });
      this.setExternal(null);
      this.setRunning(true);
    } catch (e) {
      toast(`The results were refused: ${e.message}`);
    }
  }

  async answer(ask, results) {
    try {
      await api('POST', '/chat/', {
        agent_id: this.agentId,
        session_id: this.sessionId,
        input: { type: 'USER_CONFIRM_RESULT', reply_id: ask.reply_id, confirm_results: results },
      });
      this.setPending(null);
      this.setRunning(true);
    } catch (e) {
      toast(`The answer was refused: ${e.message}`);
      this.setPending(ask);
    }
  }

  // ---- sending -------------------------------------------------------

  onKey(e) {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.send();
    } else if (e.key === 'Escape' && this.running) {
      e.preventDefault();
      this.interrupt();
    }
  }

  async addFiles() {
    for (const file of this.fileInput.files) {
      const data = await new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(String(reader.result).split(',')[1] || '');
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(file);
      });
      this.attachments.push({ type: 'data', name: file.name, source: { type: 'base64', media_type: file.type || 'application/octet-stream', data } });
    }
    this.fileInput.value = '';
    this.showChips();
  }

  showChips() {
    mount(this.chips, this.attachments.map((a, i) => h('span', { class: 'chip' }, a.name,
      h('button', { class: 'icon', type: 'button', 'aria-label': `Remove ${a.name}`, onclick: () => { this.attachments.splice(i, 1); this.showChips(); } }, '×'))));
  }

  async send() {
    const text = this.input.value.trim();
    if (!text && !this.attachments.length) return;
    if (this.running || this.pending || this.external) { toast('Wait for the reply (or stop it) first.', 'info'); return; }
    const content = [];
    if (text) content.push({ type: 'text', text, id: uid() });
    content.push(...this.attachments);
    const msg = { id: uid(), name: 'user', role: 'user', content };
    this.input.value = '';
    this.attachments = [];
    this.showChips();
    this.addMessage(msg);
    this.scroll(true);
    this.setRunning(true);
    try {
      await api('POST', '/chat/', { agent_id: this.agentId, session_id: this.sessionId, input: msg });
    } catch (e) {
      this.setRunning(false);
      this.messages.get(msg.id)?.el.classList.add('failed');
      toast(`Not sent: ${e.message}`);
    }
  }

  async interrupt() {
    try {
      await api('POST', this.path('/interrupt'));
    } catch (e) {
      toast(`Could not stop: ${e.message}`);
    }
  }

  setRunning(running) {
    this.running = running;
    this.stopBtn.classList.toggle('hidden', !running);
    this.sendBtn.disabled = running;
    this.statusLine.textContent = running ? 'Working… (Esc stops)' : '';
    this.el.classList.toggle('running', running);
  }

  scroll(force = false) {
    const box = this.list.parentElement;
    if (!box) return;
    const near = box.scrollHeight - box.scrollTop - box.clientHeight < 160;
    if (force || near) box.scrollTop = box.scrollHeight;
  }
}

/** A hint's source (a name, or JSON with a `label`) as a short title. */
function hintLabel(source) {
  if (!source) return 'System note';
  let label = source;
  try {
    const parsed = JSON.parse(source);
    if (parsed && typeof parsed === 'object') label = [parsed.label, parsed.sublabel].filter(Boolean).join(' · ') || 'System';
  } catch { /* a plain name */ }
  return `Note: ${String(label).slice(0, 60)}`;
}

function hintText(block) {
  const hint = block.hint;
  if (typeof hint === 'string') return hint;
  if (Array.isArray(hint)) return hint.map((b) => b.text || '').join('\n');
  return '';
}

function dataView(block) {
  const src = block.source || {};
  const type = src.media_type || '';
  const name = block.name || type || 'file';
  if (type.startsWith('image/') && type !== 'image/svg+xml') {
    const url = src.type === 'url' ? src.url : src.data ? `data:${type};base64,${src.data}` : '';
    if (url) return h('img', { src: url, alt: name, class: 'attachment' });
  }
  return h('span', { class: 'chip' }, `📎 ${name}`);
}
