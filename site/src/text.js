// Text measurement for the terminal: how many columns a string takes, and
// word wrapping that also breaks Japanese (which has no spaces).

// Columns a character takes in a terminal: 2 for East Asian wide characters.
export function charWidth(ch) {
  const c = ch.codePointAt(0);
  if (c < 0x1100) return 1;
  return (c <= 0x115f || (c >= 0x2e80 && c <= 0xa4cf) || (c >= 0xac00 && c <= 0xd7a3)
    || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60)
    || (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1faff) || (c >= 0x20000 && c <= 0x3fffd)) ? 2 : 1;
}

export const width = (chars) => chars.reduce((n, ch) => n + charWidth(ch), 0);

/**
 * Wrap prose to cols columns: breaks between words, and between any two
 * CJK characters (Japanese has no spaces). Returns lines joined by CRLF.
 */
export function wrap(text, cols) {
  const tokens = text.match(/[\u3000-\u9fff\uff00-\uffef]|[^\s\u3000-\u9fff\uff00-\uffef]+|\s+/g) || [];
  const lines = [];
  let line = '';
  let w = 0;
  for (const tok of tokens) {
    const tw = width([...tok]);
    if (/^\s+$/.test(tok)) {
      if (w > 0 && w + tw < cols) { line += tok; w += tw; }
      continue;
    }
    if (w + tw > cols && w > 0) {
      lines.push(line.trimEnd());
      line = '';
      w = 0;
    }
    line += tok;
    w += tw;
  }
  if (line) lines.push(line.trimEnd());
  return lines.join('\r\n');
}

/** A byte count for people: "512 B", "14.2 KB", "2.6 MB" (1 KB = 1024 B). */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
