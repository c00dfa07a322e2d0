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
    'views.cluster': 'Cluster',
    'views.failed': 'This view could not start: {message}',
    'views.resize': 'Drag to resize',
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
    'col.image': 'Image',
    'col.size': 'Size',
    'col.about': 'What it does',
    'images.title': 'Images',
    'images.hint': 'The registry the kubelets pull from. Run one with kubectl run NAME --image=IMAGE',
    'images.loading': 'Loading the images…',
    'images.yours': 'added by you ({size})',
    'images.add.title': 'Add your own .wasm',
    'images.add.hint': 'A WASI preview1 command (a program with a main function, built for wasm32-wasi), at most 8 MiB. It stays in this tab.',
    'images.add.file': 'Module',
    'images.add.choose': 'Choose a .wasm file…',
    'images.add.none': 'no file chosen',
    'images.add.name': 'Name',
    'images.add.tag': 'Tag',
    'images.add.button': 'Add image',
    'images.adding': 'Checking {ref}…',
    'images.added': 'Added {ref}. Try: kubectl run {name} --image={ref}',
    'lang.name.en': 'English',
    'lang.name.ja': 'Japanese',
    'lessons.title': 'Lessons',
    'lessons.course': 'The course',
    'lessons.loading': 'Loading the lessons…',
    'lessons.loadFailed': 'The lessons could not be loaded: {error}',
    'lessons.none': 'This build has no lessons.',
    'lessons.notFound': 'There is no lesson {slug}.',
    'lessons.minutes': '{n} min',
    'lessons.steps': '{n} steps',
    'lessons.progress': '{done} of {total} steps done',
    'lessons.solved': 'Solved',
    'lessons.onlyLang': 'in {lang} only',
    'lessons.picked': 'opened from a file',
    'lessons.back': '← All lessons',
    'lessons.reset': 'Reset lesson',
    'lessons.reset.title': "A fresh cluster with this lesson's nodes and setup; this lesson's progress is cleared",
    'lessons.stepOf': 'Step {n} of {total}',
    'lessons.run': '▶ Run',
    'lessons.running': 'Running…',
    'lessons.ranAgain': '▶ Run again',
    'lessons.solution.show': 'Show solution',
    'lessons.solution.hide': 'Hide solution',
    'lessons.hint.label': 'Hint:',
    'lessons.hint.show': 'Show a hint ({total} in all)',
    'lessons.hint.more': 'Another hint ({n} of {total})',
    'lessons.file.open': 'Open',
    'lessons.file.close': 'Close',
    'lessons.file.placed': "in the console's files",
    'lessons.sources': 'The code behind this step',
    'lessons.source.upstream': 'Kubernetes',
    'lessons.source.kubetab': 'kubetab',
    'lessons.check.pending': 'Not done yet: checked as the cluster changes',
    'lessons.check.pass': 'Done',
    'lessons.next': 'Next →',
    'lessons.finish': 'Back to the course',
    'lessons.done': 'Well done: every step of this lesson holds.',
    'lessons.preparing': 'Preparing a fresh cluster for this lesson…',
    'lessons.prepared': 'Prepared for you ({n} commands)',
    'lessons.prepareFailed': 'The cluster could not be prepared: {error}',
    'lessons.console.fresh': '— a fresh cluster for the lesson “{title}” —',
    'lessons.open.title': 'Open a lesson file',
    'lessons.open.hint': 'Play a lesson you are writing, straight from disk (lessons/README.md describes the format). It stays in this tab.',
    'lessons.open.choose': 'Choose a .md file…',
    'lessons.open.reading': 'Reading {name}…',
    'lessons.open.errors': '{name} is not a valid lesson:',
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
    'views.cluster': 'クラスタ',
    'views.failed': 'このビューを開始できませんでした: {message}',
    'views.resize': 'ドラッグして大きさを変えられます',
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
    'col.image': 'イメージ',
    'col.size': 'サイズ',
    'col.about': '内容',
    'images.title': 'イメージ',
    'images.hint': 'kubelet がイメージを取得するレジストリです。kubectl run 名前 --image=イメージ で動かせます',
    'images.loading': 'イメージを読み込み中…',
    'images.yours': 'あなたが追加 ({size})',
    'images.add.title': '自分の .wasm を追加',
    'images.add.hint': 'WASI preview1 のコマンド (main 関数を持つプログラムを wasm32-wasi 向けにビルドしたもの)、8 MiB まで。このタブの中だけで使われます。',
    'images.add.file': 'モジュール',
    'images.add.choose': '.wasm ファイルを選ぶ…',
    'images.add.none': '未選択',
    'images.add.name': '名前',
    'images.add.tag': 'タグ',
    'images.add.button': 'イメージを追加',
    'images.adding': '{ref} を確認中…',
    'images.added': '{ref} を追加しました。試してみましょう: kubectl run {name} --image={ref}',
    // The built-in images' lines (English: the catalog's own, wasm/images).
    'image.about.hello:1.0': "'Hello from <pod>! (hello:1.0) args: ...' と挨拶し、その後 1 秒ごとに 'hello: tick N' を表示",
    'image.about.hello:2.0': "同じプログラムで 'Hi again from <pod>!' と挨拶する版。ローリングアップデート用",
    'image.about.web:1.0': 'HTTP サーバー、リクエストごとに 1 インスタンス (CGI): Pod 名と IP、/data のリクエストカウンタ、/fail で失敗するようになる /healthz',
    'image.about.crash:1.0': '5 秒後に終了コード 1 で終了 (--after=N, --code=N): CrashLoopBackOff',
    'image.about.oom:1.0': '100 ms ごとに 1 MiB を確保し、メモリ上限で強制終了される (OOMKilled)',
    'image.about.cpu:1.0': 'スリープしないビジーループ。1 秒ごとに速度を表示: CPU 制限、kubectl top',
    'image.about.sleep:1.0': '停止されるまで (または引数の N 秒) 待つ',
    'image.about.config:1.0': '環境変数と /etc/config のファイル (または引数のディレクトリ) を表示し、変更されたら再表示',
    'image.about.job:1.0': '5 (または N) から 1 秒ごとにカウントダウンして終了コード 0 で終了 (--fail: 1): Job 用',
    'image.about.busybox:1.36.1': 'BusyBox 風のユーザーランド: sh、ls、cat、wget、nslookup など。デバッグ用 Pod に (既定のコマンドは sh)',
    'lang.name.en': '英語',
    'lang.name.ja': '日本語',
    'lessons.title': 'レッスン',
    'lessons.course': 'コース',
    'lessons.loading': 'レッスンを読み込み中…',
    'lessons.loadFailed': 'レッスンを読み込めませんでした: {error}',
    'lessons.none': 'このビルドにはレッスンがありません。',
    'lessons.notFound': 'レッスン {slug} は見つかりません。',
    'lessons.minutes': '{n} 分',
    'lessons.steps': '{n} ステップ',
    'lessons.progress': '{total} ステップ中 {done} 完了',
    'lessons.solved': '完了',
    'lessons.onlyLang': '{lang}のみ',
    'lessons.picked': 'ファイルから開いたレッスン',
    'lessons.back': '← レッスン一覧',
    'lessons.reset': 'レッスンをやり直す',
    'lessons.reset.title': 'このレッスンのノードと準備で新しいクラスタを作り直し、このレッスンの進み具合を消します',
    'lessons.stepOf': 'ステップ {n} / {total}',
    'lessons.run': '▶ 実行',
    'lessons.running': '実行中…',
    'lessons.ranAgain': '▶ もう一度実行',
    'lessons.solution.show': '解答を見る',
    'lessons.solution.hide': '解答を隠す',
    'lessons.hint.label': 'ヒント:',
    'lessons.hint.show': 'ヒントを見る (全 {total} 件)',
    'lessons.hint.more': '次のヒント ({total} 件中 {n} 件目)',
    'lessons.file.open': '開く',
    'lessons.file.close': '閉じる',
    'lessons.file.placed': 'コンソールのファイルに置いてあります',
    'lessons.sources': 'このステップの裏側のコード',
    'lessons.source.upstream': 'Kubernetes',
    'lessons.source.kubetab': 'kubetab',
    'lessons.check.pending': 'まだ完了していません。クラスタが変わるたびに確認します',
    'lessons.check.pass': '完了',
    'lessons.next': '次へ →',
    'lessons.finish': 'レッスン一覧へ戻る',
    'lessons.done': 'おつかれさまでした。このレッスンのステップはすべて完了です。',
    'lessons.preparing': 'このレッスン用に新しいクラスタを準備しています…',
    'lessons.prepared': '準備しておいた操作 ({n} 件)',
    'lessons.prepareFailed': 'クラスタを準備できませんでした: {error}',
    'lessons.console.fresh': '— レッスン「{title}」用の新しいクラスタです —',
    'lessons.open.title': 'レッスンファイルを開く',
    'lessons.open.hint': '書いている途中のレッスンを、ディスクから直接試せます (書き方は lessons/README.md にあります)。このタブの中だけで使われます。',
    'lessons.open.choose': '.md ファイルを選ぶ…',
    'lessons.open.reading': '{name} を読み込み中…',
    'lessons.open.errors': '{name} はレッスンとして読み込めません:',
    'footer.offline': 'すべてこのページの中で動いています。外部への通信はありません。',
  },
};

export const languages = Object.keys(strings);

/**
 * Add a module's own strings ({en: {...}, ja: {...}}), so that each panel
 * keeps its text beside its code. A key already defined is an error: two
 * panels must not fight over one key.
 */
export function addStrings(more) {
  const en = more.en || {};
  const names = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',');
  for (const code of languages) {
    const table = more[code] || {};
    for (const k of Object.keys(en)) {
      if (!(k in table)) throw new Error(`i18n: ${k} has no ${code} text`);
      if (names(table[k]) !== names(en[k])) throw new Error(`i18n: ${k}: placeholders differ between en and ${code}`);
    }
    for (const k of Object.keys(table)) {
      if (!(k in en)) throw new Error(`i18n: ${k} has ${code} text but no en text`);
      if (!String(table[k]).trim()) throw new Error(`i18n: ${code} ${k} is empty`);
    }
  }
  for (const [code, table] of Object.entries(more)) {
    if (!strings[code]) throw new Error(`i18n: unknown language ${code}`);
    for (const [k, v] of Object.entries(table)) {
      if (k in strings[code]) throw new Error(`i18n: key ${k} is defined twice`);
      strings[code][k] = v;
    }
  }
}

const listeners = new Set();
let current = pickLanguage();

function pickLanguage() {
  // ?lang=ja (an embedding page's choice) wins, and is not remembered.
  const asked = typeof location !== 'undefined' && new URLSearchParams(location.search).get('lang');
  if (asked && strings[asked]) return asked;
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

/** Call fn now and whenever the language changes. Returns a remover. */
export function onLang(fn) {
  listeners.add(fn);
  fn(current);
  return () => listeners.delete(fn);
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
