// The page's first script (index.html's head, before the stylesheet and the
// page's bundle): it starts the control plane's worker, and so the
// kubetab.wasm download, before main.js (about 370 kB) has loaded and run.
// main.js's Cluster (bridge.js) takes this worker and the messages it posted
// meanwhile from window.kubetabBoot. An embedded page (?embed=) keeps no
// saved cluster: its worker is named 'ephemeral', as bridge.js names it.
// A plain file, not an inline script: the site's Content-Security-Policy
// allows scripts from 'self' only (site/site.go).
(function () {
  try {
    var ephemeral = /[?&]embed(=|&|$)/.test(location.search);
    var worker = new Worker('worker.js', ephemeral ? { name: 'ephemeral' } : {});
    var early = [];
    worker.onmessage = function (e) { early.push({ data: e.data }); };
    worker.onerror = function (e) { early.push({ error: e }); };
    window.kubetabBoot = { worker: worker, early: early, ephemeral: ephemeral };
  } catch (e) {
    // main.js starts the worker itself then
  }
})();
