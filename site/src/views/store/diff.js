// A line diff, to show what one write of a key changed from the one
// before: the longest common subsequence of the two YAML texts' lines
// (what `diff` computes), after the common head and tail are set aside, so
// the usual write (a status field, a resourceVersion) costs only the few
// changed lines in the middle.

/**
 * diffLines(a, b) lists b's lines against a's: {op: ' ', line} kept,
 * {op: '-', line} only in a, {op: '+', line} only in b, in order.
 */
export function diffLines(a, b) {
  const x = a === '' ? [] : a.replace(/\n$/, '').split('\n');
  const y = b === '' ? [] : b.replace(/\n$/, '').split('\n');
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  // lcs[i][j]: the LCS length of xs[i:] and ys[j:].
  const n = xs.length;
  const m = ys.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = xs[i] === ys[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = x.slice(0, head).map((line) => ({ op: ' ', line }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && xs[i] === ys[j]) { out.push({ op: ' ', line: xs[i] }); i++; j++; }
    else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) { out.push({ op: '-', line: xs[i] }); i++; }
    else { out.push({ op: '+', line: ys[j] }); j++; }
  }
  for (const line of x.slice(x.length - tail)) out.push({ op: ' ', line });
  return out;
}

/**
 * hunks keeps the changed lines with `context` kept lines around each and
 * folds the rest: {op: '…', count} stands for count unchanged lines.
 */
export function hunks(lines, context = 2) {
  const keep = new Uint8Array(lines.length);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = 1;
  });
  const out = [];
  let skipped = 0;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (skipped) out.push({ op: '…', count: skipped });
      skipped = 0;
      out.push(l);
    } else {
      skipped++;
    }
  });
  if (skipped) out.push({ op: '…', count: skipped });
  return out;
}
