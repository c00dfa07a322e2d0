// CodeMirror 6 for the Editor view, in one module so that the editor's
// weight sits behind one import. CodeMirror keeps an immutable EditorState
// changed by transactions and an EditorView that draws it (STYLE.md's
// "state apart from the view"); each file tab is one EditorState.

import { EditorState, StateEffect } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, hoverTooltip } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { syntaxTree, ensureSyntaxTree, syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching } from '@codemirror/language';
import { yaml } from '@codemirror/lang-yaml';
import { linter, lintGutter, forceLinting, forEachDiagnostic } from '@codemirror/lint';
import { autocompletion, completionKeymap } from '@codemirror/autocomplete';

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '13px', backgroundColor: 'var(--panel)' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--dim)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { backgroundColor: 'rgba(50, 108, 229, 0.06)' },
  '.cm-activeLineGutter': { backgroundColor: 'rgba(50, 108, 229, 0.12)' },
  '.cm-tooltip': { maxWidth: 'min(420px, 90vw)' },
  '.cm-tooltip-lint': { whiteSpace: 'pre-wrap' },
});

/**
 * A new file's state. opts: lint(view) → diagnostics, complete(context),
 * hover(view, pos), onChange(), keys: {save(), apply()}.
 */
export function state(text, opts) {
  return EditorState.create({
    doc: text,
    extensions: [
      lineNumbers(),
      highlightActiveLineGutter(),
      history(),
      drawSelection(),
      indentOnInput(),
      bracketMatching(),
      highlightActiveLine(),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      EditorState.tabSize.of(2),
      yaml(),
      linter(opts.lint, { delay: 300, needsRefresh: (u) => u.transactions.some((tr) => tr.effects.some((e) => e.is(refreshLint))) }),
      lintGutter(),
      autocompletion({ override: [opts.complete] }),
      hoverTooltip(opts.hover, { hideOnChange: true }),
      keymap.of([
        { key: 'Mod-s', run: opts.keys.save, preventDefault: true },
        { key: 'Mod-Enter', run: opts.keys.apply, preventDefault: true },
        ...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab,
      ]),
      EditorView.updateListener.of((u) => { if (u.docChanged) opts.onChange(); }),
      EditorView.lineWrapping,
      theme,
    ],
  });
}

/** The view, drawn into host. */
export function view(host) {
  return new EditorView({ parent: host });
}

/** The whole syntax tree of state (parsing to the end if needed, up to 200 ms). */
export function tree(st) {
  return ensureSyntaxTree(st, st.doc.length, 200) || syntaxTree(st);
}

// refreshLint asks the linter to run again without a change to the text
// (the server answered, or a schema arrived): forceLinting alone only
// hurries a pending run.
const refreshLint = StateEffect.define();

/** Lint again now (after the server answered). */
export function relint(v) {
  v.dispatch({ effects: refreshLint.of(null) });
  forceLinting(v);
}

/** The current diagnostics: [{line, from, to, severity, message}] (tests read them). */
export function diagnostics(st) {
  const out = [];
  forEachDiagnostic(st, (d, from, to) => out.push({ line: st.doc.lineAt(from).number, from, to, severity: d.severity, message: d.message }));
  return out;
}
