// Every piece of UI text, in one table per language, so that a translation
// (or a lesson's text later) is one place to edit. Keys are shared; a key
// missing from a language falls back to English.

export const strings = {
  en: {
    'lang.name': 'English',
    'lang.switch': '日本語',
    'lang.switch.title': '日本語に切り替える',
    'tagline': 'A real Kubernetes control plane, running in this browser tab',
    'load.download': 'Downloading the control plane',
    'load.compile': 'Compiling WebAssembly',
    'load.start': 'Starting the cluster',
    'load.ready': 'Cluster ready',
    'load.failed': 'kubetab could not start',
    'load.bytes': '{loaded} of {total}',
    'load.bytesUnknown': '{loaded}',
    'console.title': 'Console',
    'console.welcome': 'Welcome to kubetab. This console talks to a real kube-apiserver running in a Web Worker of this tab.',
    'console.try': 'Try:',
    'console.keys': 'Enter runs a line · ↑/↓ history · Ctrl-C stops a -w or -f command · Ctrl-L clears',
    'console.starting': 'Starting the cluster… you can type already.',
    'console.ready': 'The cluster is ready.',
    'console.crashed': 'The control plane stopped. Reload the page to start a new cluster.',
    'console.panic': 'internal error (recovered) in {where}: {message}',
    'cluster.title': 'Cluster',
    'cluster.live': 'live',
    'cluster.connecting': 'connecting…',
    'cluster.reconnecting': 'reconnecting…',
    'nodes.title': 'Nodes',
    'nodes.empty': 'No nodes yet.',
    'pods.title': 'Pods',
    'pods.empty': 'No pods yet. Create some with kubectl create deployment.',
    'col.name': 'Name',
    'col.status': 'Status',
    'col.ready': 'Ready',
    'col.node': 'Node',
    'col.ip': 'IP',
    'col.namespace': 'Namespace',
    'col.version': 'Version',
    'footer.offline': 'Everything runs locally: no request leaves this page.',
  },
  ja: {
    'lang.name': '日本語',
    'lang.switch': 'English',
    'lang.switch.title': 'Switch to English',
    'tagline': '本物の Kubernetes コントロールプレーンが、このブラウザタブの中で動いています',
    'load.download': 'コントロールプレーンをダウンロード中',
    'load.compile': 'WebAssembly をコンパイル中',
    'load.start': 'クラスタを起動中',
    'load.ready': 'クラスタの準備ができました',
    'load.failed': 'kubetab を起動できませんでした',
    'load.bytes': '{loaded} / {total}',
    'load.bytesUnknown': '{loaded}',
    'console.title': 'コンソール',
    'console.welcome': 'kubetab へようこそ。このコンソールは、このタブの Web Worker で動いている本物の kube-apiserver と通信します。',
    'console.try': '試してみましょう:',
    'console.keys': 'Enter で実行 · ↑/↓ で履歴 · Ctrl-C で -w / -f を止める · Ctrl-L で画面を消去',
    'console.starting': 'クラスタを起動しています… 入力はもうできます。',
    'console.ready': 'クラスタの準備ができました。',
    'console.crashed': 'コントロールプレーンが停止しました。ページを再読み込みすると新しいクラスタが起動します。',
    'console.panic': '内部エラー (回復済み) {where}: {message}',
    'cluster.title': 'クラスタ',
    'cluster.live': 'ライブ',
    'cluster.connecting': '接続中…',
    'cluster.reconnecting': '再接続中…',
    'nodes.title': 'ノード',
    'nodes.empty': 'ノードはまだありません。',
    'pods.title': 'Pod',
    'pods.empty': 'Pod はまだありません。kubectl create deployment で作ってみましょう。',
    'col.name': '名前',
    'col.status': '状態',
    'col.ready': 'Ready',
    'col.node': 'ノード',
    'col.ip': 'IP',
    'col.namespace': 'Namespace',
    'col.version': 'バージョン',
    'footer.offline': 'すべてこのページの中で動いています。外部への通信はありません。',
  },
};

export const languages = Object.keys(strings);

const listeners = new Set();
let current = pickLanguage();

function pickLanguage() {
  try {
    const saved = localStorage.getItem('kubetab.lang');
    if (saved && strings[saved]) return saved;
  } catch { /* storage may be disabled */ }
  const nav = (navigator.languages || [navigator.language || 'en']).map((l) => l.slice(0, 2));
  return nav.find((l) => strings[l]) || 'en';
}

/** The current language code ("en" or "ja"). */
export function lang() {
  return current;
}

/** Switch language, remember it, and tell every listener. */
export function setLang(code) {
  if (!strings[code] || code === current) return;
  current = code;
  try { localStorage.setItem('kubetab.lang', code); } catch { /* ignore */ }
  document.documentElement.lang = code;
  for (const fn of listeners) fn(code);
}

/** Call fn now and whenever the language changes. */
export function onLang(fn) {
  listeners.add(fn);
  fn(current);
}

/** The text for key in the current language, with {name} placeholders filled. */
export function t(key, vars = {}) {
  const s = strings[current][key] ?? strings.en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}

/** Fill every element with a data-i18n attribute (and data-i18n-title). */
export function translateDocument(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
}
