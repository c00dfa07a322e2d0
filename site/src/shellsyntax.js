// When is console input complete? The terminal shows a continuation prompt
// ("> ") and the lesson player groups a run block's lines into commands by
// the same rule as core/console, which is bash's for the cases a lesson
// meets:
//
//   cat <<EOF > web.yaml      a here-document: complete once a line is just
//   kind: Pod                 its delimiter (EOF; <<-EOF also strips leading
//   EOF                       tabs; <<'EOF' and <<"EOF" quote the word)
//
//   kubectl get pods \        a backslash at the end of a line continues it
//     -o wide
//
//   echo "one                 an open quote (' or ") continues until it closes
//   two"
//
//   kubectl get pods |        a line ending in |, && or || continues with
//     grep web                the command that follows
//
// Inside single quotes nothing is special; inside double quotes a backslash
// escapes the next character; a # that starts a word begins a comment.

/**
 * Scan text and say whether it is a complete command (or several).
 * @param {string} text lines joined with "\n"
 * @returns {boolean}
 */
export function isComplete(text) {
  return scan(text).complete;
}

/**
 * Split lines (as a run block holds them) into commands: each command is
 * the lines up to the one that makes the input complete, joined with "\n".
 * A trailing incomplete group is returned as it is (the shell reports it).
 * @param {string[]} lines
 * @returns {string[]}
 */
export function groupCommands(lines) {
  const out = [];
  let cur = [];
  for (const line of lines) {
    cur.push(line);
    const text = cur.join('\n');
    if (isComplete(text)) {
      if (text.trim() !== '') out.push(text);
      cur = [];
    }
  }
  if (cur.length && cur.join('\n').trim() !== '') out.push(cur.join('\n'));
  return out;
}

function scan(text) {
  const lines = text.split('\n');
  let quote = '';          // '' | "'" | '"'
  const pending = [];      // here-document delimiters still to read: {word, strip}
  let heredoc = null;      // the one being read
  let dangling = false;    // the last line ended with |, && or ||
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li];
    if (heredoc) {
      const body = heredoc.strip ? line.replace(/^\t+/, '') : line;
      if (body === heredoc.word) heredoc = pending.shift() || null;
      continue;
    }
    let escaped = false;
    let wordStart = true;
    const startQuoted = quote !== '';
    let codeEnd = line.length; // where a comment starts
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (escaped) { escaped = false; wordStart = false; continue; }
      if (quote === "'") { if (c === "'") quote = ''; continue; }
      if (quote === '"') {
        if (c === '\\') escaped = true;
        else if (c === '"') quote = '';
        continue;
      }
      if (c === '\\') { escaped = true; continue; }
      if (c === "'" || c === '"') { quote = c; wordStart = false; continue; }
      if (c === '#' && wordStart) { codeEnd = i; break; } // a comment to the end of the line
      if (c === '<' && line.startsWith('<<<', i)) { i += 2; wordStart = false; continue; } // a here-string
      if (c === '<' && line[i + 1] === '<') {
        const m = /^<<(-?)[ \t]*(?:'([^']*)'|"([^"]*)"|([^\s;&|<>()'"]+))/.exec(line.slice(i));
        if (m) {
          pending.push({ word: m[2] ?? m[3] ?? m[4], strip: m[1] === '-' });
          i += m[0].length - 1;
          wordStart = false;
          continue;
        }
      }
      wordStart = c === ' ' || c === '\t' || c === ';' || c === '|' || c === '&' || c === '(';
    }
    if (quote) { dangling = false; continue; } // the newline is part of the quoted word
    const code = line.slice(0, codeEnd).trimEnd();
    if (startQuoted || code.trim() !== '') dangling = !startQuoted && (/\|$/.test(code) || /&&$/.test(code)) && !code.endsWith('\\|');
    if (escaped) {
      // a backslash-newline joins the next line, unless this is the last one
      if (li === lines.length - 1) return { complete: false };
      continue;
    }
    if (pending.length) heredoc = pending.shift();
  }
  return { complete: !quote && !heredoc && !dangling };
}
