// embed.js: make the kubectl code blocks of any static page runnable in a
// live kubetab, the way Thebe turns a static notebook's cells live.
//
//   <iframe data-kubetab src="https://example.org/kubetab/?embed=console"
//           title="kubetab" style="width:100%;height:420px;border:0"></iframe>
//   <pre><code class="language-kubectl">kubectl create deployment web --image=hello --replicas=3</code></pre>
//   <script src="https://example.org/kubetab/embed.js"></script>
//
// Every <pre><code class="language-kubectl"> (and language-console, and any
// <pre data-kubetab-run>) gets a Run button; pressing it types the block into
// the embedded console, where the learner sees it run (a "$ " prompt at the
// start of a line is dropped). With no iframe[data-kubetab] on the page, the
// script adds one: into an element [data-kubetab-console] if there is one,
// else at the end of the page. The iframe's side and the message protocol
// are in embedded.js. Buttons carry data-kubetab-run and data-state
// (starting, ready, running, done, failed) and, when done, data-code.

(function () {
  const script = document.currentScript;
  const base = new URL((script && script.dataset.kubetab) || '.', script ? script.src : location.href);
  const ja = (document.documentElement.lang || navigator.language || '').startsWith('ja');
  const text = ja
    ? { run: '▶ 実行', starting: '起動中…', running: '実行中…', done: '✓ 完了', failed: '✗ 終了コード {code}', title: 'kubetab のコンソールで実行します' }
    : { run: '▶ Run', starting: 'Starting…', running: 'Running…', done: '✓ Done', failed: '✗ Exit {code}', title: 'Run it in the kubetab console' };

  function frame() {
    let f = document.querySelector('iframe[data-kubetab]');
    if (f) return f;
    f = document.createElement('iframe');
    f.dataset.kubetab = '';
    f.src = new URL(`?embed=console${ja ? '&lang=ja' : ''}`, base).href;
    f.title = 'kubetab';
    f.style.cssText = 'width:100%;height:440px;border:1px solid #d0d7e2;border-radius:8px';
    (document.querySelector('[data-kubetab-console]') || document.body).append(f);
    return f;
  }

  function blockText(pre) {
    return pre.textContent.split('\n').map((l) => l.replace(/^\$ /, '')).join('\n').trim();
  }

  const iframe = frame();
  const origin = new URL(iframe.src, location.href).origin;
  let ready = false;
  let nextId = 1;
  const buttons = new Map(); // id → button

  function setState(btn, state, code) {
    btn.dataset.state = state;
    if (code !== undefined) btn.dataset.code = String(code);
    btn.disabled = state === 'starting' || state === 'running';
    btn.textContent = {
      starting: text.starting, ready: text.run, running: text.running,
      done: text.done, failed: text.failed.replace('{code}', String(code)),
    }[state];
  }

  const blocks = document.querySelectorAll('pre > code.language-kubectl, pre > code.language-console, pre[data-kubetab-run]');
  const all = [];
  for (const el of blocks) {
    const pre = el.tagName === 'PRE' ? el : el.parentElement;
    if (pre.dataset.kubetabWired) continue;
    pre.dataset.kubetabWired = '';
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.dataset.kubetabRun = '';
    btn.title = text.title;
    btn.style.cssText = 'display:block;margin:-6px 0 14px;font:600 13px system-ui,sans-serif;padding:4px 12px;border-radius:6px;border:1px solid #326ce5;background:#326ce5;color:#fff;cursor:pointer';
    setState(btn, ready ? 'ready' : 'starting');
    btn.addEventListener('click', () => {
      const id = nextId++;
      buttons.set(id, btn);
      setState(btn, 'running');
      iframe.contentWindow.postMessage({ kubetab: 'run', id, text: blockText(pre) }, origin);
      iframe.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    });
    pre.after(btn);
    all.push(btn);
  }

  window.addEventListener('message', (ev) => {
    if (ev.source !== iframe.contentWindow || ev.origin !== origin) return;
    const m = ev.data || {};
    if (m.kubetab === 'ready') {
      ready = true;
      for (const b of all) if (b.dataset.state === 'starting') setState(b, 'ready');
      return;
    }
    const btn = buttons.get(m.id);
    if (!btn) return;
    if (m.kubetab === 'done') {
      buttons.delete(m.id);
      setState(btn, m.code === 0 ? 'done' : 'failed', m.code);
    } else if (m.kubetab === 'error') {
      buttons.delete(m.id);
      console.warn('kubetab embed:', m.message);
      setState(btn, 'failed', -1);
    }
  });
})();
