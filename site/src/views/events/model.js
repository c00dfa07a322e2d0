// What the events view (and the objects view's Events tab) needs to know
// about an Event, without the DOM (model.test.js runs it under node).
//
// An Event (core/v1) is an object like any other, written by the
// component that saw something happen (source.component, or
// reportingComponent: default-scheduler, kubelet, deployment-controller ...)
// about another object (involvedObject). A repeated event is not a new
// object: its count goes up and lastTimestamp moves (or, for events.k8s.io
// writers, series.count and series.lastObservedTime). kubectl events sorts
// by that last time, oldest first, and prints LAST SEEN as
// "5s (x3 over 40s)"; so does this view.

/** eventTime is when an event last happened, in ms since the epoch (kubectl events' order). */
export function eventTime(e) {
  const ts = (e.series && e.series.lastObservedTime) || e.lastTimestamp || e.eventTime
    || e.firstTimestamp || (e.metadata || {}).creationTimestamp || '';
  return Date.parse(ts) || 0;
}

function firstTime(e) {
  return Date.parse(e.firstTimestamp || e.eventTime || (e.metadata || {}).creationTimestamp || '') || 0;
}

/**
 * humanDuration prints a duration as Kubernetes does
 * (k8s.io/apimachinery/pkg/util/duration.HumanDuration): 45s, 3m20s, 12m,
 * 5h10m, 30h, 3d4h, 40d, 2y30d, 9y.
 */
export function humanDuration(ms) {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  const d = Math.floor(h / 24);
  if (d < 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (y < 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

/** count is how many times the event happened. */
export function eventCount(e) {
  if (e.series && e.series.count) return e.series.count;
  return e.count || 1;
}

/** lastSeen is kubectl events' LAST SEEN column: "5s", or "5s (x3 over 40s)". */
export function lastSeen(e, now = Date.now()) {
  const last = humanDuration(now - eventTime(e));
  const n = eventCount(e);
  if (n > 1) return `${last} (x${n} over ${humanDuration(now - firstTime(e))})`;
  return last;
}

/** source is who reported the event: source.component (and host), or reportingComponent. */
export function eventSource(e) {
  const s = e.source || {};
  const comp = s.component || e.reportingComponent || e.reportingController || '';
  const host = s.host || '';
  return host ? `${comp}, ${host}` : comp;
}

/** eventObject is the involved object's id, "Kind/namespace/name" as the objects view names it. */
export function eventObject(e) {
  const io = e.involvedObject || {};
  const clusterScoped = io.kind === 'Node' || io.kind === 'Namespace' || io.kind === 'PersistentVolume';
  return `${io.kind || ''}/${clusterScoped ? '' : io.namespace || (e.metadata || {}).namespace || ''}/${io.name || ''}`;
}

/**
 * matches says whether an event passes the filters: text matches the
 * involved object (every word a part of "Kind/namespace/name", any case),
 * type is '' (all), 'Normal' or 'Warning'.
 */
export function matches(e, { text = '', type = '' } = {}) {
  if (type && (e.type || 'Normal') !== type) return false;
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const obj = eventObject(e).toLowerCase();
  const short = obj.replace(/^([^/]*)\/[^/]*\//, '$1/'); // Pod/web-1 as kubectl names it
  return words.every((w) => obj.includes(w) || short.includes(w));
}

/** sortEvents orders events as kubectl events does: by last time, oldest first. */
export function sortEvents(list) {
  return list.sort((a, b) => eventTime(a) - eventTime(b)
    || ((a.metadata || {}).name < (b.metadata || {}).name ? -1 : 1));
}
