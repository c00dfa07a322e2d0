// A small YAML writer, to show a stored object the way `kubectl get -o
// yaml` prints it. kubectl turns JSON into YAML with sigs.k8s.io/yaml
// (go-yaml v2 underneath), so this follows go-yaml's choices:
//
//   - map keys sorted; a list under a key is not indented further
//     ("containers:\n- name: web")
//   - a string YAML would read as another type (true, 1, 1.5, null, "",
//     a date) is double-quoted: deployment.kubernetes.io/revision: "1"
//   - a string that cannot stay plain (": ", " #", a leading indicator
//     such as - * & ! |, spaces at an end) is single-quoted
//   - a string with line breaks is a literal block (|, |- or |+)
//   - empty maps and lists are {} and []
//
// Written by hand (about 100 lines) because the page only ever writes YAML
// for display; a full YAML library would be 100 KB of bundle for that.

/** toYAML(value) is the YAML document of a JSON value, ending in "\n". */
export function toYAML(value) {
  const out = [];
  if (isMap(value)) mapLines(value, 0, out);
  else if (Array.isArray(value)) listLines(value, 0, out);
  else out.push(scalar(value, 0));
  return out.join('\n') + '\n';
}

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isEmpty = (v) => (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);
const pad = (n) => ' '.repeat(n);

function mapLines(obj, indent, out) {
  const keys = Object.keys(obj).sort();
  if (keys.length === 0) { out.push(pad(indent) + '{}'); return; }
  for (const k of keys) {
    const v = obj[k];
    const head = pad(indent) + scalar(k, indent) + ':';
    if (isMap(v) && !isEmpty(v)) { out.push(head); mapLines(v, indent + 2, out); }
    else if (Array.isArray(v) && v.length) { out.push(head); listLines(v, indent, out); }
    else out.push(head + ' ' + inline(v, indent + 2));
  }
}

function listLines(list, indent, out) {
  if (list.length === 0) { out.push(pad(indent) + '[]'); return; }
  for (const v of list) {
    if ((isMap(v) || Array.isArray(v)) && !isEmpty(v)) {
      // "- " carries the first line of the item; the rest sit under it.
      const sub = [];
      if (isMap(v)) mapLines(v, indent + 2, sub); else listLines(v, indent + 2, sub);
      out.push(pad(indent) + '- ' + sub[0].slice(indent + 2));
      for (let i = 1; i < sub.length; i++) out.push(sub[i]);
    } else {
      out.push(pad(indent) + '- ' + inline(v, indent + 2));
    }
  }
}

function inline(v, indent) {
  if (isMap(v)) return '{}';
  if (Array.isArray(v)) return '[]';
  return scalar(v, indent);
}

const reserved = new Set(['', '~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
  'y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO', 'on', 'On', 'ON', 'off', 'Off', 'OFF',
  '.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '-.inf', '-.Inf', '-.INF', '+.inf', '<<']);

/** Would a YAML 1.1 reader take this plain string for a null, bool, number or date? */
export function looksTyped(s) {
  if (reserved.has(s)) return true;
  const t = s.replace(/_/g, '');
  if (/^[-+]?(0b[01]+|0x[0-9a-fA-F]+|0o?[0-7]+|[0-9]+)$/.test(t)) return true;
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(t)) return true;
  if (/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/.test(s)) return true; // base 60: 1:20
  return /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]| +)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)? *(Z|[-+][0-9]{1,2}(:[0-9]{2})?)?)?$/.test(s);
}

function plain(s) {
  if (s !== s.trim()) return false;
  if (/^[#,[\]{}&*!|>'"%@`]/.test(s) || /^[-?:](\s|$)/.test(s)) return false;
  if (s.startsWith('---') || s.startsWith('...')) return false;
  return !(s.includes(': ') || s.includes(' #') || s.endsWith(':'));
}

// eslint-disable-next-line no-control-regex
const special = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\ufeff\u2028\u2029]/;

/** scalar writes null, a boolean, a number or a string. */
export function scalar(v, indent = 0) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  const s = String(v);
  if (s.includes('\n') && !special.test(s) && !/ \n/.test(s)) return block(s, indent);
  if (special.test(s) || s.includes('\n') || looksTyped(s)) return JSON.stringify(s);
  if (!plain(s)) return `'${s.replace(/'/g, "''")}'`;
  return s;
}

// block: "|" keeps one final line break, "|-" none, "|+" several.
function block(s, indent) {
  const m = /\n*$/.exec(s)[0].length;
  const chomp = m === 0 ? '-' : m === 1 ? '' : '+';
  const body = m <= 1 ? s.slice(0, s.length - m) : s.slice(0, -1);
  const hint = s.startsWith(' ') ? '2' : '';
  return `|${hint}${chomp}\n` + body.split('\n').map((l) => (l ? pad(indent) + l : '')).join('\n');
}
