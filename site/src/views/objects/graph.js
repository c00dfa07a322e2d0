// The object graph's model and layout, without the DOM (graph.test.js runs
// it under node).
//
// Kubernetes keeps no graph: each object points at its owner
// (metadata.ownerReferences, the controller: true one) or names what it
// selects, and the controllers follow those pointers. This module draws the
// arrows the other way, owners on the left:
//
//   Deployment ──▶ ReplicaSet ──▶ Pod ──▶ Node          (ownerReferences, spec.nodeName)
//   Service ──▶ EndpointSlice ──▶ Pod                   (the kubernetes.io/service-name label,
//                                                          endpoints[].targetRef)
//
// A ReplicaSet carries its Deployment's revision (the annotation
// deployment.kubernetes.io/revision) and the hash of its pod template (the
// pod-template-hash label, which is also in its name and its pods' names).
// During a rollout the Deployment's new ReplicaSet grows while the old one
// shrinks; both stay in the graph, newest on top.
//
// Ids are "Kind/namespace/name" ("Node//name" for a cluster-scoped object);
// a ReplicaSet's pods collapse into one group "Pods/namespace/rsname" when
// there are too many to draw one by one.

/**
 * podStatus is the STATUS column of `kubectl get pods` (upstream
 * printPod in pkg/printers/internalversion): an init container's progress
 * (Init:0/1, Init:ErrImagePull), else the last container's waiting or
 * terminated reason, Terminating while it is deleted.
 */
export function podStatus(pod) {
  const st = pod.status || {};
  let reason = st.reason || st.phase || 'Pending';
  const inits = st.initContainerStatuses || [];
  const nInit = ((pod.spec || {}).initContainers || []).length || inits.length;
  let initializing = false;
  for (let i = 0; i < inits.length; i++) {
    const s = inits[i].state || {};
    if (s.terminated && s.terminated.exitCode === 0) continue;
    initializing = true;
    if (s.terminated) {
      reason = s.terminated.reason ? `Init:${s.terminated.reason}`
        : s.terminated.signal ? `Init:Signal:${s.terminated.signal}` : `Init:ExitCode:${s.terminated.exitCode}`;
    } else if (s.waiting && s.waiting.reason && s.waiting.reason !== 'PodInitializing') {
      reason = `Init:${s.waiting.reason}`;
    } else {
      reason = `Init:${i}/${nInit}`;
    }
    break;
  }
  if (!initializing) {
    let running = false;
    const cs = st.containerStatuses || [];
    for (let i = cs.length - 1; i >= 0; i--) {
      const s = cs[i].state || {};
      if (s.waiting && s.waiting.reason) reason = s.waiting.reason;
      else if (s.terminated && s.terminated.reason) reason = s.terminated.reason;
      else if (s.terminated) reason = s.terminated.signal ? `Signal:${s.terminated.signal}` : `ExitCode:${s.terminated.exitCode}`;
      else if (s.running && cs[i].ready) running = true;
    }
    if (reason === 'Completed' && running) reason = 'Running';
  }
  if (pod.metadata.deletionTimestamp) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

/** nodeStatus is the STATUS column of `kubectl get nodes`. */
export function nodeStatus(node) {
  const ready = ((node.status || {}).conditions || []).find((c) => c.type === 'Ready');
  let s = ready && ready.status === 'True' ? 'Ready' : 'NotReady';
  if (node.spec && node.spec.unschedulable) s += ',SchedulingDisabled';
  return s;
}

export const COLUMNS = 4; // owners, their children, pods, nodes

/** objectId is the graph's id (and the [data-object] hook) for an object of kind. */
export function objectId(kind, obj) {
  const m = obj.metadata || {};
  return `${kind}/${m.namespace || ''}/${m.name}`;
}

/** parseId splits "Kind/namespace/name". */
export function parseId(id) {
  const [kind, namespace, ...rest] = id.split('/');
  return { kind, namespace, name: rest.join('/') };
}

function controllerOf(obj) {
  return ((obj.metadata || {}).ownerReferences || []).find((r) => r.controller) || null;
}

function created(obj) {
  return Date.parse((obj.metadata || {}).creationTimestamp || '') || 0;
}

function byCreationThenName(a, b) {
  return created(a) - created(b) || cmp(a.metadata.name, b.metadata.name);
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** revision is a ReplicaSet's (or Deployment's) deployment.kubernetes.io/revision, or 0. */
export function revision(obj) {
  const a = (obj.metadata || {}).annotations || {};
  return Number(a['deployment.kubernetes.io/revision']) || 0;
}

/** statusClass maps a pod or node status to ok, wait or bad. */
export function statusClass(s) {
  if (s === 'Running' || s === 'Ready' || s === 'Succeeded' || s === 'Completed') return 'ok';
  if (s === 'Pending' || s === 'ContainerCreating' || s === 'PodInitializing' || s === 'Terminating'
    || s.startsWith('Init:') || s.includes('SchedulingDisabled')) return 'wait';
  return 'bad';
}

/**
 * build turns the collections (Maps of namespace/name → object, as the
 * cache gives them) into the graph's nodes and edges.
 *
 * @param {{deployments, replicasets, pods, nodes, services, endpointslices: Map}} c
 * @param {{namespace?: string, collapseAbove?: number, expanded?: Set<string>}} opts
 *   namespace '' means all; a ReplicaSet with more than collapseAbove pods
 *   (default 20) shows them as one group unless its id is in expanded.
 * @returns {{nodes: object[], edges: object[], columns: object[][]}}
 *   a node: {id, kind, col, obj?, ...what the view prints};
 *   an edge: {id: "from->to", from, to, count}
 */
export function build(c, opts = {}) {
  const ns = opts.namespace || '';
  const collapseAbove = opts.collapseAbove ?? 20;
  const expanded = opts.expanded || new Set();
  const inNS = (o) => !ns || (o.metadata || {}).namespace === ns;
  const list = (m) => [...(m || new Map()).values()].filter(inNS);

  const deployments = list(c.deployments).sort((a, b) => cmp(a.metadata.namespace, b.metadata.namespace) || cmp(a.metadata.name, b.metadata.name));
  const replicasets = list(c.replicasets);
  const pods = list(c.pods);
  const services = list(c.services).sort((a, b) => cmp(a.metadata.namespace, b.metadata.namespace) || cmp(a.metadata.name, b.metadata.name));
  const slices = list(c.endpointslices);
  const nodes = [...(c.nodes || new Map()).values()].sort((a, b) => cmp(a.metadata.name, b.metadata.name));

  const columns = [[], [], [], []];
  const byId = new Map();
  const edges = new Map();
  const add = (n) => {
    byId.set(n.id, n);
    columns[n.col].push(n);
    return n;
  };
  const edge = (from, to, n = 1) => {
    const id = `${from}->${to}`;
    const e = edges.get(id);
    if (e) e.count += n;
    else edges.set(id, { id, from, to, count: n });
  };

  // Owners by uid (ownerReferences name a uid) and by namespace/kind/name.
  const depByUID = new Map();
  const depByName = new Map();
  for (const d of deployments) {
    depByUID.set(d.metadata.uid, d);
    depByName.set(`${d.metadata.namespace}/${d.metadata.name}`, d);
  }
  const ownerDeployment = (rs) => {
    const ref = controllerOf(rs);
    if (!ref || ref.kind !== 'Deployment') return null;
    return depByUID.get(ref.uid) || depByName.get(`${rs.metadata.namespace}/${ref.name}`) || null;
  };
  const rsByUID = new Map();
  const rsByName = new Map();
  for (const rs of replicasets) {
    rsByUID.set(rs.metadata.uid, rs);
    rsByName.set(`${rs.metadata.namespace}/${rs.metadata.name}`, rs);
  }
  const podsOf = new Map(); // ReplicaSet key → pods
  const otherPods = [];
  for (const p of pods.sort(byCreationThenName)) {
    const ref = controllerOf(p);
    const rs = ref && ref.kind === 'ReplicaSet'
      ? rsByUID.get(ref.uid) || rsByName.get(`${p.metadata.namespace}/${ref.name}`) : null;
    if (rs) {
      const k = `${rs.metadata.namespace}/${rs.metadata.name}`;
      if (!podsOf.has(k)) podsOf.set(k, []);
      podsOf.get(k).push(p);
    } else {
      otherPods.push(p);
    }
  }

  const nodeId = (name) => `Node//${name}`;
  const podNode = (p, rsName) => {
    const status = podStatus(p);
    const cs = (p.status || {}).containerStatuses || [];
    return {
      id: objectId('Pod', p), kind: 'Pod', col: 2, obj: p,
      name: p.metadata.name, namespace: p.metadata.namespace,
      label: rsName && p.metadata.name.startsWith(`${rsName}-`) ? `…${p.metadata.name.slice(rsName.length)}` : p.metadata.name,
      status, cls: statusClass(status),
      ready: cs.length > 0 && cs.every((s) => s.ready),
      node: (p.spec || {}).nodeName || '',
    };
  };
  const addPods = (owner, list, groupKey) => {
    const rsName = owner && owner.kind === 'ReplicaSet' ? owner.name : '';
    if (list.length > collapseAbove && !expanded.has(groupKey)) {
      const ns = list[0].metadata.namespace;
      const gid = `Pods/${ns}/${rsName || '-'}`;
      const counts = { ok: 0, wait: 0, bad: 0 };
      const perNode = new Map();
      const members = new Set();
      for (const p of list) {
        counts[statusClass(podStatus(p))]++;
        members.add(objectId('Pod', p));
        const n = (p.spec || {}).nodeName;
        if (n) perNode.set(n, (perNode.get(n) || 0) + 1);
      }
      const ready = list.filter((p) => ((p.status || {}).containerStatuses || []).some((s) => s.ready)
        && ((p.status || {}).containerStatuses || []).every((s) => s.ready)).length;
      const g = add({ id: gid, kind: 'Pods', col: 2, group: groupKey, namespace: ns, count: list.length, ready, counts, members, perNode });
      if (owner) edge(owner.id, gid, list.length);
      for (const [n, k] of perNode) edge(gid, nodeId(n), k);
      return g;
    }
    for (const p of list) {
      const n = add(podNode(p, rsName));
      if (owner) edge(owner.id, n.id);
      if (n.node) edge(n.id, nodeId(n.node));
    }
    return null;
  };

  // Column 0 and 1: each Deployment, then its ReplicaSets newest first,
  // each with its pods in column 2.
  const placedRS = new Set();
  const addRS = (rs, parent) => {
    placedRS.add(rs);
    const st = rs.status || {};
    const m = rs.metadata;
    const n = add({
      id: objectId('ReplicaSet', rs), kind: 'ReplicaSet', col: 1, obj: rs,
      name: m.name, namespace: m.namespace,
      revision: revision(rs),
      hash: (m.labels || {})['pod-template-hash'] || '',
      desired: (rs.spec || {}).replicas ?? 0,
      current: st.replicas ?? 0,
      ready: st.readyReplicas ?? 0,
      label: parent && m.name.startsWith(`${parent.name}-`) ? `…${m.name.slice(parent.name.length)}` : m.name,
    });
    if (parent) edge(parent.id, n.id);
    const list = podsOf.get(`${m.namespace}/${m.name}`) || [];
    n.collapsed = addPods(n, list, n.id) !== null;
    n.expandable = list.length > collapseAbove;
    return n;
  };
  const rsOf = new Map();
  for (const rs of replicasets) {
    const d = ownerDeployment(rs);
    if (!d) continue;
    const k = `${d.metadata.namespace}/${d.metadata.name}`;
    if (!rsOf.has(k)) rsOf.set(k, []);
    rsOf.get(k).push(rs);
  }
  for (const d of deployments) {
    const st = d.status || {};
    const dn = add({
      id: objectId('Deployment', d), kind: 'Deployment', col: 0, obj: d,
      name: d.metadata.name, namespace: d.metadata.namespace,
      revision: revision(d),
      desired: (d.spec || {}).replicas ?? 0,
      ready: st.readyReplicas ?? 0,
      updated: st.updatedReplicas ?? 0,
      available: st.availableReplicas ?? 0,
    });
    const mine = (rsOf.get(`${d.metadata.namespace}/${d.metadata.name}`) || [])
      .sort((a, b) => revision(b) - revision(a) || created(b) - created(a));
    for (const rs of mine) addRS(rs, dn);
  }
  for (const rs of replicasets.sort(byCreationThenName)) if (!placedRS.has(rs)) addRS(rs, null);
  // Pods of no ReplicaSet we know (a bare pod, a Job's): grouped by owner.
  const byOwner = new Map();
  for (const p of otherPods) {
    const ref = controllerOf(p);
    const k = ref ? `${p.metadata.namespace}/${ref.kind}/${ref.name}` : '';
    if (!byOwner.has(k)) byOwner.set(k, []);
    byOwner.get(k).push(p);
  }
  for (const [k, list] of [...byOwner].sort((a, b) => cmp(a[0], b[0]))) addPods(null, list, `Owner/${k}`);

  // Services and their EndpointSlices; slices point at pods (or the group
  // that holds them).
  const groupOf = new Map();
  for (const n of columns[2]) if (n.members) for (const m of n.members) groupOf.set(m, n.id);
  const slicesOf = new Map();
  const orphanSlices = [];
  for (const s of slices.sort(byCreationThenName)) {
    const svc = ((s.metadata || {}).labels || {})['kubernetes.io/service-name'];
    if (!svc) { orphanSlices.push(s); continue; }
    const k = `${s.metadata.namespace}/${svc}`;
    if (!slicesOf.has(k)) slicesOf.set(k, []);
    slicesOf.get(k).push(s);
  }
  const addSlice = (s, parent) => {
    const eps = s.endpoints || [];
    const n = add({
      id: objectId('EndpointSlice', s), kind: 'EndpointSlice', col: 1, obj: s,
      name: s.metadata.name, namespace: s.metadata.namespace,
      label: parent && s.metadata.name.startsWith(`${parent.name}-`) ? `…${s.metadata.name.slice(parent.name.length)}` : s.metadata.name,
      endpoints: eps.length,
      readyEndpoints: eps.filter((e) => !e.conditions || e.conditions.ready !== false).length,
    });
    if (parent) edge(parent.id, n.id);
    for (const e of eps) {
      const ref = e.targetRef;
      if (!ref || ref.kind !== 'Pod') continue;
      const pid = `Pod/${ref.namespace || s.metadata.namespace}/${ref.name}`;
      if (byId.has(pid)) edge(n.id, pid);
      else if (groupOf.has(pid)) edge(n.id, groupOf.get(pid));
    }
  };
  for (const svc of services) {
    const spec = svc.spec || {};
    const sn = add({
      id: objectId('Service', svc), kind: 'Service', col: 0, obj: svc,
      name: svc.metadata.name, namespace: svc.metadata.namespace,
      type: spec.type || 'ClusterIP', clusterIP: spec.clusterIP || '',
      ports: (spec.ports || []).map((p) => `${p.port}/${p.protocol || 'TCP'}`).join(','),
    });
    for (const s of slicesOf.get(`${svc.metadata.namespace}/${svc.metadata.name}`) || []) addSlice(s, sn);
    slicesOf.delete(`${svc.metadata.namespace}/${svc.metadata.name}`);
  }
  for (const list of slicesOf.values()) for (const s of list) addSlice(s, null);
  for (const s of orphanSlices) addSlice(s, null);

  for (const nd of nodes) {
    const status = nodeStatus(nd);
    add({ id: objectId('Node', nd), kind: 'Node', col: 3, obj: nd, name: nd.metadata.name, namespace: '', status, cls: statusClass(status), pods: 0 });
  }
  // Edges to nodes we do not know (a pod bound to a deleted node) are dropped.
  for (const [id, e] of edges) if (!byId.has(e.to) || !byId.has(e.from)) edges.delete(id);
  for (const e of edges.values()) {
    const to = byId.get(e.to);
    if (to.kind === 'Node' && (byId.get(e.from).kind === 'Pod' || byId.get(e.from).kind === 'Pods')) to.pods += e.count;
  }
  return { nodes: [...byId.values()], edges: [...edges.values()], columns, byId };
}

/** The height of a node's box, by kind. */
export const boxHeight = { Deployment: 46, ReplicaSet: 46, Pod: 34, Pods: 46, Node: 40, Service: 46, EndpointSlice: 46 };

/**
 * layout gives every node its box {x, y, w, h}: column by column, each
 * box as near the middle of what it points at as the boxes above it allow
 * (pods are the spine: they keep the order of their owners).
 *
 * @param {{columns: object[][], edges: object[], byId: Map}} g  from build
 * @param {{width: number, gap?: number, vgap?: number, top?: number, minColumn?: number, weights?: number[]}} opts
 * @returns {{width: number, height: number, colX: number[], colW: number[]}}
 */
export function layout(g, opts) {
  const gap = opts.gap ?? 16;
  const vgap = opts.vgap ?? 6;
  const top = opts.top ?? 0;
  // Relative widths: names of ReplicaSets and pods are longer than a node's.
  const weights = opts.weights || [1, 1.15, 1.1, 0.8];
  const minW = opts.minColumn ?? 82;
  const sum = weights.reduce((a, b) => a + b, 0);
  const avail = Math.max(opts.width - gap * (COLUMNS - 1), minW * sum);
  const colW = weights.map((w) => Math.floor((avail * w) / sum));
  const colX = [];
  let x = 0;
  for (let i = 0; i < COLUMNS; i++) {
    colX.push(x);
    x += colW[i] + gap;
  }
  const children = new Map();
  const parents = new Map();
  for (const e of g.edges) {
    if (!children.has(e.from)) children.set(e.from, []);
    children.get(e.from).push(e.to);
    if (!parents.has(e.to)) parents.set(e.to, []);
    parents.get(e.to).push(e.from);
  }
  const centre = (n) => n.y + n.h / 2;
  const place = (col, order) => {
    let y = top;
    for (const n of order) {
      n.x = colX[col];
      n.w = colW[col];
      n.h = boxHeight[n.kind] || 40;
      const want = n.want === undefined ? y : n.want - n.h / 2;
      n.y = Math.max(y, Math.round(want));
      y = n.y + n.h + vgap;
    }
  };
  // Pods first, in their owners' order.
  for (const n of g.columns[2]) n.want = undefined;
  place(2, g.columns[2]);
  // Then the columns to their left, each box near the middle of its children.
  for (const col of [1, 0]) {
    for (const n of g.columns[col]) {
      const kids = (children.get(n.id) || []).map((id) => g.byId.get(id)).filter((k) => k && k.col === col + 1 && k.y !== undefined);
      // No children (a ReplicaSet scaled to 0): right under the box before it.
      n.want = kids.length ? kids.reduce((s, k) => s + centre(k), 0) / kids.length : undefined;
    }
    // Boxes keep their order (a Deployment's newest ReplicaSet on top), so
    // a box is pushed down by the one before it rather than re-sorted.
    place(col, g.columns[col]);
  }
  // Nodes in name order, each near the middle of its pods.
  for (const n of g.columns[3]) {
    const ps = (parents.get(n.id) || []).map((id) => g.byId.get(id)).filter((k) => k && k.y !== undefined);
    n.want = ps.length ? ps.reduce((s, k) => s + centre(k), 0) / ps.length : undefined;
  }
  place(3, g.columns[3]);
  let height = top;
  for (const n of g.nodes) height = Math.max(height, n.y + n.h);
  return { width: colX[COLUMNS - 1] + colW[COLUMNS - 1], height, colX, colW };
}

/** edgePath is the SVG path of an edge: from the right side of one box to the left of the other. */
export function edgePath(a, b) {
  const x1 = a.x + a.w;
  const y1 = a.y + a.h / 2;
  const x2 = b.x;
  const y2 = b.y + b.h / 2;
  const dx = Math.max(12, (x2 - x1) / 2);
  return `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`;
}
