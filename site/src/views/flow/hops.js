// The flow view's model, with no DOM: the hops of the trace as the page
// keeps them (a bounded window), which of them the diagram shows, what each
// one is (its kind, colour, protocol, the seeds' numbered stage), and the
// counts per arrow that stand in for hundreds of hops.
//
// A hop (GET /apis/flow.kubetab.dev/v1alpha1/hops, docs/api.md) is one arrow:
//
//   {"seq":813,"type":"write","from":"kube-apiserver","to":"etcd","verb":"put",
//    "object":{"resource":"deployments.apps","namespace":"default","name":"web"},
//    "key":"/registry/deployments/default/web","revision":412}
//
// The page keeps the latest few thousand (the API server keeps 16,384) as
// compact records, and numbers the ones it shows 1, 2, 3 ... from the moment
// the view started or was cleared, or from an object's creation when the
// learner follows that object.

/** A hop object from the API as the record the view keeps. */
export function compact(h) {
  const o = h.object || {};
  return {
    seq: h.seq,
    time: h.time || '',
    type: h.type || '',
    from: h.from || '',
    to: h.to || '',
    verb: h.verb || '',
    res: o.resource || '',
    ns: o.namespace || '',
    name: o.name || '',
    key: h.key || '',
    rev: h.revision || 0,
    code: h.code || 0,
    detail: h.detail || '',
  };
}

/** The resource without its subresource: pods/binding → pods. */
export const baseResource = (res) => res.split('/')[0];

// Objects whose writes are bookkeeping rather than the path a workload takes:
// events about the work, node heartbeats (leases, node status).
const NOISE = new Set(['events', 'events.events.k8s.io', 'leases.coordination.k8s.io', 'nodes']);
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

// Who acts on a watch event: the informer event that makes a component do
// the next step of the seeds' path (the Deployment controller on a new
// Deployment, the scheduler on a new Pod, the kubelet on a Pod bound to it).
function reacts(to, res, verb) {
  if (to === 'deployment-controller') return res === 'deployments.apps' || (res === 'replicasets.apps' && verb !== 'MODIFIED');
  if (to === 'replicaset-controller') return res === 'replicasets.apps' || (res === 'pods' && verb === 'DELETED');
  if (to === 'kube-scheduler' || to.startsWith('kubelet/')) return res === 'pods' && verb !== 'MODIFIED';
  if (to.startsWith('kube-proxy/')) return res === 'services' || res.startsWith('endpointslices');
  if (to === 'endpointslice-controller') return res === 'services';
  if (to === 'job-controller') return res === 'jobs.batch';
  return false;
}

/**
 * Is h on the path the seeds draw (the "path" filter)? Left out: events,
 * leases and node heartbeats, reads (get, list, watch requests), answers
 * (the request's detail shows its status), and watch events to components
 * that do not act on them.
 */
export function onPath(h) {
  if (NOISE.has(baseResource(h.res))) return false;
  switch (h.type) {
    case 'request': return WRITES.has(h.verb);
    case 'response': return false;
    case 'write': return true;
    case 'watch': return reacts(h.to, baseResource(h.res), h.verb);
    default: return true; // call, decision
  }
}

/**
 * The boxes of the diagram a component name belongs to.
 *   kubectl, kube-apiserver, etcd, kube-scheduler     their own box
 *   kubelet/node-1, kube-proxy/node-1                  kubelet@node-1, kube-proxy@node-1
 *   *-controller, *-collector, *-publisher             ctrl:NAME (inside kube-controller-manager)
 *   cni, cri                                           cni@NODE, cri@NODE (the caller's node)
 *   anything else (coredns, kubeadm, curl)             client:NAME
 */
export function boxOf(name, peer = '') {
  if (name === 'kubectl' || name === 'kube-apiserver' || name === 'etcd' || name === 'kube-scheduler') return name;
  let m = /^(kubelet|kube-proxy)\/(.+)$/.exec(name);
  if (m) return `${m[1]}@${m[2]}`;
  if (name === 'cni' || name === 'cri') {
    m = /^kubelet\/(.+)$/.exec(peer);
    return m ? `${name}@${m[1]}` : name;
  }
  if (/-(controller|collector|publisher)$/.test(name)) return `ctrl:${name}`;
  return name ? `client:${name}` : '';
}

/** The node a hop's kubelet or kube-proxy runs on, or a decision's chosen node. */
export function nodeOf(h) {
  const m = /^(?:kubelet|kube-proxy)\/(.+)$/.exec(h.from) || /^(?:kubelet|kube-proxy)\/(.+)$/.exec(h.to);
  if (m) return m[1];
  if (h.type === 'decision') {
    const d = /^([a-z0-9][-a-z0-9.]*)\s/.exec(h.detail + ' ');
    return d ? d[1] : '';
  }
  return '';
}

/**
 * What a hop is, for its colour and label: request, response, write, watch,
 * decision, cni, cri (a call to the network plugin or the container runtime).
 */
export function kindOf(h) {
  if (h.type === 'call') return h.to === 'cni' ? 'cni' : 'cri';
  return h.type;
}

/**
 * The seeds' numbered stage of a hop (SEEDS.md, article 2): 1 the user's
 * request, 2 the API server and etcd, 3 the controller manager, 4 the
 * scheduler, 5 API server and kubelet, 6 CNI, 7 CRI, 8 the runtime starts the
 * process (in kubetab wazero runs a WASI module). 0 for other clients.
 */
export function stageOf(h) {
  if (h.type === 'write') return 2;
  if (h.type === 'call') {
    if (h.to === 'cni') return 6;
    return h.verb === 'StartContainer' ? 8 : 7;
  }
  const who = h.from === 'kube-apiserver' ? h.to : h.from;
  if (who === 'kubectl') return 1;
  if (who === 'kube-scheduler') return 4;
  if (who.startsWith('kubelet/')) return 5;
  if (boxOf(who).startsWith('ctrl:')) return 3;
  return 0;
}

/**
 * The protocol on the arrow. kubectl speaks HTTP and JSON; the components of
 * kubetab call the API server in-process (upstream: HTTPS with protobuf);
 * the store is kubetab's own etcd (upstream: gRPC); CNI plugins are run with
 * JSON on stdin; CRI is gRPC upstream and a Go call here.
 */
export function protocolOf(h) {
  switch (h.type) {
    case 'request':
    case 'response': {
      const client = h.type === 'request' ? h.from : h.to;
      const inProcess = client === 'kube-scheduler' || client.startsWith('kubelet/') || client.startsWith('kube-proxy/')
        || boxOf(client).startsWith('ctrl:') || client === 'coredns' || client === 'kubeadm';
      return inProcess ? 'inprocess' : 'http';
    }
    case 'write': return 'etcd';
    case 'watch': return 'watch';
    case 'call': return h.to === 'cni' ? 'cni' : 'cri';
    default: return 'decision';
  }
}

/** The short label drawn on an arrow: "create replicasets", "put rev 58", "ADDED pods". */
export function arrowLabel(h) {
  const res = baseResource(h.res).split('.')[0];
  const sub = h.res.includes('/') ? `/${h.res.split('/')[1]}` : '';
  switch (h.type) {
    case 'request': return `${h.verb} ${res}${sub}`;
    case 'response': return String(h.code || '');
    case 'write': return `${h.verb} rev ${h.rev}`;
    case 'watch': return `${h.verb} ${res}`;
    case 'decision': return `→ ${nodeOf(h) || h.detail}`;
    default: return h.verb;
  }
}

const METHODS = { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETE', get: 'GET', list: 'GET', watch: 'GET' };

/**
 * The request line of a request hop, as kubectl -v=6 prints it:
 * "POST /apis/apps/v1/namespaces/default/deployments". versions maps an API
 * group to its preferred version (discovery); the core group is /api/v1.
 */
export function requestLine(h, versions = {}) {
  const method = METHODS[h.verb] || h.verb.toUpperCase();
  const [resource, sub] = h.res.split('/');
  const dot = resource.indexOf('.');
  const plural = dot < 0 ? resource : resource.slice(0, dot);
  const group = dot < 0 ? '' : resource.slice(dot + 1);
  let path = group ? `/apis/${group}/${versions[group] || 'v1'}` : '/api/v1';
  if (h.ns) path += `/namespaces/${h.ns}`;
  path += `/${plural}`;
  const named = h.name && !(h.verb === 'create' && !sub);
  if (named) path += `/${h.name}`;
  if (sub) path += `/${sub}`;
  if (h.verb === 'watch') path += '?watch=true';
  return `${method} ${path}`;
}

/** The object path for GET (no subresource), or '' when the hop names none. */
export function objectPath(h, versions = {}) {
  if (!h.res || !h.name || h.name.endsWith('-')) return '';
  return requestLine({ ...h, verb: 'get', res: baseResource(h.res) }, versions).slice(4);
}

/** The StoreKey name of an etcd key: "/registry/pods/ns/n" → "registry.pods.ns.n". */
export const storeKeyName = (key) => key.replace(/^\//, '').replaceAll('/', '.');

// A ReplicaSet of a Deployment d is d-HASH; its pods d-HASH-XXXXX; a pod
// being created is asked for by generateName d-HASH-.
const hashed = (root) => new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[a-z0-9]{5,10}(-[a-z0-9]{0,5})?$`);

/**
 * A matcher for following an object and its descendants: names (the
 * object's own and those the cache knows own-referenced from it), plus the
 * Deployment naming rule for what the cache has not seen yet.
 */
export function follower(root, names = new Set([root])) {
  if (!root) return null;
  const re = hashed(root);
  return (h) => {
    if (!h.name) return false;
    if (names.has(h.name) || re.test(h.name)) return true;
    // an Event about one of them: "web.18ed48a80436b8ce"
    const dot = h.name.lastIndexOf('.');
    if (dot > 0 && h.res.startsWith('events')) {
      const about = h.name.slice(0, dot);
      if (names.has(about) || re.test(about)) return true;
    }
    // generateName of a pod being created: "web-5d9c7b8f6-"
    return h.name.endsWith('-') && names.has(h.name.slice(0, -1));
  };
}

/**
 * The names of root and everything it owns, transitively, through
 * metadata.ownerReferences in the given collections (Maps of objects).
 */
export function descendants(root, namespace, ...collections) {
  const names = new Set([root]);
  const uids = new Set();
  const all = [];
  for (const c of collections) for (const o of c.values()) all.push(o);
  for (const o of all) {
    const m = o.metadata || {};
    if (m.name === root && (!namespace || m.namespace === namespace) && m.uid) uids.add(m.uid);
  }
  let grew = true;
  while (grew) {
    grew = false;
    for (const o of all) {
      const m = o.metadata || {};
      if (uids.has(m.uid)) continue;
      if ((m.ownerReferences || []).some((r) => uids.has(r.uid))) {
        uids.add(m.uid);
        names.add(m.name);
        grew = true;
      }
    }
  }
  return names;
}

/**
 * The hops the page keeps: at most size, oldest dropped first, with the
 * visible ones (filter) numbered from origin, and per-arrow counts up to the
 * cursor.
 */
export class HopWindow {
  constructor(size = 4000) {
    this.size = size;
    this.all = []; // records, by seq
    this.vis = []; // the visible ones, each with n (its number)
    this.filter = { path: true, follow: null, origin: 0 };
    this.count = 0; // numbers given so far
  }

  visible(h) {
    const f = this.filter;
    if (f.follow) return f.follow(h) && (!f.path || onPath(h));
    return h.seq > f.origin && (!f.path || onPath(h));
  }

  /** Add hops (records, in seq order). Returns how many became visible. */
  push(records) {
    let added = 0;
    const last = this.all.length ? this.all[this.all.length - 1].seq : 0;
    for (const h of records) {
      if (h.seq <= last) continue;
      this.all.push(h);
      if (this.visible(h)) {
        h.n = ++this.count;
        this.vis.push(h);
        added++;
      }
    }
    if (this.all.length > this.size * 1.25) {
      const drop = this.all.length - this.size;
      const firstKept = this.all[drop].seq;
      this.all.splice(0, drop);
      let i = 0;
      while (i < this.vis.length && this.vis[i].seq < firstKept) i++;
      if (i) this.vis.splice(0, i);
      this.trimmed = (this.trimmed || 0) + i;
    }
    return added;
  }

  /** Change the filter and number the visible hops again. */
  setFilter(change) {
    Object.assign(this.filter, change);
    this.vis = [];
    this.count = 0;
    this.trimmed = 0;
    for (const h of this.all) {
      if (this.visible(h)) {
        h.n = ++this.count;
        this.vis.push(h);
      }
    }
  }

  get lastSeq() {
    return this.all.length ? this.all[this.all.length - 1].seq : 0;
  }

  /** The index in vis of the hop seq, or -1. */
  indexOf(seq) {
    let lo = 0;
    let hi = this.vis.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.vis[mid].seq;
      if (s === seq) return mid;
      if (s < seq) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
  }

  /** The hop of seq among all kept ones, or null. */
  find(seq) {
    let lo = 0;
    let hi = this.all.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.all[mid].seq;
      if (s === seq) return this.all[mid];
      if (s < seq) lo = mid + 1; else hi = mid - 1;
    }
    return null;
  }

  /** The answer to request hop h: the next response to its client about the same object. */
  responseTo(h) {
    let i = this.all.indexOf(h);
    if (i < 0) return null;
    for (i++; i < this.all.length && i < this.all.indexOf(h) + 400; i++) {
      const r = this.all[i];
      if (r.type === 'response' && r.to === h.from && r.res === h.res && (r.name === h.name || h.name.endsWith('-') || !h.name)) return r;
    }
    return null;
  }

  /** The etcd write behind a hop: itself, or the next write of the same object after a request. */
  writeOf(h) {
    if (h.type === 'write') return h;
    if (h.rev) return this.all.find((w) => w.type === 'write' && w.rev === h.rev) || null;
    if (h.type !== 'request') return null;
    let i = this.all.indexOf(h);
    const end = Math.min(this.all.length, i + 400);
    const base = baseResource(h.res);
    for (i++; i < end; i++) {
      const w = this.all[i];
      if (w.type === 'write' && baseResource(w.res) === base && (w.name === h.name || (h.name.endsWith('-') && w.name.startsWith(h.name)))) return w;
      if (w.type === 'response' && w.to === h.from && w.res === h.res) return null; // answered without a write
    }
    return null;
  }

  /** The components a write's change was delivered to (watch hops of its revision). */
  notified(rev) {
    if (!rev) return [];
    const seen = new Set();
    for (const h of this.all) if (h.type === 'watch' && h.rev === rev) seen.add(h.to);
    return [...seen];
  }
}

/**
 * The arrows of the diagram up to vis[cursor] (inclusive): one per
 * (from box, to box, kind), with how many hops it carried and the last one.
 */
export function aggregate(vis, cursor) {
  const edges = new Map();
  for (let i = 0; i <= cursor && i < vis.length; i++) addToEdges(edges, vis[i]);
  return edges;
}

export function edgeKey(h) {
  const from = boxOf(h.from, h.to);
  const to = h.type === 'decision' ? `node:${nodeOf(h)}` : boxOf(h.to, h.from);
  return `${from}|${to}|${kindOf(h)}`;
}

export function addToEdges(edges, h) {
  // A hop's arrow never changes: work it out once (a replay or a jump back
  // counts thousands of hops again).
  const k = h.edge || (h.edge = edgeKey(h));
  const e = edges.get(k);
  if (e) {
    e.count++;
    e.last = h;
  } else {
    edges.set(k, { key: k, count: 1, last: h });
  }
}

/** A JSON value as YAML (block style, keys in their order), as kubectl -o yaml prints it. */
export function toYAML(v, indent = '') {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    return v.map((x) => {
      const inner = toYAML(x, `${indent}  `);
      return `${indent}- ${isBlock(x) ? inner.trimStart() : inner}`;
    }).join('\n');
  }
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return '{}';
    return keys.map((k) => {
      const x = v[k];
      if (isBlock(x)) return `${indent}${yamlKey(k)}:\n${toYAML(x, Array.isArray(x) ? indent : `${indent}  `)}`;
      return `${indent}${yamlKey(k)}: ${toYAML(x, `${indent}  `)}`;
    }).join('\n');
  }
  if (typeof v === 'string') return yamlString(v);
  return String(v);
}

const isBlock = (x) => x !== null && typeof x === 'object' && (Array.isArray(x) ? x.length > 0 : Object.keys(x).length > 0);
const yamlKey = (k) => (/^[A-Za-z0-9_./-]+$/.test(k) ? k : JSON.stringify(k));

function yamlString(s) {
  if (s === '') return '""';
  if (/^[\w./-][\w ./:@=+-]*$/.test(s) && !/^(true|false|null|yes|no|on|off|~)$/i.test(s)
    && !/^[-+]?(\d|\.\d)/.test(s) && !/: |\s$/.test(s)) return s;
  return JSON.stringify(s);
}
