// JSON schemas of the OpenAPI document for people: a readable tree of a
// schema (references resolved, cycles cut) and an example value to start
// a request body from.

import { h } from './dom.js';

/** The schema `ref` (`#/components/schemas/Name`) points at in `doc`. */
export function resolve(doc, schema) {
  if (!schema?.$ref) return schema || {};
  const name = schema.$ref.split('/').pop();
  return doc.components?.schemas?.[name] || {};
}

function refName(schema) {
  return schema?.$ref ? schema.$ref.split('/').pop() : null;
}

/** A short type for `schema`: `string`, `Name`, `array of X`, `a | b`. */
export function typeText(doc, schema, depth = 0) {
  if (!schema || depth > 4) return 'any';
  const name = refName(schema);
  if (name) return name;
  const alts = schema.anyOf || schema.oneOf;
  if (alts) return alts.map((a) => typeText(doc, a, depth + 1)).join(' | ');
  if ('const' in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.type === 'array') return `array of ${typeText(doc, schema.items, depth + 1)}`;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  return schema.type || (schema.properties ? 'object' : 'any');
}

/** The object schemas reachable through references, arrays and unions. */
function objectOf(doc, schema, depth) {
  const real = resolve(doc, schema);
  if (real.properties) return real;
  if (real.type === 'array' && depth < 6) return objectOf(doc, real.items, depth + 1);
  const alts = (real.anyOf || real.oneOf || []).filter((a) => a.type !== 'null');
  if (alts.length === 1 && depth < 6) return objectOf(doc, alts[0], depth + 1);
  return null;
}

/** `schema` as a tree of its properties (at most `depth` levels). */
export function schemaView(doc, schema, depth = 3, seen = new Set()) {
  const obj = objectOf(doc, schema, 0);
  const head = h('code', { class: 'schema-type' }, typeText(doc, schema));
  if (!obj || depth <= 0) return h('div', { class: 'schema' }, head);
  const name = refName(schema);
  if (name && seen.has(name)) return h('div', { class: 'schema' }, head, h('span', { class: 'muted' }, ' (see above)'));
  const inner = new Set(seen);
  if (name) inner.add(name);
  const required = new Set(obj.required || []);
  return h('div', { class: 'schema' }, head,
    h('ul', { class: 'schema-props' }, Object.entries(obj.properties).map(([prop, sub]) => h('li', {},
      h('code', { class: 'prop' }, prop), required.has(prop) ? h('span', { class: 'req' }, ' *') : null, ' ',
      objectOf(doc, sub, 0) && depth > 1
        ? schemaView(doc, sub, depth - 1, inner)
        : h('code', { class: 'schema-type' }, typeText(doc, sub)),
      sub.description ? h('div', { class: 'help' }, sub.description) : null))));
}

/** An example value of `schema`: its required fields, with defaults. */
export function example(doc, schema, depth = 0) {
  const real = resolve(doc, schema);
  if (depth > 5) return null;
  if ('default' in real) return real.default;
  if ('const' in real) return real.const;
  if (real.enum) return real.enum[0];
  const alts = real.anyOf || real.oneOf;
  if (alts) {
    const first = alts.find((a) => a.type !== 'null');
    return first ? example(doc, first, depth + 1) : null;
  }
  const type = Array.isArray(real.type) ? real.type.find((t) => t !== 'null') : real.type;
  if (real.properties || type === 'object') {
    const out = {};
    const required = new Set(real.required || []);
    for (const [prop, sub] of Object.entries(real.properties || {})) {
      if (required.has(prop)) out[prop] = example(doc, sub, depth + 1);
    }
    return out;
  }
  switch (type) {
    case 'array': return [];
    case 'string': return '';
    case 'integer': case 'number': return real.minimum ?? 0;
    case 'boolean': return false;
    default: return null;
  }
}
