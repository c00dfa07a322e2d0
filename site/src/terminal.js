// The console: an xterm.js terminal with a small line editor (a prompt,
// cursor keys, history) that hands each finished line to a runner and
// streams the runner's output back into the terminal.
//
// Keys: Enter runs; ←/→, Home/End (Ctrl-A/Ctrl-E) move; Backspace/Delete
// edit; ↑/↓ walk the history; Ctrl-U clears the line; Ctrl-L clears the
// screen; Ctrl-C stops a running command (its context is cancelled, which ends
// `kubectl get -w` and `kubectl logs -f`) or abandons the line being typed.
// Keys typed while a command runs are kept and replayed after it ends.
//
// Input that is not complete yet (a here-document before its delimiter line,
// a trailing backslash, an open quote: shellsyntax.js, core/console's rule)
// continues on a "> " prompt, so typing or pasting a heredoc works; the
// whole text then runs as one command. typeAndRun types a line visibly, as
// if from the keyboard, and runs it (the lesson player's Run buttons).

import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { width } from './text.js';
import { isComplete } from './shellsyntax.js';

const PROMPT = '\x1b[1;38;5;75m$\x1b[0m ';
const CONTINUATION = '\x1b[38;5;245m>\x1b[0m ';
const PROMPT_WIDTH = 2; // both prompts
const HISTORY_MAX = 500;
const HISTORY_KEY = 'kubetab.history';

// The history survives a reload (the cluster does not, but the commands that
// built it are worth having at hand).
function loadHistory() {
  try {
    const h = JSON.parse(localStorage.getItem(HISTORY_KEY) || '[]');
    return Array.isArray(h) ? h.filter((l) => typeof l === 'string').slice(-HISTORY_MAX) : [];
  } catch {
    return [];
  }
}

function saveHistory(history) {
  try { localStorage.setItem(HISTORY_KEY, JSON.stringify(history.slice(-100))); } catch { /* storage may be disabled */ }
}

export class Console {
  /**
   * @param {HTMLElement} el where the terminal goes
   * @param {(line: string, onOutput: (bytes: Uint8Array|string, fd: number) => void) => {done: Promise<number>, cancel: () => void}} runner
   */
  constructor(el, runner) {
    this.runner = runner;
    this.term = new Terminal({
      convertEol: true,
      cursorBlink: true,
      fontFamily: 'ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, "Noto Sans Mono CJK JP", monospace',
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
    this.term.open(el);
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

    this.term.onData((data) => this.input(data));
  }

  fitNow() {
    try { this.fit.fit(); } catch { /* not visible yet */ }
  }

  focus() {
    this.term.focus();
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
    this.term.write((this.pending.length ? CONTINUATION : PROMPT) + this.line.join(''));
    const end = PROMPT_WIDTH + width(this.line);
    const at = PROMPT_WIDTH + width(this.line.slice(0, this.cursor));
    // After writing `end` columns the cursor is on row floor(end/cols) (xterm
    // keeps it on the last column, not wrapped, when end is a multiple).
    const endRow = end > 0 && end % cols === 0 ? end / cols - 1 : Math.floor(end / cols);
    const atRow = Math.floor(at / cols);
    let seq = '';
    if (endRow > atRow) seq += `\x1b[${endRow - atRow}A`;
    else if (atRow > endRow) seq += '\r\n';
    seq += `\r${at % cols ? `\x1b[${at % cols}C` : ''}`;
    this.term.write(seq);
    this.renderedRows = atRow;
    this.atLineStart = false;
  }

  input(data) {
    if (this.running || this.autotyping) {
      for (const ch of data) {
        if (ch === '\x03') this.interrupt();
        else this.typeahead += ch;
      }
      return;
    }
    // Pasted text and plain typing arrive as strings; escape sequences whole.
    let i = 0;
    while (i < data.length) {
      if (this.running) {
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
        continue;
      }
      const ch = String.fromCodePoint(data.codePointAt(i));
      i += ch.length;
      if (ch === '\r' && data[i] === '\n') i++; // a pasted CRLF is one line end
      this.key(ch);
    }
  }

  escape(seq) {
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
        this.renderedRows = 0;
        this.render();
        return;
      case '\x01': this.cursor = 0; this.render(); return; // Ctrl-A
      case '\x05': this.cursor = this.line.length; this.render(); return; // Ctrl-E
      case '\x15': this.line.splice(0, this.cursor); this.cursor = 0; this.render(); return; // Ctrl-U
      case '\t': ch = ' '; break;
      default:
    }
    if (ch < ' ') return;
    this.line.splice(this.cursor++, 0, ch);
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
    const handle = this.runner(text, (bytes, fd) => {
      if (fd === 2) {
        this.term.write('\x1b[38;5;210m');
        this.write(bytes);
        this.term.write('\x1b[0m');
      } else {
        this.write(bytes);
      }
    });
    this.running = handle;
    handle.done.then(() => {
      this.running = null;
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
