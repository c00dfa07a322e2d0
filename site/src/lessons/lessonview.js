// One lesson (#/lessons/<slug>/<n>): its steps, one shown at a time with a
// step bar above, each with its prose, Run buttons, hidden solutions, hints
// revealed one at a time, manifests with an Open button, the code behind the
// step (upstream and kubetab), and a live mark that turns into ✓ when the
// step's checks hold in the worker.
//
// Test hooks (issue 9; keep them): each step element has data-step="N" and
// data-check="pending" or "pass"; Run buttons are button[data-run], the
// solution's Run button[data-solution] (shown by button[data-reveal]); Reset
// lesson is button[data-reset].
//
// The view draws a lesson value; what is shared with the player (the
// cluster's preparation, which hints and solutions are open) lives in
// ctx.state, so a language switch mounts the other language's lesson in
// place with everything kept.

import { t } from '../i18n.js';
import { groupCommands } from '../shellsyntax.js';
import { el } from './dom.js';

const UPSTREAM = 'https://github.com/kubernetes/kubernetes/tree/master/';

/**
 * @param {HTMLElement} root
 * @param {object} ctx {lesson, step, state, progress, prepare, reset, runLines, putFiles, navigate, onLang}
 * @returns {() => void} unmount
 */
export function mount(root, ctx) {
  const { lesson, state, progress } = ctx;
  const total = lesson.steps.length;
  const current = Math.min(Math.max(1, ctx.step || firstUnsolved(progress.solved(lesson.slug), total)), total);
  const stepEls = [];
  let alive = true;

  // --- header: back, title, reset, the step bar ---
  const bar = el('ol', { class: 'step-bar' });
  const resetButton = el('button', { type: 'button', class: 'reset', 'data-reset': '', title: t('lessons.reset.title') }, t('lessons.reset'));
  resetButton.addEventListener('click', () => ctx.reset());
  const prepared = el('details', { class: 'prepared' });
  const head = el('header', { class: 'lesson-head' },
    el('div', { class: 'row' },
      el('a', { href: '#/lessons', class: 'back' }, t('lessons.back')),
      resetButton),
    el('h2', {}, lesson.title),
    el('p', { class: 'meta' }, t('lessons.minutes', { n: lesson.minutes }), ' · ', t('lessons.steps', { n: total }),
      ctx.note ? el('span', { class: 'note' }, ` · ${ctx.note}`) : ''),
    bar);

  // --- the steps ---
  const steps = el('div', { class: 'steps' });
  if (lesson.intro) {
    const intro = el('div', { class: 'prose intro' });
    intro.innerHTML = lesson.intro; // HTML rendered by core/lesson from the lesson's Markdown
    intro.hidden = current !== 1;
    steps.append(intro);
  }
  steps.append(prepared);
  for (const step of lesson.steps) {
    const e = stepElement(step);
    e.hidden = step.n !== current;
    stepEls.push(e);
    steps.append(e);
  }
  const done = el('p', { class: 'lesson-done', hidden: true }, t('lessons.done'));
  steps.append(done);
  root.replaceChildren(head, steps);

  function firstUnsolved(solved, n) {
    for (let i = 1; i <= n; i++) if (!solved.has(i)) return i;
    return 1;
  }

  function stepElement(step) {
    const solved = progress.solved(lesson.slug).has(step.n);
    const mark = el('span', { class: 'mark', role: 'img' });
    const art = el('article', { class: 'step', 'data-step': step.n, 'data-check': solved ? 'pass' : 'pending' },
      el('header', {}, mark, el('h3', {}, el('span', { class: 'num' }, t('lessons.stepOf', { n: step.n, total })), step.title)));
    const hints = [];
    for (const b of step.blocks) {
      switch (b.kind) {
        case 'text': {
          const d = el('div', { class: 'prose' });
          d.innerHTML = b.html;
          art.append(d);
          break;
        }
        case 'run':
          art.append(runBlock(step, b.lines, 'run'));
          break;
        case 'solution': {
          const key = `${step.n}:${b.line}`;
          const body = runBlock(step, b.lines, 'solution');
          body.hidden = !state.solutions.has(key);
          const reveal = el('button', { type: 'button', class: 'reveal', 'data-reveal': 'solution' });
          const label = () => { reveal.textContent = body.hidden ? t('lessons.solution.show') : t('lessons.solution.hide'); };
          label();
          reveal.addEventListener('click', () => {
            body.hidden = !body.hidden;
            if (body.hidden) state.solutions.delete(key); else state.solutions.add(key);
            label();
          });
          art.append(el('div', { class: 'solution' }, reveal, body));
          break;
        }
        case 'file':
          art.append(fileBlock(b));
          break;
        case 'hint':
          hints.push(b);
          break;
        case 'code':
          art.append(el('pre', { class: 'code', 'data-lang': b.lang || '' }, b.content));
          break;
        default:
      }
    }
    if (hints.length) art.append(hintBlock(step, hints));
    if (step.sources && step.sources.length) {
      art.append(el('div', { class: 'sources' }, el('h4', {}, t('lessons.sources')),
        el('ul', {}, ...step.sources.map((s) => el('li', {},
          el('span', { class: 'where' }, s.where === 'upstream' ? t('lessons.source.upstream') : t('lessons.source.kubetab')),
          s.where === 'upstream'
            ? el('a', { href: UPSTREAM + s.path, target: '_blank', rel: 'noopener noreferrer' }, s.path)
            : el('code', {}, s.path))))));
    }
    const status = el('p', { class: 'check-status', 'aria-live': 'polite' });
    const next = step.n < total
      ? el('a', { class: 'next', href: `#/lessons/${encodeURIComponent(lesson.slug)}/${step.n + 1}` }, t('lessons.next'))
      : el('a', { class: 'next', href: '#/lessons' }, t('lessons.finish'));
    art.append(el('footer', {}, status, next));
    art.status = status;
    art.mark = mark;
    return art;
  }

  function runBlock(step, lines, kind) {
    const button = el('button', { type: 'button', class: 'run', [kind === 'run' ? 'data-run' : 'data-solution']: '' }, t('lessons.run'));
    button.addEventListener('click', async () => {
      if (button.disabled) return;
      button.disabled = true;
      button.dataset.state = 'running';
      button.textContent = t('lessons.running');
      try {
        await ctx.runLines(step, groupCommands(lines));
      } finally {
        if (alive) {
          button.disabled = false;
          button.dataset.state = 'ran';
          button.textContent = t('lessons.ranAgain');
        }
      }
    });
    // One block a command line, so that a long line wraps with a hanging
    // indent instead of looking like two commands.
    const cmds = lines.map((l) => el('span', { class: 'cmd' }, l));
    return el('div', { class: `lines ${kind}` }, el('pre', { class: 'code cmds' }, ...cmds), button);
  }

  function fileBlock(b) {
    const pre = el('pre', { class: 'code manifest', hidden: !state.openFiles.has(b.file) }, b.content);
    const open = el('button', { type: 'button', class: 'open', 'data-open-file': b.file });
    const label = () => { open.textContent = pre.hidden ? t('lessons.file.open') : t('lessons.file.close'); };
    label();
    open.addEventListener('click', () => {
      pre.hidden = !pre.hidden;
      if (pre.hidden) state.openFiles.delete(b.file); else state.openFiles.add(b.file);
      label();
    });
    return el('div', { class: 'file' },
      el('div', { class: 'row' }, el('span', { class: 'file-icon', 'aria-hidden': 'true' }), el('code', { class: 'name' }, b.file),
        el('span', { class: 'placed' }, t('lessons.file.placed', { name: b.file })), open),
      pre);
  }

  function hintBlock(step, hints) {
    const shown = () => Math.min(state.hints.get(step.n) || 0, hints.length);
    const list = el('ol', { class: 'hints' });
    const more = el('button', { type: 'button', class: 'hint-more', 'data-hint': '' });
    const draw = () => {
      const n = shown();
      list.replaceChildren(...hints.slice(0, n).map((h) => {
        const li = el('li', {}, el('strong', {}, t('lessons.hint.label')), ' ');
        const body = el('span', {});
        body.innerHTML = h.html; // rendered by core/lesson
        li.append(body);
        return li;
      }));
      more.hidden = n >= hints.length;
      more.textContent = n === 0 ? t('lessons.hint.show', { total: hints.length }) : t('lessons.hint.more', { n: n + 1, total: hints.length });
    };
    more.addEventListener('click', () => {
      state.hints.set(step.n, shown() + 1);
      draw();
    });
    draw();
    return el('div', { class: 'hint-box' }, list, more);
  }

  // --- state drawn from the player: preparation, checks, progress ---
  function drawPrepared() {
    const p = state.prepare;
    prepared.dataset.status = p ? p.status : 'none';
    prepared.hidden = !p || (p.status === 'ready' && !p.setup.length);
    if (prepared.hidden) return;
    const summary = el('summary', {}, p.status === 'preparing' ? t('lessons.preparing')
      : p.status === 'failed' ? t('lessons.prepareFailed', { error: p.error }) : t('lessons.prepared', { n: p.setup.length }));
    const body = el('div', { class: 'setup' }, ...p.setup.map((r) => el('div', { class: 'setup-line', 'data-code': r.code },
      el('pre', { class: 'code' }, `$ ${r.line}`), r.output.trim() ? el('pre', { class: 'out' }, r.output.trimEnd()) : '')));
    prepared.replaceChildren(summary, body);
  }

  function drawChecks() {
    const solved = progress.solved(lesson.slug);
    let all = true;
    for (const e of stepEls) {
      const n = Number(e.dataset.step);
      const pass = solved.has(n);
      all = all && pass;
      if (e.dataset.check !== (pass ? 'pass' : 'pending')) e.dataset.check = pass ? 'pass' : 'pending';
      e.mark.textContent = pass ? '✓' : '';
      e.mark.setAttribute('aria-label', pass ? t('lessons.check.pass') : t('lessons.check.pending'));
      e.status.textContent = pass ? t('lessons.check.pass') : state.prepare && state.prepare.status === 'preparing' ? '' : t('lessons.check.pending');
      e.status.dataset.state = pass ? 'pass' : 'pending';
    }
    for (const li of bar.children) {
      const n = Number(li.dataset.n);
      li.dataset.solved = solved.has(n) ? 'yes' : 'no';
    }
    done.hidden = !all || current !== total;
  }

  bar.replaceChildren(...lesson.steps.map((s) => el('li', { 'data-n': s.n, 'data-current': s.n === current ? 'yes' : 'no' },
    el('a', { href: `#/lessons/${encodeURIComponent(lesson.slug)}/${s.n}`, title: s.title }, String(s.n)))));

  let frame = 0;
  const redraw = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      if (!alive) return;
      drawPrepared();
      drawChecks();
    });
  };
  drawPrepared();
  drawChecks();
  const offProgress = progress.onChange(redraw);
  const offState = ctx.onState(redraw);
  ctx.opened(lesson.steps[current - 1]);
  return () => {
    alive = false;
    if (frame) cancelAnimationFrame(frame);
    offProgress();
    offState();
    root.replaceChildren();
  };
}
