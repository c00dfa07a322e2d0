// The course index (#/lessons): every lesson in the UI language with its
// summary, minutes and a ✓ once solved, and "Open a lesson file" for
// authors: the worker parses the .md with core/lesson and it plays at once,
// or its file:line errors are shown here.

import { t, lang } from '../i18n.js';
import { el } from './dom.js';

/**
 * @param {HTMLElement} root
 * @param {{catalog, progress, openFile: (file: File) => Promise<string[]|null>, navigate}} ctx
 * @returns {() => void} unmount
 */
export function mount(root, ctx) {
  let alive = true;
  let lessons = null;  // null while loading
  let failed = '';
  let fileState = { name: '', errors: [], busy: false };

  const list = el('ol', { class: 'course' });
  const status = el('p', { class: 'empty' });
  const picker = el('input', { type: 'file', accept: '.md,text/markdown', class: 'visually-hidden', 'data-lesson-file': '' });
  const chooseLabel = el('span', { class: 'choose' });
  const fileName = el('span', { class: 'file-name' });
  const errors = el('div', { class: 'lesson-errors', role: 'status', 'aria-live': 'polite' });
  const openTitle = el('h3');
  const openHint = el('p', { class: 'hint' });
  const heading = el('h2', { class: 'course-title' });
  root.replaceChildren(
    heading, status, list,
    el('section', { class: 'open-lesson' },
      openTitle, openHint,
      el('label', { class: 'file' }, el('span', { class: 'picker' }, chooseLabel, fileName), picker),
      errors),
  );

  picker.addEventListener('change', async () => {
    const file = picker.files && picker.files[0];
    if (!file) return;
    fileState = { name: file.name, errors: [], busy: true };
    draw();
    const errs = await ctx.openFile(file);
    if (!alive) return;
    fileState = { name: file.name, errors: errs || [], busy: false };
    picker.value = '';
    draw();
  });

  function draw() {
    const code = lang();
    heading.textContent = t('lessons.course');
    openTitle.textContent = t('lessons.open.title');
    openHint.textContent = t('lessons.open.hint');
    chooseLabel.textContent = t('lessons.open.choose');
    fileName.textContent = fileState.busy ? t('lessons.open.reading', { name: fileState.name }) : '';
    status.hidden = !!(lessons && lessons.length) && !failed;
    status.textContent = failed ? t('lessons.loadFailed', { error: failed }) : lessons ? t('lessons.none') : t('lessons.loading');
    list.replaceChildren(...(lessons || []).map((l) => {
      const langs = Object.keys(l.languages);
      const use = langs.includes(code) ? code : langs.includes('en') ? 'en' : langs[0];
      const info = l.languages[use];
      const solved = ctx.progress.solved(l.slug);
      const done = ctx.progress.complete(l.slug, info.steps);
      const steps = Math.min(solved.size, info.steps);
      const a = el('a', { href: `#/lessons/${encodeURIComponent(l.slug)}`, class: 'card', 'data-lesson': l.slug, 'data-solved': done ? 'yes' : 'no' },
        el('span', { class: 'mark', 'aria-label': done ? t('lessons.solved') : '' }, done ? '✓' : ''),
        el('span', { class: 'body' },
          el('span', { class: 'title' }, info.title),
          el('span', { class: 'summary' }, info.summary),
          el('span', { class: 'meta' },
            t('lessons.minutes', { n: info.minutes }), ' · ',
            steps ? t('lessons.progress', { done: steps, total: info.steps }) : t('lessons.steps', { n: info.steps }),
            use !== code ? ` · ${t('lessons.onlyLang', { lang: t(`lang.name.${use}`) })}` : '',
            l.picked ? ` · ${t('lessons.picked')}` : '')));
      return el('li', {}, a);
    }));
    errors.replaceChildren();
    if (fileState.errors.length) {
      errors.append(el('p', {}, t('lessons.open.errors', { name: fileState.name })),
        el('pre', { class: 'errors' }, fileState.errors.join('\n')));
    }
  }

  ctx.catalog.list().then((ls) => { lessons = ls; }, (err) => { failed = String(err.message || err); lessons = []; })
    .then(() => { if (alive) requestAnimationFrame(draw); });
  draw();
  const offProgress = ctx.progress.onChange(() => requestAnimationFrame(draw));
  const offLang = ctx.onLang(() => draw());
  return () => {
    alive = false;
    offProgress();
    offLang();
    root.replaceChildren();
  };
}
