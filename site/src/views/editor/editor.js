// The Editor view: the console's files in CodeMirror 6, with Save, Apply and
// Dry-run, new files from templates, and `kubectl edit` opening here.
//
//   tabs ── one per console file (listFiles/readFile; Save is putFiles), and
//           one per running kubectl edit (kubectl-edit-*.yaml)
//   Apply   = save, then `kubectl apply -f FILE` in the worker: kubectl
//             computes the patch (or POSTs a new object) as the real one does
//   Dry-run = the same with --dry-run=server: the API server's dryRun=All,
//             admission and validation run, nothing is stored
//   kubectl edit: the console's kubectl sends the file here ('edit' from the
//             worker) and waits; Save hands it back (editDone), Cancel quits
//             without saving. A 422 reopens it with the causes in its header.
//
// Marks in the text (@codemirror/lint): YAML syntax errors as you type;
// fields the API server's OpenAPI v3 schema does not have (what strict field
// validation would refuse); after Apply, a 422's causes and kubectl's
// "yaml: line N" on their lines. Completion and hover docs of fields come
// from the same schema (the one `kubectl explain` reads).
//
// Test hooks: [data-editor-tab=NAME] (a file's tab), [data-editor-new]
// (template menu), [data-editor-action=save|apply|dryrun|finish|cancel|close] (finish and cancel
// answer kubectl edit),
// [data-editor-status] (the last command's output), .cm-content (the text).
// kubetab.editor (set by mount) has open(name), text(), setText(s), current().

import { addStrings, t, onLang } from '../../i18n.js';
import { templates, newName } from './templates.js';
import * as ym from './yamlmap.js';
import './editor.css';

addStrings({
  en: {
    'editor.tab': 'Editor',
    'editor.new': 'New file…',
    'editor.save': 'Save',
    'editor.apply': 'Apply',
    'editor.dryrun': 'Dry-run',
    'editor.editSave': 'Save and finish kubectl edit',
    'editor.editCancel': 'Cancel edit',
    'editor.close': 'Close',
    'editor.empty': 'No files yet. Pick a template from "New file…", or write one in the console (cat <<EOF > web.yaml). kubectl edit deployment/web opens here too.',
    'editor.saved': 'Saved {name}.',
    'editor.unsaved': 'not saved',
    'editor.running': 'Running: {line}',
    'editor.exit': 'exit code {code}',
    'editor.editing': 'kubectl edit is waiting in the console. Change the object, then "Save and finish kubectl edit" (or Cancel to leave it unchanged).',
    'editor.editSent': 'Handed to kubectl edit; its answer is in the console.',
    'editor.editGone': 'kubectl edit ended (interrupted in the console); this copy was not applied.',
    'editor.editRetry': 'kubectl edit reopened the file: the API server refused it. The reasons are at the top and marked on their lines.',
    'editor.unknown': 'unknown field "{path}": the API server\'s schema for {kind} has no such field (strict validation refuses it)',
    'editor.syntax': 'YAML syntax error',
    'editor.conflict': 'the object changed on the server since this resourceVersion was read (409 Conflict): read it again (kubectl get -o yaml) or remove resourceVersion',
    'editor.closeUnsaved': '{name} has unsaved changes. Close it anyway?',
    'editor.readFailed': 'Could not read {name}: {message}',
    'editor.help': 'Ctrl-S saves · Ctrl-Enter applies · Ctrl-Space completes a field',
  },
  ja: {
    'editor.tab': 'エディタ',
    'editor.new': '新しいファイル…',
    'editor.save': '保存',
    'editor.apply': '適用 (apply)',
    'editor.dryrun': 'ドライラン',
    'editor.editSave': '保存して kubectl edit を終える',
    'editor.editCancel': '編集をやめる',
    'editor.close': '閉じる',
    'editor.empty': 'ファイルはまだありません。「新しいファイル…」からテンプレートを選ぶか、コンソールで書いてください (cat <<EOF > web.yaml)。kubectl edit deployment/web もここで開きます。',
    'editor.saved': '{name} を保存しました。',
    'editor.unsaved': '未保存',
    'editor.running': '実行中: {line}',
    'editor.exit': '終了コード {code}',
    'editor.editing': 'コンソールで kubectl edit が待っています。オブジェクトを書き換えて「保存して kubectl edit を終える」を押してください (変更しないときは「編集をやめる」)。',
    'editor.editSent': 'kubectl edit に渡しました。結果はコンソールに表示されます。',
    'editor.editGone': 'kubectl edit は終了しました (コンソールで中断されました)。この内容は適用されていません。',
    'editor.editRetry': 'API サーバーが受け付けなかったため、kubectl edit がファイルを開き直しました。理由は先頭のコメントにあり、該当する行に印が付いています。',
    'editor.unknown': '不明なフィールド "{path}": API サーバーの {kind} のスキーマにこのフィールドはありません (strict な検証では拒否されます)',
    'editor.syntax': 'YAML の構文エラー',
    'editor.conflict': 'この resourceVersion を読んだ後にサーバー上のオブジェクトが変更されました (409 Conflict)。読み直す (kubectl get -o yaml) か、resourceVersion を消してください',
    'editor.closeUnsaved': '{name} には保存していない変更があります。閉じてもよいですか?',
    'editor.readFailed': '{name} を読めませんでした: {message}',
    'editor.help': 'Ctrl-S で保存 · Ctrl-Enter で適用 · Ctrl-Space でフィールドを補完',
  },
});

/* global KUBETAB_CM_URL */
// loadCodeMirror loads cm.js, which site/build bundles as its own file
// (editor-cm-HASH.js, a global kubetabCM) so that the page starts without
// it; the Editor tab loads it when first opened.
let cmLoading = null;
function loadCodeMirror() {
  if (globalThis.kubetabCM) return Promise.resolve(globalThis.kubetabCM);
  if (!cmLoading) {
    cmLoading = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = KUBETAB_CM_URL;
      s.onload = () => resolve(globalThis.kubetabCM);
      s.onerror = () => { cmLoading = null; reject(new Error(`could not load ${KUBETAB_CM_URL}`)); };
      document.head.append(s);
    });
  }
  return cmLoading;
}

// kubectl edit requests that came before the view was mounted.
const pendingEdits = [];
let instance = null;

/**
 * listen connects kubectl edit to this view from the start: an 'edit' from
 * the worker opens the Editor tab (mounting it the first time).
 */
export function listen(ctx) {
  ctx.cluster.on('edit', (msg) => {
    if (instance) instance.openEdit(msg);
    else pendingEdits.push(msg);
    ctx.views.show('editor');
  });
  ctx.cluster.on('editClosed', (msg) => {
    if (instance) instance.editClosed(msg.id);
    else {
      const i = pendingEdits.findIndex((m) => m.id === msg.id);
      if (i >= 0) pendingEdits.splice(i, 1);
    }
  });
}

const el = (tag, props = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  e.append(...kids);
  return e;
};

export function mount(root, ctx) {
  root.classList.add('editor-view');
  const tabs = el('div', { className: 'editor-tabs', role: 'tablist' });
  const newSel = el('select', { className: 'editor-new', dataset: { editorNew: '' } });
  const bar = el('div', { className: 'editor-bar' });
  const btn = (action, key, cls = '') => {
    const b = el('button', { type: 'button', className: `editor-btn ${cls}`, dataset: { editorAction: action } });
    b.dataset.i18n = key;
    return b;
  };
  const saveBtn = btn('save', 'editor.save');
  const applyBtn = btn('apply', 'editor.apply', 'primary');
  const dryBtn = btn('dryrun', 'editor.dryrun');
  const editSaveBtn = btn('finish', 'editor.editSave', 'primary');
  const cancelBtn = btn('cancel', 'editor.editCancel');
  const note = el('span', { className: 'editor-note' });
  bar.append(saveBtn, dryBtn, applyBtn, editSaveBtn, cancelBtn, note);
  const host = el('div', { className: 'editor-host' });
  const empty = el('p', { className: 'editor-empty' });
  const status = el('pre', { className: 'editor-status', dataset: { editorStatus: '' }, 'aria-live': 'polite' });
  const help = el('p', { className: 'editor-help' });
  root.append(el('div', { className: 'editor-top' }, tabs, newSel), bar, empty, host, status, help);

  /** @type {Map<string, {name, kind: 'file'|'edit', state, saved: string, editId?: number, server: Array}>} */
  const files = new Map();
  let current = null; // name
  let cm = null; // the CodeMirror module (cm.js), once loaded
  let view = null;
  const schemas = new Map(); // apiVersion -> Promise<OpenAPI v3 document | null>

  function drawTexts() {
    for (const b of root.querySelectorAll('[data-i18n]')) b.textContent = t(b.dataset.i18n);
    newSel.replaceChildren(el('option', { value: '', textContent: t('editor.new') }),
      ...Object.keys(templates).map((k) => el('option', { value: k, textContent: k })));
    empty.textContent = t('editor.empty');
    help.textContent = t('editor.help');
    drawTabs();
    drawBar();
  }

  function isDirty(f) {
    if (!f) return false;
    const text = f.name === current && view ? view.state.doc.toString() : f.state.doc.toString();
    return text !== f.saved;
  }

  function drawTabs() {
    tabs.replaceChildren(...[...files.values()].map((f) => {
      const tab = el('button', { type: 'button', className: 'editor-tab', role: 'tab', dataset: { editorTab: f.name }, title: f.name });
      tab.setAttribute('aria-selected', String(f.name === current));
      tab.append(el('span', { className: 'editor-tab-name', textContent: f.kind === 'edit' ? `✎ ${f.name}` : f.name }));
      if (isDirty(f)) tab.append(el('span', { className: 'editor-dirty', title: t('editor.unsaved'), textContent: '●' }));
      if (f.kind === 'file') {
        const x = el('span', { className: 'editor-tab-close', role: 'button', title: t('editor.close'), textContent: '×', dataset: { editorAction: 'close' } });
        x.addEventListener('click', (ev) => { ev.stopPropagation(); closeFile(f.name); });
        tab.append(x);
      }
      tab.addEventListener('click', () => select(f.name));
      return tab;
    }));
  }

  function drawBar() {
    const f = files.get(current);
    const editing = f && f.kind === 'edit';
    saveBtn.hidden = dryBtn.hidden = applyBtn.hidden = !f || editing;
    editSaveBtn.hidden = cancelBtn.hidden = !editing;
    note.textContent = editing ? t('editor.editing') : '';
    empty.hidden = !!f;
    host.hidden = !f;
  }

  async function loadCM() {
    if (!cm) cm = await loadCodeMirror();
    return cm;
  }

  function lintSource(cmv) {
    return async (v) => {
      const f = files.get(current);
      if (!f) return [];
      const text = v.state.doc.toString();
      const tree = cmv.tree(v.state);
      const { docs, errors } = ym.docs(tree, text);
      const out = [];
      for (const e of errors.slice(0, 5)) {
        const from = Math.min(e.from, text.length);
        const to = Math.min(Math.max(e.to, from + 1), text.length);
        out.push({ from: Math.max(0, Math.min(from, to - 1)), to, severity: 'error', message: t('editor.syntax'), source: 'yaml' });
      }
      // Unknown fields, from the API server's schema of each document's kind.
      for (const d of docs) {
        const apiVersion = ym.str(d.node, 'apiVersion');
        const kind = ym.str(d.node, 'kind');
        if (!apiVersion || !kind) continue;
        const doc = await schemaFor(apiVersion);
        const s = doc && ym.kindSchema(doc, apiVersion, kind);
        if (!s) continue;
        for (const u of ym.unknownFields(doc, s, d.node)) {
          out.push({ from: u.from, to: u.to, severity: 'error', message: t('editor.unknown', { path: u.path, kind }), source: 'openapi' });
        }
      }
      // What the server said at the last Apply, Dry-run or kubectl edit.
      for (const c of f.server) {
        if (c.line) {
          if (c.line <= v.state.doc.lines) {
            const l = v.state.doc.line(c.line);
            out.push({ from: l.from, to: Math.max(l.to, l.from), severity: 'error', message: c.message, source: 'kubectl' });
          }
          continue;
        }
        const d = docs.find((x) => !c.kind || (ym.str(x.node, 'kind') === c.kind)) || docs[0];
        const r = d && ym.fieldRange(d.node, c.path);
        if (r) out.push({ from: r.from, to: r.to, severity: 'error', message: `${c.path}: ${c.message}`, source: 'API server' });
      }
      return out;
    };
  }

  function schemaFor(apiVersion) {
    if (!schemas.has(apiVersion)) {
      const path = ym.openAPIPath(apiVersion);
      schemas.set(apiVersion, ctx.cluster.fetch(path, { headers: { Accept: 'application/json' } })
        .then((r) => (r.ok ? r.json() : null))
        .catch(() => null));
    }
    return schemas.get(apiVersion);
  }

  // The field under pos, and its schema: for hover docs and completion.
  async function fieldAt(state, pos) {
    const text = state.doc.toString();
    const { docs } = ym.docs(cm.tree(state), text);
    const d = ym.docAt(docs, pos);
    if (!d || !d.node) return null;
    const apiVersion = ym.str(d.node, 'apiVersion');
    const kind = ym.str(d.node, 'kind');
    const doc = apiVersion && kind ? await schemaFor(apiVersion) : null;
    const s = doc && ym.kindSchema(doc, apiVersion, kind);
    if (!s) return null;
    return { doc, schema: s, at: ym.pathAt(d.node, pos), kind };
  }

  async function completeFields(context) {
    const word = context.matchBefore(/[A-Za-z0-9_-]*/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(0, context.pos - line.from);
    if (!/^\s*(-\s+)?[A-Za-z0-9_-]*$/.test(before)) return null; // only where a key goes
    const f = await fieldAt(context.state, context.pos);
    if (!f || !f.at) return null;
    let parts = f.at.parts;
    if (f.at.inKey) parts = parts.slice(0, -1);
    const s = ym.fieldSchema(f.doc, f.schema, parts);
    if (!s || !s.properties) return null;
    return {
      from: word.from,
      options: Object.entries(s.properties).map(([name, p]) => ({
        label: name,
        type: 'property',
        detail: p.type || (p.allOf ? 'object' : ''),
        info: (ym.fieldSchema(f.doc, s, [name]) || p).description || '',
        apply: `${name}: `,
      })),
      validFor: /^[A-Za-z0-9_-]*$/,
    };
  }

  async function hoverDoc(v, pos) {
    const f = await fieldAt(v.state, pos);
    if (!f || !f.at || !f.at.inKey) return null;
    const s = ym.fieldSchema(f.doc, f.schema, f.at.parts);
    if (!s || !s.description) return null;
    const name = f.at.parts.filter((p) => typeof p === 'string').join('.');
    return {
      pos,
      create() {
        const dom = el('div', { className: 'editor-hover' },
          el('div', { className: 'editor-hover-name', textContent: `${f.kind}.${name}${s.type ? ` <${s.type}>` : ''}` }),
          el('div', { textContent: s.description.length > 600 ? `${s.description.slice(0, 600)}…` : s.description }));
        return { dom };
      },
    };
  }

  function newState(text) {
    return cm.state(text, {
      lint: lintSource(cm),
      complete: completeFields,
      hover: hoverDoc,
      onChange: () => {
        // What the server said was about the text it saw; it goes stale
        // with the first change (the next Apply asks again).
        const f = files.get(current);
        if (f && f.server.length) f.server = [];
        drawTabsSoon();
      },
      keys: { save: () => { onSave(); return true; }, apply: () => { run(false); return true; } },
    });
  }

  let tabsFrame = 0;
  function drawTabsSoon() {
    if (tabsFrame) return;
    tabsFrame = requestAnimationFrame(() => { tabsFrame = 0; drawTabs(); });
  }

  async function ensureView() {
    await loadCM();
    if (!view) view = cm.view(host);
  }

  async function select(name) {
    const f = files.get(name);
    if (!f) return;
    await ensureView();
    if (current && files.has(current) && current !== name) files.get(current).state = view.state;
    current = name;
    view.setState(f.state);
    drawTabs();
    drawBar();
    cm.relint(view);
  }

  async function addFile(name, text, kind = 'file', saved = text) {
    await loadCM();
    const f = { name, kind, state: newState(text), saved, server: [] };
    files.set(name, f);
    return f;
  }

  async function refreshFiles() {
    let list;
    try { list = await ctx.cluster.listFiles(); } catch { return; }
    const names = new Set(list.map((x) => x.name));
    for (const { name } of list) {
      if (files.has(name)) continue;
      if (!/\.(ya?ml|json)$/i.test(name)) continue;
      try {
        await addFile(name, await ctx.cluster.readFile(name));
      } catch (err) {
        setStatus(t('editor.readFailed', { name, message: err.message }), 'bad');
      }
    }
    // Files removed in the console (rm) go, unless they hold unsaved text.
    for (const f of [...files.values()]) {
      if (f.kind === 'file' && !names.has(f.name) && !isDirty(f) && f.saved !== '') files.delete(f.name);
    }
    if (!files.has(current)) {
      current = null;
      const first = files.keys().next().value;
      if (first) await select(first);
    }
    drawTabs();
    drawBar();
  }

  function setStatus(text, cls = '') {
    status.textContent = text;
    status.className = `editor-status ${cls}`;
  }

  async function save() {
    const f = files.get(current);
    if (!f || f.kind !== 'file') return false;
    const text = view.state.doc.toString();
    try {
      await ctx.cluster.writeFile(f.name, text);
    } catch (err) {
      setStatus(err.message, 'bad');
      return false;
    }
    f.saved = text;
    drawTabs();
    return true;
  }

  async function onSave() {
    const f = files.get(current);
    if (f && f.kind === 'edit') return finishEdit(true);
    if (await save()) setStatus(t('editor.saved', { name: f.name }), 'ok');
    return undefined;
  }

  // run saves the file and runs kubectl apply on it (with --dry-run=server
  // for Dry-run) in the worker, as the console would.
  async function run(dry) {
    const f = files.get(current);
    if (!f || f.kind !== 'file') return;
    if (!(await save())) return;
    const line = `kubectl apply -f ${quote(f.name)}${dry ? ' --dry-run=server' : ''}`;
    setStatus(t('editor.running', { line }));
    let out = '';
    let err = '';
    const dec = new TextDecoder();
    const r = ctx.cluster.run(line, (bytes, fd) => {
      if (fd === 2) err += dec.decode(bytes, { stream: true }); else out += dec.decode(bytes, { stream: true });
    });
    const code = await r.done;
    const text = `$ ${line}\n${out}${err}${code ? `(${t('editor.exit', { code })})\n` : ''}`;
    setStatus(text, code ? 'bad' : 'ok');
    f.server = serverMarks(out + err);
    cm.relint(view);
    ctx.cluster.emit('commandDone', { line });
  }

  // serverMarks turns kubectl's output into marks: a 422's causes, strict
  // validation's unknown fields, "yaml: line N", a 409 on resourceVersion.
  function serverMarks(output) {
    const marks = [];
    for (const c of ym.causes(output)) marks.push({ path: c.path, message: c.message });
    for (const y of ym.yamlErrorLines(output)) marks.push({ line: y.line, message: y.message });
    if (/\(Conflict\)|the object has been modified/.test(output)) marks.push({ path: 'metadata.resourceVersion', message: t('editor.conflict') });
    return marks;
  }

  function quote(name) {
    return /^[A-Za-z0-9._/-]+$/.test(name) ? name : `'${name.replace(/'/g, "'\\''")}'`;
  }

  async function newFile(kind) {
    const name = newName(kind, new Set(files.keys()));
    await addFile(name, templates[kind], 'file', '');
    await select(name);
    view.focus();
  }

  function closeFile(name) {
    const f = files.get(name);
    if (!f) return;
    if (isDirty(f) && !window.confirm(t('editor.closeUnsaved', { name }))) return;
    files.delete(name);
    // The console's file stays (rm removes it); an unsaved new file is gone.
    if (current === name) {
      current = null;
      const next = [...files.keys()].pop();
      if (next) select(next); else { drawTabs(); drawBar(); }
    } else drawTabs();
  }

  let lastHanded = ''; // the kubectl edit file last handed back
  // kubectl edit: a file to hand back.
  async function openEdit(msg) {
    const existing = files.get(msg.name);
    const f = existing && existing.kind === 'edit' ? existing : await addFile(msg.name, msg.content, 'edit', msg.content);
    if (existing) {
      f.state = newState(msg.content);
      f.saved = msg.content;
    }
    f.editId = msg.id;
    // A reopened file carries the 422's causes in its header.
    const causes = ym.causes(msg.content);
    f.server = causes.map((c) => ({ path: c.path, message: c.message }));
    if (/^# The edited file had a syntax error: .*line (\d+)/m.test(msg.content)) {
      // kubectl's line counts the file without its header; mark the header line itself.
      f.server.push({ line: 5, message: msg.content.split('\n').find((l) => l.includes('syntax error')).replace(/^#\s*/, '') });
    }
    current = null;
    await select(f.name);
    const retry = existing || lastHanded === msg.name;
    // On a phone the panel is under the console: bring the editor up.
    const box = root.getBoundingClientRect();
    if (box.top > window.innerHeight || box.bottom < 0) root.scrollIntoView({ block: 'start' });
    setStatus(retry ? t('editor.editRetry') : '', retry ? 'bad' : '');
    if (view) view.focus();
  }

  function finishEdit(saved) {
    const f = files.get(current);
    if (!f || f.kind !== 'edit' || f.editId == null) return;
    const text = view.state.doc.toString();
    ctx.cluster.editDone(f.editId, saved, text);
    lastHanded = f.name;
    f.editId = null;
    files.delete(f.name);
    current = null;
    setStatus(t('editor.editSent'));
    const next = [...files.keys()].pop();
    if (next) select(next); else { drawTabs(); drawBar(); }
  }

  function editClosed(id) {
    const f = [...files.values()].find((x) => x.kind === 'edit' && x.editId === id);
    if (!f) return;
    files.delete(f.name);
    if (current === f.name) {
      current = null;
      const next = [...files.keys()].pop();
      if (next) select(next); else { drawTabs(); drawBar(); }
    } else drawTabs();
    setStatus(t('editor.editGone'), 'bad');
  }

  saveBtn.addEventListener('click', () => onSave());
  editSaveBtn.addEventListener('click', () => finishEdit(true));
  cancelBtn.addEventListener('click', () => finishEdit(false));
  applyBtn.addEventListener('click', () => run(false));
  dryBtn.addEventListener('click', () => run(true));
  newSel.addEventListener('change', () => {
    const k = newSel.value;
    newSel.value = '';
    if (k) newFile(k);
  });
  ctx.cluster.on('commandDone', () => { if (!root.closest('[hidden]')) refreshFiles(); });
  const offLang = onLang(drawTexts);

  instance = { openEdit, editClosed };
  const api = {
    open: (name) => select(name),
    text: () => (view ? view.state.doc.toString() : ''),
    setText: (s) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: s } }),
    current: () => current,
    newFile,
    diagnostics: () => (view ? cm.diagnostics(view.state) : []),
  };
  globalThis.kubetab = globalThis.kubetab || {};
  globalThis.kubetab.editor = api;

  (async () => {
    try {
      await loadCM(); // CodeMirror, the first time the tab opens
    } catch (err) {
      setStatus(err.message, 'bad');
      return;
    }
    await refreshFiles();
    while (pendingEdits.length) await openEdit(pendingEdits.shift());
  })();

  return {
    show() { refreshFiles(); },
    unmount() {
      if (typeof offLang === 'function') offLang();
      if (view) view.destroy();
      instance = null;
    },
  };
}
