// The Web Worker that runs kubetab's control plane (kubetab.wasm, built from
// wasm/). It loads the wasm with download progress, starts the Go program, and
// relays messages between the page and Go.
//
// This header is the protocol between the page (bridge.js) and the worker;
// wasm/worker's doc comments name the Go side of each message.
//
// Messages from the page:
//   {type: 'request', id, method, url, headers: [[k, v]...], body: ArrayBuffer|null}
//   {type: 'abort', id}                  the page no longer reads that response
//   {type: 'run', id, line, stdin?}      a console line (also a view's own line:
//                                        bridge.js capture() keeps its output for
//                                        the view, e.g. the objects view's
//                                        kubectl describe, and the console shows
//                                        none of it)
//   {type: 'run', id, line, cols, rows}  the same without stdin: the line's stdin
//                                        is the console's terminal, of that size
//                                        (console.Terminal); answered by 'ttyMode'
//   {type: 'stdin', id, text, eof}       what was typed, for that line's terminal:
//                                        each key as typed in raw mode, a whole
//                                        line at Enter in cooked mode; eof: Ctrl-D
//                                        on an empty cooked line
//   {type: 'resize', id, cols, rows}     that line's terminal changed size (kubectl
//                                        exec -it sends it to the container's pty)
//   {type: 'cancel', id}                 Ctrl-C for that line
//   {type: 'tab', id, before}            Tab: complete the last word of before
//                                        (the console's text up to the cursor)
//   {type: 'setLang', lang}              'en' | 'ja': help and kubetab's own
//                                        commands speak it from the next line on
//   {type: 'dumpFiles', id}              the console's files with their text (to keep them
//                                        across a reload; putFiles restores them)
//   {type: 'listImages', id}             the image registry's catalog
//   {type: 'addImage', id, name, tag, module: ArrayBuffer}
//                                        a learner's own .wasm, as name:tag
// The lesson player's (site/src/lessons/; the lesson JSON is core/lesson's types):
//   {type: 'parseLesson', id, path, text}  a lesson file picked from disk
//   {type: 'resetLesson', id, nodes, setup, lesson}
//                                        a fresh cluster with the lesson's nodes
//                                        (empty: the default three), then its
//                                        setup lines in order; the console's
//                                        files are emptied; the saved cluster
//                                        belongs to lesson (its slug) from then on
//   {type: 'putFiles', id, files: [{name, content}]}
//                                        a step's manifests into the console's files
//   {type: 'watchChecks', id, groups: [[{line, command, op, want}...]...]}
//                                        evaluate each group (a step's checks)
//                                        in the worker as the cluster changes;
//                                        replaces the previous watch
//   {type: 'unwatchChecks'}              stop evaluating
// The editor's (site/src/views/editor/; wasm/worker/editor.go):
//   {type: 'listFiles', id}              the console's files (its working directory)
//   {type: 'readFile', id, name}         one file's text
//   {type: 'removeFile', id, name}       delete one (as the console's rm)
//                                        (writes are putFiles, above)
//   {type: 'editDone', id, saved, content}
//                                        the answer to an 'edit': saved with the
//                                        new text, or cancelled (saved false:
//                                        kubectl edit sees the file unchanged)
// The saved cluster's (site/src/persist/; wasm/worker/persist.go):
//   {type: 'flushSave'}                  save now if anything changed (page hidden)
//   {type: 'resetCluster', id}           a fresh cluster (default nodes), saved
//   {type: 'exportSnapshot', id}         the cluster's snapshot, for a file
//   {type: 'importSnapshot', id, data: ArrayBuffer}
//                                        a snapshot file: checked, then it replaces
//                                        the cluster (a bad one changes nothing)
//   {type: 'shareLink', id}              the cluster as a link payload ('1.…')
//   {type: 'openLink', id, payload}      a link's payload (after '#cluster='):
//                                        checked, then it replaces the cluster
// The benchmark's (test/browser/bench_test.go):
//   {type: 'lagProbe', id, on}           on true: (re)start measuring this
//                                        worker's event-loop lag, a 10 ms timer
//                                        that records how late each tick runs
//                                        (a long Go task delays it: workers have
//                                        no longtask observer); answered at once
//                                        by 'lag'. on false: stop, and answer
//                                        'lag' with what was measured. Off
//                                        unless the page asks; works before
//                                        'ready' too.
//   IndexedDB 'kubetab', object store 'cluster', key 'page':
//     {format: 1, data: Uint8Array (core/store's snapshot format), lesson,
//      revision, savedAt (ms since the epoch)}
//   read before the Go program starts (globalThis.kubetabSaved) and written
//   by every save; core/cluster restores it before any controller runs.
// Messages to the page:
//   {type: 'progress', loaded, total}    wasm download (total 0 when unknown)
//   {type: 'phase', phase}               'compile' | 'start'
//   {type: 'ready'}                      the API and the console answer now
//   {type: 'batch', msgs: [...]}         several of the messages below, in order
//                                        (responses and console output are
//                                        batched: see post)
//   {type: 'head', id, status, headers}  then {type: 'chunk', id, data}... then
//   {type: 'end', id} or {type: 'error', id, message}
//   {type: 'output', id, fd, data}       console bytes (fd 1 or 2), then {type: 'exit', id, code}
//   {type: 'ttyMode', id, mode}          how the console handles keys for that line:
//                                        'raw' (kubectl exec/attach/run -it: every
//                                        key to the container's terminal, Ctrl-C
//                                        too), 'cooked' (a command reads: edit a
//                                        line, send it at Enter, Ctrl-D is EOF), ''
//                                        (nobody reads: keys wait for the prompt)
//   {type: 'completion', id, word, insert, candidates}
//                                        Tab's answer: replace word (the text
//                                        before the cursor, as typed) by insert;
//                                        candidates are what a second Tab lists
//   {type: 'files', id, files: [{name, content}]}
//   {type: 'images', id, images: [{ref, digest, size, about, builtin}]}
//   {type: 'imageAdded', id, ref}        listed; pods can run it now
//   {type: 'imageSaved', id, ref, digest, bytes, error}
//                                        the added image was written to IndexedDB
//                                        (error: why it was not: over the size
//                                        cap, or IndexedDB's), so a reload keeps it
//   {type: 'imageError', id, message}    refused (size, reference, not a WASI
//                                        command); message is the Go error's text
//   {type: 'lesson', id, lesson}         parsed: a core/lesson Lesson
//   {type: 'lessonErrors', id, errors: ['path:line: message'...]}
//                                        the verifier's messages for a malformed file
//   {type: 'lessonReset', id, setup: [{line, code, output}], error}
//                                        the cluster is fresh and set up (error:
//                                        what failed, when something did)
//   {type: 'filesPut', id, error}        error '' when every file was written
//   {type: 'checks', id, groups: [{ok, results: [{ok, code, output}]}]}
//                                        the watch's results, posted when they
//                                        change (the store's revision moved,
//                                        looked at every 250 ms, or every 3 s)
//   {type: 'fileList', id, files: [{name, size}]}
//   {type: 'fileRead', id, content, error}   error '' when read
//   {type: 'fileRemoved', id, error}
//   {type: 'edit', id, name, content}    kubectl edit in the console opens this
//                                        file (kubectl-edit-*.yaml) in the editor
//                                        and waits for its editDone
//   {type: 'editClosed', id}             that kubectl edit ended (Ctrl-C)
//   {type: 'restored', bytes, lesson, revision, ms, error}
//                                        before 'ready': what was saved (bytes 0:
//                                        nothing), the lesson it belongs to, and
//                                        error when it could not be used (the
//                                        cluster is fresh then)
//   {type: 'saved', revision, bytes, ms, wallMs, lesson, error}
//                                        a save reached IndexedDB (ms: the worker
//                                        time the snapshot held the thread;
//                                        wallMs: its wall time, with the turns it
//                                        gave other work; error: IndexedDB's)
//   {type: 'persisted', id, what, value, error}
//                                        what: 'reset' | 'import' | 'open' | 'link'
//                                        (value: the link payload); error '' when done
//   {type: 'exported', id, data}         the snapshot's bytes
//   {type: 'lag', id, longest, over50, blocked, ticks, ms, gaps, ready, memory}
//                                        the lag probe's figures since it was
//                                        turned on: the longest delay of a tick
//                                        (ms; about the longest worker task),
//                                        how many delays were over 50 ms, their
//                                        sum (blocked), ticks seen, ms measured;
//                                        gaps: [[start, ms]...] of each delay
//                                        over 50 ms (the first 1000), and ready:
//                                        when 'ready' was posted (0: not yet),
//                                        both in this worker's performance.now();
//                                        memory: the Go program's linear memory
//                                        in bytes (null before it is made)
//   {type: 'panic', where, message, stack}   Go recovered a panic
//   {type: 'log', text}                  Go wrote to stderr (kept for crash reports)
//   {type: 'exited', code}               the Go program ended (it should not)
//   {type: 'failed', message}            loading failed

/* global Go, importScripts */

// Responses' bytes and console output go to the page in batches: a busy
// cluster streams thousands of watch chunks a second, and each message is a
// task on the page's main thread (with its stream's reads and parses), so
// messages of these kinds wait in an outbox that goes out as one
// {type: 'batch', msgs} at most every FLUSH_MS (at once when it has been
// quiet for longer), consecutive chunks of one response joined into one.
// Every other message flushes the outbox and goes at once, in order (the
// start-up's progress must not wait behind Go's long first task).
const FLUSH_MS = 16;
const BATCHED = new Set(['head', 'chunk', 'end', 'error', 'output']);
let outbox = [];
let outboxTransfer = [];
let flushTimer = 0;
let lastFlush = -FLUSH_MS;

function post(msg, transfer) {
  if (!BATCHED.has(msg.type)) {
    flushOutbox();
    self.postMessage(msg, transfer || []);
    return;
  }
  const last = outbox[outbox.length - 1];
  if (last && (msg.type === 'chunk' || msg.type === 'output') && last.type === msg.type && last.id === msg.id && last.fd === msg.fd) {
    (last.parts || (last.parts = [last.data])).push(msg.data);
  } else {
    outbox.push(msg);
  }
  if (transfer) outboxTransfer.push(...transfer);
  if (!flushTimer) flushTimer = setTimeout(flushOutbox, Math.max(0, lastFlush + FLUSH_MS - performance.now()));
}

function flushOutbox() {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = 0;
  if (!outbox.length) return;
  lastFlush = performance.now();
  const msgs = outbox;
  let transfer = outboxTransfer;
  outbox = [];
  outboxTransfer = [];
  for (const m of msgs) {
    if (!m.parts) continue;
    const data = new Uint8Array(m.parts.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const p of m.parts) {
      data.set(p, at);
      at += p.byteLength;
    }
    m.data = data;
    delete m.parts;
    transfer.push(data.buffer);
  }
  // A buffer of a joined chunk is no longer in a message: it goes as a
  // transfer all the same (detached here, dropped there), which is allowed.
  self.postMessage(msgs.length === 1 ? msgs[0] : { type: 'batch', msgs }, transfer);
}

// A Uint8Array travels by transfer when it owns its whole buffer; otherwise
// by copy of just its bytes.
function bytesMessage(msg, u8) {
  if (u8.byteOffset === 0 && u8.byteLength === u8.buffer.byteLength) {
    msg.data = u8;
    post(msg, [u8.buffer]);
  } else {
    msg.data = u8.slice();
    post(msg, [msg.data.buffer]);
  }
}

// kubetabHost is what Go calls (wasm/worker/host.go).
globalThis.kubetabHost = {
  // newStream makes the ReadableStream body of a streamed response (a watch).
  newStream(onCancel) {
    let ctrl;
    let done = false;
    const stream = new ReadableStream({
      start(c) { ctrl = c; },
      cancel() { if (!done) { done = true; onCancel(); } },
    });
    return {
      stream,
      push(u8) { if (!done) ctrl.enqueue(u8); },
      close() { if (!done) { done = true; ctrl.close(); } },
      fail(message) { if (!done) { done = true; ctrl.error(new Error(message)); } },
    };
  },
  tab(id, json) { post({ type: 'completion', id, ...JSON.parse(json) }); },
  output(id, fd, u8) { bytesMessage({ type: 'output', id, fd }, u8); },
  exit(id, code) { post({ type: 'exit', id, code }); },
  ttyMode(id, mode) { post({ type: 'ttyMode', id, mode }); },
  imageAdded(id, ref) {
    post({ type: 'imageAdded', id, ref });
    const added = addingImages.get(id);
    addingImages.delete(id);
    if (added) saveImage(id, ref, added);
  },
  imageError(id, message) { addingImages.delete(id); post({ type: 'imageError', id, message }); },
  panic(where, message, stack) { post({ type: 'panic', where, message, stack }); },
  lessonParsed(id, json) { post({ type: 'lesson', id, lesson: JSON.parse(json) }); },
  lessonErrors(id, json) { post({ type: 'lessonErrors', id, errors: JSON.parse(json) }); },
  lessonReset(id, json) { post({ type: 'lessonReset', id, ...JSON.parse(json) }); },
  filesPut(id, error) { post({ type: 'filesPut', id, error }); },
  checks(id, json) { post({ type: 'checks', id, groups: JSON.parse(json) }); },
  fileList(id, json) { post({ type: 'fileList', id, files: JSON.parse(json) }); },
  fileRead(id, content, error) { post({ type: 'fileRead', id, content, error }); },
  fileRemoved(id, error) { post({ type: 'fileRemoved', id, error }); },
  openEditor(id, name, content) { post({ type: 'edit', id, name, content }); },
  closeEditor(id) { post({ type: 'editClosed', id }); },
  restored(json) { post({ type: 'restored', ...JSON.parse(json) }); },
  save(u8, json) { saveCluster(u8.slice(), JSON.parse(json)); },
  persisted(id, what, value, error) { post({ type: 'persisted', id, what, value, error }); },
  exported(id, u8) { bytesMessage({ type: 'exported', id }, u8); },
};

// --- the saved cluster (IndexedDB) ---------------------------------------------

const DB_NAME = 'kubetab';
const DB_STORE = 'cluster';
const DB_KEY = 'page';
const SAVED_FORMAT = 1;

function openDB() {
  return new Promise((resolve, reject) => {
    if (typeof indexedDB === 'undefined') { reject(new Error('IndexedDB is not available')); return; }
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(DB_STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error || new Error('IndexedDB open failed'));
    req.onblocked = () => reject(new Error('IndexedDB is blocked by another tab'));
  });
}

let dbPromise = null;
const db = () => { dbPromise = dbPromise || openDB(); return dbPromise; };

// readSaved resolves to globalThis.kubetabSaved's value: {data, lesson,
// error}; nothing saved is data null. It never rejects and gives up after 3 s.
// An embedded kubetab (new Worker(..., {name: 'ephemeral'})) neither reads
// nor writes the saved cluster: the page that embeds it must not change the
// learner's own.
const ephemeral = self.name === 'ephemeral';

async function readSaved() {
  if (ephemeral) return { data: null, lesson: '', error: '' };
  const read = (async () => {
    const d = await db();
    const rec = await new Promise((resolve, reject) => {
      const req = d.transaction(DB_STORE, 'readonly').objectStore(DB_STORE).get(DB_KEY);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    if (rec === undefined || rec === null) return { data: null, lesson: '', error: '' };
    if (typeof rec !== 'object' || rec.format !== SAVED_FORMAT) {
      return { data: null, lesson: '', error: `the saved cluster has record format ${rec && rec.format} (this kubetab reads ${SAVED_FORMAT})` };
    }
    let data = rec.data;
    if (data instanceof ArrayBuffer) data = new Uint8Array(data);
    if (!(data instanceof Uint8Array)) return { data: null, lesson: '', error: 'the saved cluster holds no snapshot bytes' };
    return { data, lesson: typeof rec.lesson === 'string' ? rec.lesson : '', error: '' };
  })();
  const timeout = new Promise((resolve) => setTimeout(() => resolve({ data: null, lesson: '', error: '', timedOut: true }), 3000));
  try {
    return await Promise.race([read, timeout]);
  } catch (err) {
    return { data: null, lesson: '', error: '', unavailable: String(err && err.message ? err.message : err) };
  }
}

// Saves are written one after the other; a newer one waiting replaces an
// older one waiting.
let saving = Promise.resolve();
let pendingSave = null;
function saveCluster(data, meta) {
  if (ephemeral) return;
  const queued = pendingSave === null;
  pendingSave = { data, meta };
  if (!queued) return;
  saving = saving.then(async () => {
    let { data: d, meta: m } = pendingSave;
    pendingSave = null;
    let error = '';
    try {
      if (m.unsealed) d = await seal(d);
      const conn = await db();
      await new Promise((resolve, reject) => {
        const tx = conn.transaction(DB_STORE, 'readwrite');
        tx.objectStore(DB_STORE).put({ format: SAVED_FORMAT, data: d, lesson: m.lesson, revision: m.revision, savedAt: Date.now() }, DB_KEY);
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error || new Error('aborted'));
      });
    } catch (err) {
      error = String(err && err.message ? err.message : err);
    }
    post({ type: 'saved', revision: m.revision, bytes: d.byteLength, ms: m.ms, wallMs: m.wallMs, lesson: m.lesson, error });
  });
}
const savedRead = readSaved();

// seal appends to a snapshot's body (store.SnapshotBody) the SHA-256 that
// ends core/store's format, with WebCrypto: natively and off the worker's
// thread, where Go's hash compiled to wasm took most of a save.
async function seal(body) {
  const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
  const out = new Uint8Array(body.byteLength + sum.byteLength);
  out.set(body);
  out.set(sum, body.byteLength);
  return out;
}

// --- the learner's images (IndexedDB, beside the saved cluster) -----------------
//
// An image added in the Images panel ('addImage') is kept across reloads, so
// the saved cluster's pods can pull it again: its module once under its
// content digest (key 'image sha256:<hex>'), and the record IMAGES_KEY
// naming each reference's digest in the order they were added:
//   {format: 1, images: [{name, tag, digest, size}]}
// At most IMAGES_MAX_BYTES of modules are kept (each is at most 8 MiB, Go's
// images.MaxModuleBytes); an image that would pass it stays listed until the
// tab closes but is not saved ('imageSaved' says why). A module no reference
// names any more is deleted. Before the Go program starts, every saved
// module whose bytes still hash to its digest is handed to it
// (globalThis.kubetabSavedImages: [{name, tag, module}]); wasm/worker's
// RestoreImages adds them to the registry before the saved cluster starts.
const IMAGES_KEY = 'images';
const IMAGES_FORMAT = 1;
const IMAGES_MAX_BYTES = 32 << 20;
const imageKey = (digest) => 'image ' + digest;
const addingImages = new Map(); // addImage id -> {name, tag, module}, until Go answers

function idbGet(conn, key) {
  return new Promise((resolve, reject) => {
    const req = conn.transaction(DB_STORE, 'readonly').objectStore(DB_STORE).get(key);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function sha256(bytes) {
  const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const b of sum) hex += b.toString(16).padStart(2, '0');
  return 'sha256:' + hex;
}

function savedImageList(rec) {
  return rec && rec.format === IMAGES_FORMAT && Array.isArray(rec.images) ? rec.images : [];
}

async function readSavedImages() {
  if (ephemeral) return [];
  try {
    const conn = await db();
    const out = [];
    for (const e of savedImageList(await idbGet(conn, IMAGES_KEY))) {
      let module = await idbGet(conn, imageKey(e.digest));
      if (module instanceof ArrayBuffer) module = new Uint8Array(module);
      if (!(module instanceof Uint8Array) || await sha256(module) !== e.digest) continue; // missing or damaged
      out.push({ name: String(e.name), tag: String(e.tag), module });
    }
    return out;
  } catch (err) {
    return [];
  }
}
const imagesRead = readSavedImages();

let imagesSaving = Promise.resolve();
function saveImage(id, ref, { name, tag, module }) {
  if (ephemeral) return;
  imagesSaving = imagesSaving.then(async () => {
    let error = '';
    let digest = '';
    try {
      digest = await sha256(module);
      const conn = await db();
      const list = savedImageList(await idbGet(conn, IMAGES_KEY));
      const kept = list.filter((e) => !(e.name === name && e.tag === tag));
      const sizes = new Map(kept.map((e) => [e.digest, e.size]));
      const total = [...sizes.values()].reduce((a, b) => a + b, 0);
      if (!sizes.has(digest) && total + module.byteLength > IMAGES_MAX_BYTES) {
        throw new Error(`${ref} is not kept across a reload: the saved images would take ${total + module.byteLength} bytes, the limit is ${IMAGES_MAX_BYTES}`);
      }
      kept.push({ name, tag, digest, size: module.byteLength });
      const named = new Set(kept.map((e) => e.digest));
      await new Promise((resolve, reject) => {
        const tx = conn.transaction(DB_STORE, 'readwrite');
        const st = tx.objectStore(DB_STORE);
        st.put(module, imageKey(digest));
        st.put({ format: IMAGES_FORMAT, images: kept }, IMAGES_KEY);
        for (const e of list) if (!named.has(e.digest)) st.delete(imageKey(e.digest));
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error || new Error('aborted'));
      });
    } catch (err) {
      error = String(err && err.message ? err.message : err);
    }
    post({ type: 'imageSaved', id, ref, digest, bytes: module.byteLength, error });
  });
}

// syumai/workers reads globalThis.context.binding when the Go program
// initializes, and puts handleRequest there; wasm/worker adds runCommand,
// cancelCommand, listImages, addImage, and the lesson player's parseLesson,
// resetLesson, putFiles, watchChecks and unwatchChecks, and the editor's
// listFiles, readFile, removeFile and editDone; the console's tabComplete,
// setLang and dumpFiles.
globalThis.context = { binding: {} };
const binding = globalThis.context.binding;

importScripts('wasm_exec.js');

// Keep Go's stderr (panics, fatal errors) for the page, as well as printing it.
{
  const write = globalThis.fs.writeSync.bind(globalThis.fs);
  const decoder = new TextDecoder();
  globalThis.fs.writeSync = (fd, buf) => {
    if (fd === 2) post({ type: 'log', text: decoder.decode(buf) });
    return write(fd, buf);
  };
}

let markReady;
const ready = new Promise((resolve) => { markReady = resolve; });

// The Go program's linear memory, for the lag probe's answer. (Growing it
// up front, before Go starts, was measured: under Node it took a 300-pod
// restore from 2.8-4.3 s to 2.3-2.6 s, because Node's memory.grow is slow,
// but in Chromium it changed nothing, 1.7-2.0 s either way.)
let memory = null;

async function load() {
  const url = new URL('kubetab.wasm', self.location.href);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url.pathname}: ${res.status} ${res.statusText}`);
  // With Content-Encoding, Content-Length counts the compressed bytes; kubetab
  // serve then sends the real size as X-Decoded-Content-Length. Without
  // either, the total is unknown and the page shows bytes only.
  const total = Number(res.headers.get('content-encoding')
    ? res.headers.get('x-decoded-content-length')
    : res.headers.get('content-length')) || 0;
  let loaded = 0;
  let lastPost = 0;
  const counted = res.body.pipeThrough(new TransformStream({
    transform(chunk, ctrl) {
      loaded += chunk.byteLength;
      const now = performance.now();
      if (now - lastPost > 30 || loaded === total) {
        lastPost = now;
        post({ type: 'progress', loaded, total });
      }
      ctrl.enqueue(chunk);
    },
    flush() {
      post({ type: 'progress', loaded, total: total || loaded });
      post({ type: 'phase', phase: 'compile' });
    },
  }));

  const go = new Go();
  go.exit = (code) => post({ type: 'exited', code });
  const imports = {
    ...go.importObject,
    // syumai/workers' Ready() calls this import.
    workers: { ready: () => { readyAt = performance.now(); post({ type: 'ready' }); markReady(); } },
  };
  // Compile while downloading.
  const wasmResponse = new Response(counted, { headers: { 'Content-Type': 'application/wasm' } });
  const { instance } = await WebAssembly.instantiateStreaming(wasmResponse, imports);
  memory = instance.exports.mem;
  globalThis.kubetabSaved = await savedRead;
  globalThis.kubetabSavedImages = await imagesRead;
  post({ type: 'phase', phase: 'start' });
  go.run(instance); // resolves when the program exits; go.exit reports it
}

// The event-loop lag probe ('lagProbe'): a timer every LAG_TICK ms; how much
// later than asked a tick runs is how long the worker's thread was busy with
// something else (Go's tasks, message handling) before it.
const LAG_TICK = 10;
let lag = null;
let readyAt = 0; // performance.now() of 'ready', for the probe's answer
function lagTick() {
  if (!lag) return;
  const now = performance.now();
  const late = now - lag.last - LAG_TICK;
  if (late > lag.longest) lag.longest = late;
  if (late > 50) {
    lag.over50++;
    lag.blocked += late;
    if (lag.gaps.length < 1000) lag.gaps.push([lag.last + LAG_TICK, late]);
  }
  lag.ticks++;
  lag.last = now;
  lag.timer = setTimeout(lagTick, LAG_TICK);
}
function lagProbe({ id, on }) {
  if (lag) clearTimeout(lag.timer);
  const result = lag
    ? { longest: Math.max(0, lag.longest), over50: lag.over50, blocked: lag.blocked, ticks: lag.ticks,
        ms: performance.now() - lag.start, gaps: lag.gaps, ready: readyAt, memory: memory && memory.buffer.byteLength }
    : { longest: 0, over50: 0, blocked: 0, ticks: 0, ms: 0, gaps: [], ready: readyAt, memory: memory && memory.buffer.byteLength };
  lag = null;
  if (on) {
    const now = performance.now();
    lag = { start: now, last: now, longest: 0, over50: 0, blocked: 0, ticks: 0, timer: 0, gaps: [] };
    lag.timer = setTimeout(lagTick, LAG_TICK);
  }
  post({ type: 'lag', id, ...result });
}

// Open responses, by request id, so that an abort can cancel the body; and
// aborts that came before their response did.
const readers = new Map();
const aborted = new Set();

async function serve({ id, method, url, headers, body }) {
  await ready;
  try {
    const init = { method, headers: new Headers(headers) };
    if (body && method !== 'GET' && method !== 'HEAD') init.body = body;
    const req = new Request(new URL(url, self.location.origin), init);
    const res = await binding.handleRequest(req);
    post({ type: 'head', id, status: res.status, headers: [...res.headers] });
    if (!res.body) {
      post({ type: 'end', id });
      return;
    }
    const reader = res.body.getReader();
    readers.set(id, reader);
    if (aborted.has(id)) reader.cancel().catch(() => {});
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.byteLength) bytesMessage({ type: 'chunk', id }, value);
    }
    post({ type: 'end', id });
  } catch (err) {
    post({ type: 'error', id, message: String(err && err.message ? err.message : err) });
  } finally {
    readers.delete(id);
    aborted.delete(id);
  }
}

self.onmessage = async ({ data: msg }) => {
  switch (msg.type) {
    case 'request':
      serve(msg);
      break;
    case 'lagProbe':
      lagProbe(msg);
      break;
    case 'abort': {
      const reader = readers.get(msg.id);
      if (reader) reader.cancel().catch(() => {});
      else aborted.add(msg.id);
      break;
    }
    case 'run':
      await ready;
      if (msg.stdin == null && msg.cols > 0) binding.runCommand(msg.id, msg.line, null, msg.cols, msg.rows);
      else binding.runCommand(msg.id, msg.line, msg.stdin ?? null);
      break;
    case 'stdin':
      await ready;
      binding.stdinData(msg.id, String(msg.text ?? ''), !!msg.eof);
      break;
    case 'resize':
      await ready;
      binding.resizeTerminal(msg.id, msg.cols | 0, msg.rows | 0);
      break;
    case 'cancel':
      await ready;
      binding.cancelCommand(msg.id);
      break;
    case 'tab':
      await ready;
      binding.tabComplete(msg.id, String(msg.before));
      break;
    case 'setLang':
      await ready;
      binding.setLang(String(msg.lang));
      break;
    case 'dumpFiles':
      await ready;
      post({ type: 'files', id: msg.id, files: JSON.parse(binding.dumpFiles() || '[]') });
      break;
    case 'listImages':
      await ready;
      post({ type: 'images', id: msg.id, images: JSON.parse(binding.listImages() || '[]') });
      break;
    case 'addImage':
      await ready;
      addingImages.set(msg.id, { name: String(msg.name), tag: String(msg.tag), module: new Uint8Array(msg.module) });
      binding.addImage(msg.id, String(msg.name), String(msg.tag), new Uint8Array(msg.module));
      break;
    case 'parseLesson':
      await ready;
      binding.parseLesson(msg.id, String(msg.path), String(msg.text));
      break;
    case 'resetLesson':
      await ready;
      binding.resetLesson(msg.id, JSON.stringify({ nodes: msg.nodes || [], setup: msg.setup || [], lesson: String(msg.lesson || '') }));
      break;
    case 'putFiles':
      await ready;
      binding.putFiles(msg.id, JSON.stringify(msg.files || []));
      break;
    case 'watchChecks':
      await ready;
      binding.watchChecks(msg.id, JSON.stringify(msg.groups || []));
      break;
    case 'unwatchChecks':
      await ready;
      binding.unwatchChecks();
      break;
    case 'listFiles':
      await ready;
      binding.listFiles(msg.id);
      break;
    case 'readFile':
      await ready;
      binding.readFile(msg.id, String(msg.name));
      break;
    case 'removeFile':
      await ready;
      binding.removeFile(msg.id, String(msg.name));
      break;
    case 'editDone':
      await ready;
      binding.editDone(msg.id, !!msg.saved, String(msg.content ?? ''));
      break;
    case 'flushSave':
      await ready;
      binding.flushSave();
      break;
    case 'resetCluster':
    case 'exportSnapshot':
    case 'shareLink':
      await ready;
      binding[msg.type](msg.id);
      break;
    case 'importSnapshot':
      await ready;
      binding.importSnapshot(msg.id, new Uint8Array(msg.data));
      break;
    case 'openLink':
      await ready;
      binding.openLink(msg.id, String(msg.payload));
      break;
    default:
      console.warn('kubetab worker: unknown message', msg);
  }
};

load().catch((err) => post({ type: 'failed', message: String(err && err.message ? err.message : err) }));
