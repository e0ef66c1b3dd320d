// Helpers shared by the overview's and the Compare panel's exports.

/** Markdown table cells: file text must not open markup or split the row. */
export function mdEscape(s) { return String(s).replace(/[\\|`*_[\]<>]/g, (c) => `\\${c}`).replace(/\n/g, ' '); }

/** A download name made of a label's safe characters (labels come from files and URLs). */
export function safeName(s, fallback = 'model') { return String(s ?? '').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || fallback; }

/** JSON with 64-bit integers (BigInt) as decimal strings, which JSON.stringify rejects. */
export function jsonText(obj) { return JSON.stringify(obj, (k, v) => (typeof v === 'bigint' ? v.toString() : v), 2); }

export function download(text, type, fileName) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
