// The store's keys as a tree of folders, kept up to date from the
// storekeys informer without rebuilding it: update() compares each key's
// modRevision with the one it saw last and reports only what changed, so
// the view redraws the rows of changed keys and the child lists of folders
// that gained or lost a key, never the whole tree.
//
//   /registry                         folder (count: keys below)
//     deployments                     folder
//       default                       folder
//         web                         leaf: the StoreKey object
//
// etcd itself has no folders: keys are flat bytes, sorted, and a "folder"
// is a prefix that a range read (etcdctl get --prefix) asks for.

export class Node {
  constructor(name, path, parent) {
    this.name = name;
    this.path = path; // "/registry/deployments"
    this.parent = parent;
    this.children = new Map(); // name → Node
    this.leaf = null; // the StoreKey, when a key ends here
    this.count = 0; // keys at or below this node
  }
}

export class Tree {
  constructor() {
    this.root = new Node('', '', null);
    this.byKey = new Map(); // key → Node
    this.revs = new Map(); // key → modRevision last seen
  }

  /**
   * update takes the informer's items (name → StoreKey) and returns what
   * changed: leaves (nodes whose key was written), folders (nodes whose set
   * of children changed) and counted (every ancestor whose count changed).
   */
  update(items) {
    const leaves = new Set();
    const folders = new Set();
    const counted = new Set();
    const seen = new Set();
    for (const obj of items.values()) {
      const key = obj.key;
      if (!key) continue;
      seen.add(key);
      if (this.revs.get(key) === obj.modRevision && this.byKey.has(key)) continue;
      this.revs.set(key, obj.modRevision);
      let node = this.byKey.get(key);
      if (!node) {
        node = this.root;
        let path = '';
        for (const part of key.split('/').slice(1)) {
          path += '/' + part;
          let next = node.children.get(part);
          if (!next) {
            next = new Node(part, path, node);
            node.children.set(part, next);
            folders.add(node);
          }
          node = next;
        }
        this.byKey.set(key, node);
        for (let n = node; n; n = n.parent) { n.count++; counted.add(n); }
      }
      node.leaf = obj;
      leaves.add(node);
    }
    for (const key of [...this.byKey.keys()]) {
      if (seen.has(key)) continue;
      const node = this.byKey.get(key);
      this.byKey.delete(key);
      this.revs.delete(key);
      node.leaf = null;
      leaves.add(node);
      for (let n = node; n; n = n.parent) { n.count--; counted.add(n); }
      // Drop folders left empty.
      for (let n = node; n.parent && n.count === 0 && n.children.size === 0; n = n.parent) {
        n.parent.children.delete(n.name);
        folders.add(n.parent);
      }
    }
    return { leaves, folders, counted };
  }

  /** The node at path ("/registry/pods"), or null. */
  find(path) {
    let node = this.root;
    for (const part of path.split('/').slice(1)) {
      node = node.children.get(part);
      if (!node) return null;
    }
    return node;
  }
}

/** The children of a folder in etcd's order: by name, as bytes sort. */
export function sortedChildren(node) {
  return [...node.children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
