// The console's text rules, without the terminal: which of a command's
// error-stream lines are errors (red) and which are not ("No resources
// found"), how wide output lines are (so that the terminal can widen before
// a table wraps), and how Tab's choices are laid out in columns.

import { charWidth } from './text.js';

// kubectl writes more than errors to its error stream: "No resources found
// in default namespace.", "Warning: ...", -v's klog lines, "If you don't
// see a command prompt, try pressing enter." Only errors are red, as in a
// terminal where people tell them apart by their words:
//   error: ...                    kubectl (cmdutil.CheckErr), trace, node
//   Error from server (NotFound): ...   an API error
//   Error: unknown flag: --x      cobra
//   The Deployment "web" is invalid: ...   a 422
//   E1202 10:00:00.000000 ...     klog at error level
//   cat: x: No such file or directory   a builtin ("prog: message", bash, coreutils)
//   kubetab: syntax error ...     the shell
// Warnings are yellow; klog's info lines dim; everything else plain.
const ERROR_LINE = /^(error|Error|fatal|panic|Unable to|unable to|E\d{4} |The \S+ "[^"]*" is invalid)|^[A-Za-z0-9_./-]+: (?!$)/;
const WARNING_LINE = /^(Warning|warning|W\d{4} )/;
const INFO_LINE = /^I\d{4} /;

/** The kind of an error-stream line: 'error' | 'warning' | 'info' | 'plain'. */
export function stderrKind(line) {
  if (WARNING_LINE.test(line)) return 'warning';
  if (ERROR_LINE.test(line)) return 'error';
  if (INFO_LINE.test(line)) return 'info';
  return 'plain';
}

export const STDERR_COLOUR = {
  error: '\x1b[38;5;210m',
  warning: '\x1b[38;5;221m',
  info: '\x1b[38;5;245m',
  plain: '',
};

/**
 * Columns of the widest line of text, counting on from where the previous
 * output ended (state, updated: {col, gap, spaces, ink}). Escape sequences
 * take none, a tab goes to the next multiple of 8, \r and \n return to 0.
 * Returns {widest, table}: table is the widest of the lines that look like
 * a table's rows (two or more spaces between words: kubectl's tabwriter
 * columns, describe's events), which the terminal widens for; prose wraps.
 */
export function measure(text, state = { col: 0, gap: false, spaces: 0, ink: false }) {
  let widest = state.col;
  let table = state.gap ? state.col : 0;
  const newline = () => { state.col = 0; state.gap = false; state.spaces = 0; state.ink = false; };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x1b) {
      // CSI ... final byte, or OSC ... BEL/ST, or a two-byte escape
      const next = text[i + 1];
      if (next === '[') {
        i += 2;
        while (i < text.length && !(text.charCodeAt(i) >= 0x40 && text.charCodeAt(i) <= 0x7e)) i++;
      } else if (next === ']') {
        i += 2;
        while (i < text.length && text[i] !== '\x07' && !(text[i] === '\x1b' && text[i + 1] === '\\')) i++;
      } else {
        i++;
      }
      continue;
    }
    if (c === 10 || c === 13) { newline(); continue; }
    if (c === 9) {
      state.col = (Math.floor(state.col / 8) + 1) * 8;
      state.spaces += 2;
    } else if (c < 32) {
      continue;
    } else if (c === 32) {
      state.col++;
      state.spaces++;
    } else {
      const cp = text.codePointAt(i);
      if (cp > 0xffff) i++;
      if (state.ink && state.spaces >= 2) state.gap = true;
      state.ink = true;
      state.spaces = 0;
      state.col += charWidth(String.fromCodePoint(cp));
    }
    widest = Math.max(widest, state.col);
    if (state.gap) table = Math.max(table, state.col);
  }
  return { widest, table, col: state.col };
}

/**
 * Tab's choices in columns, as bash lists them: sorted down the columns,
 * each as wide as the longest choice plus two. Returns the lines.
 */
export function columns(words, cols) {
  if (words.length === 0) return [];
  const dw = (s) => [...s].reduce((n, ch) => n + charWidth(ch), 0);
  const w = Math.max(...words.map(dw)) + 2;
  const per = Math.max(1, Math.floor((cols + 2) / w));
  const rows = Math.ceil(words.length / per);
  const lines = [];
  for (let r = 0; r < rows; r++) {
    let line = '';
    for (let c = 0; c < per; c++) {
      const word = words[c * rows + r];
      if (word === undefined) break;
      const last = (c + 1) * rows + r >= words.length;
      line += last ? word : word + ' '.repeat(w - dw(word));
    }
    lines.push(line.trimEnd());
  }
  return lines;
}

/**
 * Reverse incremental search (Ctrl-R): the index of the newest history
 * entry before from that contains query, or -1.
 */
export function searchBack(history, query, from) {
  for (let i = Math.min(from, history.length) - 1; i >= 0; i--) {
    if (history[i].includes(query)) return i;
  }
  return -1;
}

/**
 * Splits a stream of decoded text into whole lines, keeping a partial last
 * line for the next chunk. push returns the complete lines (each with its
 * "\n"); rest() empties and returns the partial one.
 */
export class LineSplitter {
  constructor() { this.partial = ''; }

  push(text) {
    const all = this.partial + text;
    const end = all.lastIndexOf('\n');
    if (end < 0) {
      this.partial = all;
      return [];
    }
    this.partial = all.slice(end + 1);
    return all.slice(0, end + 1).split(/(?<=\n)/);
  }

  rest() {
    const p = this.partial;
    this.partial = '';
    return p;
  }
}
