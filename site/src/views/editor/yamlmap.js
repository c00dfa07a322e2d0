// The editor's knowledge of a manifest: where each field is in the text, and
// which fields the API server's schema does not know. Pure logic over a
// Lezer YAML syntax tree (@lezer/yaml, the parser CodeMirror's lang-yaml
// uses), so node --test runs it without a page.
//
//   text ──parser──▶ Lezer tree ──docs()──▶ [{node, from, to}]   one per --- document
//                                              │
//        "spec.replicas" ─────fieldRange()─────┤  the key's place, for a 422's cause
//        OpenAPI v3 schema ──unknownFields()───┘  keys the schema has no property for
//
// Upstream counterparts: the API server's strict field validation
// (fieldValidation=Strict: `unknown field "spec.replica"`) and kubectl
// explain's walk through the same OpenAPI v3 documents (/openapi/v3/apis/apps/v1).

/**
 * A YAML value with its place: {type: 'map', pairs: [{key, keyFrom, keyTo,
 * value}]}, {type: 'seq', items: [node]}, {type: 'scalar', text}; all with
 * from and to (offsets in the text).
 */

function scalarText(text, n) {
  const raw = text.slice(n.from, n.to);
  if (n.name === 'QuotedLiteral') {
    if (raw.startsWith('"')) {
      try { return JSON.parse(raw); } catch { return raw.slice(1, -1); }
    }
    return raw.slice(1, -1).replace(/''/g, "'");
  }
  return raw.trim();
}

// value turns a syntax node into a value node (null for nothing).
function value(text, n) {
  if (!n) return null;
  switch (n.name) {
    case 'BlockMapping':
    case 'FlowMapping': {
      const pairs = [];
      for (let c = n.firstChild; c; c = c.nextSibling) {
        if (c.name !== 'Pair') continue;
        const k = c.getChild('Key');
        let v = null;
        for (let d = c.firstChild; d; d = d.nextSibling) {
          if (d.name !== 'Key' && d.name !== ':' && d.name !== '?' && d.name !== 'Comment' && d.name !== '⚠') { v = d; break; }
        }
        if (!k) continue;
        const keyNode = k.firstChild || k;
        pairs.push({ key: scalarText(text, keyNode), keyFrom: k.from, keyTo: k.to, value: value(text, v), from: c.from, to: c.to });
      }
      return { type: 'map', pairs, from: n.from, to: n.to };
    }
    case 'BlockSequence':
    case 'FlowSequence': {
      const items = [];
      for (let c = n.firstChild; c; c = c.nextSibling) {
        if (c.name !== 'Item') continue;
        let v = null;
        for (let d = c.firstChild; d; d = d.nextSibling) {
          if (d.name !== '-' && d.name !== 'Comment') { v = d; break; }
        }
        items.push(value(text, v) || { type: 'scalar', text: '', from: c.from, to: c.to });
      }
      return { type: 'seq', items, from: n.from, to: n.to };
    }
    case 'Tagged':
    case 'Anchored': {
      let last = null;
      for (let c = n.firstChild; c; c = c.nextSibling) last = c;
      return value(text, last);
    }
    case 'Literal':
    case 'QuotedLiteral':
      return { type: 'scalar', text: scalarText(text, n), from: n.from, to: n.to };
    case 'BlockLiteral':
      return { type: 'scalar', text: text.slice(n.from, n.to), from: n.from, to: n.to };
    default:
      return null;
  }
}

/**
 * The documents of a YAML stream: [{node, from, to}] (node null for an
 * empty one), and the syntax errors Lezer found: [{from, to}].
 * @param {import('@lezer/common').Tree} tree
 * @param {string} text
 */
export function docs(tree, text) {
  const out = [];
  const errors = [];
  tree.iterate({
    enter(n) {
      if (n.name === '⚠') errors.push({ from: n.from, to: n.to });
    },
  });
  for (let d = tree.topNode.firstChild; d; d = d.nextSibling) {
    if (d.name !== 'Document') continue;
    let v = null;
    for (let c = d.firstChild; c; c = c.nextSibling) {
      if (c.name !== 'DirectiveEnd' && c.name !== 'DocEnd' && c.name !== 'Comment' && c.name !== 'Directive') { v = c; break; }
    }
    out.push({ node: value(text, v), from: d.from, to: d.to });
  }
  return { docs: out, errors };
}

/** A map's value for key (a value node, or undefined). */
export function get(node, key) {
  if (!node || node.type !== 'map') return undefined;
  const p = node.pairs.find((x) => x.key === key);
  return p ? p.value : undefined;
}

/** A scalar field's text ('' when missing): str(doc, 'metadata', 'name'). */
export function str(node, ...keys) {
  let n = node;
  for (const k of keys) n = get(n, k);
  return n && n.type === 'scalar' ? n.text : '';
}

/**
 * The parts of a field path as the API server writes it in a 422's causes:
 * "spec.template.spec.containers[0].image" → ['spec', 'template', 'spec',
 * 'containers', 0, 'image']; "metadata.labels[app]" → [..., 'labels', 'app'].
 */
export function splitPath(path) {
  const parts = [];
  const re = /([^.[\]]+)|\[([^\]]*)\]/g;
  let m;
  while ((m = re.exec(path))) {
    if (m[1] !== undefined) parts.push(m[1]);
    else if (/^\d+$/.test(m[2])) parts.push(Number(m[2]));
    else parts.push(m[2].replace(/^["']|["']$/g, ''));
  }
  return parts;
}

/**
 * Where a field is: {from, to} of its key (or of the item, for a list
 * index), as deep as the path goes; null when even its first part is not
 * in the document. exact says whether the whole path was found.
 */
export function fieldRange(node, path) {
  const parts = typeof path === 'string' ? splitPath(path) : path;
  let cur = node;
  let best = null;
  for (const p of parts) {
    if (!cur) break;
    if (typeof p === 'number' && cur.type === 'seq') {
      const it = cur.items[p];
      if (!it) break;
      best = { from: it.from, to: it.to };
      cur = it;
      continue;
    }
    if (cur.type !== 'map') break;
    const pair = cur.pairs.find((x) => x.key === String(p));
    if (!pair) break;
    best = { from: pair.keyFrom, to: pair.keyTo };
    cur = pair.value;
  }
  if (!best) return null;
  const found = parts.length > 0 && walkEnds(node, parts);
  return { ...best, exact: found };
}

function walkEnds(node, parts) {
  let cur = node;
  for (const p of parts) {
    if (!cur) return false;
    if (typeof p === 'number') {
      if (cur.type !== 'seq' || !cur.items[p]) return false;
      cur = cur.items[p];
    } else {
      if (cur.type !== 'map') return false;
      const pair = cur.pairs.find((x) => x.key === p);
      if (!pair) return false;
      cur = pair.value;
    }
  }
  return true;
}

/** The document (of docs()) whose text holds offset pos, else the first. */
export function docAt(list, pos) {
  return list.find((d) => pos >= d.from && pos <= d.to) || list[0];
}

/**
 * The OpenAPI v3 document that describes apiVersion: 'v1' is
 * /openapi/v3/api/v1, 'apps/v1' is /openapi/v3/apis/apps/v1.
 */
export function openAPIPath(apiVersion) {
  if (!apiVersion) return '';
  return apiVersion.includes('/') ? `/openapi/v3/apis/${apiVersion}` : `/openapi/v3/api/${apiVersion}`;
}

/** The schema of kind in an OpenAPI v3 document (x-kubernetes-group-version-kind), or null. */
export function kindSchema(doc, apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const schemas = (doc && doc.components && doc.components.schemas) || {};
  for (const s of Object.values(schemas)) {
    const gvks = s['x-kubernetes-group-version-kind'] || [];
    if (gvks.some((g) => (g.group || '') === group && g.version === version && g.kind === kind)) return s;
  }
  return null;
}

// resolve follows $ref (directly or in a one-element allOf) to the schema.
function resolve(doc, s) {
  for (let i = 0; s && i < 20; i++) {
    const ref = s.$ref || (s.allOf && s.allOf.length === 1 && s.allOf[0].$ref);
    if (!ref) return s;
    const name = ref.replace('#/components/schemas/', '');
    const next = doc.components.schemas[name];
    if (!next) return s;
    // Keep the field's own description over the type's.
    s = s.description && !next.description ? { ...next, description: s.description } : next;
  }
  return s;
}

/**
 * The schema of a field: fieldSchema(doc, deploymentSchema, ['spec',
 * 'replicas']) is {type: 'integer', description ...}; null when the schema
 * does not have it.
 */
export function fieldSchema(doc, schema, parts) {
  let s = resolve(doc, schema);
  for (const p of parts) {
    if (!s) return null;
    if (typeof p === 'number') {
      s = s.items ? resolve(doc, s.items) : null;
    } else if (s.properties && s.properties[p]) {
      s = resolve(doc, s.properties[p]);
    } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      s = resolve(doc, s.additionalProperties);
    } else {
      return null;
    }
  }
  return s;
}

/**
 * The keys of node that the schema has no property for, as the API
 * server's strict field validation names them: [{path: 'spec.replica',
 * from, to}]. A map-typed field (additionalProperties: labels, nodeSelector)
 * takes any key; x-kubernetes-preserve-unknown-fields takes anything.
 */
export function unknownFields(doc, schema, node) {
  const out = [];
  const walk = (s, n, path) => {
    s = resolve(doc, s);
    if (!s || !n || s['x-kubernetes-preserve-unknown-fields']) return;
    if (n.type === 'map') {
      if (s.properties) {
        for (const pair of n.pairs) {
          const ps = s.properties[pair.key];
          const here = path ? `${path}.${pair.key}` : pair.key;
          if (!ps) {
            out.push({ path: here, from: pair.keyFrom, to: pair.keyTo });
            continue;
          }
          walk(ps, pair.value, here);
        }
      } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        for (const pair of n.pairs) walk(s.additionalProperties, pair.value, `${path}.${pair.key}`);
      }
    } else if (n.type === 'seq' && s.items) {
      n.items.forEach((it, i) => walk(s.items, it, `${path}[${i}]`));
    }
  };
  walk(schema, node, '');
  return out;
}

/**
 * The path of the key at offset pos (the field the cursor is on) and
 * whether pos is in a key: {parts, inKey, map} where map is the map node
 * holding the key (for completion), or null outside any field.
 */
export function pathAt(node, pos) {
  const parts = [];
  let cur = node;
  let result = null;
  while (cur) {
    if (cur.type === 'map') {
      const pair = cur.pairs.find((p) => pos >= p.from && pos <= Math.max(p.to, p.keyTo));
      if (!pair) return { parts, inKey: false, map: cur };
      if (pos >= pair.keyFrom && pos <= pair.keyTo) return { parts: [...parts, pair.key], inKey: true, map: cur };
      parts.push(pair.key);
      result = { parts: [...parts], inKey: false, map: null };
      if (!pair.value || pos < pair.value.from) return result;
      cur = pair.value;
    } else if (cur.type === 'seq') {
      const i = cur.items.findIndex((it) => pos >= it.from && pos <= it.to);
      if (i < 0) return result;
      parts.push(i);
      cur = cur.items[i];
    } else {
      return result;
    }
  }
  return result;
}

/**
 * The causes of a 422 as kubectl prints them ("The Deployment "web" is
 * invalid: spec.replicas: Invalid value: -1: must be ...", several joined
 * by ", " inside [ ]) or as kubectl edit writes them into its header
 * ("# * spec.replicas: Invalid value ..."), and strict validation's
 * `unknown field "spec.replica"`: [{path, message}].
 */
export function causes(output) {
  const out = [];
  const seen = new Set();
  const add = (path, message) => {
    const key = path + '\0' + message;
    if (!seen.has(key)) { seen.add(key); out.push({ path, message }); }
  };
  for (const line of output.split('\n')) {
    const header = /^#\s+\*\s+([A-Za-z0-9_.[\]\-/"']+):\s+(.*)$/.exec(line);
    if (header) { add(header[1], header[2]); continue; }
    const m = /is invalid: (.*)$/.exec(line);
    if (m) {
      let body = m[1];
      if (body.startsWith('[') && body.endsWith(']')) body = body.slice(1, -1);
      for (const part of body.split(/, (?=[a-zA-Z][A-Za-z0-9_.[\]\-/"']*: )/)) {
        const c = /^([a-zA-Z][A-Za-z0-9_.[\]\-/"']*): (.*)$/.exec(part);
        if (c) add(c[1], c[2]);
      }
    }
    const re = /unknown field "([^"]+)"/g;
    let u;
    while ((u = re.exec(line))) add(u[1], `unknown field "${u[1]}"`);
  }
  return out;
}

/** The line of a YAML syntax error kubectl reports ("yaml: line 7: ..."): [{line, message}] (1-based). */
export function yamlErrorLines(output) {
  const out = [];
  const re = /yaml: line (\d+): ([^\n]*)/g;
  let m;
  while ((m = re.exec(output))) out.push({ line: Number(m[1]), message: `yaml: line ${m[1]}: ${m[2]}` });
  return out;
}
