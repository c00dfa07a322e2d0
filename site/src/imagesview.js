// The Images panel: the registry the kubelets pull from (the worker's
// listImages), and a form that adds a learner's own .wasm to it (addImage).
// The checks are the Go side's (wasm/images: at most 8 MiB, a WASI preview1
// command, a valid name that is not a built-in image); a refusal is shown as
// the Go error's text, as it is.

import { imageRows, describe, refFromFileName } from './images.js';
import { formatBytes } from './text.js';
import { t, onLang } from './i18n.js';

function cell(text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

export class ImagesView {
  /**
   * @param {HTMLElement} root   the element holding #images and #add-image
   * @param {{listImages: Function, addImage: Function}} cluster  bridge.js's Cluster
   */
  constructor(root, cluster) {
    this.root = root;
    this.cluster = cluster;
    this.images = [];        // as listImages returns them
    this.loaded = false;
    this.status = { state: '', key: '', vars: {}, text: '' }; // the form's last outcome
    this.busy = false;

    const $ = (sel) => root.querySelector(sel);
    this.form = $('#add-image');
    this.file = $('#image-file');
    this.name = $('#image-name');
    this.tag = $('#image-tag');
    this.button = $('#image-add');
    this.file.addEventListener('change', () => this.fileChosen());
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    onLang(() => this.render());
  }

  /** Load the catalog (after the cluster is ready, and after every add). */
  async refresh() {
    try {
      this.images = await this.cluster.listImages();
      this.loaded = true;
    } catch (err) {
      console.error('kubetab: listImages:', err);
    }
    this.render();
  }

  // A new file: its name and tag become the defaults.
  fileChosen() {
    const f = this.file.files[0];
    if (f) {
      const { name, tag } = refFromFileName(f.name);
      this.name.value = name;
      this.tag.value = tag;
    }
    this.setStatus('', '');
  }

  /**
   * Add the chosen file as name:tag. Resolves (and busy is false again) once
   * the worker answered and the list was loaded again.
   */
  async submit() {
    const f = this.file.files[0];
    if (!f || this.busy) return;
    const name = this.name.value.trim();
    const tag = this.tag.value.trim();
    this.busy = true;
    this.setStatus('busy', 'images.adding', { ref: `${name}:${tag || 'latest'}` });
    try {
      const ref = await this.cluster.addImage(name, tag, await f.arrayBuffer());
      this.status = { state: 'ok', key: 'images.added', vars: { ref, name }, text: '' };
    } catch (err) {
      this.status = { state: 'error', key: '', vars: {}, text: err.message }; // the Go error's text, as it is
    }
    await this.refresh(); // listed, or (refused) still not listed
    this.busy = false;
    this.render();
  }

  setStatus(state, key, vars = {}, text = '') {
    this.status = { state, key, vars, text };
    this.render();
  }

  render() {
    const r = this.root;
    const rows = imageRows(this.images);
    r.querySelector('#images tbody').replaceChildren(...rows.map((row) => {
      const tr = document.createElement('tr');
      tr.dataset.ref = row.ref;
      tr.dataset.builtin = String(row.builtin);
      const tags = row.tags.length > 1 ? `${row.ref} (${row.tags.slice(1).join(', ')})` : row.ref;
      tr.append(cell(tags, 'name'), cell(formatBytes(row.size), 'num dim'), cell(describe(row, t, formatBytes), 'about'));
      return tr;
    }));
    r.querySelector('#images-count').textContent = String(rows.length);
    r.querySelector('#images-empty').hidden = this.loaded;

    const st = this.status;
    const out = r.querySelector('#image-status');
    out.dataset.state = st.state;
    out.textContent = st.key ? t(st.key, st.vars) : st.text;
    this.button.disabled = this.busy || !this.file.files.length;
    // The file input's own button and text are the browser's, in the
    // browser's language; the page shows its own instead.
    r.querySelector('#image-file-name').textContent = this.file.files.length ? this.file.files[0].name : t('images.add.none');
  }
}
