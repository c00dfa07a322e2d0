// The lesson player: the panel beside the console. It routes the page's
// hash to a view, and does what the views ask of the cluster:
//
//   #/lessons               the course index (indexview.js)
//   #/lessons/<slug>        a lesson at its first unsolved step (lessonview.js)
//   #/lessons/<slug>/<n>    a lesson at step n
//
// Opening a lesson prepares the cluster for it (a fresh cluster with the
// lesson's nodes, then its setup lines, in the worker), unless it is already
// prepared for that lesson; a step's manifests go into the console's files
// when the step opens; and the checks of the first unsolved step are
// evaluated in the worker as the cluster changes (bridge.js watchChecks), a
// step turning solved when all of its checks hold, then the next step's. Solved steps are kept in localStorage
// (progress.js); the language switch mounts the same lesson in the other
// language in place, keeping progress and what was opened.

import { t, lang, onLang } from '../i18n.js';
import { Catalog } from './catalog.js';
import { Progress } from './progress.js';
import * as indexView from './indexview.js';
import * as lessonView from './lessonview.js';

/**
 * @param {HTMLElement} root the lesson panel's body
 * @param {{cluster, term, commandsRun: () => number}} ctx
 * @returns {{unmount: () => void, catalog, progress}}
 */
export function mount(root, ctx) {
  const { cluster, term } = ctx;
  let storage = null;
  try { storage = window.localStorage; } catch { /* disabled */ }
  const catalog = new Catalog((url) => fetch(url));
  const progress = new Progress(storage);
  const states = new Map(); // slug → the lesson's view state, kept across languages
  const stateListeners = new Set();
  let preparedFor = null;   // the slug the cluster is prepared for
  let preparing = Promise.resolve();
  let stopChecks = () => {};
  let watched = null;       // {slug, lesson} whose checks run
  let unmountView = () => {};
  let routeSeq = 0;
  let current = null;       // the lesson open in the panel, if any

  const stateOf = (slug) => {
    if (!states.has(slug)) states.set(slug, { prepare: null, hints: new Map(), solutions: new Set(), openFiles: new Set() });
    return states.get(slug);
  };
  const changed = () => { for (const fn of stateListeners) fn(); };
  const onState = (fn) => { stateListeners.add(fn); return () => stateListeners.delete(fn); };

  function parseHash() {
    const m = /^#\/lessons(?:\/([^/]+)(?:\/(\d+))?)?\/?$/.exec(location.hash);
    if (!m || !m[1]) return { view: 'index' };
    return { view: 'lesson', slug: decodeURIComponent(m[1]), step: m[2] ? Number(m[2]) : 0 };
  }

  // --- the cluster ---------------------------------------------------------

  function prepare(lesson, force) {
    if (!force && preparedFor === lesson.slug) return preparing;
    const st = stateOf(lesson.slug);
    const pristine = preparedFor === null && ctx.commandsRun() === 0;
    preparedFor = lesson.slug;
    stopChecks();
    watched = null;
    const nodes = lesson.nodes || [];
    const setup = lesson.setup || [];
    const reset = () => {
      st.prepare = { status: 'preparing', setup: [], error: '' };
      changed();
      return cluster.resetLesson(nodes, setup, lesson.slug).then((res) => {
        st.prepare = { status: res.error ? 'failed' : 'ready', setup: res.setup || [], error: res.error || '' };
        term.print(`\x1b[38;5;245m${t('lessons.console.fresh', { title: lesson.title })}\x1b[0m\r\n`);
      });
    };
    const failed = (err) => { st.prepare = { status: 'failed', setup: [], error: String(err.message || err) }; };
    if (!force && pristine) {
      // The page's cluster as the worker started it: a saved one (site/src/
      // persist/) is kept when it was made for this lesson; a fresh one is
      // what a lesson without nodes or setup needs.
      st.prepare = !nodes.length && !setup.length ? { status: 'ready', setup: [], error: '' } : { status: 'preparing', setup: [], error: '' };
      preparing = cluster.ready.then(() => {
        const r = cluster.restored;
        const saved = r && r.bytes > 0 && !r.error ? r : null;
        if (saved && saved.lesson === lesson.slug) {
          st.prepare = { status: 'ready', setup: [], error: '' };
          return undefined;
        }
        if (saved || nodes.length || setup.length) return reset();
        return undefined;
      }).catch(failed).finally(changed);
    } else {
      st.prepare = { status: 'preparing', setup: [], error: '' };
      preparing = cluster.ready.then(reset).catch(failed).finally(changed);
    }
    changed();
    return preparing;
  }

  function watchChecks(lesson) {
    // Only the first unsolved step's checks run: a later step's checks
    // mean something only after the steps before it (a clean-up step's
    // "no CRD left" holds before the CRD is even made). Once it is solved,
    // the next one's run, so work done ahead counts then.
    const solved = progress.solved(lesson.slug);
    const next = lesson.steps.findIndex((s) => !solved.has(s.n));
    const groups = lesson.steps.map((s, i) => (i === next ? s.checks || [] : []));
    stopChecks();
    watched = { slug: lesson.slug, lesson };
    if (!groups.some((g) => g.length)) return;
    stopChecks = cluster.watchChecks(groups, (results) => {
      if (!watched || watched.slug !== lesson.slug) return;
      window.kubetab.lessonChecks = results; // for tests and for the curious
      let more = false;
      results.forEach((r, i) => {
        if (groups[i].length && r.ok) {
          progress.markSolved(lesson.slug, lesson.steps[i].n);
          more = true;
        }
      });
      if (more) watchChecks(lesson); // stop evaluating what is solved
    });
  }

  async function putFiles(step) {
    const files = step.blocks.filter((b) => b.kind === 'file').map((b) => ({ name: b.file, content: b.content }));
    if (!files.length) return;
    const res = await cluster.putFiles(files);
    if (res.error) term.print(`\x1b[31m${res.error}\x1b[0m\r\n`);
  }

  async function runLines(lesson, step, commands) {
    await preparing;
    await putFiles(step);
    term.focus();
    for (const c of commands) await term.typeAndRun(c);
    if (!(step.checks || []).length) progress.markSolved(lesson.slug, step.n);
  }

  async function resetLesson(lesson) {
    progress.clear(lesson.slug);
    const st = stateOf(lesson.slug);
    st.hints.clear();
    st.solutions.clear();
    st.openFiles.clear();
    const wasAt = parseHash();
    await prepare(lesson, true);
    if (wasAt.view === 'lesson' && wasAt.step !== 1) location.hash = `#/lessons/${encodeURIComponent(lesson.slug)}/1`;
    else route();
  }

  // --- files picked from disk ----------------------------------------------

  // core/lesson takes a lesson's language from its file name (en.md, ja.md)
  // and its slug from its folder, which a picked file does not have: en.md
  // plays as "opened", web.ja.md as "opened-web" (in Japanese), and any other
  // name in the UI language.
  function picked(name) {
    const m = /^(?:(.+)\.)?(en|ja)\.md$/.exec(name);
    const stem = m ? m[1] || '' : name.replace(/\.md$/i, '');
    const clean = stem.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    return { path: `${m ? m[2] : lang()}.md`, slug: clean ? `opened-${clean}` : 'opened' };
  }

  async function openFile(file) {
    const text = await file.text();
    const { path, slug } = picked(file.name);
    const res = await cluster.parseLesson(path, text);
    if (res.type === 'lessonErrors') {
      // name the file as the author knows it
      return res.errors.map((e) => (e.startsWith(`${path}:`) ? file.name + e.slice(path.length) : e));
    }
    res.lesson.slug = slug;
    catalog.addPicked(res.lesson);
    if (preparedFor === res.lesson.slug) preparedFor = null; // new content: prepare again
    const target = `#/lessons/${encodeURIComponent(res.lesson.slug)}`;
    if (location.hash === target) route(); else location.hash = target;
    return null;
  }

  // --- routing ---------------------------------------------------------------

  async function route() {
    const seq = ++routeSeq;
    const r = parseHash();
    const scroll = root.scrollTop;
    const sameLesson = root.dataset.slug && r.view === 'lesson' && root.dataset.slug === r.slug && root.dataset.step === String(r.step);
    if (r.view === 'index') {
      current = null;
      unmountView();
      root.dataset.view = 'index';
      delete root.dataset.slug;
      unmountView = indexView.mount(root, { catalog, progress, openFile, onLang: onLangOff });
      return;
    }
    const lesson = await catalog.lesson(r.slug, lang()).catch(() => null);
    if (seq !== routeSeq) return;
    unmountView();
    root.dataset.view = 'lesson';
    root.dataset.slug = r.slug;
    root.dataset.step = String(r.step);
    if (!lesson) {
      root.replaceChildren(Object.assign(document.createElement('p'), { className: 'empty', textContent: t('lessons.notFound', { slug: r.slug }) }));
      unmountView = () => root.replaceChildren();
      return;
    }
    current = lesson;
    prepare(lesson, false);
    const langs = await catalog.languages(lesson.slug);
    unmountView = lessonView.mount(root, {
      lesson,
      step: r.step,
      state: stateOf(lesson.slug),
      progress,
      note: lesson.lang !== lang() ? t('lessons.onlyLang', { lang: t(`lang.name.${lesson.lang}`) })
        : langs.length === 1 && catalog.picked.has(lesson.slug) ? t('lessons.picked') : '',
      onState,
      reset: () => resetLesson(lesson),
      runLines: (step, commands) => runLines(lesson, step, commands),
      opened: (step) => {
        preparing.then(() => {
          if (preparedFor !== lesson.slug) return;
          putFiles(step);
          if (!watched || watched.slug !== lesson.slug) watchChecks(lesson);
        });
      },
    });
    root.scrollTop = sameLesson ? scroll : 0;
  }

  // onLang for views: a remover, and no first call (the view draws itself).
  function onLangOff(fn) {
    let first = true;
    return onLang(() => { if (first) { first = false; return; } fn(); });
  }

  window.addEventListener('hashchange', route);
  const offLang = onLang(() => { if (root.dataset.view === 'lesson') route(); });
  route();
  return {
    catalog,
    progress,
    // resetCurrent is the page's "Reset cluster" in a lesson: the lesson's
    // own reset (its nodes and setup, from step 1). False when no lesson is open.
    resetCurrent() {
      if (!current) return false;
      return resetLesson(current).then(() => true);
    },
    unmount() {
      window.removeEventListener('hashchange', route);
      offLang();
      stopChecks();
      unmountView();
    },
  };
}
