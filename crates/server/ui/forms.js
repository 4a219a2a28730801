// Forms rendered from JSON schemas (the credential and agent schemas the
// API serves): strings, secrets, long texts, numbers, booleans, enums,
// nullable fields and nested objects. `value()` reads back only what the
// form holds.

import { h } from './dom.js';

/** The non-null alternative of a nullable schema, and whether it was one. */
function unwrap(schema) {
  const alts = schema.anyOf || schema.oneOf;
  if (alts) {
    const real = alts.filter((a) => a.type !== 'null');
    if (real.length === 1) return [{ ...schema, ...real[0], anyOf: undefined, oneOf: undefined }, true];
  }
  return [schema, false];
}

/** A form for `schema` filled with `values`. Options: `skip` (names left
 * out), `open` (nested objects shown expanded). */
export function schemaForm(schema, values = {}, options = {}) {
  const skip = new Set(options.skip || ['id']);
  const fields = [];
  const required = new Set(schema.required || []);
  const el = h('div', { class: 'schema-form' });
  for (const [name, raw] of Object.entries(schema.properties || {})) {
    if (skip.has(name)) continue;
    const field = makeField(name, raw, values?.[name], required.has(name), options);
    fields.push(field);
    if (field.el) el.append(field.el);
  }
  return {
    el,
    value() {
      const out = {};
      for (const f of fields) {
        const v = f.value();
        if (v !== undefined) out[f.name] = v;
      }
      return out;
    },
  };
}

function makeField(name, raw, current, required, options) {
  const [schema, nullable] = unwrap(raw);
  const title = schema.title || name;
  const id = `f-${Math.random().toString(36).slice(2)}`;
  const help = schema.description ? h('small', { class: 'help' }, schema.description) : null;
  if ('const' in schema) {
    return { name, el: null, value: () => schema.const };
  }
  if (schema.type === 'object' && schema.properties) {
    const inner = schemaForm(schema, current || {}, { ...options, skip: [] });
    const el = h('details', { class: 'group', open: options.open },
      h('summary', {}, title), help, inner.el);
    return { name, el, value: () => inner.value() };
  }
  let input;
  let read;
  const start = current ?? schema.default;
  if (schema.enum) {
    input = h('select', { id, name },
      nullable || !required ? h('option', { value: '' }, '—') : null,
      schema.enum.map((v) => h('option', { value: String(v) }, String(v))));
    if (start !== undefined && start !== null) input.value = String(start);
    read = () => (input.value === '' ? (nullable ? null : undefined) : input.value);
  } else if (schema.type === 'boolean') {
    input = h('input', { id, name, type: 'checkbox', checked: Boolean(start) });
    read = () => input.checked;
  } else if (schema.type === 'integer' || schema.type === 'number') {
    input = h('input', { id, name, type: 'number', step: schema.type === 'integer' ? '1' : 'any', value: start ?? '' });
    read = () => {
      if (input.value === '') return nullable ? null : undefined;
      return schema.type === 'integer' ? Number.parseInt(input.value, 10) : Number(input.value);
    };
  } else if (schema.format === 'textarea') {
    input = h('textarea', { id, name, rows: 4 });
    input.value = start ?? '';
    read = () => (input.value === '' && nullable ? null : input.value);
  } else if (schema.type === 'string' || !schema.type) {
    const secret = schema.format === 'password' || schema.writeOnly;
    input = h('input', {
      id, name, type: secret ? 'password' : 'text', autocomplete: secret ? 'new-password' : 'off',
      value: secret ? '' : (start ?? ''), placeholder: secret && current ? 'unchanged' : '',
    });
    read = () => {
      if (input.value === '') {
        if (secret && current) return undefined;
        if (nullable) return null;
        return required ? '' : undefined;
      }
      return input.value;
    };
  } else {
    // Arrays and free-form values: JSON.
    input = h('textarea', { id, name, rows: 3, class: 'mono' });
    input.value = start === undefined ? '' : JSON.stringify(start, null, 2);
    read = () => (input.value.trim() === '' ? undefined : JSON.parse(input.value));
  }
  if (required && schema.type !== 'boolean') input.required = !(schema.writeOnly && current);
  const label = h('label', { for: id }, title, required ? h('span', { class: 'req' }, ' *') : null);
  const el = schema.type === 'boolean'
    ? h('div', { class: 'field check' }, input, label, help)
    : h('div', { class: 'field' }, label, input, help);
  return { name, el, value: read };
}
