// The Flow view: the seeds' diagram of a control plane (SEEDS.md, article 2:
// User, kube-apiserver, etcd, the controller manager, the scheduler, each
// node's kubelet with CNI and CRI) with the cluster's real hops animated on
// it in order, numbered and coloured by kind; a list of the hops beside it;
// a hop's request line, status, object (YAML at that revision), etcd key and
// revision, and who was told; following one object and its descendants;
// live, pause, step back and forward, speed, replay from a hop.
//
// And step mode: the cluster itself paused at the API server's door
// (stepmodes/cluster, docs/api.md). Every write a component asks for waits
// until the learner presses Step or Continue, and the diagram shows who
// waits to do what before it happens.
//
// Data, all through the API server as kubectl would read it:
//   hops            its own list+watch, a bounded window (stream.js, hops.js)
//   stepmodes, pendingwrites, pods, nodes, replicasets, deployments
//                   the shared informer cache (ctx.cache)
//
// Hooks for tests (keep): [data-component=NAME], [data-hop=SEQ] with
// data-from and data-to, [data-step-pending], [data-action=step|continue|pause].
// kubetab.flow (the returned view) has state() for tests and benchmarks.

import './flow.css';
import { addStrings, t, onLang } from '../../i18n.js';
import {
  HopWindow, aggregate, addToEdges, follower, descendants, kindOf, stageOf, protocolOf,
  requestLine, objectPath, storeKeyName, toYAML, baseResource,
} from './hops.js';
import { HopStream } from './stream.js';
import { diffLines, hunks } from '../store/diff.js'; // the Store view's line diff
import '../store/store.css'; // its diff colours (.dl-add, .dl-del ...)
import { Diagram } from './diagram.js';
import { HopList } from './hoplist.js';

// node-2 before node-10; one collator (localeCompare with options makes one per call).
const numeric = new Intl.Collator('en', { numeric: true });

addStrings({
  en: {
    'flow.title': 'Flow',
    'flow.live': 'Live',
    'flow.live.title': 'Follow the newest hops as they happen',
    'flow.pause': 'Pause',
    'flow.play': 'Play',
    'flow.back': 'Step back',
    'flow.forward': 'Step forward',
    'flow.speed': 'Speed',
    'flow.filter': 'Show',
    'flow.filter.path': 'the path',
    'flow.filter.all': 'every hop',
    'flow.filter.title': 'The path: writes, the etcd writes behind them, the watch events a component acts on, decisions, CNI and CRI calls. Every hop: reads, answers, events and heartbeats too.',
    'flow.follow': 'Follow',
    'flow.follow.placeholder': 'e.g. web',
    'flow.you': '(you)',
    'flow.follow.title': 'Show only the hops of this object and what it owns (a Deployment, its ReplicaSets, their pods), from its creation',
    'flow.follow.stop': 'Show all',
    'flow.clear': 'Clear',
    'flow.clear.title': 'Start counting again from the next hop',
    'flow.state.live': 'live',
    'flow.state.connecting': 'connecting…',
    'flow.state.reconnecting': 'reconnecting…',
    'flow.position': 'hop {n} of {total}',
    'flow.position.none': 'no hops yet',
    'flow.behind': '{n} to go',
    'flow.empty': 'Run a command in the console, for example kubectl create deployment web --image=hello --replicas=3, and its hops appear here, one arrow each.',
    'flow.empty.follow': 'No hops of {name} in the window yet.',
    'flow.earlier': '{n} earlier hops are not listed',
    'flow.legend': 'Arrows',
    'flow.kind.request': 'request to the API server',
    'flow.kind.response': 'answer',
    'flow.kind.write': 'etcd write (revision)',
    'flow.kind.watch': 'watch event',
    'flow.kind.decision': 'scheduling decision',
    'flow.kind.cni': 'CNI call (pod network)',
    'flow.kind.cri': 'CRI call (container runtime)',
    'flow.kind.pending': 'held by step mode',
    'flow.stage.0': 'another client',
    'flow.stage.1': '① the user sends the request to the API server',
    'flow.stage.2': '② the API server stores it in etcd',
    'flow.stage.3': '③ a controller of kube-controller-manager acts',
    'flow.stage.4': '④ the scheduler picks a node and binds',
    'flow.stage.5': '⑤ the API server and the kubelet',
    'flow.stage.6': '⑥ the kubelet asks CNI for the pod network',
    'flow.stage.7': '⑦ the kubelet asks the container runtime (CRI)',
    'flow.stage.8': '⑧ the runtime starts the process (in kubetab: wazero runs a WASI module)',
    'flow.proto.http': 'HTTP with a JSON body, as kubectl sends it',
    'flow.proto.inprocess': 'A Go call into the API server\'s handlers, with the same validation and admission (upstream: HTTPS with protobuf)',
    'flow.proto.etcd': 'A write to the store, kubetab\'s etcd (upstream: gRPC to etcd)',
    'flow.proto.watch': 'An event on the component\'s open watch: its informer is told',
    'flow.proto.cni': 'A CNI plugin call: the pod gets its IP (upstream: the plugin binary run with JSON on stdin)',
    'flow.proto.cri': 'A CRI call to the container runtime (upstream: gRPC to containerd or CRI-O; here wazero runs a WASI module)',
    'flow.proto.decision': 'The scheduler filtered and scored the nodes and picked one; it binds through pods/binding. kubectl scheduling explain POD shows why.',
    'flow.detail.title': 'Hop #{n}',
    'flow.detail.none': 'Click a hop, in the list or on the diagram, to see its request, status, object and who was told.',
    'flow.detail.seq': 'seq {seq} · {time}',
    'flow.detail.request': 'Request',
    'flow.detail.status': 'Status',
    'flow.detail.noanswer': 'no answer in the window yet',
    'flow.detail.object': 'Object',
    'flow.detail.key': 'etcd key',
    'flow.detail.revision': 'revision {rev}',
    'flow.detail.notified': 'Told by watch',
    'flow.detail.nobody': 'no watcher in the window',
    'flow.detail.detail': 'Detail',
    'flow.detail.yaml.at': 'YAML at revision {rev}',
    'flow.detail.diff': 'What this write changed (from revision {prev})',
    'flow.detail.diff.created': 'This write created the object: there is no earlier version.',
    'flow.detail.diff.gone': 'The version before this write is no longer in the store\'s history.',
    'flow.detail.folded': '… {n} unchanged lines',
    'flow.detail.yaml.now': 'YAML now',
    'flow.detail.yaml.loading': 'Loading…',
    'flow.detail.yaml.gone': 'Not in the store any more ({status}).',
    'flow.detail.yaml.compacted': 'Revision {rev} is no longer in the store\'s history; showing the object now.',
    'flow.detail.replay': 'Replay from here',
    'flow.detail.follow': 'Follow {name}',
    'flow.step.title': 'Step mode',
    'flow.step.toggle': 'Pause the cluster at the API server',
    'flow.step.toggle.title': 'Every write a controller, the scheduler or a kubelet asks for waits until you press Step or Continue, and the cluster\'s clock stands still. Your own commands are never held.',
    'flow.step.pause': 'Pause cluster',
    'flow.step.step': 'Step',
    'flow.step.continue': 'Continue',
    'flow.step.off': 'The cluster runs on its own.',
    'flow.step.on': 'Paused: {n} writes waiting, the clock stands at {time}.',
    'flow.step.on.none': 'Paused: nothing waits yet. Run a command; the components\' writes will wait here. The clock stands at {time}.',
    'flow.step.next': 'next',
    'flow.step.pending': '{who} wants to {verb} {object}',
    'flow.step.released': '{n} released so far',
    'flow.step.error': 'The API server said: {message}',
  },
  ja: {
    'flow.title': '流れ',
    'flow.live': 'ライブ',
    'flow.live.title': '新しいホップを起きた順に追いかけます',
    'flow.pause': '一時停止',
    'flow.play': '再生',
    'flow.back': '1つ戻る',
    'flow.forward': '1つ進む',
    'flow.speed': '速度',
    'flow.filter': '表示',
    'flow.filter.path': '主な経路',
    'flow.filter.all': 'すべてのホップ',
    'flow.filter.title': '主な経路: 書き込みと、その etcd への書き込み、コンポーネントが反応する watch イベント、スケジューリングの決定、CNI と CRI の呼び出しです。すべてのホップ: 読み取り、応答、イベント、ハートビートも表示します。',
    'flow.follow': '追跡',
    'flow.follow.placeholder': '例: web',
    'flow.you': '（あなた）',
    'flow.follow.title': 'このオブジェクトと、それが所有するもの（Deployment、その ReplicaSet、それらの Pod）のホップだけを、作成時から表示します',
    'flow.follow.stop': 'すべて表示',
    'flow.clear': 'クリア',
    'flow.clear.title': '次のホップから数え直します',
    'flow.state.live': 'ライブ',
    'flow.state.connecting': '接続中…',
    'flow.state.reconnecting': '再接続中…',
    'flow.position': 'ホップ {n} / {total}',
    'flow.position.none': 'まだホップはありません',
    'flow.behind': '残り {n}',
    'flow.empty': 'コンソールでコマンドを実行してみましょう。たとえば kubectl create deployment web --image=hello --replicas=3 を実行すると、そのホップが1本ずつ矢印としてここに現れます。',
    'flow.empty.follow': 'ウィンドウ内に {name} のホップはまだありません。',
    'flow.earlier': 'これより前のホップ {n} 件は一覧にありません',
    'flow.legend': '矢印',
    'flow.kind.request': 'API サーバーへのリクエスト',
    'flow.kind.response': '応答',
    'flow.kind.write': 'etcd への書き込み（リビジョン）',
    'flow.kind.watch': 'watch イベント',
    'flow.kind.decision': 'スケジューリングの決定',
    'flow.kind.cni': 'CNI の呼び出し（Pod のネットワーク）',
    'flow.kind.cri': 'CRI の呼び出し（コンテナランタイム）',
    'flow.kind.pending': 'ステップモードで保留中',
    'flow.stage.0': 'その他のクライアント',
    'flow.stage.1': '① ユーザーが API サーバーへリクエストを送ります',
    'flow.stage.2': '② API サーバーが etcd に保存します',
    'flow.stage.3': '③ kube-controller-manager のコントローラーが動きます',
    'flow.stage.4': '④ スケジューラーがノードを選んでバインドします',
    'flow.stage.5': '⑤ API サーバーと kubelet',
    'flow.stage.6': '⑥ kubelet が CNI に Pod のネットワークを頼みます',
    'flow.stage.7': '⑦ kubelet がコンテナランタイム（CRI）に頼みます',
    'flow.stage.8': '⑧ ランタイムがプロセスを起動します（kubetab では wazero が WASI モジュールを実行します）',
    'flow.proto.http': 'JSON 本文の HTTP リクエストです。kubectl はこの形で送ります',
    'flow.proto.inprocess': 'API サーバーのハンドラーを Go から直接呼び出します。検証とアドミッションは HTTP と同じです（本来の Kubernetes では protobuf の HTTPS）',
    'flow.proto.etcd': 'ストア（kubetab の etcd）への書き込みです（本来は etcd への gRPC）',
    'flow.proto.watch': 'コンポーネントが開いている watch に届くイベントです。インフォーマーに通知されます',
    'flow.proto.cni': 'CNI プラグインの呼び出しです。Pod に IP が割り当てられます（本来はプラグインのバイナリーを標準入力の JSON で実行します）',
    'flow.proto.cri': 'コンテナランタイムへの CRI 呼び出しです（本来は containerd や CRI-O への gRPC。kubetab では wazero が WASI モジュールを実行します）',
    'flow.proto.decision': 'スケジューラーがノードをフィルタリングしてスコアを付け、1つを選びました。pods/binding でバインドします。理由は kubectl scheduling explain POD で確認できます。',
    'flow.detail.title': 'ホップ #{n}',
    'flow.detail.none': '一覧か図のホップをクリックすると、そのリクエスト、ステータス、オブジェクト、通知先が表示されます。',
    'flow.detail.seq': 'seq {seq} · {time}',
    'flow.detail.request': 'リクエスト',
    'flow.detail.status': 'ステータス',
    'flow.detail.noanswer': 'ウィンドウ内にまだ応答がありません',
    'flow.detail.object': 'オブジェクト',
    'flow.detail.key': 'etcd のキー',
    'flow.detail.revision': 'リビジョン {rev}',
    'flow.detail.notified': 'watch で通知された先',
    'flow.detail.nobody': 'ウィンドウ内に watch している先はありません',
    'flow.detail.detail': '詳細',
    'flow.detail.yaml.at': 'リビジョン {rev} の YAML',
    'flow.detail.diff': 'この書き込みで変わったところ（リビジョン {prev} から）',
    'flow.detail.diff.created': 'この書き込みでオブジェクトが作成されました。以前の版はありません。',
    'flow.detail.diff.gone': 'この書き込みの前の版は、もうストアの履歴に残っていません。',
    'flow.detail.folded': '… 変更のない {n} 行',
    'flow.detail.yaml.now': '現在の YAML',
    'flow.detail.yaml.loading': '読み込み中…',
    'flow.detail.yaml.gone': 'もうストアにはありません（{status}）。',
    'flow.detail.yaml.compacted': 'リビジョン {rev} はストアの履歴に残っていないため、現在のオブジェクトを表示しています。',
    'flow.detail.replay': 'ここから再生',
    'flow.detail.follow': '{name} を追跡',
    'flow.step.title': 'ステップモード',
    'flow.step.toggle': 'API サーバーでクラスターを一時停止する',
    'flow.step.toggle.title': 'コントローラー、スケジューラー、kubelet が求める書き込みは、ステップか続行を押すまで待たされ、クラスターの時計も止まります。あなた自身のコマンドは止められません。',
    'flow.step.pause': 'クラスターを一時停止',
    'flow.step.step': 'ステップ',
    'flow.step.continue': '続行',
    'flow.step.off': 'クラスターは自分で動いています。',
    'flow.step.on': '一時停止中: {n} 件の書き込みが待っています。時計は {time} で止まっています。',
    'flow.step.on.none': '一時停止中: まだ何も待っていません。コマンドを実行すると、コンポーネントの書き込みがここで待ちます。時計は {time} で止まっています。',
    'flow.step.next': '次',
    'flow.step.pending': '{who} が {object} を {verb} しようとしています',
    'flow.step.released': 'これまでに {n} 件を通しました',
    'flow.step.error': 'API サーバーの応答: {message}',
  },
});

const FLOW = '/apis/flow.kubetab.dev/v1alpha1';
const SPEEDS = [0.25, 0.5, 1, 2, 4];
const BASE_RATE = 2; // hops a second at 1x
const TRAIL = 4;
// Milliseconds of work a frame spends taking in new hops before it leaves
// the rest for the next frame.
const BUDGET = 6;
// Live, with more than BUSY hops still to draw, a frame every PACE ms (two
// PACE with more than a hundred).
const BUSY = 8;
const PACE = 50;

const STATUS = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 410: 'Gone', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity', 500: 'Internal Server Error', 503: 'Service Unavailable' };

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'for') e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

export function mount(root, ctx) {
  root.classList.add('flow');
  const tk = (el, key, attr) => ({ el, key, attr });
  const texts = []; // elements whose text follows the language

  // --- markup ------------------------------------------------------------------
  const btn = (attrs, key, titleKey) => {
    const b = h('button', { type: 'button', class: 'flow-btn', ...attrs });
    texts.push(tk(b, key));
    if (titleKey) texts.push(tk(b, titleKey, 'title'));
    return b;
  };
  const liveBtn = btn({ 'data-play': 'live' }, 'flow.live', 'flow.live.title');
  const playBtn = btn({ 'data-play': 'toggle' }, 'flow.pause');
  const backBtn = btn({ 'data-play': 'back', class: 'flow-btn icon' }, null, 'flow.back');
  backBtn.textContent = '◀';
  const fwdBtn = btn({ 'data-play': 'forward', class: 'flow-btn icon' }, null, 'flow.forward');
  fwdBtn.textContent = '▶';
  const speed = h('select', { class: 'flow-select', 'data-play': 'speed' });
  for (const s of SPEEDS) speed.append(h('option', { value: String(s), textContent: `${s}×`, selected: s === 1 }));
  const speedLabel = h('label', { class: 'flow-field' }, h('span'), speed);
  texts.push(tk(speedLabel.firstChild, 'flow.speed'));
  const filter = h('select', { class: 'flow-select', 'data-flow': 'filter' },
    h('option', { value: 'path' }), h('option', { value: 'all' }));
  texts.push(tk(filter.options[0], 'flow.filter.path'), tk(filter.options[1], 'flow.filter.all'), tk(filter, 'flow.filter.title', 'title'));
  const filterLabel = h('label', { class: 'flow-field' }, h('span'), filter);
  texts.push(tk(filterLabel.firstChild, 'flow.filter'));
  const followList = h('datalist', { id: 'flow-follow-names' });
  const follow = h('input', { type: 'search', class: 'flow-input', 'data-flow': 'follow', spellcheck: false, autocomplete: 'off' });
  follow.setAttribute('list', followList.id);
  texts.push(tk(follow, 'flow.follow.placeholder', 'placeholder'), tk(follow, 'flow.follow.title', 'title'));
  const followLabel = h('label', { class: 'flow-field follow' }, h('span'), follow, followList);
  texts.push(tk(followLabel.firstChild, 'flow.follow'));
  const clearBtn = btn({ 'data-flow': 'clear' }, 'flow.clear', 'flow.clear.title');
  // The position changes with every hop: its text sits in a box of its own
  // size (flow.css), so writing it lays out that box alone.
  const position = h('span', { class: 'flow-position-text' });
  const positionBox = h('span', { class: 'flow-position', 'aria-live': 'off' }, position);
  const state = h('span', { class: 'live-state', 'data-state': 'connecting' });

  const bar = h('div', { class: 'flow-bar', role: 'toolbar' },
    h('div', { class: 'flow-row' }, liveBtn, playBtn, backBtn, fwdBtn, speedLabel, positionBox, state),
    h('div', { class: 'flow-row' }, filterLabel, followLabel, clearBtn));

  // Step mode.
  const stepToggle = h('input', { type: 'checkbox', role: 'switch', 'data-flow': 'stepmode' });
  const stepToggleLabel = h('label', { class: 'flow-switch' }, stepToggle, h('span'));
  texts.push(tk(stepToggleLabel.lastChild, 'flow.step.toggle'), tk(stepToggleLabel, 'flow.step.toggle.title', 'title'));
  const pauseBtn = btn({ 'data-action': 'pause' }, 'flow.step.pause');
  const stepBtn = btn({ 'data-action': 'step', class: 'flow-btn primary' }, 'flow.step.step');
  const contBtn = btn({ 'data-action': 'continue' }, 'flow.step.continue');
  const stepStatus = h('p', { class: 'flow-step-status', role: 'status' });
  const stepError = h('p', { class: 'flow-step-error', role: 'alert', hidden: true });
  const pendingList = h('ol', { class: 'flow-pending' });
  const stepTitle = h('h4');
  texts.push(tk(stepTitle, 'flow.step.title'));
  const step = h('section', { class: 'flow-step', 'data-stepmode': 'off' },
    h('div', { class: 'flow-row' }, stepTitle, stepToggleLabel),
    h('div', { class: 'flow-row' }, pauseBtn, stepBtn, contBtn),
    stepStatus, stepError, pendingList);

  const figure = h('div', { class: 'flow-diagram' });
  const legend = h('ul', { class: 'flow-legend' });
  for (const k of ['request', 'write', 'watch', 'decision', 'cni', 'cri', 'response', 'pending']) {
    const span = h('span');
    texts.push(tk(span, `flow.kind.${k}`));
    legend.append(h('li', { class: `k-${k}` }, h('i'), span));
  }
  const empty = h('p', { class: 'flow-empty' });
  const earlier = h('p', { class: 'flow-earlier', hidden: true });
  const list = h('ol', { class: 'flow-list', 'aria-label': 'hops' });
  const scroller = h('div', { class: 'flow-scroll' }, list);
  const listBox = h('div', { class: 'flow-listbox' }, scroller, earlier, empty);
  const detail = h('section', { class: 'flow-detail', 'aria-live': 'polite' });

  root.append(h('div', { class: 'flow-grid' },
    bar,
    h('div', { class: 'flow-left' }, figure, legend),
    step,
    h('div', { class: 'flow-right' }, listBox, detail)));

  // --- model -------------------------------------------------------------------
  const win = new HopWindow(4000);
  let cursor = -1; // index in win.vis of the newest hop drawn
  let mode = 'live'; // live | paused | play
  let rate = 1;
  let edges = new Map();
  let dirty = true;
  let animateNext = 0;
  let frame = 0;
  let lastTick = 0;
  let acc = 0;
  let shown = false;
  let selected = 0; // seq of the hop in the detail pane
  let followRoot = '';
  let versions = {};
  let pending = [];
  let stepMode = null;
  const inbox = []; // batches of hops from the stream, not yet in win
  let podsNow = null; // the pods the diagram has yet to draw
  let followOnce = false; // bring the current hop's row into sight, even paused
  let followTail = true; // the list keeps the current hop in sight

  const diagram = new Diagram(figure, { onPick: (seq) => pick(seq) });
  const hopList = new HopList(scroller, list, () => win.vis);

  // The newest hops when the view opens are where its numbering starts;
  // following an object goes back to the object's creation.
  let started = false;
  // The stream hands on each chunk of the watch as one batch; the page takes
  // them in at the start of a frame, BUDGET ms of them at most, so that a
  // burst of thousands never makes one long task. A hidden view takes them
  // in at once (it draws nothing).
  const stream = new HopStream(ctx.cluster, (records) => {
    if (!shown) {
      drain(Infinity); // what came in while shown first, in order
      ingest(records);
      return;
    }
    inbox.push(records);
    schedule();
  });
  function ingest(records) {
    if (!started) {
      started = true;
      win.setFilter({ origin: stream.latest });
    }
    const before = win.trimmed || 0;
    const len = win.vis.length;
    win.push(records);
    const trimmed = (win.trimmed || 0) - before;
    if (trimmed) {
      cursor = Math.max(-1, cursor - trimmed);
      hopList.trimmed(trimmed);
    }
    if (win.vis.length !== len - trimmed) dirty = true;
  }
  function drain(deadline) {
    while (inbox.length) {
      const batch = inbox[0];
      // A big batch goes in 256 hops at a time, checking the clock between.
      if (batch.length > 256) {
        ingest(batch.splice(0, 256));
      } else {
        inbox.shift();
        ingest(batch);
      }
      if (performance.now() > deadline) return false;
    }
    return true;
  }
  stream.onState = (s) => {
    state.dataset.state = s;
    state.textContent = t(`flow.state.${s}`);
  };
  stream.run();

  // Discovery: the preferred version of each group, for request lines.
  (ctx.cluster.ready || Promise.resolve()).then(() => ctx.cluster.fetch('/apis', { headers: { Accept: 'application/json' } }))
    .then((r) => r.json())
    .then((g) => { for (const x of g.groups || []) versions[x.name] = x.preferredVersion.version; })
    .catch(() => {});

  // --- playback ------------------------------------------------------------------
  // While the drawing catches up with a busy cluster it draws at most every
  // PACE ms (each frame takes in all the hops since the last); at the
  // learner's pace, or paused, every frame.
  let paceUntil = 0;
  let paceTimer = 0;
  function schedule() {
    if (frame || paceTimer || !shown) return;
    const wait = paceUntil - performance.now();
    if (wait > 4) paceTimer = setTimeout(() => { paceTimer = 0; schedule(); }, wait);
    else frame = requestAnimationFrame(tick);
  }

  let half = 0; // busy: which part the next frame draws
  function tick(now) {
    frame = 0;
    const deadline = performance.now() + BUDGET;
    // Layout is clean here, at the start of the frame: read the list's
    // scroll if the learner scrolled it, before anything is written.
    // Scrolled away from the current hop, the list stops following it;
    // scrolled back to it (or Live, or a new filter), it follows again.
    if (hopList.readScroll()) followTail = cursor < 0 || hopList.inSight(cursor);
    const caughtUp = drain(deadline);
    const dt = lastTick ? Math.min(now - lastTick, 250) : 16;
    lastTick = now;
    const target = win.vis.length - 1;
    if (mode !== 'paused' && cursor < target) {
      const backlog = target - cursor;
      if (mode === 'live' && backlog > 400) {
        jumpTo(target - 200);
      } else {
        // Live, the drawing speeds up with how far it is behind, so it keeps
        // up with a busy cluster and slows to the chosen pace when it is not.
        const r = BASE_RATE * rate * (mode === 'live' ? Math.max(1, backlog / 5) : 1);
        acc += (dt * r) / 1000;
        let n = Math.floor(acc);
        acc -= n;
        if (n > 0) {
          n = Math.min(n, backlog);
          for (let i = 0; i < n; i++) addToEdges(edges, win.vis[++cursor]);
          // The dot travels along a hop drawn alone at the learner's pace;
          // catching up, the hops come too fast to follow one dot.
          animateNext = n === 1 && backlog <= BUSY ? Math.min(900, 900 / r) : 0;
          dirty = true;
        }
      }
    }
    if (mode === 'play' && cursor >= target) mode = 'live';
    // The scroll first (layout is still clean), then the writes.
    if ((mode !== 'paused' && followTail) || followOnce) hopList.follow(cursor);
    followOnce = false;
    hopList.applyScroll();
    // Busy (live and behind), a frame draws either the diagram (with its
    // pods) or the list and its texts, not both: each frame's writes, and
    // the style, layout and paint they cost, stay well inside 50 ms.
    const busy = mode === 'live' && win.vis.length - 1 - cursor > BUSY;
    const part = busy ? (half ^= 1) ? 'diagram' : 'list' : 'all';
    if (podsNow && part !== 'list') {
      diagram.setPods(podsNow);
      podsNow = null;
    }
    if (dirty) draw(part);
    const behind = win.vis.length - 1 - cursor;
    paceUntil = mode === 'live' && behind > BUSY ? now + (behind > 100 ? 2 * PACE : PACE) : 0;
    if (!caughtUp || dirty || podsNow || (mode !== 'paused' && cursor < win.vis.length - 1) || hopList.scrollPending()) schedule();
    else lastTick = 0;
  }

  function jumpTo(i) {
    const to = Math.max(-1, Math.min(i, win.vis.length - 1));
    if (to > cursor) {
      // Forward: the counts so far plus the hops in between.
      for (let j = cursor + 1; j <= to; j++) addToEdges(edges, win.vis[j]);
    } else {
      edges = aggregate(win.vis, to);
    }
    cursor = to;
    acc = 0;
    dirty = true;
  }

  function setMode(m) {
    mode = m;
    dirty = true;
    schedule();
  }

  liveBtn.addEventListener('click', () => {
    followTail = true;
    const target = win.vis.length - 1;
    if (target - cursor > 20) jumpTo(target - 8);
    setMode('live');
  });
  playBtn.addEventListener('click', () => setMode(mode === 'paused' ? 'play' : 'paused'));
  backBtn.addEventListener('click', () => {
    mode = 'paused';
    jumpTo(cursor - 1);
    schedule();
  });
  fwdBtn.addEventListener('click', () => {
    mode = 'paused';
    if (cursor < win.vis.length - 1) {
      addToEdges(edges, win.vis[++cursor]);
      animateNext = 600;
    }
    dirty = true;
    schedule();
  });
  speed.addEventListener('change', () => { rate = Number(speed.value) || 1; });

  function replayFrom(seq) {
    const i = win.indexOf(seq);
    if (i < 0) return;
    jumpTo(i - 1);
    setMode('play');
  }

  // --- filter and follow -------------------------------------------------------
  function refilter(replay = false) {
    let match = null;
    if (followRoot) {
      const names = descendants(followRoot, '', ctx.cache.items('/apis/apps/v1/deployments'),
        ctx.cache.items('/apis/apps/v1/replicasets'), ctx.cache.items('/api/v1/pods'));
      match = follower(followRoot, names);
    }
    win.setFilter({ path: filter.value === 'path', follow: match });
    rebuildList();
    if (match && replay) {
      // Following: replay the object's story from its creation.
      jumpTo(-1);
      setMode('play');
    } else {
      jumpTo(win.vis.length - 1);
      setMode(mode === 'paused' ? 'paused' : 'live');
    }
  }
  filter.addEventListener('change', () => refilter());
  let followTimer = 0;
  follow.addEventListener('input', () => {
    clearTimeout(followTimer);
    followTimer = setTimeout(() => {
      const v = follow.value.trim();
      if (v === followRoot) return;
      followRoot = v;
      refilter(true);
    }, 300);
  });
  follow.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter') return;
    clearTimeout(followTimer);
    followRoot = follow.value.trim();
    refilter(true);
  });
  clearBtn.addEventListener('click', () => {
    followRoot = '';
    follow.value = '';
    win.setFilter({ origin: win.lastSeq, follow: null });
    selected = 0;
    rebuildList();
    jumpTo(-1);
    setMode('live');
    renderDetail();
  });

  // The descendants of a followed object arrive after it: look again when
  // the cache learns of new ReplicaSets and pods.
  let refollowTimer = 0;
  const refollow = () => {
    if (!followRoot || refollowTimer) return;
    refollowTimer = setTimeout(() => {
      refollowTimer = 0;
      const names = descendants(followRoot, '', ctx.cache.items('/apis/apps/v1/deployments'),
        ctx.cache.items('/apis/apps/v1/replicasets'), ctx.cache.items('/api/v1/pods'));
      const match = follower(followRoot, names);
      const seqNow = cursor >= 0 ? win.vis[cursor].seq : 0;
      const before = win.vis.length;
      win.setFilter({ follow: match });
      if (win.vis.length !== before) {
        let i = -1;
        while (i + 1 < win.vis.length && win.vis[i + 1].seq <= seqNow) i++;
        jumpTo(i);
        rebuildList();
        schedule();
      }
    }, 500);
  };

  const offs = [];
  offs.push(ctx.cache.subscribe('/api/v1/pods', (pods) => {
    // Drawn in the view's own frame, after its scroll write (tick).
    podsNow = pods;
    schedule();
    refollow();
  }));
  offs.push(ctx.cache.subscribe('/api/v1/nodes', (nodes) => {
    const names = [...nodes.keys()].sort(numeric.compare);
    if (names.length && names.join() !== diagram.nodes.join()) {
      diagram.layout(names);
      diagram.setPending(pending);
      dirty = true;
      schedule();
    }
  }));
  offs.push(ctx.cache.subscribe('/apis/apps/v1/replicasets', refollow));
  let followNames = null;
  offs.push(ctx.cache.subscribe('/apis/apps/v1/deployments', (deps) => {
    const names = [...new Set([...deps.values()].map((d) => d.metadata.name))].sort();
    // Status changes every frame while pods start; the names seldom.
    if (names.join('\n') !== followNames) {
      followNames = names.join('\n');
      followList.replaceChildren(...names.map((n) => h('option', { value: n })));
    }
    refollow();
  }));

  // --- drawing -----------------------------------------------------------------
  // Text and attributes written only when they change: most frames change
  // the counts and one or two rows, not the toolbar.
  let said = new WeakMap();
  const say = (e, text) => {
    if (said.get(e) === text) return false;
    said.set(e, text);
    e.textContent = text;
    return true;
  };
  // draw writes what changed: the diagram, the list, or (part 'all') both.
  // A part drawn alone leaves the page dirty, for the other part next frame.
  function draw(part = 'all') {
    dirty = part !== 'all';
    if (part !== 'list') {
      const trail = cursor >= 0 ? win.vis.slice(Math.max(0, cursor - TRAIL + 1), cursor + 1) : [];
      diagram.update(edges, trail, animateNext);
      animateNext = 0;
    }
    if (part === 'diagram') return;
    hopList.render(cursor, selected);
    const total = win.vis.length;
    let pos = cursor >= 0 ? t('flow.position', { n: win.vis[cursor].n, total: total ? win.vis[total - 1].n : 0 }) : t('flow.position.none');
    const behind = total - 1 - cursor;
    if (behind > 0) pos += ` · ${t('flow.behind', { n: behind })}`;
    say(position, pos);
    say(playBtn, t(mode === 'paused' ? 'flow.play' : 'flow.pause'));
    if (playBtn.dataset.mode !== mode) playBtn.dataset.mode = mode;
    if (liveBtn.classList.contains('on') !== (mode === 'live')) liveBtn.classList.toggle('on', mode === 'live');
    if (root.dataset.mode !== mode) root.dataset.mode = mode;
    if (empty.hidden !== total > 0) empty.hidden = total > 0;
    if (!empty.hidden) say(empty, followRoot ? t('flow.empty.follow', { name: followRoot }) : t('flow.empty'));
    // Hops before the first one kept (the window dropped them) are not listed.
    const before = total ? win.vis[0].n - 1 : 0;
    if (earlier.hidden !== before <= 0) earlier.hidden = before <= 0;
    if (before > 0 && say(earlier, t('flow.earlier', { n: before }))) earlier.title = earlier.textContent;
  }

  // The hops listed: every visible one in the window, only those in sight
  // in the DOM (hoplist.js).
  function rebuildList() {
    hopList.reset();
    followOnce = true;
    followTail = true;
    dirty = true;
  }

  list.addEventListener('click', (ev) => {
    const li = ev.target.closest('li[data-seq]');
    if (li) pick(Number(li.dataset.seq));
  });
  hopList.onResize = () => { dirty = true; schedule(); };
  hopList.onScroll = () => { dirty = true; schedule(); };

  // --- a hop's detail -----------------------------------------------------------
  function pick(seq) {
    selected = seq;
    dirty = true;
    schedule();
    renderDetail();
  }

  let detailToken = 0;
  function renderDetail() {
    const hp = selected ? win.find(selected) : null;
    detail.replaceChildren();
    if (!hp) {
      detail.append(h('p', { class: 'hint', textContent: t('flow.detail.none') }));
      return;
    }
    const kind = kindOf(hp);
    const dl = h('dl');
    const item = (key, ...value) => dl.append(h('dt', { textContent: t(key) }), h('dd', {}, ...value));
    detail.append(
      h('h4', { class: `k-${kind}` }, h('i'), t('flow.detail.title', { n: hp.n || '–' }), h('span', { class: 'kind', textContent: ` ${t(`flow.kind.${kind}`)}` })),
      h('p', { class: 'who', textContent: `${hp.from} → ${hp.to || nodeFromDecision(hp)}` }),
      h('p', { class: 'stage', textContent: t(`flow.stage.${stageOf(hp)}`) }),
      h('p', { class: 'proto', textContent: t(`flow.proto.${protocolOf(hp)}`) }),
      h('p', { class: 'dim', textContent: t('flow.detail.seq', { seq: hp.seq, time: hp.time.replace('T', ' ').replace('Z', '') }) }),
      dl);

    if (hp.type === 'request' || hp.type === 'response') {
      const req = hp.type === 'request' ? hp : null;
      if (req) item('flow.detail.request', h('code', { textContent: requestLine(req, versions) }));
      const resp = req ? win.responseTo(req) : hp;
      item('flow.detail.status', resp && resp.code
        ? h('code', { class: resp.code >= 400 ? 'bad' : 'ok', textContent: `${resp.code} ${STATUS[resp.code] || ''}`.trim() })
        : h('span', { class: 'dim', textContent: t('flow.detail.noanswer') }));
    }
    if (hp.type === 'watch' || hp.type === 'call' || hp.type === 'decision') {
      item('flow.detail.detail', h('code', { textContent: `${hp.verb}${hp.detail ? ` · ${hp.detail}` : ''}` }));
    }
    if (hp.res || hp.name) {
      item('flow.detail.object', h('code', { textContent: `${hp.res} ${hp.ns ? `${hp.ns}/` : ''}${hp.name}` }));
    }
    const w = win.writeOf(hp);
    if (w) {
      item('flow.detail.key', h('code', { textContent: w.key }), h('span', { class: 'rev', textContent: ` ${t('flow.detail.revision', { rev: w.rev })}` }));
      const told = win.notified(w.rev);
      item('flow.detail.notified', told.length
        ? h('span', { class: 'chips' }, ...told.map((c) => h('span', { class: 'chip', textContent: c })))
        : h('span', { class: 'dim', textContent: t('flow.detail.nobody') }));
    }

    const actions = h('div', { class: 'flow-row' });
    const replay = h('button', { type: 'button', class: 'flow-btn', 'data-flow': 'replay', textContent: t('flow.detail.replay') });
    replay.addEventListener('click', () => replayFrom(hp.seq));
    if (win.indexOf(hp.seq) >= 0) actions.append(replay);
    const name = hp.name && !hp.name.endsWith('-') && !baseResource(hp.res).startsWith('events') ? hp.name : '';
    if (name && name !== followRoot) {
      const fb = h('button', { type: 'button', class: 'flow-btn', textContent: t('flow.detail.follow', { name }) });
      fb.addEventListener('click', () => {
        follow.value = name;
        followRoot = name;
        refilter(true);
      });
      actions.append(fb);
    }
    detail.append(actions);

    // The object's YAML: the version this hop wrote (the key's history in
    // the store), or the object as it is now.
    const path = objectPath(hp, versions);
    if (!path && !(w && w.key)) return;
    const heading = h('h5');
    const pre = h('pre', { class: 'yaml', textContent: t('flow.detail.yaml.loading') });
    const note = h('p', { class: 'dim', hidden: true });
    detail.append(heading, note, pre);
    const token = ++detailToken;
    const now = async () => {
      heading.textContent = t('flow.detail.yaml.now');
      if (!path) {
        pre.textContent = '';
        return;
      }
      const r = await ctx.cluster.fetch(path, { headers: { Accept: 'application/yaml' } });
      if (token !== detailToken) return;
      pre.textContent = r.ok ? await r.text() : t('flow.detail.yaml.gone', { status: `${r.status} ${STATUS[r.status] || ''}`.trim() });
    };
    (async () => {
      if (w && w.key && w.rev) {
        heading.textContent = t('flow.detail.yaml.at', { rev: w.rev });
        const r = await ctx.cluster.fetch(`${FLOW}/storekeys/${storeKeyName(w.key)}/history`, { headers: { Accept: 'application/json' } });
        if (token !== detailToken) return;
        if (r.ok) {
          const hist = await r.json();
          const v = (hist.revisions || []).find((x) => x.modRevision === w.rev);
          if (token !== detailToken) return;
          if (v && v.value) {
            pre.textContent = toYAML(v.value);
            showChange(hist.revisions || [], v, w.rev, heading, token);
            return;
          }
        }
        note.hidden = false;
        note.textContent = t('flow.detail.yaml.compacted', { rev: w.rev });
      }
      await now();
    })().catch((err) => { if (token === detailToken) pre.textContent = String(err.message || err); });
  }

  // What this write changed: a line diff of the object's YAML against the
  // key's version before it (the store's history), the changed lines with
  // two around them, before the whole YAML.
  function showChange(revisions, v, rev, before, token) {
    if (token !== detailToken) return;
    const prev = revisions.filter((x) => x.modRevision < rev).sort((a, b) => b.modRevision - a.modRevision)[0];
    const title = h('h5', { class: 'flow-diff-title' });
    const out = h('pre', { class: 'flow-diff' });
    if (v.createRevision === rev || (prev && prev.type === 'DELETE')) {
      title.textContent = t('flow.detail.diff.created');
      out.hidden = true;
    } else if (!prev || !prev.value) {
      title.textContent = t('flow.detail.diff.gone');
      out.hidden = true;
    } else {
      title.textContent = t('flow.detail.diff', { prev: prev.modRevision });
      const lines = hunks(diffLines(toYAML(prev.value), toYAML(v.value)), 2);
      const frag = document.createDocumentFragment();
      for (const l of lines) {
        const span = document.createElement('span');
        if (l.op === '…') {
          span.className = 'dl-fold';
          span.textContent = `${t('flow.detail.folded', { n: l.count })}\n`;
        } else {
          span.className = l.op === '+' ? 'dl-add' : l.op === '-' ? 'dl-del' : 'dl-same';
          span.textContent = `${l.op} ${l.line}\n`;
        }
        frag.append(span);
      }
      out.append(frag);
    }
    before.before(title, out);
  }

  function nodeFromDecision(hp) {
    return hp.type === 'decision' ? (hp.detail.split(' ')[0] || '') : '';
  }

  // --- step mode -----------------------------------------------------------------
  async function stepCall(method, path, body) {
    stepError.hidden = true;
    const init = { method, headers: { Accept: 'application/json' } };
    if (body) {
      init.headers['Content-Type'] = 'application/merge-patch+json';
      init.body = JSON.stringify(body);
    }
    try {
      const r = await ctx.cluster.fetch(`${FLOW}/stepmodes/cluster${path}`, init);
      if (!r.ok) {
        let message = `${r.status}`;
        try { message = (await r.json()).message || message; } catch { /* not a Status */ }
        throw new Error(message);
      }
      return await r.json();
    } catch (err) {
      stepError.hidden = false;
      stepError.textContent = t('flow.step.error', { message: err.message });
      return null;
    }
  }
  const setStepMode = (on) => stepCall('PATCH', '', { spec: { enabled: on } });
  stepToggle.addEventListener('change', () => {
    setStepMode(stepToggle.checked);
    if (stepToggle.checked) setMode('live');
  });
  pauseBtn.addEventListener('click', () => { setStepMode(true); setMode('live'); });
  stepBtn.addEventListener('click', () => { stepCall('POST', '/step'); setMode('live'); });
  contBtn.addEventListener('click', () => stepCall('POST', '/continue'));

  function renderStep() {
    const on = !!(stepMode && stepMode.spec && stepMode.spec.enabled);
    step.dataset.stepmode = on ? 'on' : 'off';
    stepToggle.checked = on;
    pauseBtn.disabled = on;
    stepBtn.disabled = !on || pending.length === 0;
    contBtn.disabled = !on;
    const st = (stepMode && stepMode.status) || {};
    const time = st.time ? new Date(st.time).toLocaleTimeString() : '';
    stepStatus.textContent = !on ? t('flow.step.off')
      : pending.length ? t('flow.step.on', { n: pending.length, time }) : t('flow.step.on.none', { time });
    if (on && st.released) stepStatus.textContent += ` ${t('flow.step.released', { n: st.released })}`;
    pendingList.replaceChildren(...pending.map((p, i) => {
      const o = p.object || {};
      const object = `${o.resource || ''} ${o.namespace ? `${o.namespace}/` : ''}${o.name || ''}`.trim();
      const li = h('li', { 'data-step-pending': String(p.id), 'data-component': p.component, 'data-verb': p.verb, 'data-resource': o.resource || '' },
        i === 0 ? h('span', { class: 'next', textContent: t('flow.step.next') }) : null,
        h('span', { textContent: t('flow.step.pending', { who: p.component, verb: p.verb, object }) }));
      return li;
    }));
    diagram.setPending(pending);
  }
  offs.push(ctx.cache.subscribe(`${FLOW}/stepmodes`, (items) => {
    stepMode = items.get('cluster') || null;
    renderStep();
  }));
  offs.push(ctx.cache.subscribe(`${FLOW}/pendingwrites`, (items) => {
    pending = [...items.values()].map((p) => p.spec || {}).sort((a, b) => a.id - b.id);
    renderStep();
  }));

  // --- language -------------------------------------------------------------------
  const offLang = onLang(() => {
    for (const { el, key, attr } of texts) {
      if (!key) continue;
      if (attr) el.setAttribute(attr, t(key));
      else el.textContent = t(key);
    }
    state.textContent = t(`flow.state.${stream.state}`);
    diagram.relabel({ you: t('flow.you') });
    hopList.relabel();
    said = new WeakMap();
    renderStep();
    renderDetail();
    dirty = true;
    schedule();
  });
  renderDetail();

  const view = {
    show() {
      shown = true;
      dirty = true;
      schedule();
    },
    hide() {
      shown = false;
      if (frame) cancelAnimationFrame(frame);
      clearTimeout(paceTimer);
      paceTimer = 0;
      frame = 0;
      lastTick = 0;
    },
    unmount() {
      view.hide();
      stream.stop();
      for (const off of offs) off();
      if (typeof offLang === 'function') offLang();
    },
    /** For tests and benchmarks: where the playback is. */
    state() {
      return { mode, cursor, visible: win.vis.length, kept: win.all.length, lastSeq: win.lastSeq, follow: followRoot, stream: stream.state };
    },
    /** For tests: every listed hop's row text ("who what"), in sight or not. */
    rows() {
      return hopList.rows();
    },
  };
  if (window.kubetab) window.kubetab.flow = view;
  return view;
}
