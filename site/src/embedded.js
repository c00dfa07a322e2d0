// kubetab inside someone else's page: the <iframe> side of embed.js.
//
// A lesson author's static page (a blog post like the seeds, a course site)
// embeds kubetab with
//
//   <iframe src="https://example.org/kubetab/?embed=console"></iframe>   a bare console
//   <iframe src="https://example.org/kubetab/?embed=lesson#/lessons/02-first-deployment"></iframe>
//
// and embed.js (on the host page) turns its kubectl code blocks into Run
// buttons that drive this console with window.postMessage:
//
//   iframe → host   {kubetab: 'ready'}                        the cluster runs
//   host → iframe   {kubetab: 'run', id, text}                type text, run it
//   iframe → host   {kubetab: 'started', id}                  typing began
//   iframe → host   {kubetab: 'done', id, code}               its exit code
//   iframe → host   {kubetab: 'error', id, message}           refused (bad message)
//
// Only the embedding window (window.parent) is listened to, and only these
// shapes: a run is at most 8 KiB of text and is typed into the console as
// the learner would type it, so the learner sees every command that runs.
// An embedded kubetab keeps no cluster across reloads and shares no saved
// state with the full app (kubetab.embedded tells the other modules).

const maxText = 8192;

/** The embed mode the page was opened in: 'console', 'lesson' or ''. */
export function embedMode(loc = window.location) {
  const params = new URLSearchParams(loc.search);
  if (!params.has('embed')) return '';
  return params.get('embed') === 'lesson' ? 'lesson' : 'console';
}

/**
 * Validate a message from the host. Returns {id, text} for a run, or throws
 * with the reason.
 */
export function parseRun(data) {
  if (!data || typeof data !== 'object' || data.kubetab !== 'run') throw new Error('not a kubetab run message');
  const id = data.id;
  if (typeof id !== 'string' && typeof id !== 'number') throw new Error('run: id must be a string or a number');
  if (typeof data.text !== 'string' || data.text.trim() === '') throw new Error('run: text must be a non-empty string');
  if (data.text.length > maxText) throw new Error(`run: text is longer than ${maxText} characters`);
  return { id, text: data.text.replace(/\r\n/g, '\n').replace(/\n+$/, '') };
}

/**
 * Start listening to the embedding page.
 * @param {{term, cluster}} ctx
 */
export function listen({ term, cluster }) {
  const host = window.parent;
  if (!host || host === window) return () => {};
  const post = (msg) => host.postMessage(msg, '*');
  const onMessage = (ev) => {
    if (ev.source !== host || !ev.data || typeof ev.data !== 'object' || !('kubetab' in ev.data)) return;
    let run;
    try {
      run = parseRun(ev.data);
    } catch (err) {
      post({ kubetab: 'error', id: ev.data.id ?? null, message: err.message });
      return;
    }
    post({ kubetab: 'started', id: run.id });
    term.typeAndRun(run.text).then(
      (code) => post({ kubetab: 'done', id: run.id, code }),
      (err) => post({ kubetab: 'error', id: run.id, message: String(err && err.message || err) }),
    );
  };
  window.addEventListener('message', onMessage);
  cluster.ready.then(() => post({ kubetab: 'ready' }), () => {});
  return () => window.removeEventListener('message', onMessage);
}
