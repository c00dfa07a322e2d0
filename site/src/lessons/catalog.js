// The course as the page gets it: site/build (or `kubetab serve --lessons
// DIR`) parses every lesson with core/lesson and serves
//
//   lessons/index.json             {lessons: [{slug, languages: {en: {title, summary, minutes, steps}, ja: ...}}]}
//   lessons/<slug>.<lang>.json     one core/lesson Lesson
//
// Lessons an author opens from disk (parsed in the worker) join the
// catalog for this tab, and override a built lesson of the same slug.

export class Catalog {
  /** @param {(url: string) => Promise<Response>} fetchFn window.fetch */
  constructor(fetchFn) {
    this.fetch = fetchFn;
    this.index = null;       // Promise of the index's lessons
    this.lessons = new Map(); // 'slug.lang' → Promise<Lesson>
    this.picked = new Map();  // slug → {lang → Lesson}, opened from disk
  }

  /** The course's lessons: [{slug, languages, picked}], opened files first. */
  async list() {
    if (!this.index) {
      this.index = this.fetch('lessons/index.json').then(async (res) => {
        if (res.status === 404) return [];
        if (!res.ok) throw new Error(`lessons/index.json: ${res.status}`);
        const data = await res.json();
        return Array.isArray(data.lessons) ? data.lessons : [];
      });
      this.index.catch(() => { this.index = null; });
    }
    const built = await this.index;
    const picked = [...this.picked].map(([slug, byLang]) => ({ slug, picked: true, languages: summaries(byLang) }));
    return [...picked, ...built.filter((l) => !this.picked.has(l.slug))];
  }

  /** The languages a lesson has (from the index or the picked file). */
  async languages(slug) {
    const l = (await this.list()).find((x) => x.slug === slug);
    return l ? Object.keys(l.languages) : [];
  }

  /**
   * The lesson in lang, or in the language it has when not in lang
   * (English first). Resolves to null when there is no such lesson.
   */
  async lesson(slug, lang) {
    const langs = await this.languages(slug);
    if (!langs.length) return null;
    const use = langs.includes(lang) ? lang : langs.includes('en') ? 'en' : langs[0];
    const picked = this.picked.get(slug);
    if (picked) return picked[use];
    const key = `${slug}.${use}`;
    if (!this.lessons.has(key)) {
      const p = this.fetch(`lessons/${encodeURIComponent(slug)}.${use}.json`).then((res) => {
        if (!res.ok) throw new Error(`lessons/${slug}.${use}.json: ${res.status}`);
        return res.json();
      });
      p.catch(() => this.lessons.delete(key));
      this.lessons.set(key, p);
    }
    return this.lessons.get(key);
  }

  /** Add a lesson parsed from a file the author picked. */
  addPicked(lesson) {
    const byLang = this.picked.get(lesson.slug) || {};
    byLang[lesson.lang] = lesson;
    this.picked.set(lesson.slug, byLang);
  }
}

function summaries(byLang) {
  const out = {};
  for (const [lang, l] of Object.entries(byLang)) {
    out[lang] = { title: l.title, summary: l.summary, minutes: l.minutes, steps: l.steps.length };
  }
  return out;
}
