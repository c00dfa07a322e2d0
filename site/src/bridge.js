// The page's side of the bridge to the control plane in the Web Worker
// (worker.js lists the messages).
//
// cluster.fetch(path, init) looks like window.fetch and returns a real
// Response, but the request never touches the network: it travels by
// postMessage to the worker, where the Go kube-apiserver handler answers it.
// A watch (?watch=true) comes back as a Response whose body streams
// newline-delimited JSON events; aborting init.signal ends the watch.

const NULL_BODY = new Set([101, 204, 205, 304]);

import { taskBegins } from './pace.js';

export class Cluster {
  /**
   * @param {string} workerURL
   * @param {{ephemeral?: boolean}} opts  ephemeral: keep no saved cluster
   *   (an embedded kubetab; the worker's name tells it)
   */
  constructor(workerURL = 'worker.js', opts = {}) {
    this.worker = new Worker(workerURL, opts.ephemeral ? { name: 'ephemeral' } : {});
    this.nextID = 1;
    this.requests = new Map(); // id → {resolve, reject, ctrl}
    this.commands = new Map(); // id → {onOutput, resolve}
    this.calls = new Map(); // id → {resolve, reject}: listImages, addImage, the lesson calls
    this.checkWatch = null; // {id, onResults} of the current watchChecks
    this.listeners = { progress: [], phase: [], ready: [], panic: [], exited: [], failed: [], edit: [], editClosed: [], commandDone: [], restored: [], saved: [], imageSaved: [] };
    this.restored = null; // what the worker found saved: {bytes, lesson, revision, ms, error}
    this.on('restored', (m) => { this.restored = m; });
    this.stderr = []; // the last lines Go wrote to stderr
    this.isReady = false;
    this.ready = new Promise((resolve, reject) => {
      this.on('ready', resolve);
      this.on('failed', (m) => reject(new Error(m.message)));
      this.on('exited', (m) => reject(new Error(`exited with code ${m.code}`)));
    });
    this.ready.then(() => { this.isReady = true; }, () => {});
    // A message from the worker starts a task: the watches that pace
    // themselves share its budget (pace.js).
    this.worker.onmessage = ({ data }) => {
      taskBegins();
      this.dispatch(data);
    };
    this.worker.onerror = (e) => this.emit('failed', { type: 'failed', message: e.message || 'worker error' });
  }

  /**
   * Listen for worker events: progress, phase, ready, panic, exited, failed;
   * edit and editClosed (kubectl edit in the console); commandDone (a
   * console line ended: the files may have changed); restored, saved and
   * imageSaved (the saved cluster and images, site/src/persist/).
   */
  on(event, fn) {
    this.listeners[event].push(fn);
  }

  emit(event, msg) {
    for (const fn of this.listeners[event]) fn(msg);
  }

  dispatch(msg) {
    switch (msg.type) {
      case 'batch':
        for (const m of msg.msgs) this.dispatch(m);
        break;
      case 'head': {
        const r = this.requests.get(msg.id);
        if (!r) return;
        const body = NULL_BODY.has(msg.status) ? null : new ReadableStream({
          start: (ctrl) => { r.ctrl = ctrl; },
          cancel: () => this.abort(msg.id),
        });
        r.resolve(new Response(body, { status: msg.status, headers: msg.headers }));
        break;
      }
      case 'chunk': {
        const r = this.requests.get(msg.id);
        if (r && r.ctrl) r.ctrl.enqueue(msg.data);
        break;
      }
      case 'end': {
        const r = this.requests.get(msg.id);
        this.requests.delete(msg.id);
        if (r && r.ctrl) r.ctrl.close();
        break;
      }
      case 'error': {
        const r = this.requests.get(msg.id);
        this.requests.delete(msg.id);
        if (!r) return;
        const err = new TypeError(`kubetab: ${msg.message}`);
        if (r.ctrl) r.ctrl.error(err); else r.reject(err);
        break;
      }
      case 'output': {
        const c = this.commands.get(msg.id);
        if (c) c.onOutput(msg.data, msg.fd);
        break;
      }
      case 'ttyMode': {
        const c = this.commands.get(msg.id);
        if (c && c.onMode) c.onMode(msg.mode);
        break;
      }
      case 'exit': {
        const c = this.commands.get(msg.id);
        this.commands.delete(msg.id);
        if (c) c.resolve(msg.code);
        this.emit('commandDone', msg);
        break;
      }
      case 'images':
      case 'imageAdded':
      case 'imageError': {
        const c = this.calls.get(msg.id);
        this.calls.delete(msg.id);
        if (!c) return;
        if (msg.type === 'imageError') c.reject(new Error(msg.message));
        else c.resolve(msg.type === 'images' ? msg.images : msg.ref);
        break;
      }
      case 'completion':
      case 'files':
      case 'lesson':
      case 'lessonErrors':
      case 'lessonReset':
      case 'filesPut':
      case 'fileList':
      case 'fileRead':
      case 'fileRemoved':
      case 'persisted':
      case 'exported': {
        const c = this.calls.get(msg.id);
        this.calls.delete(msg.id);
        if (c) c.resolve(msg);
        break;
      }
      case 'checks':
        if (this.checkWatch && this.checkWatch.id === msg.id) this.checkWatch.onResults(msg.groups);
        break;
      case 'log':
        this.stderr.push(msg.text);
        if (this.stderr.length > 200) this.stderr.shift();
        break;
      case 'exited':
      case 'failed':
        this.emit(msg.type, msg);
        this.failAll(new Error(msg.type === 'failed' ? msg.message : 'kubetab exited'));
        break;
      default:
        if (this.listeners[msg.type]) this.emit(msg.type, msg);
    }
  }

  failAll(err) {
    for (const [id, r] of this.requests) {
      if (r.ctrl) r.ctrl.error(err); else r.reject(err);
      this.requests.delete(id);
    }
    for (const [id, c] of this.commands) {
      c.resolve(1);
      this.commands.delete(id);
    }
    for (const [id, c] of this.calls) {
      c.reject(err);
      this.calls.delete(id);
    }
  }

  call(msg, transfer) {
    const id = this.nextID++;
    const done = new Promise((resolve, reject) => this.calls.set(id, { resolve, reject }));
    this.worker.postMessage({ ...msg, id }, transfer || []);
    return done;
  }

  abort(id) {
    if (!this.requests.has(id)) return;
    this.requests.delete(id);
    this.worker.postMessage({ type: 'abort', id });
  }

  /**
   * Like window.fetch, against the kube-apiserver in the worker.
   * path is "/api/v1/pods?watch=true"; init has method, headers, body, signal.
   */
  async fetch(path, init = {}) {
    const id = this.nextID++;
    let body = null;
    if (init.body != null) {
      body = typeof init.body === 'string' ? new TextEncoder().encode(init.body).buffer
        : init.body instanceof ArrayBuffer ? init.body : await new Response(init.body).arrayBuffer();
    }
    const headers = [...new Headers(init.headers || {})];
    const signal = init.signal;
    if (signal && signal.aborted) throw new DOMException('aborted', 'AbortError');
    const response = new Promise((resolve, reject) => {
      this.requests.set(id, { resolve, reject, ctrl: null });
    });
    if (signal) {
      signal.addEventListener('abort', () => {
        const r = this.requests.get(id);
        if (!r) return;
        const err = new DOMException('aborted', 'AbortError');
        if (r.ctrl) r.ctrl.error(err); else r.reject(err);
        this.abort(id);
      }, { once: true });
    }
    this.worker.postMessage({ type: 'request', id, method: init.method || 'GET', url: path, headers, body },
      body ? [body] : []);
    return response;
  }

  /**
   * The image registry the kubelets pull from: [{ref, digest, size, about,
   * builtin}], sorted by ref.
   */
  listImages() {
    return this.call({ type: 'listImages' });
  }

  /**
   * Add a learner's own WASI preview1 module (an ArrayBuffer, transferred) to
   * the registry as name:tag (tag '' means latest). Resolves to the reference
   * pods can use; rejects with an Error whose message is the Go error's text
   * (too large, a built-in name, a bad reference, not a WASI command).
   */
  addImage(name, tag, module) {
    return this.call({ type: 'addImage', name, tag, module }, [module]);
  }

  /**
   * Parse a lesson file (its text) in the worker with core/lesson. Resolves
   * to {type: 'lesson', lesson} or {type: 'lessonErrors', errors}.
   */
  parseLesson(path, text) {
    return this.call({ type: 'parseLesson', path, text });
  }

  /**
   * A fresh cluster for a lesson: its nodes, then its setup lines. Resolves
   * to {setup: [{line, code, output}], error}.
   */
  resetLesson(nodes, setup, lesson) {
    return this.call({ type: 'resetLesson', nodes: nodes || [], setup: setup || [], lesson: lesson || '' });
  }

  /**
   * Tab: complete the last word of before (the console's text up to the
   * cursor). Resolves to {word, insert, candidates}.
   */
  tab(before) {
    return this.call({ type: 'tab', before });
  }

  /** The page's language ('en' | 'ja'), for help and kubetab's own commands. */
  setLang(lang) {
    this.worker.postMessage({ type: 'setLang', lang });
  }

  /** The console's files with their text. Resolves to [{name, content}]. */
  dumpFiles() {
    return this.call({ type: 'dumpFiles' }).then((msg) => msg.files || []);
  }

  /** Write files ([{name, content}]) into the console's files. Resolves to {error}. */
  putFiles(files) {
    return this.call({ type: 'putFiles', files });
  }

  /** The console's files: resolves to [{name, size}], sorted by name. */
  async listFiles() {
    return (await this.call({ type: 'listFiles' })).files;
  }
  /** One console file's text; rejects with the console's error ("x: No such file or directory"). */
  async readFile(name) {
    const r = await this.call({ type: 'readFile', name });
    if (r.error) throw new Error(r.error);
    return r.content;
  }
  /** Write one console file; rejects with the console's error. */
  async writeFile(name, content) {
    const r = await this.putFiles([{ name, content }]);
    if (r.error) throw new Error(r.error);
  }
  /** Delete one console file; rejects with the console's error. */
  async removeFile(name) {
    const r = await this.call({ type: 'removeFile', name });
    if (r.error) throw new Error(r.error);
  }
  /**
   * Answer kubectl edit's 'edit' event ({id, name, content}): saved with
   * the new content, or cancelled (saved false).
   */
  editDone(id, saved, content) {
    this.worker.postMessage({ type: 'editDone', id, saved, content: saved ? content : '' });
  }
  /**
   * Evaluate groups of checks in the worker as the cluster changes;
   * onResults([{ok, results}]) gets each new result. Replaces the previous
   * watch; returns a function that stops this one.
   */
  watchChecks(groups, onResults) {
    const id = this.nextID++;
    this.checkWatch = { id, onResults };
    this.worker.postMessage({ type: 'watchChecks', id, groups });
    return () => {
      if (!this.checkWatch || this.checkWatch.id !== id) return;
      this.checkWatch = null;
      this.worker.postMessage({ type: 'unwatchChecks' });
    };
  }

  /**
   * Run one console line for a view, not for the learner: its output comes
   * back here and the console shows none of it (the objects view's
   * kubectl describe). Resolves to {code, stdout, stderr}. The line runs in
   * the same shell as the console's (so it sets $? as a lesson's checks do).
   */
  async capture(line, stdin) {
    const out = { 1: [], 2: [] };
    const { done } = this.run(line, (bytes, fd) => { (out[fd] || out[1]).push(bytes.slice()); }, stdin);
    const code = await done;
    const text = (chunks) => {
      const d = new TextDecoder();
      return chunks.map((c) => d.decode(c, { stream: true })).join('') + d.decode();
    };
    return { code, stdout: text(out[1]), stderr: text(out[2]) };
  }

  /**
   * Run one console line. onOutput(bytes, fd) gets its output as it comes.
   * Returns {done: Promise<exit code>, cancel(), input(text, eof), resize(cols, rows)};
   * cancel is Ctrl-C. With tty ({cols, rows, onMode(mode)}) and no stdin,
   * the line's stdin is the console's terminal: onMode tells how to handle
   * keys ('raw': send each as typed; 'cooked': a command reads a line; '':
   * nobody reads), input sends them, resize the terminal's new size.
   */
  run(line, onOutput, stdin, tty) {
    const id = this.nextID++;
    const onMode = tty && tty.onMode;
    const done = new Promise((resolve) => this.commands.set(id, { onOutput, resolve, onMode }));
    const term = stdin == null && tty ? { cols: tty.cols, rows: tty.rows } : {};
    this.worker.postMessage({ type: 'run', id, line, stdin: stdin ?? null, ...term });
    return {
      done,
      cancel: () => this.worker.postMessage({ type: 'cancel', id }),
      input: (text, eof = false) => this.worker.postMessage({ type: 'stdin', id, text, eof }),
      resize: (cols, rows) => this.worker.postMessage({ type: 'resize', id, cols, rows }),
    };
  }

  // --- the saved cluster (site/src/persist/) ---------------------------------

  /** Save now if anything changed (the page is being hidden). */
  flushSave() {
    this.worker.postMessage({ type: 'flushSave' });
  }

  /** A fresh cluster, saved. Resolves to {what, value, error}. */
  resetCluster() {
    return this.call({ type: 'resetCluster' });
  }

  /** The cluster's snapshot: resolves to {data: Uint8Array}. */
  exportSnapshot() {
    return this.call({ type: 'exportSnapshot' });
  }

  /** A snapshot file's bytes (an ArrayBuffer, transferred) replace the cluster. */
  importSnapshot(data) {
    return this.call({ type: 'importSnapshot', data }, [data]);
  }

  /** The cluster as a share link's payload: resolves to {value, error}. */
  shareLink() {
    return this.call({ type: 'shareLink' });
  }

  /** A share link's payload replaces the cluster: resolves to {error}. */
  openLink(payload) {
    return this.call({ type: 'openLink', payload });
  }
}
