// Classroom kiosks: `kubetab serve --kiosk` serves kiosk.json, and a page
// that finds it becomes a kiosk (a static host can serve the same file):
//
//   {"idleSeconds": 600}
//
// - A "New student" button in the header wipes this browser's kubetab state
//   (the saved cluster, lesson progress, console history: localStorage,
//   sessionStorage and IndexedDB) and reloads, so the next student starts
//   from a fresh cluster at the course index. The app files the service
//   worker keeps are not student state and stay.
// - After idleSeconds without a key, a tap or a pointer move, the same
//   happens; a warning with a countdown comes 30 s before, and any input
//   cancels it.
// - Links that lead off this machine do nothing (a note says why): a kiosk
//   is for the course.
//
// Hooks: the button [data-kiosk-reset], the dialog [data-kiosk-dialog],
// its buttons [data-kiosk-confirm] and [data-kiosk-cancel]; kubetab.kiosk.

import { addStrings, t, onLang } from './i18n.js';

addStrings({
  en: {
    'kiosk.reset': 'New student',
    'kiosk.reset.title': 'Erase this browser\'s cluster, progress and history for the next student',
    'kiosk.confirm.title': 'Start over for a new student?',
    'kiosk.confirm.body': 'The cluster, your lesson progress and the console history are erased from this browser.',
    'kiosk.confirm.ok': 'Start over',
    'kiosk.cancel': 'Cancel',
    'kiosk.idle.title': 'Are you still there?',
    'kiosk.idle.body': 'This kiosk starts over for the next student in {seconds} s.',
    'kiosk.idle.stay': 'I\'m still here',
    'kiosk.link': 'Links that leave this machine are turned off on a classroom kiosk.',
  },
  ja: {
    'kiosk.reset': '次の人へ',
    'kiosk.reset.title': '次の人のために、このブラウザのクラスタ・進み具合・履歴を消去します',
    'kiosk.confirm.title': '次の人のために最初からやり直しますか?',
    'kiosk.confirm.body': 'クラスタ、レッスンの進み具合、コンソールの履歴がこのブラウザから消去されます。',
    'kiosk.confirm.ok': 'やり直す',
    'kiosk.cancel': 'キャンセル',
    'kiosk.idle.title': 'まだ使っていますか?',
    'kiosk.idle.body': 'あと {seconds} 秒で、この端末は次の人のために最初からやり直します。',
    'kiosk.idle.stay': 'まだ使っています',
    'kiosk.link': '教室の端末では、このマシンの外へ出るリンクは使えません。',
  },
});

const warnBefore = 30; // seconds of warning before an idle reset

/** Validate kiosk.json: null when it does not make a kiosk. */
export function parseConfig(data) {
  if (!data || typeof data !== 'object') return null;
  const idle = data.idleSeconds;
  if (!Number.isInteger(idle) || idle < 60 || idle > 7 * 24 * 3600) return null;
  return { idleSeconds: idle };
}

/** Erase every kind of storage this origin's page keeps, then reload. */
export async function wipe() {
  try { localStorage.clear(); } catch { /* disabled */ }
  try { sessionStorage.clear(); } catch { /* disabled */ }
  try {
    const dbs = indexedDB.databases ? await indexedDB.databases() : [];
    await Promise.all(dbs.map((db) => new Promise((resolve) => {
      const req = indexedDB.deleteDatabase(db.name);
      req.onsuccess = req.onerror = req.onblocked = () => resolve();
    })));
  } catch { /* no IndexedDB */ }
  location.replace(location.pathname + location.search);
}

/**
 * Look for kiosk.json; when it is there, turn this page into a kiosk.
 * @param {{header: HTMLElement, kubetab: object}} ctx
 */
export async function setup({ header, kubetab }) {
  let config = null;
  try {
    const res = await fetch('kiosk.json', { cache: 'no-store' });
    if (res.ok) config = parseConfig(await res.json());
  } catch { /* not a kiosk */ }
  if (!config) return null;
  document.body.dataset.kiosk = '';

  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'kiosk-reset';
  button.dataset.kioskReset = '';
  header.querySelector('#lang').before(button);

  const dialog = document.createElement('dialog');
  dialog.className = 'kiosk-dialog';
  dialog.dataset.kioskDialog = '';
  document.body.append(dialog);
  let mode = ''; // confirm | idle
  let countdown = 0;
  const draw = () => {
    button.textContent = t('kiosk.reset');
    button.title = t('kiosk.reset.title');
    if (!mode) return;
    const h = document.createElement('h2');
    const p = document.createElement('p');
    const ok = document.createElement('button');
    ok.type = 'button';
    ok.className = 'primary';
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.dataset.kioskCancel = '';
    if (mode === 'confirm') {
      h.textContent = t('kiosk.confirm.title');
      p.textContent = t('kiosk.confirm.body');
      ok.textContent = t('kiosk.confirm.ok');
      ok.dataset.kioskConfirm = '';
      ok.addEventListener('click', () => wipe());
      cancel.textContent = t('kiosk.cancel');
      cancel.addEventListener('click', close);
      dialog.replaceChildren(h, p, ok, cancel); // floated right: Start over rightmost
    } else {
      h.textContent = t('kiosk.idle.title');
      p.textContent = t('kiosk.idle.body', { seconds: countdown });
      cancel.textContent = t('kiosk.idle.stay');
      cancel.className = 'primary';
      cancel.addEventListener('click', close);
      dialog.replaceChildren(h, p, cancel);
    }
  };
  function open(m) {
    mode = m;
    draw();
    if (!dialog.open) dialog.showModal();
  }
  function close() {
    mode = '';
    if (dialog.open) dialog.close();
    last = Date.now();
  }
  dialog.addEventListener('cancel', () => { mode = ''; last = Date.now(); });
  onLang(draw);
  button.addEventListener('click', () => open('confirm'));

  // Idle: any input counts as presence.
  let last = Date.now();
  const seen = () => {
    last = Date.now();
    if (mode === 'idle') close();
  };
  for (const ev of ['keydown', 'pointerdown', 'pointermove', 'wheel', 'touchstart']) {
    document.addEventListener(ev, seen, { capture: true, passive: true });
  }
  const timer = setInterval(() => {
    const idle = (Date.now() - last) / 1000;
    if (idle >= config.idleSeconds) {
      clearInterval(timer);
      wipe();
    } else if (idle >= config.idleSeconds - warnBefore) {
      countdown = Math.ceil(config.idleSeconds - idle);
      if (mode !== 'confirm') open('idle');
    }
  }, 1000);

  // Links off this machine do nothing on a kiosk.
  let note = null;
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest && ev.target.closest('a[href]');
    if (!a) return;
    let url;
    try { url = new URL(a.href, location.href); } catch { return; }
    if (url.origin === location.origin) return;
    ev.preventDefault();
    if (!note) {
      note = document.createElement('div');
      note.className = 'kiosk-note';
      note.setAttribute('role', 'status');
      document.body.append(note);
    }
    note.textContent = t('kiosk.link');
    note.hidden = false;
    clearTimeout(note.timer);
    note.timer = setTimeout(() => { note.hidden = true; }, 4000);
  }, true);

  const api = { config, wipe, idleFor: () => (Date.now() - last) / 1000, pretendIdle: (s) => { last = Date.now() - s * 1000; } };
  kubetab.kiosk = api;
  return api;
}
