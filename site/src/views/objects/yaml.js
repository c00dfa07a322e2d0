// A small YAML writer for showing API objects the way `kubectl get -o yaml`
// prints them. kubectl turns the object's JSON into YAML with
// sigs.k8s.io/yaml, which goes through go-yaml v2; so do the same things:
//
//   - map keys sorted (digit runs compared as numbers: a2 before a10)
//   - a list under a key is not indented further ("containers:\n- name: x")
//   - a string that YAML would read as something else (true, 1, null, a
//     timestamp, "") is double-quoted: deployment.kubernetes.io/revision: "1"
//   - a string that cannot be plain (": ", " #", a leading indicator such as
//     "*" or "-", spaces at either end) is single-quoted
//   - a string with line breaks is a literal block: |, |- or |+
//   - empty maps and lists are {} and []
//
// This is only a writer for display; the page never parses YAML with it.

/** toYAML(value) is the YAML document for a JSON value, ending in a newline. */
export function toYAML(value) {
  const out = [];
  if (isMap(value)) writeMap(value, 0, out);
  else if (Array.isArray(value)) writeList(value, 0, out);
  else out.push(scalar(value, 0));
  return out.join('\n') + '\n';
}

function isMap(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const pad = (n) => ' '.repeat(n);

function writeMap(obj, indent, out) {
  const keys = Object.keys(obj).sort(compareKeys);
  if (keys.length === 0) {
    out.push(pad(indent) + '{}');
    return;
  }
  for (const k of keys) {
    const key = pad(indent) + scalar(k, indent) + ':';
    const v = obj[k];
    if (isMap(v) && Object.keys(v).length > 0) {
      out.push(key);
      writeMap(v, indent + 2, out);
    } else if (Array.isArray(v) && v.length > 0) {
      out.push(key);
      writeList(v, indent, out);
    } else {
      out.push(key + ' ' + inline(v, indent + 2));
    }
  }
}

function writeList(list, indent, out) {
  if (list.length === 0) {
    out.push(pad(indent) + '[]');
    return;
  }
  for (const v of list) {
    if (isMap(v) && Object.keys(v).length > 0) {
      // "- " then the map's first line on the same line, the rest under it.
      const sub = [];
      writeMap(v, indent + 2, sub);
      out.push(pad(indent) + '- ' + sub[0].slice(indent + 2));
      for (let i = 1; i < sub.length; i++) out.push(sub[i]);
    } else if (Array.isArray(v) && v.length > 0) {
      const sub = [];
      writeList(v, indent + 2, sub);
      out.push(pad(indent) + '- ' + sub[0].slice(indent + 2));
      for (let i = 1; i < sub.length; i++) out.push(sub[i]);
    } else {
      out.push(pad(indent) + '- ' + inline(v, indent + 2));
    }
  }
}

// inline is a value that fits after "key: " or "- ": a scalar, {} or [].
function inline(v, indent) {
  if (isMap(v)) return '{}';
  if (Array.isArray(v)) return '[]';
  return scalar(v, indent);
}

/** scalar writes a null, boolean, number or string; indent is for block strings. */
export function scalar(v, indent = 0) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return '.nan';
    if (!Number.isFinite(v)) return v > 0 ? '.inf' : '-.inf';
    return String(v);
  }
  const s = String(v);
  if (s.includes('\n') && !hasSpecial(s) && !/ \n/.test(s)) return literal(s, indent);
  if (hasSpecial(s) || s.includes('\n')) return doubleQuoted(s);
  if (readsAsNonString(s)) return doubleQuoted(s);
  if (!plainAllowed(s)) return singleQuoted(s);
  return s;
}

// Characters YAML cannot carry outside double quotes (controls, BOM, the
// unicode line separators), as libyaml's analyzer decides.
function hasSpecial(s) {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\ufeff\u2028\u2029\ud800-\udfff]/.test(s);
}

const nonStrings = new Set([
  '', '~', 'null', 'Null', 'NULL',
  'y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO',
  'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
  'on', 'On', 'ON', 'off', 'Off', 'OFF',
  '.nan', '.NaN', '.NAN',
  '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF',
  '<<',
]);

// readsAsNonString: would a YAML 1.1 reader (go-yaml v2) take this plain
// scalar for a null, a bool, a number or a timestamp?
export function readsAsNonString(s) {
  if (nonStrings.has(s)) return true;
  const plain = s.replace(/_/g, '');
  if (/^[-+]?(0b[01]+|0x[0-9a-fA-F]+|0o?[0-7]+|[0-9]+)$/.test(plain)) return true;
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(plain)) return true;
  // base 60 (sexagesimal) numbers: 1:20, 190:20:30.15
  if (/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/.test(s)) return true;
  // timestamps: 2001-12-14, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10 -5
  if (/^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ]|$)/.test(s) && isTimestamp(s)) return true;
  return false;
}

function isTimestamp(s) {
  return /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}$/.test(s)
    || /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]| +)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)? *(Z|[-+][0-9]{1,2}(:[0-9]{2})?)?$/.test(s);
}

// plainAllowed: may this one-line string be written without quotes?
function plainAllowed(s) {
  if (s !== s.trim()) return false;
  if (/^[#,[\]{}&*!|>'"%@`]/.test(s)) return false;
  if (/^[-?:](\s|$)/.test(s)) return false;
  if (s.startsWith('---') || s.startsWith('...')) return false;
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':')) return false;
  return true;
}

function singleQuoted(s) {
  return `'${s.replace(/'/g, "''")}'`;
}

function doubleQuoted(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    switch (ch) {
      case '"': out += '\\"'; break;
      case '\\': out += '\\\\'; break;
      case '\n': out += '\\n'; break;
      case '\t': out += '\\t'; break;
      case '\r': out += '\\r'; break;
      case '\0': out += '\\0'; break;
      default:
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0xfeff || c === 0x2028 || c === 0x2029) {
          out += c <= 0xff ? `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`
            : `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
        } else {
          out += ch;
        }
    }
  }
  return out + '"';
}

// literal writes a multi-line string as a block: "|" keeps one final line
// break, "|-" has none, "|+" keeps several; a first line that starts with a
// space needs the indentation given ("|2").
function literal(s, indent) {
  let chomp = '-';
  let body = s;
  if (s.endsWith('\n')) {
    const m = /\n+$/.exec(s);
    chomp = m[0].length > 1 ? '+' : '';
    body = s.slice(0, s.length - m[0].length);
    if (chomp === '+') body = s.slice(0, -1);
  }
  const hint = /^ /.test(s) ? '2' : '';
  const lines = body.split('\n').map((l) => (l === '' ? '' : pad(indent) + l));
  return `|${hint}${chomp}\n${lines.join('\n')}`;
}

/**
 * compareKeys orders map keys as go-yaml v2 does: by code point, except
 * that runs of digits compare as numbers and a non-letter sorts before a
 * letter.
 */
export function compareKeys(a, b) {
  const ar = [...a];
  const br = [...b];
  const isDigit = (c) => c >= '0' && c <= '9';
  const isLetter = (c) => /\p{L}/u.test(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]);
    const bl = isLetter(br[i]);
    if (al && bl) return ar[i] < br[i] ? -1 : 1;
    if (al !== bl) return al ? 1 : -1;
    if (isDigit(ar[i]) && isDigit(br[i])) {
      // Back up to the start of the digit run both share.
      let s = i;
      while (s > 0 && isDigit(ar[s - 1])) s--;
      let ae = i;
      while (ae < ar.length && isDigit(ar[ae])) ae++;
      let be = i;
      while (be < br.length && isDigit(br[be])) be++;
      const an = BigInt(ar.slice(s, ae).join(''));
      const bn = BigInt(br.slice(s, be).join(''));
      if (an !== bn) return an < bn ? -1 : 1;
      if (ae !== be) return ae < be ? -1 : 1;
    }
    return ar[i] < br[i] ? -1 : 1;
  }
  return ar.length - br.length;
}
