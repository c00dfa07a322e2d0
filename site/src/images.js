// The image registry as the page shows it: what the worker's listImages
// returns, grouped into one row per module, and the name:tag a learner's file
// gets by default. No DOM here (imagesview.js draws it), so node --test runs it.

/**
 * The name and tag a .wasm file is added as unless the learner types others:
 * "myapp.wasm" → {name: "myapp", tag: "latest"}. The file name is made into
 * a valid image name (lowercase letters and digits, single '.', '_' or '-'
 * between them); the Go side still checks whatever the learner submits.
 */
export function refFromFileName(fileName) {
  const base = String(fileName).replace(/^.*[\\/]/, '').replace(/\.wasm$/i, '');
  const name = base.toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/[._-]{2,}/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '');
  return { name: name || 'myimage', tag: 'latest' };
}

/** "name:tag" → [name, tag] (the refs listed are normalized: always a tag). */
export function splitRef(ref) {
  const i = ref.lastIndexOf(':');
  return i < 0 ? [ref, 'latest'] : [ref.slice(0, i), ref.slice(i + 1)];
}

/**
 * One row per module of each name: the tags that name the same bytes are
 * one row ("hello" 1.0 and latest), the most specific version first
 * ("1.36.1" before its alias "1.36") and "latest" last. Rows are sorted by
 * name, then by first tag. Each row: {name, tags, ref (the first tag's),
 * digest, size, about (the first tag's line), builtin}.
 */
export function imageRows(images) {
  const rows = new Map();
  for (const img of images) {
    const [name, tag] = splitRef(img.ref);
    const key = `${name}@${img.digest}`;
    let row = rows.get(key);
    if (!row) {
      row = { name, tags: [], digest: img.digest, size: img.size, abouts: new Map(), builtin: img.builtin };
      rows.set(key, row);
    }
    row.tags.push(tag);
    row.abouts.set(tag, img.about);
  }
  const parts = (tag) => tag.split('.').length;
  const ascii = (a, b) => (a < b ? -1 : a > b ? 1 : 0); // image names and tags are ASCII
  const byTag = (a, b) => (a === 'latest') - (b === 'latest') || parts(b) - parts(a) || ascii(a, b);
  const out = [...rows.values()];
  for (const row of out) {
    row.tags.sort(byTag);
    row.ref = `${row.name}:${row.tags[0]}`;
    row.about = row.abouts.get(row.tags[0]);
    delete row.abouts;
  }
  return out.sort((a, b) => ascii(a.name, b.name) || byTag(a.tags[0], b.tags[0]));
}

/**
 * A row's one-line description in the UI's language. t is i18n.js's t. A
 * built-in image's line is translated under "image.about.<ref>" when the
 * language has it, else it is the catalog's own (English) line; a learner's
 * image says so, with its size.
 */
export function describe(row, t, formatBytes) {
  if (!row.builtin) return t('images.yours', { size: formatBytes(row.size) });
  const key = `image.about.${row.ref}`;
  const s = t(key);
  return s === key ? row.about : s;
}
