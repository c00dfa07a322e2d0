// The views panel: tabs beside the console, one per way of looking at the
// cluster (the live tables, the flow of hops, the object graph, the
// scheduler, the store, the events, the editor). Each view is one module
// that owns its markup:
//
//   export function mount(root, ctx) {
//     root.append(...);                       // root: the view's own <div>
//     const off = ctx.cache.subscribe('/api/v1/pods', draw);
//     return { show() {}, hide() {}, unmount() { off(); } };   // all optional
//   }
//
// ctx is shared by every view:
//   cluster   the bridge to the worker (fetch, run, ...; bridge.js)
//   cache     the shared informer cache (cache.js): one watch per collection
//   term      the console (terminal.js); ctx.run(line) types and runs a line
//   bus       an EventTarget; 'select' events ({detail: {kind, namespace,
//             name}}) let one view point another at an object
//   selected  the last 'select' event's detail (or null): a view mounted
//             later starts from the object the learner last picked
//   views     this panel: views.show(name), views.current
//
// A view is mounted the first time its tab opens, then kept (hidden views get
// hide() so they can stop drawing). Hooks for tests: the tab buttons are
// [data-view-tab=NAME], the panes [data-view=NAME].

import { t, onLang } from '../i18n.js';

const storageKey = 'kubetab.view';

/**
 * @param {HTMLElement} root  the panel (holds a .view-tabs nav and the panes)
 * @param {object} ctx        shared by the views (see above)
 * @param {{name: string, title: string, mount?: Function}[]} views
 *   title is an i18n key; a view without mount has its pane in index.html
 */
export function mountViews(root, ctx, views) {
  ctx.selected = null;
  if (ctx.bus) ctx.bus.addEventListener('select', (ev) => { ctx.selected = ev.detail || null; });
  const nav = document.createElement('nav');
  nav.className = 'view-tabs';
  nav.setAttribute('role', 'tablist');
  root.prepend(nav);

  const entries = new Map();
  for (const v of views) {
    const tab = document.createElement('button');
    tab.type = 'button';
    tab.className = 'view-tab';
    tab.dataset.viewTab = v.name;
    tab.setAttribute('role', 'tab');
    tab.id = `view-tab-${v.name}`;
    let pane = root.querySelector(`:scope > [data-view="${v.name}"]`);
    if (!pane) {
      pane = document.createElement('div');
      pane.dataset.view = v.name;
      root.append(pane);
    }
    pane.classList.add('view-pane');
    pane.setAttribute('role', 'tabpanel');
    pane.setAttribute('aria-labelledby', tab.id);
    pane.hidden = true;
    tab.addEventListener('click', () => api.show(v.name));
    nav.append(tab);
    entries.set(v.name, { ...v, tab, pane, view: null, mounted: !v.mount });
  }
  onLang(() => {
    for (const e of entries.values()) e.tab.textContent = t(e.title);
  });

  // Arrow keys move between tabs, as in every tablist.
  nav.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
    const names = [...entries.keys()];
    const i = names.indexOf(api.current) + (ev.key === 'ArrowRight' ? 1 : -1);
    api.show(names[(i + names.length) % names.length]);
    entries.get(api.current).tab.focus();
  });

  const api = {
    current: null,
    /** Open the tab called name (mounting its view the first time). */
    show(name) {
      const e = entries.get(name);
      if (!e || name === api.current) return;
      const prev = entries.get(api.current);
      if (prev) {
        prev.pane.hidden = true;
        prev.tab.setAttribute('aria-selected', 'false');
        prev.tab.tabIndex = -1;
        if (prev.view && prev.view.hide) prev.view.hide();
      }
      api.current = name;
      e.pane.hidden = false;
      e.tab.setAttribute('aria-selected', 'true');
      e.tab.tabIndex = 0;
      // The strip scrolls sideways on a narrow screen: bring the tab into
      // it, without scrolling the page (scrollIntoView would, on a phone).
      const strip = nav.getBoundingClientRect();
      const box = e.tab.getBoundingClientRect();
      if (box.left < strip.left) nav.scrollLeft -= strip.left - box.left;
      else if (box.right > strip.right) nav.scrollLeft += box.right - strip.right;
      if (!e.mounted) {
        e.mounted = true;
        try {
          e.view = e.mount(e.pane, ctx) || null;
        } catch (err) {
          console.error(`kubetab: view ${name} failed to start:`, err);
          e.pane.textContent = t('views.failed', { message: err.message });
        }
      }
      if (e.view && e.view.show) e.view.show();
      try { localStorage.setItem(storageKey, name); } catch { /* storage may be off */ }
      root.dispatchEvent(new CustomEvent('view', { detail: { name } }));
    },
  };
  ctx.views = api;

  let first = views[0].name;
  try {
    const saved = localStorage.getItem(storageKey);
    if (saved && entries.has(saved)) first = saved;
  } catch { /* ignore */ }
  api.show(first);
  return api;
}

/**
 * A drag handle on the panel's edge that resizes it against the console:
 * its left edge when the panel is a column, its top edge when it sits under
 * the console. The size is kept as a CSS variable on the grid (and in
 * localStorage).
 */
export function resizable(panel, grid) {
  const handle = document.createElement('div');
  handle.className = 'view-resize';
  handle.setAttribute('role', 'separator');
  handle.title = '';
  onLang(() => { handle.title = t('views.resize'); });
  panel.append(handle);
  const load = (k) => { try { return localStorage.getItem(k); } catch { return null; } };
  for (const v of ['--views-w', '--views-h']) {
    const saved = load(`kubetab${v}`);
    if (saved) grid.style.setProperty(v, saved);
  }
  handle.addEventListener('pointerdown', (down) => {
    down.preventDefault();
    handle.setPointerCapture(down.pointerId);
    const box = grid.getBoundingClientRect();
    const column = getComputedStyle(panel).gridColumnStart !== getComputedStyle(grid.querySelector('.console')).gridColumnStart;
    const move = (ev) => {
      let v;
      let size;
      if (column) {
        v = '--views-w';
        size = Math.max(300, Math.min(box.right - ev.clientX - 18, box.width * 0.7));
      } else {
        v = '--views-h';
        size = Math.max(160, Math.min(box.bottom - ev.clientY - 14, box.height * 0.8));
      }
      grid.style.setProperty(v, `${Math.round(size)}px`);
      try { localStorage.setItem(`kubetab${v}`, `${Math.round(size)}px`); } catch { /* ignore */ }
    };
    const up = () => handle.removeEventListener('pointermove', move);
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up, { once: true });
    handle.addEventListener('pointercancel', up, { once: true });
  });
}
