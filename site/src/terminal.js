// The console: an xterm.js terminal with a small line editor (a prompt,
// cursor keys, history, Tab completion) that hands each finished line to a
// runner and streams the runner's output back into the terminal.
//
// Keys, as bash's (readline's emacs mode) are: Enter runs; ←/→, Home/End
// (Ctrl-A/Ctrl-E) move; Backspace/Delete edit; ↑/↓ walk the history;
// Ctrl-U, Ctrl-K and Ctrl-W cut before the cursor, after it, and the word
// before it, Ctrl-Y puts the cut text back; Ctrl-R searches the history
// backwards as you type (Ctrl-R again: an older match; Enter runs it, Esc or
// Ctrl-G gives up, a cursor key keeps it for editing); Ctrl-L clears the
// screen; Ctrl-C stops a running command (its context is cancelled, which
// ends `kubectl get -w` and `kubectl logs -f`) or abandons the line being
// typed. Tab completes the word at the cursor (the worker answers, as
// kubectl's bash completion does: core/console's Tab); when several words
// fit, a second Tab lists them. Keys typed while a command runs are kept and
// replayed after it ends.
//
// Input that is not complete yet (a here-document before its delimiter line,
// a trailing backslash, an open quote: shellsyntax.js, core/console's rule)
// continues on a "> " prompt, so typing or pasting a heredoc works; the
// whole text then runs as one command (a pasted Tab is a tab, not a
// completion). typeAndRun types a line visibly, as if from the keyboard,
// and runs it (the lesson player's Run buttons).
//
// Output is never wrapped mid-row: before a line wider than the terminal is
// written, the terminal widens to fit it (up to MAX_COLS) and the console
// scrolls sideways, following the cursor as you type; Ctrl-L returns to the
// view's width. The error stream is red only on error lines ("No resources
// found" is not an error: termtext.js). The history (bounded) survives a
// reload in localStorage.
//
// Terminals: a line's stdin is this terminal (core/console's Terminal), and
// the worker says how keys should go while it runs (bridge.js run's onMode).
// 'raw' is what kubectl exec -it, attach -it and run -it ask for, as upstream
// kubectl puts the learner's terminal in raw mode: every key goes to the
// container's terminal as typed (Ctrl-C and Ctrl-D too; the container's
// line discipline echoes and edits), output is written as it comes, and the
// terminal's size (and every resize) goes to the container's pty. 'cooked'
// is a command reading a line (kubectl exec -i without -t): the line is
// edited here and sent at Enter, Ctrl-D ends the input, Ctrl-C stops the
// command. Otherwise keys typed while a command runs wait for the prompt.

import './terminal.css';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { width } from './text.js';
import { addStrings } from './i18n.js';
import { isComplete } from './shellsyntax.js';
import { stderrKind, STDERR_COLOUR, measure, columns, searchBack, LineSplitter } from './termtext.js';

const PROMPT = '\x1b[1;38;5;75m$\x1b[0m ';
const CONTINUATION = '\x1b[38;5;245m>\x1b[0m ';
const PROMPT_WIDTH = 2; // both prompts
const HISTORY_MAX = 500;
const HISTORY_KEY = 'kubetab.history';
const HISTORY_BYTES = 64 * 1024; // what localStorage gets at most
// The widest the terminal grows to fit a line (kubectl get -o wide, describe's
// events, trace); longer lines wrap.
const MAX_COLS = 240;
const FONTS = 'ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, "Noto Sans Mono CJK JP", monospace';
const JA_FONTS = '"BIZ UDGothic", "MS Gothic", "Noto Sans Mono CJK JP", "Osaka-Mono"';
// Tab's list: at most this many choices are shown.
const LIST_MAX = 300;

// The history survives a reload, bounded in count and bytes.
export function loadHistory() {
  try {
    const h = JSON.parse(localStorage.getItem(HISTORY_KEY) || '[]');
    return Array.isArray(h) ? h.filter((l) => typeof l === 'string').slice(-HISTORY_MAX) : [];
  } catch {
    return [];
  }
}

export function saveHistory(history) {
  let keep = history.slice(-HISTORY_MAX);
  let json = JSON.stringify(keep);
  while (json.length > HISTORY_BYTES && keep.length > 1) {
    keep = keep.slice(Math.ceil(keep.length / 4));
    json = JSON.stringify(keep);
  }
  try { localStorage.setItem(HISTORY_KEY, json); } catch { /* storage may be full or disabled */ }
}

// The console's files live in the worker, beside the cluster; the page
// keeps a copy in localStorage (up to FILES_BYTES, the files that fit, in
// name order) after every command, and puts them back when the page loads.
const FILES_KEY = 'kubetab.files';
const FILES_BYTES = 256 * 1024;

export function keepFiles(cluster, console) {
  try {
    const saved = JSON.parse(localStorage.getItem(FILES_KEY) || '[]');
    const files = Array.isArray(saved)
      ? saved.filter((f) => f && typeof f.name === 'string' && typeof f.content === 'string') : [];
    // Before any line runs: the worker handles messages in order.
    if (files.length) cluster.putFiles(files).catch(() => {});
  } catch { /* a bad copy: start empty */ }
  let last = '';
  console.onIdle.push(async () => {
    let files;
    try { files = await cluster.dumpFiles(); } catch { return; }
    const keep = [];
    let size = 2;
    for (const f of files) {
      const n = JSON.stringify(f).length + 1;
      if (size + n > FILES_BYTES) continue;
      size += n;
      keep.push(f);
    }
    const json = JSON.stringify(keep);
    if (json === last) return;
    last = json;
    try { localStorage.setItem(FILES_KEY, json); } catch { /* full or disabled */ }
  });
}

addStrings({
  en: {
    'term.keys': 'Enter runs a line · Tab completes (twice: lists) · ↑/↓ and Ctrl-R history · Ctrl-C stops a -w or -f command · Ctrl-L clears',
  },
  ja: {
    'term.keys': 'Enter で実行 · Tab で補完（2 回で候補を一覧） · ↑/↓ と Ctrl-R で履歴 · Ctrl-C で -w / -f を止める · Ctrl-L で画面を消去',
  },
});

export class Console {
  /**
   * @param {HTMLElement} el where the terminal goes
   * @param {(line: string, onOutput: (bytes: Uint8Array|string, fd: number) => void, tty: {cols, rows, onMode}) => {done: Promise<number>, cancel: () => void, input?, resize?}} runner
   */
  constructor(el, runner, completer) {
    this.runner = runner;
    this.completer = completer; // (before) => Promise<{word, insert, candidates}>
    this.el = el;
    this.term = new Terminal({
      allowProposedApi: true, // the unicode11 addon's term.unicode
      convertEol: true,
      cursorBlink: true,
      fontFamily: FONTS,
      fontSize: 14,
      lineHeight: 1.15,
      scrollback: 5000,
      theme: {
        background: '#0f1720',
        foreground: '#d8e1ea',
        cursor: '#6cb6ff',
        selectionBackground: '#2d4b6b',
        black: '#1b2430', brightBlack: '#5c6b7a',
        blue: '#6cb6ff', brightBlue: '#8ecbff',
        green: '#7ee0a1', brightGreen: '#a4f0c0',
        red: '#ff7b72', brightRed: '#ffa198',
        yellow: '#e3c46b', brightYellow: '#f2d98c',
        cyan: '#56d4dd', brightCyan: '#8ee6ec',
        magenta: '#d2a8ff', brightMagenta: '#e2c5ff',
      },
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
    // Japanese takes two columns a character, as the kernel's wcwidth says
    // since Unicode 11; xterm's default (Unicode 6) misaligns some.
    this.term.loadAddon(new Unicode11Addon());
    this.term.unicode.activeVersion = '11';
    this.wideCols = 0; // the columns output needed beyond the view's (0: none)
    this.viewCols = 0; // the columns the view shows
    this.outState = { col: 0, gap: false, spaces: 0, ink: false }; // where output ended (termtext.measure)
    this.term.open(el);
    el.addEventListener('scroll', () => this.shadeEdge(), { passive: true });
    this.fitNow();
    new ResizeObserver(() => this.fitNow()).observe(el);

    this.line = [];       // the line being edited, as characters
    this.cursor = 0;      // index into line
    this.history = loadHistory();
    this.histIndex = this.history.length; // == history.length while editing a new line
    this.draft = [];      // the new line, kept while browsing history
    this.running = null;  // {cancel} while a command runs
    this.typeahead = '';
    this.atLineStart = true;
    this.renderedRows = 0; // rows above the cursor that the current line uses
    this.promptShown = false;
    this.pending = [];     // lines of an incomplete command, before this one
    this.autotyping = false; // typeAndRun is typing
    this.queue = Promise.resolve(); // typeAndRun calls, one after another

    this.kill = '';         // Ctrl-U/K/W's text, for Ctrl-Y
    this.lastKey = '';
    this.search = null;     // {query, index, failed} while Ctrl-R searches
    this.completing = false; // a Tab waits for the worker
    this.onIdle = [];        // called after each command ends
    this.mode = '';          // the running line's terminal mode: '' | 'raw' | 'cooked'
    this.cooked = [];        // the line being typed in cooked mode

    this.term.onData((data) => this.input(data));
    this.keepPromptVisible();
  }

  // On a phone the on-screen keyboard covers the lower part of the page
  // (the visual viewport shrinks, the layout does not): scroll the page so
  // that the cursor's row stays just above the keyboard.
  keepPromptVisible() {
    const vv = window.visualViewport;
    if (!vv) return;
    const keep = () => {
      if (!this.term.textarea || document.activeElement !== this.term.textarea) return;
      const core = this.term._core; // eslint-disable-line no-underscore-dangle
      const cellH = (core && core._renderService && core._renderService.dimensions.css.cell.height) || 17; // eslint-disable-line no-underscore-dangle
      const screen = this.term.element.querySelector('.xterm-screen') || this.el;
      const top = screen.getBoundingClientRect().top;
      const cursorBottom = top + (this.term.buffer.active.cursorY + 1) * cellH;
      const visibleBottom = vv.offsetTop + vv.height;
      if (cursorBottom > visibleBottom - 4) window.scrollBy(0, cursorBottom - visibleBottom + 12);
      else if (cursorBottom - cellH < vv.offsetTop) window.scrollBy(0, cursorBottom - cellH - vv.offsetTop - 12);
    };
    this.keepVisible = () => requestAnimationFrame(keep);
    // Whether the keyboard is up, kept from the viewport's own resizes:
    // reading vv.height or innerHeight at each keystroke forces a layout of
    // the whole page (with busy views, milliseconds per key).
    this.keyboardUp = false;
    vv.addEventListener('resize', () => {
      this.keyboardUp = vv.height < window.innerHeight - 80;
      this.keepVisible();
    });
    this.term.textarea && this.term.textarea.addEventListener('focus', () => {
      if (this.quietFocus) this.quietFocus = false; // focus({preventScroll}): the page stays
      else setTimeout(this.keepVisible, 300);
    });
  }

  cellWidth() {
    const core = this.term._core; // eslint-disable-line no-underscore-dangle
    const w = core && core._renderService && core._renderService.dimensions.css.cell.width; // eslint-disable-line no-underscore-dangle
    return w || 8.4;
  }

  // Fit the terminal to its element: as many columns as the view shows, or
  // more when output needed them (the element then scrolls sideways).
  fitNow() {
    let dims;
    try { dims = this.fit.proposeDimensions(); } catch { /* not visible yet */ }
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return;
    this.viewCols = Math.max(2, dims.cols);
    const cols = Math.max(this.viewCols, Math.min(MAX_COLS, this.wideCols));
    const rows = Math.max(1, dims.rows - (cols > this.viewCols ? 1 : 0)); // room for the sideways scrollbar
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
    this.sizeElement();
    if (this.mode === 'raw' && this.running && this.running.resize) this.running.resize(this.term.cols, this.term.rows);
  }

  sizeElement() {
    const wide = this.term.cols > this.viewCols;
    const xt = this.term.element;
    if (!xt) return;
    this.el.classList.toggle('wide', wide);
    xt.style.width = wide ? `${Math.ceil(this.term.cols * this.cellWidth()) + 16}px` : '';
    if (!wide) this.el.scrollLeft = 0;
    this.shadeEdge();
  }

  // Shade the right edge while there is more to see that way.
  shadeEdge() {
    const panel = this.el.parentElement;
    if (!panel) return;
    const more = this.el.scrollLeft + this.el.clientWidth < this.el.scrollWidth - 4;
    panel.classList.toggle('more-right', more);
  }

  /**
   * The page's language: Japanese wants a font whose Latin letters are half
   * as wide as its kana and kanji, so that a wide character fills its two
   * cells exactly (BIZ UDGothic, MS Gothic, Noto Sans Mono CJK, Osaka-Mono);
   * without one, the fallback's narrower glyphs leave small gaps.
   */
  setLang(code) {
    const family = code === 'ja' ? `${JA_FONTS}, ${FONTS}` : FONTS;
    if (this.term.options.fontFamily === family) return;
    this.term.options.fontFamily = family;
    this.fitNow();
  }

  // Widen the terminal so that a line of need columns fits unwrapped.
  widen(need) {
    if (need <= this.term.cols || this.term.cols >= MAX_COLS) return;
    const first = this.term.cols <= this.viewCols;
    this.wideCols = Math.min(MAX_COLS, need + 2);
    this.term.resize(this.wideCols, Math.max(1, this.term.rows - (first ? 1 : 0)));
    this.sizeElement();
  }

  // Back to the view's width (Ctrl-L).
  narrow() {
    this.wideCols = 0;
    this.fitNow();
  }

  // Keep the cursor in sight when the terminal is wider than its view.
  followCursor() {
    if (this.term.cols <= this.viewCols) return;
    const x = this.term.buffer.active.cursorX * this.cellWidth();
    const view = this.el.clientWidth - 24;
    if (x < this.el.scrollLeft) this.el.scrollLeft = Math.max(0, x - view / 2);
    else if (x > this.el.scrollLeft + view) this.el.scrollLeft = x - view / 2;
  }

  /** Focus the console; {preventScroll: true} leaves the page where it is. */
  focus(options) {
    const input = this.term.textarea;
    if (options && options.preventScroll && input) {
      this.quietFocus = document.activeElement !== input;
      input.focus({ preventScroll: true });
    }
    else this.term.focus();
  }

  /** Write text (not part of any command's output) above the prompt. */
  print(text) {
    const hadPrompt = this.promptShown && !this.running;
    if (hadPrompt) this.clearLine();
    this.write(text);
    if (hadPrompt) this.prompt(false);
  }

  write(data) {
    if (data.length === 0) return;
    if (typeof data === 'string' && this.mode !== 'raw') this.widen(measure(data, this.outState).table);
    this.term.write(data);
    const last = typeof data === 'string' ? data.charCodeAt(data.length - 1) : data[data.length - 1];
    this.atLineStart = last === 10;
  }

  /** Show the prompt with the current line. */
  prompt(fresh = true) {
    if (!this.atLineStart) this.write('\r\n');
    if (fresh) {
      this.line = [];
      this.cursor = 0;
      this.histIndex = this.history.length;
    }
    this.renderedRows = 0;
    this.promptShown = true;
    this.render();
  }

  // Erase the prompt and line, leaving the cursor at the start of its first row.
  clearLine() {
    const up = this.renderedRows;
    this.term.write(`${up ? `\x1b[${up}A` : ''}\r\x1b[J`);
    this.renderedRows = 0;
    this.atLineStart = true;
  }

  render() {
    const cols = this.term.cols || 80;
    this.clearLine();
    let prompt = this.pending.length ? CONTINUATION : PROMPT;
    let promptWidth = PROMPT_WIDTH;
    if (this.search) {
      const label = `(${this.search.failed ? 'failed ' : ''}reverse-i-search)\u2018${this.search.query}\u2019: `;
      prompt = `\x1b[38;5;245m${label}\x1b[0m`;
      promptWidth = width([...label]);
    }
    this.term.write(prompt + this.line.join(''));
    const end = promptWidth + width(this.line);
    const at = promptWidth + width(this.line.slice(0, this.cursor));
    // After writing `end` columns the cursor is on row floor(end/cols) (xterm
    // keeps it on the last column, not wrapped, when end is a multiple).
    const endRow = end > 0 && end % cols === 0 ? end / cols - 1 : Math.floor(end / cols);
    const atRow = Math.floor(at / cols);
    let seq = '';
    if (endRow > atRow) seq += `\x1b[${endRow - atRow}A`;
    else if (atRow > endRow) seq += '\r\n';
    seq += `\r${at % cols ? `\x1b[${at % cols}C` : ''}`;
    this.term.write(seq, () => {
      this.followCursor();
      if (this.keepVisible && this.keyboardUp) this.keepVisible();
    });
    this.renderedRows = atRow;
    this.atLineStart = false;
    this.outState = { col: at % cols, gap: false, spaces: 0, ink: true };
  }

  input(data) {
    if (this.running && this.mode === 'raw') {
      this.running.input(data);
      return;
    }
    if (this.running && this.mode === 'cooked') {
      this.cookedInput(data);
      return;
    }
    if (this.running || this.autotyping || this.completing) {
      for (const ch of data) {
        if (ch === '\x03') this.interrupt();
        else this.typeahead += ch;
      }
      return;
    }
    // Pasted text and plain typing arrive as strings; escape sequences whole.
    // A tab inside pasted text is a tab (a <<-EOF body), not a completion.
    const pasted = data.length > 1 && /[\r\n]/.test(data);
    let i = 0;
    while (i < data.length) {
      if (this.running || this.completing) {
        this.typeahead += data.slice(i);
        return;
      }
      if (data[i] === '\x1b') {
        const m = /^\x1b(\[[0-9;]*[A-Za-z~]|O[A-Za-z])/.exec(data.slice(i));
        if (m) {
          this.escape(m[0]);
          i += m[0].length;
          continue;
        }
        i++;
        if (this.search) this.endSearch(false); // Esc gives up the search
        continue;
      }
      const ch = String.fromCodePoint(data.codePointAt(i));
      i += ch.length;
      if (ch === '\r' && data[i] === '\n') i++; // a pasted CRLF is one line end
      if (ch === '\t' && pasted) {
        this.insert(['\t']);
        continue;
      }
      this.key(ch);
    }
  }

  // The worker's word on how keys go for the running line (see the top).
  setMode(mode) {
    if (!this.running || mode === this.mode) return;
    this.mode = mode;
    if (mode === 'raw') {
      this.narrow(); // the pty gets the view's size
      if (this.running.resize) this.running.resize(this.term.cols, this.term.rows);
    }
    if (mode === 'raw' || mode === 'cooked') {
      this.cooked = [];
      const typed = this.typeahead;
      this.typeahead = '';
      if (typed) this.input(typed);
    }
  }

  // A key of a line being typed for a command that reads (cooked mode).
  cookedInput(data) {
    for (const ch of data.replace(/\x1b(\[[0-9;]*[A-Za-z~]|O[A-Za-z])/g, '')) {
      if (this.mode !== 'cooked' || !this.running) { this.typeahead += ch; continue; }
      if (ch === '\r' || ch === '\n') {
        this.term.write('\r\n');
        this.running.input(`${this.cooked.join('')}\n`);
        this.cooked = [];
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.cooked.length) { this.cooked.pop(); this.term.write('\b \b'); }
      } else if (ch === '\x04') { // Ctrl-D: the line so far, or the end of input
        if (this.cooked.length) this.running.input(this.cooked.join(''));
        else this.running.input('', true);
        this.cooked = [];
      } else if (ch === '\x03') {
        this.interrupt();
      } else if (ch >= ' ' || ch === '\t') {
        this.cooked.push(ch);
        this.term.write(ch);
      }
    }
    this.atLineStart = false;
  }

  insert(chars) {
    this.line.splice(this.cursor, 0, ...chars);
    this.cursor += chars.length;
    this.render();
  }

  escape(seq) {
    if (this.search) {
      this.endSearch(true);
      if (seq === '\x1b') return;
    }
    this.lastKey = seq;
    switch (seq) {
      case '\x1b[A': case '\x1bOA': this.historyMove(-1); break;
      case '\x1b[B': case '\x1bOB': this.historyMove(1); break;
      case '\x1b[C': case '\x1bOC': if (this.cursor < this.line.length) { this.cursor++; this.render(); } break;
      case '\x1b[D': case '\x1bOD': if (this.cursor > 0) { this.cursor--; this.render(); } break;
      case '\x1b[H': case '\x1bOH': case '\x1b[1~': this.cursor = 0; this.render(); break;
      case '\x1b[F': case '\x1bOF': case '\x1b[4~': this.cursor = this.line.length; this.render(); break;
      case '\x1b[3~':
        if (this.cursor < this.line.length) { this.line.splice(this.cursor, 1); this.render(); }
        break;
      default:
    }
  }

  key(ch) {
    const prev = this.lastKey;
    this.lastKey = ch;
    if (this.search && this.searchKey(ch)) return;
    switch (ch) {
      case '\r': case '\n': this.enter(); return;
      case '\x7f': case '\b':
        if (this.cursor > 0) { this.line.splice(--this.cursor, 1); this.render(); }
        return;
      case '\x03': // Ctrl-C on a line being typed: abandon it
        this.cursor = this.line.length;
        this.render();
        this.write('^C\r\n');
        this.pending = [];
        this.prompt();
        return;
      case '\x0c': // Ctrl-L
        this.term.clear();
        this.term.write('\x1b[H\x1b[2J');
        this.narrow();
        this.renderedRows = 0;
        this.render();
        return;
      case '\x01': this.cursor = 0; this.render(); return; // Ctrl-A
      case '\x05': this.cursor = this.line.length; this.render(); return; // Ctrl-E
      case '\x02': if (this.cursor > 0) { this.cursor--; this.render(); } return; // Ctrl-B
      case '\x06': if (this.cursor < this.line.length) { this.cursor++; this.render(); } return; // Ctrl-F
      case '\x04': // Ctrl-D: delete the character under the cursor
        if (this.cursor < this.line.length) { this.line.splice(this.cursor, 1); this.render(); }
        return;
      case '\x15': // Ctrl-U: cut before the cursor
        this.kill = this.line.splice(0, this.cursor).join('');
        this.cursor = 0;
        this.render();
        return;
      case '\x0b': // Ctrl-K: cut after the cursor
        this.kill = this.line.splice(this.cursor).join('');
        this.render();
        return;
      case '\x17': { // Ctrl-W: cut the word before the cursor (up to a blank)
        let start = this.cursor;
        while (start > 0 && /\s/.test(this.line[start - 1])) start--;
        while (start > 0 && !/\s/.test(this.line[start - 1])) start--;
        this.kill = this.line.splice(start, this.cursor - start).join('');
        this.cursor = start;
        this.render();
        return;
      }
      case '\x19': // Ctrl-Y: put the cut text back
        if (this.kill) this.insert([...this.kill]);
        return;
      case '\x12': // Ctrl-R
        this.startSearch();
        return;
      case '\x07': return; // Ctrl-G outside a search
      case '\t':
        this.tab(prev === '\t');
        return;
      default:
    }
    if (ch < ' ') return;
    this.line.splice(this.cursor++, 0, ch);
    this.render();
  }

  // --- Ctrl-R: reverse incremental search ---------------------------------
  startSearch() {
    if (this.search) return;
    this.search = { query: '', index: this.history.length, failed: false, saved: this.line, savedCursor: this.cursor };
    this.render();
  }

  findSearch(from) {
    const i = searchBack(this.history, this.search.query, from);
    if (i < 0) {
      this.search.failed = true;
    } else {
      this.search.failed = false;
      this.search.index = i;
      this.line = [...this.history[i]];
      const at = this.history[i].lastIndexOf(this.search.query);
      this.cursor = [...this.history[i].slice(0, Math.max(0, at))].length;
    }
    this.render();
  }

  // A key while searching; false if the key ends the search and is then
  // handled as usual (Enter runs the match, Ctrl-A edits it).
  searchKey(ch) {
    switch (ch) {
      case '\x12': this.findSearch(this.search.failed ? this.search.index + 1 : this.search.index); return true;
      case '\x07': case '\x03': this.endSearch(false); return true;
      case '\x7f': case '\b':
        this.search.query = [...this.search.query].slice(0, -1).join('');
        this.findSearch(this.history.length);
        return true;
      default:
    }
    if (ch >= ' ') {
      this.search.query += ch;
      this.findSearch(this.search.failed ? this.history.length : this.search.index + 1);
      return true;
    }
    this.endSearch(true);
    return false;
  }

  endSearch(keep) {
    const s = this.search;
    this.search = null;
    if (!keep) {
      this.line = s.saved;
      this.cursor = s.savedCursor;
    } else {
      this.histIndex = this.history.length;
    }
    this.render();
  }

  // --- Tab ------------------------------------------------------------------
  async tab(again) {
    if (!this.completer) return;
    const before = [...this.pending, this.line.slice(0, this.cursor).join('')].join('\n');
    this.completing = true;
    let res = null;
    try {
      res = await this.completer(before);
    } catch {
      res = null;
    } finally {
      this.completing = false;
    }
    const typed = () => {
      const t = this.typeahead;
      this.typeahead = '';
      if (t) this.input(t);
    };
    if (!res) { typed(); return; }
    const word = [...(res.word || '')];
    const cands = res.candidates || [];
    // The line may not have changed while the worker answered (keys wait).
    const start = this.cursor - word.length;
    if (start < 0 || this.line.slice(start, this.cursor).join('') !== word.join('')) { typed(); return; }
    if (res.insert && res.insert !== res.word) {
      this.line.splice(start, word.length, ...res.insert);
      this.cursor = start + [...res.insert].length;
      this.render();
    } else if (cands.length > 1 && again) {
      this.listChoices(cands);
    } else {
      this.term.write('\x07'); // bash's bell: nothing (more) to add
    }
    typed();
  }

  listChoices(cands) {
    const cols = Math.max(20, this.viewCols || this.term.cols);
    const shown = cands.slice(0, LIST_MAX);
    const endAt = this.cursor;
    this.cursor = this.line.length;
    this.render();
    this.cursor = endAt;
    let text = '\r\n' + columns(shown, cols).join('\r\n');
    if (cands.length > shown.length) text += `\r\n… (${cands.length - shown.length})`;
    this.write(`${text}\r\n`);
    this.renderedRows = 0;
    this.render();
  }

  historyMove(delta) {
    const next = this.histIndex + delta;
    if (next < 0 || next > this.history.length) return;
    if (this.histIndex === this.history.length) this.draft = this.line;
    this.histIndex = next;
    this.line = next === this.history.length ? this.draft : [...this.history[next]];
    this.cursor = this.line.length;
    this.render();
  }

  enter() {
    const typed = this.line.join('');
    this.cursor = this.line.length;
    this.render();
    this.write('\r\n');
    this.promptShown = false;
    const text = [...this.pending, typed].join('\n');
    if (!isComplete(text)) {
      this.pending.push(typed);
      this.prompt();
      return null;
    }
    this.pending = [];
    if (text.trim() === '') {
      this.prompt();
      return null;
    }
    if (!text.includes('\n') && this.history[this.history.length - 1] !== text) {
      this.history.push(text);
      if (this.history.length > HISTORY_MAX) this.history.shift();
      saveHistory(this.history);
    }
    return this.exec(text);
  }

  /**
   * Type text at the prompt, visibly, as if from the keyboard, then run it
   * (text may span lines: a here-document). Waits for a running command and
   * for earlier typeAndRun calls; a line the learner was typing is dropped.
   * Resolves to the command's exit code.
   */
  typeAndRun(text) {
    const run = this.queue.then(async () => {
      while (this.running) await this.running.done.catch(() => {});
      this.autotyping = true;
      try {
        this.pending = [];
        this.line = [];
        this.cursor = 0;
        if (!this.promptShown) this.prompt();
        else this.render();
        const lines = text.split('\n');
        const total = [...text].length;
        const perFrame = Math.max(2, Math.ceil(total / 24)); // at most ~24 frames
        for (let li = 0; li < lines.length; li++) {
          const chars = [...lines[li]];
          for (let i = 0; i < chars.length; i += perFrame) {
            await new Promise((r) => requestAnimationFrame(r));
            this.line.push(...chars.slice(i, i + perFrame));
            this.cursor = this.line.length;
            this.render();
          }
          if (li < lines.length - 1) {
            // a line of a longer command: continue on the "> " prompt
            this.write('\r\n');
            this.pending.push(this.line.join(''));
            this.prompt();
          }
        }
      } finally {
        this.autotyping = false;
      }
      const done = this.enter();
      return done ? done : 0;
    });
    this.queue = run.catch(() => {});
    return run;
  }

  /** Run a line as if it had been typed (used by the page and by lessons). */
  exec(text) {
    // Decoded text, so that the terminal can widen before a wide row and
    // colour the error stream a whole line at a time.
    const out = new TextDecoder();
    const err = new TextDecoder();
    const errLines = new LineSplitter();
    let errTimer = 0;
    const writeErr = (line) => {
      const colour = STDERR_COLOUR[stderrKind(line)];
      if (!colour) { this.write(line); return; }
      const nl = line.endsWith('\n');
      this.write(`${colour}${nl ? line.slice(0, -1) : line}\x1b[0m${nl ? '\n' : ''}`);
    };
    const flushErr = () => {
      clearTimeout(errTimer);
      errTimer = 0;
      const rest = errLines.rest();
      if (rest) writeErr(rest);
    };
    const tty = { cols: this.viewCols || this.term.cols, rows: this.term.rows, onMode: (mode) => this.setMode(mode) };
    const handle = this.runner(text, (bytes, fd) => {
      if (fd === 2) {
        const s = typeof bytes === 'string' ? bytes : err.decode(bytes, { stream: true });
        for (const line of errLines.push(s)) writeErr(line);
        // a prompt without a newline ("Password: ") shows soon anyway
        if (!errTimer && errLines.partial) errTimer = setTimeout(flushErr, 100);
      } else {
        flushErr();
        this.write(typeof bytes === 'string' ? bytes : out.decode(bytes, { stream: true }));
      }
    }, tty);
    this.running = handle;
    handle.done.then(() => {
      flushErr();
      this.write(out.decode());
      this.running = null;
      this.mode = '';
      this.cooked = [];
      for (const fn of this.onIdle) fn();
      this.prompt();
      const typed = this.typeahead;
      this.typeahead = '';
      if (typed) this.input(typed);
    });
    return handle.done;
  }

  interrupt() {
    if (!this.running || this.running.interrupted) return;
    this.running.interrupted = true;
    this.write('^C');
    this.running.cancel();
  }
}
