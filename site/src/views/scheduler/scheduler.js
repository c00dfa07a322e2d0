// The Scheduler view: kube-scheduler's queue, live, and for one pod every
// attempt the scheduler kept: which filter let which node through or said
// no (with the numbers: "Insufficient cpu: requests 64, 3.2 of 4 free"),
// how each score plugin ranked the nodes that were left (raw, normalized to
// 0-100, times the plugin's weight), the totals, the winner, and how a tie
// was broken. What the seeds draw as "queue → filter → score → bind".
//
// Data, all through the API server: the queue from
// scheduling.kubetab.dev's schedulingqueues (list + watch in the shared
// cache), the pods from /api/v1/pods, and the attempts from
// schedulingdecisions/POD, read again when the pod's attempts change.
//
// Hooks: [data-sched-pod="ns/name"] pods in the queue (and placed lately),
// [data-filter-node=NODE] with data-result=pass|fail and the reason text,
// [data-score-node=NODE]. ctx.bus 'select' events with kind Pod select one.

import { addStrings, t, onLang } from '../../i18n.js';
import { QUEUES, queueGroups, filterRows, scoreRows } from './model.js';
import './scheduler.css';

addStrings({
  en: {
    'scheduler.title': 'Scheduler',
    'scheduler.head': 'kube-scheduler',
    'scheduler.hint': 'Pods without a node wait in the scheduler’s queue. Click a pod to see how each node was filtered and scored.',
    'scheduler.queue': 'Queue',
    'scheduler.q.inFlightPods': 'scheduling now',
    'scheduler.q.activeQ': 'activeQ: ready to try',
    'scheduler.q.backoffQ': 'backoffQ: backing off',
    'scheduler.q.unschedulablePods': 'unschedulablePods: no node fits',
    'scheduler.q.other': 'waiting, not in this queue',
    'scheduler.q.empty': 'The queue is empty: every pod has a node.',
    'scheduler.attempts': '{n} attempts',
    'scheduler.attempt1': '1 attempt',
    'scheduler.backoff': 'retry after {time}',
    'scheduler.waitsFor': 'waits for a change that {plugins} cares about',
    'scheduler.otherScheduler': 'schedulerName: {name}',
    'scheduler.placed': 'Placed lately',
    'scheduler.placedMore': '{n} of {total}',
    'scheduler.pick': 'Click a pod above to see its scheduling attempts.',
    'scheduler.none': 'The scheduler has kept no attempt for {pod}: it has not tried it yet, or another scheduler placed it.',
    'scheduler.loading': 'loading…',
    'scheduler.failed': 'Could not read the decision: {message}',
    'scheduler.attempt': 'Attempt {n}',
    'scheduler.result.Scheduled': 'Scheduled on {node}',
    'scheduler.result.Unschedulable': 'Unschedulable',
    'scheduler.result.Error': 'Error',
    'scheduler.nodes': '{all} nodes, {evaluated} filtered, {feasible} feasible',
    'scheduler.filter': 'Filter: can the node run the pod?',
    'scheduler.filterNote': 'Filters run left to right and stop at the first that says no. ✓ passed · ✗ rejected · · not checked · – nothing to check for this pod',
    'scheduler.pass': 'passed every filter: the pod fits',
    'scheduler.fail': 'rejected by {plugin}',
    'scheduler.more': '{n} more nodes rejected by {plugin}: {reason}',
    'scheduler.prefilter': 'PreFilter {plugin} rejected the pod before any node was looked at: {reason}',
    'scheduler.score': 'Score: which feasible node is best?',
    'scheduler.scoreNote': 'Each plugin scores a node (raw), the scores are scaled to 0–100 (normalized) and multiplied by the plugin’s weight; the highest total wins.',
    'scheduler.only': 'Only {node} passed the filters: there was nothing to compare, so nothing was scored.',
    'scheduler.total': 'total {n}',
    'scheduler.winner': 'chosen',
    'scheduler.tie': '{count} nodes tied at {total} ({nodes}): the scheduler picked one of them at random, each equally likely (selectHost).',
    'scheduler.feasibleMore': '{n} more feasible nodes scored lower.',
    'scheduler.raw': 'raw',
    'scheduler.normalized': 'normalized',
    'scheduler.weighted': 'weighted',
    'scheduler.preemption': 'Preemption: {message}',
    'scheduler.nominated': 'Nominated node: {node}; victims: {victims}',
    'scheduler.message': 'Message',
  },
  ja: {
    'scheduler.title': 'スケジューラー',
    'scheduler.head': 'kube-scheduler',
    'scheduler.hint': 'ノードが決まっていない Pod は、スケジューラーのキューで待ちます。Pod をクリックすると、各ノードのフィルターとスコアの結果が表示されます。',
    'scheduler.queue': 'キュー',
    'scheduler.q.inFlightPods': 'スケジューリング中',
    'scheduler.q.activeQ': 'activeQ: 試行待ち',
    'scheduler.q.backoffQ': 'backoffQ: バックオフ中',
    'scheduler.q.unschedulablePods': 'unschedulablePods: 入るノードがありません',
    'scheduler.q.other': '待機中 (このキューの外)',
    'scheduler.q.empty': 'キューは空です。すべての Pod にノードが決まっています。',
    'scheduler.attempts': '{n} 回試行',
    'scheduler.attempt1': '1 回試行',
    'scheduler.backoff': '{time} 以降に再試行',
    'scheduler.waitsFor': '{plugins} に関わる変化を待っています',
    'scheduler.otherScheduler': 'schedulerName: {name}',
    'scheduler.placed': '最近配置された Pod',
    'scheduler.placedMore': '{total} 件中 {n} 件',
    'scheduler.pick': '上の Pod をクリックすると、スケジューリングの試行が表示されます。',
    'scheduler.none': '{pod} の試行記録はありません。まだ試行していないか、別のスケジューラーが配置しました。',
    'scheduler.loading': '読み込み中…',
    'scheduler.failed': '決定を読めませんでした: {message}',
    'scheduler.attempt': '試行 {n}',
    'scheduler.result.Scheduled': '{node} に配置',
    'scheduler.result.Unschedulable': 'スケジュール不可',
    'scheduler.result.Error': 'エラー',
    'scheduler.nodes': 'ノード {all} 台、フィルター {evaluated} 台、候補 {feasible} 台',
    'scheduler.filter': 'フィルター: そのノードで Pod を動かせるか',
    'scheduler.filterNote': 'フィルターは左から順に実行され、最初に不可と判定したところで止まります。✓ 通過 · ✗ 不可 · · 未確認 · – この Pod では確認不要',
    'scheduler.pass': 'すべてのフィルターを通過しました (Pod が入ります)',
    'scheduler.fail': '{plugin} が不可と判定',
    'scheduler.more': 'ほかに {n} 台のノードを {plugin} が不可と判定: {reason}',
    'scheduler.prefilter': 'PreFilter の {plugin} が、ノードを見る前に Pod を不可と判定しました: {reason}',
    'scheduler.score': 'スコア: 候補のうちどのノードが最適か',
    'scheduler.scoreNote': '各プラグインがノードに点を付け (raw)、0〜100 に換算し (normalized)、プラグインの重みを掛けます。合計が最も高いノードが選ばれます。',
    'scheduler.only': 'フィルターを通ったのは {node} だけなので、比べる相手がなく、スコアは付けていません。',
    'scheduler.total': '合計 {n}',
    'scheduler.winner': '選択',
    'scheduler.tie': '{count} 台のノードが {total} で同点でした ({nodes})。スケジューラーはその中から等しい確率でランダムに 1 台を選びました (selectHost)。',
    'scheduler.feasibleMore': 'ほかに {n} 台の候補は、より低いスコアでした。',
    'scheduler.raw': 'raw',
    'scheduler.normalized': 'normalized',
    'scheduler.weighted': 'weighted',
    'scheduler.preemption': 'プリエンプション: {message}',
    'scheduler.nominated': '指名されたノード: {node}、退避させる Pod: {victims}',
    'scheduler.message': 'メッセージ',
  },
});

const QUEUE_API = '/apis/scheduling.kubetab.dev/v1alpha1/schedulingqueues';
const DECISIONS = '/apis/scheduling.kubetab.dev/v1alpha1/namespaces';

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
};

const clock = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour12: false });
};

export function mount(root, ctx) {
  root.classList.add('sched');
  const head = el('div', 'view-head');
  const headTitle = el('span');
  const live = el('span', 'live-state');
  head.append(headTitle, live);
  const hint = el('p', 'sched-hint');
  const summary = el('div', 'sched-summary');
  const queueEl = el('div', 'sched-queue');
  const detail = el('section', 'sched-detail');
  // The queue and the pod one under the other, or side by side in a wide
  // panel (scheduler.css).
  const left = el('div', 'sched-left');
  left.append(summary, queueEl);
  const body = el('div', 'sched-body');
  body.append(left, detail);
  root.append(head, hint, body);

  let queue = null;
  let pods = new Map();
  let state = 'connecting';
  let selected = null; // "ns/name"
  let decision = null; // the SchedulingDecision, or {missing: true} / {error}
  let attemptShown = -1; // index into decision.attempts; -1: the last
  let lastSeen = ''; // what the selected pod looked like when its decision was read

  // --- the queue ------------------------------------------------------------
  function podButton(row, extra) {
    const b = el('button', 'sched-pod');
    b.type = 'button';
    b.dataset.schedPod = row.key;
    if (row.key === selected) b.classList.add('selected');
    b.append(el('span', 'sched-name', row.namespace === 'default' ? row.name : row.key));
    if (extra) b.append(extra);
    b.addEventListener('click', () => select(row.key));
    return b;
  }

  function drawQueue() {
    const g = queueGroups(queue, pods);
    summary.replaceChildren();
    for (const q of QUEUES) {
      const chip = el('span', `sched-chip q-${q}`);
      chip.dataset.queue = q;
      chip.append(el('b', '', String(g.groups[q].length)), document.createTextNode(` ${q}`));
      summary.append(chip);
    }
    const frag = document.createDocumentFragment();
    let waiting = 0;
    for (const q of QUEUES) {
      const rows = g.groups[q];
      if (!rows.length) continue;
      waiting += rows.length;
      const sec = el('div', `sched-group q-${q}`);
      sec.append(el('h4', '', t(`scheduler.q.${q}`)));
      for (const r of rows) {
        const info = el('span', 'sched-info');
        const bits = [];
        if (r.attempts) bits.push(r.attempts === 1 ? t('scheduler.attempt1') : t('scheduler.attempts', { n: r.attempts }));
        if (q === 'backoffQ' && r.backoffExpiration) bits.push(t('scheduler.backoff', { time: clock(r.backoffExpiration) }));
        if (q === 'unschedulablePods' && r.plugins.length) bits.push(t('scheduler.waitsFor', { plugins: r.plugins.join(', ') }));
        info.textContent = bits.join(' · ');
        const btn = podButton(r, info);
        if (r.message) btn.append(el('span', 'sched-msg', r.message));
        sec.append(btn);
      }
      frag.append(sec);
    }
    if (g.other.length) {
      const sec = el('div', 'sched-group q-other');
      sec.append(el('h4', '', t('scheduler.q.other')));
      for (const r of g.other) {
        const btn = podButton(r, el('span', 'sched-info', r.scheduler && r.scheduler !== 'default-scheduler' ? t('scheduler.otherScheduler', { name: r.scheduler }) : r.reason));
        if (r.message) btn.append(el('span', 'sched-msg', r.message));
        sec.append(btn);
      }
      frag.append(sec);
    }
    if (!waiting && !g.other.length) frag.append(el('p', 'sched-empty', t('scheduler.q.empty')));
    if (g.placed.length) {
      const sec = el('div', 'sched-group q-placed');
      const h = el('h4', '', t('scheduler.placed'));
      if (g.placedTotal > g.placed.length) h.append(el('span', 'sched-count', t('scheduler.placedMore', { n: g.placed.length, total: g.placedTotal })));
      sec.append(h);
      const list = el('div', 'sched-placed');
      for (const r of g.placed) list.append(podButton(r, el('span', 'sched-node', `→ ${r.node}`)));
      sec.append(list);
      frag.append(sec);
    }
    queueEl.replaceChildren(frag);
  }

  // --- the selected pod -------------------------------------------------------
  function select(key) {
    if (!key) return;
    selected = key;
    decision = null;
    attemptShown = -1;
    lastSeen = '';
    for (const b of queueEl.querySelectorAll('[data-sched-pod]')) b.classList.toggle('selected', b.dataset.schedPod === key);
    drawDetail();
    refresh();
  }

  // seenState is what, when it changes, means a new attempt may be recorded.
  function seenState() {
    if (!selected) return '';
    const q = ((queue && queue.pods) || []).find((p) => `${p.namespace}/${p.name}` === selected);
    const pod = pods.get(selected);
    return `${q ? q.queue + q.attempts : '-'}|${pod ? (pod.spec.nodeName || '') + pod.metadata.resourceVersion : 'gone'}`;
  }

  let loading = false;
  let again = false;
  async function refresh() {
    if (!selected) return;
    if (loading) { again = true; return; }
    loading = true;
    const key = selected;
    const seen = seenState();
    const [ns, name] = key.split('/');
    try {
      const res = await ctx.cluster.fetch(`${DECISIONS}/${encodeURIComponent(ns)}/schedulingdecisions/${encodeURIComponent(name)}`, { headers: { Accept: 'application/json' } });
      const body = await res.json().catch(() => ({}));
      if (key === selected) {
        if (res.status === 404) decision = { missing: true };
        else if (!res.ok) decision = { error: body.message || String(res.status) };
        else {
          const was = decision && decision.attempts ? decision.attempts.length : 0;
          decision = body;
          if (attemptShown >= 0 && body.attempts.length !== was) attemptShown = -1;
        }
        lastSeen = seen;
        drawDetail();
      }
    } catch (err) {
      if (key === selected) { decision = { error: err.message }; drawDetail(); }
    }
    loading = false;
    if (again) { again = false; refresh(); }
  }

  function drawDetail() {
    detail.replaceChildren();
    if (!selected) { detail.append(el('p', 'sched-pick', t('scheduler.pick'))); return; }
    const title = el('h3', 'sched-title', selected);
    detail.append(title);
    if (!decision) { detail.append(el('p', 'sched-note', t('scheduler.loading'))); return; }
    if (decision.missing) { detail.append(el('p', 'sched-note', t('scheduler.none', { pod: selected }))); return; }
    if (decision.error) { detail.append(el('p', 'sched-failed', t('scheduler.failed', { message: decision.error }))); return; }
    const attempts = decision.attempts || [];
    if (!attempts.length) return;
    const idx = attemptShown < 0 ? attempts.length - 1 : attemptShown;
    const tabs = el('div', 'sched-attempts');
    tabs.setAttribute('role', 'tablist');
    attempts.forEach((a, i) => {
      const b = el('button', `sched-attempt r-${a.result}`, `${t('scheduler.attempt', { n: a.attempt })} · ${a.result === 'Scheduled' ? '✓' : '✗'}`);
      b.type = 'button';
      b.dataset.attempt = String(a.attempt);
      b.setAttribute('role', 'tab');
      b.setAttribute('aria-selected', i === idx ? 'true' : 'false');
      b.addEventListener('click', () => { attemptShown = i; drawDetail(); });
      tabs.append(b);
    });
    detail.append(tabs);
    detail.append(drawAttempt(attempts[idx]));
  }

  function drawAttempt(a) {
    const box = el('div', 'sched-attempt-body');
    box.dataset.schedAttempt = String(a.attempt);
    const res = el('div', 'sched-result');
    const badge = el('span', `badge ${a.result === 'Scheduled' ? 'ok' : a.result === 'Error' ? 'bad' : 'wait'}`,
      t(`scheduler.result.${a.result}`, { node: a.selectedNode || '' }));
    badge.dataset.schedResult = a.result;
    res.append(badge, el('span', 'sched-when', clock(a.time)), el('span', 'sched-counts', t('scheduler.nodes', a.nodes || {})));
    box.append(res);
    if (a.message) box.append(el('p', 'sched-message', a.message));

    // Filter: nodes × plugins.
    box.append(el('h4', '', t('scheduler.filter')));
    box.append(el('p', 'sched-note', t('scheduler.filterNote')));
    if (a.preFilter) {
      box.append(el('p', 'sched-fail-text', t('scheduler.prefilter', { plugin: a.preFilter.plugin, reason: (a.preFilter.reasons || []).join(', ') })));
    }
    const plugins = a.filterPlugins || [];
    const grid = el('div', 'sched-grid');
    grid.style.setProperty('--plugins', plugins.length);
    const header = el('div', 'sg-row sg-head');
    header.append(el('span', 'sg-node'));
    for (const p of plugins) {
      const h = el('span', 'sg-plugin', p);
      h.title = p;
      header.append(h);
    }
    grid.append(header);
    for (const r of filterRows(a)) {
      if (r.more) {
        grid.append(el('div', 'sg-more', t('scheduler.more', { n: r.more, plugin: r.plugin, reason: r.reason })));
        continue;
      }
      const row = el('div', `sg-row sg-${r.result}`);
      row.dataset.filterNode = r.node;
      row.dataset.result = r.result;
      row.append(el('span', 'sg-node', r.node));
      for (const c of r.cells) {
        const cell = el('span', `sg-cell c-${c.state}`, { pass: '✓', fail: '✗', notrun: '·', skip: '–' }[c.state]);
        cell.title = `${c.plugin}: ${c.state}`;
        row.append(cell);
      }
      // The verdict on its own line under the cells, so a narrow panel
      // keeps the whole reason readable.
      const why = el('span', 'sg-why');
      if (r.result === 'fail') {
        why.append(el('b', '', t('scheduler.fail', { plugin: r.plugin })), document.createTextNode(': '), el('span', 'sg-reason', r.reason));
      } else {
        why.textContent = t('scheduler.pass');
      }
      row.append(why);
      grid.append(row);
    }
    box.append(grid);

    // Score: the feasible nodes.
    const feasible = a.feasible || [];
    if (feasible.length) {
      box.append(el('h4', '', t('scheduler.score')));
      const s = scoreRows(a);
      if (feasible.length === 1 && !(feasible[0].scores || []).length) {
        box.append(el('p', 'sched-note', t('scheduler.only', { node: feasible[0].name })));
        const card = el('div', 'sc-node winner');
        card.dataset.scoreNode = feasible[0].name;
        card.append(scoreHead(s.rows[0], s.maxTotal));
        box.append(card);
      } else {
        box.append(el('p', 'sched-note', t('scheduler.scoreNote')));
        for (const r of s.rows) {
          const card = el('div', `sc-node${r.winner ? ' winner' : ''}${r.tied ? ' tied' : ''}`);
          card.dataset.scoreNode = r.node;
          card.append(scoreHead(r, s.maxTotal));
          const table = el('div', 'sc-table');
          const th = el('div', 'sc-row sc-th');
          th.append(el('span', '', ''), el('span', 'sc-num', t('scheduler.raw')), el('span', '', t('scheduler.normalized')), el('span', '', t('scheduler.weighted')));
          table.append(th);
          for (const sc of r.scores) {
            const line = el('div', 'sc-row');
            line.dataset.plugin = sc.plugin;
            const name = el('span', 'sc-plugin', sc.plugin);
            name.title = `${sc.plugin} ×${sc.weight}`;
            name.append(el('small', '', ` ×${sc.weight}`));
            line.append(name, el('span', 'sc-num', String(sc.raw)), bar(sc.normalized, 100, 'n'), bar(sc.weighted, 100 * s.maxWeight, 'w'));
            table.append(line);
          }
          card.append(table);
          box.append(card);
        }
        if (a.feasibleOmitted) box.append(el('p', 'sched-note', t('scheduler.feasibleMore', { n: a.feasibleOmitted })));
      }
      if (a.tie) {
        const tie = el('p', 'sched-tie', t('scheduler.tie', { count: a.tie.count, total: a.tie.total, nodes: a.tie.nodes.join(', ') }));
        tie.dataset.schedTie = '';
        tie.title = a.tie.rule || '';
        box.append(tie);
      }
    }
    if (a.preemption) {
      // The message starts with "preemption: " (upstream's event text).
      box.append(el('p', 'sched-note', t('scheduler.preemption', { message: (a.preemption.message || '').replace(/^preemption: /, '') })));
      if (a.preemption.nominatedNode) {
        box.append(el('p', 'sched-note', t('scheduler.nominated', { node: a.preemption.nominatedNode, victims: (a.preemption.victims || []).join(', ') || '-' })));
      }
    }
    return box;
  }

  function scoreHead(r, maxTotal) {
    const h = el('div', 'sc-head');
    h.append(el('span', 'sc-name', r.node));
    if (r.winner) h.append(el('span', 'badge ok sc-winner', t('scheduler.winner')));
    const total = el('span', 'sc-total', t('scheduler.total', { n: r.total }));
    total.dataset.total = String(r.total);
    h.append(total, bar(r.total, maxTotal, 't'));
    return h;
  }

  function bar(value, max, kind) {
    const b = el('span', `sc-bar sc-${kind}`);
    const fill = el('i');
    fill.style.width = `${Math.max(0, Math.min(100, (value / (max || 1)) * 100)).toFixed(1)}%`;
    b.append(fill, el('b', '', String(value)));
    return b;
  }

  // --- wiring -----------------------------------------------------------------
  let frame = 0;
  const schedule = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      drawQueue();
      if (selected && decision && seenState() !== lastSeen) refresh();
    });
  };
  const offQueue = ctx.cache.subscribe(QUEUE_API, (items, st) => {
    queue = items.get('default-scheduler') || [...items.values()][0] || null;
    state = st;
    live.dataset.state = st;
    live.textContent = t(`cluster.${st}`);
    schedule();
  });
  const offPods = ctx.cache.subscribe('/api/v1/pods', (items) => { pods = items; schedule(); });
  const onSelect = (ev) => {
    const d = ev.detail || {};
    if ((d.kind || 'Pod') === 'Pod' && d.name) select(`${d.namespace || 'default'}/${d.name}`);
  };
  ctx.bus.addEventListener('select', onSelect);
  // An object picked before this view first opened (after mount has run).
  if (ctx.selected) { const d = ctx.selected; queueMicrotask(() => onSelect({ detail: d })); }
  const offLang = onLang(() => {
    headTitle.textContent = t('scheduler.head');
    hint.textContent = t('scheduler.hint');
    live.textContent = t(`cluster.${state}`);
    drawQueue();
    drawDetail();
  });
  root.schedSelect = select; // test hook

  return {
    unmount() { offQueue(); offPods(); offLang(); ctx.bus.removeEventListener('select', onSelect); cancelAnimationFrame(frame); },
  };
}
