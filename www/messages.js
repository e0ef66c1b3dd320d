// The library's error messages in plain words, for the page: what happened first, then the
// library's own detail (item, byte offset, limit), then what to do. The library's wording may
// change, so each family is recognised by its robust parts (an HTTP status, "past end of
// file", "more than the file can hold", "not a GGUF file", "network error"); a message no
// family knows is shown as the library wrote it. No state.

const int = (n) => Number(n).toLocaleString('en-US');
/** "gguf-lens: " and similar prefixes, and a number the library repeats ("of 6 bytes 6 is"). */
function tidy(message) {
  return String(message).replace(/^(gguf-lens: )+/, '').replace(/\b(\d+) bytes \1 is\b/g, '$1 bytes is');
}
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The detail without `label` (the first sentence names it) and without a trailing hint. */
function detailOf(message, label) {
  let d = tidy(message);
  if (label) d = d.replace(new RegExp(`${escapeRe(label)}:?\\s*`, 'g'), '');
  return d.replace(/\s*\((offline|network|blocked)[^)]*\)\??/gi, '').replace(/\s+/g, ' ').trim();
}

/**
 * What the bytes at a file's start look like, for "not a GGUF file": a few words, or '' when
 * nothing is recognised. `bytes`: a Uint8Array of the first bytes.
 */
export function looksLike(bytes) {
  if (!bytes || !bytes.length) return 'it is empty';
  const head = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 256)).trimStart().toLowerCase();
  if (/^<!doctype html|^<html|^<head|^<body/.test(head)) return 'it is a web page (HTML): a link to a page about the file, not to the file (on Hugging Face: /resolve/, not /blob/)';
  if (head.startsWith('version https://git-lfs')) return 'it is a Git LFS pointer, not the file it points to (download the file itself)';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) return 'it is a ZIP archive (a PyTorch checkpoint is one: convert it to GGUF first)';
  if (bytes[0] === 0x80 && bytes[1] >= 2 && bytes[1] <= 5) return 'it is a Python pickle (a PyTorch checkpoint: convert it to GGUF first)';
  if (head.startsWith('{') || head.startsWith('[')) return 'it is JSON text';
  let printable = 0;
  const n = Math.min(bytes.length, 256);
  for (let i = 0; i < n; i++) if ((bytes[i] >= 32 && bytes[i] < 127) || bytes[i] === 9 || bytes[i] === 10 || bytes[i] === 13) printable++;
  if (printable / n > 0.95) return `it is text ("${new TextDecoder().decode(bytes.subarray(0, 40)).replace(/\s+/g, ' ').trim()}…")`;
  return '';
}

/**
 * A failed open of `label` in plain words. `facts`: {size} (the file's bytes when known),
 * {looks} (looksLike of its first bytes when known).
 */
export function openErrorText(err, label, facts = {}) {
  const msg = String(err?.message ?? err);
  if (/incomplete|partial download/i.test(msg)) return `could not open ${label}: ${tidy(msg)}`; // already plain
  const status = /\bHTTP (\d{3})\b/.exec(msg);
  if (status) {
    const code = Number(status[1]);
    const what = code === 404 ? 'not found (HTTP 404): check the address (on Hugging Face, a file is under /resolve/, not /blob/)'
      : code === 401 || code === 403 ? `access refused (HTTP ${code}): the file is private or gated, or the link has expired`
        : code === 416 ? `the server refused the byte range (HTTP 416): ${detailOf(msg, label)}`
          : code >= 500 ? `the server failed (HTTP ${code}): try again later`
            : `the server answered HTTP ${code}: ${detailOf(msg, label)}`;
    return `could not open ${label}: ${what}`;
  }
  if (/network error|failed to fetch|networkerror|load failed|fetch failed/i.test(msg)) {
    return `could not open ${label}: the server could not be reached (offline, a wrong host name, or the server does not let this page read the file: CORS). Detail: ${detailOf(msg, label)}`;
  }
  const pastEnd = /past (the )?end of (the )?file|more than the file can hold|unexpected end|end of file|truncated/i.test(msg);
  if (pastEnd) {
    const sizeInMsg = /file size (\d+)/.exec(msg);
    const size = facts.size ?? (sizeInMsg ? Number(sizeInMsg[1]) : undefined);
    const at = /at byte (\d+)/.exec(msg);
    const tensor = /\(offset (\d+), size (\d+)/.exec(msg);
    const item = /of (\d+) bytes/.exec(msg);
    const limit = /limit (\d+)/.exec(msg);
    const base = at ? Number(at[1]) : 0;
    // A tensor past the end: at least its end past the header; an item: what it lacks more.
    const need = tensor ? base + Number(tensor[1]) + Number(tensor[2])
      : item && limit && size !== undefined ? size + Number(item[1]) - Number(limit[1])
        : item ? base + Number(item[1]) : undefined;
    const has = size !== undefined ? `it has ${int(size)} bytes` : 'it ends early';
    const needs = need !== undefined && (size === undefined || need > size) ? `, and needs more than about ${int(need)}` : `, fewer than its ${tensor ? 'tensors need' : 'header needs'}`;
    return `could not open ${label}: the file is incomplete: ${has}${needs} (probably a partial download: download it again). Detail: ${detailOf(msg, label)}`;
  }
  if (/not a GGUF|magic/i.test(msg)) {
    return `could not open ${label}: this is not a GGUF or safetensors file${facts.looks ? `: ${facts.looks}` : ''}. Detail: ${detailOf(msg, label)}`;
  }
  return `could not open ${label}: ${tidy(msg)}`;
}

/**
 * The quantization-error card's "not possible" note: the types grouped by reason, in plain
 * words ("rows of 640 values are not a multiple of 256").
 */
export function skippedText(skipped) {
  if (!skipped.length) return '';
  const groups = new Map();
  for (const s of skipped) {
    const m = /row length (\d+) is not a multiple of (?:its block of )?(\d+)/.exec(s.reason ?? '');
    const why = m ? `rows of ${int(m[1])} values are not a multiple of ${m[2]}` : tidy(s.reason ?? 'no reason given');
    if (!groups.has(why)) groups.set(why, []);
    groups.get(why).push(s.type);
  }
  return [...groups].map(([why, types]) => `not possible: ${types.join(', ')} (${why})`).join(' · ');
}

/**
 * A metadata value typed in the add-a-key form or an edit: `type` 'auto' takes JSON (numbers,
 * booleans, arrays, quoted strings) and any other text as a string. Throws an Error in plain
 * words.
 */
export function parseValue(text, type) {
  if (type === 'string') return text;
  if (type === 'bool') {
    if (text === 'true' || text === 'false') return text === 'true';
    throw new Error(`a bool is true or false, not "${text}"`);
  }
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    if (type === 'auto') return text; // not JSON: the text itself, a string
    if (type === 'array') throw new Error(`not a JSON array (write it as [1, 2, 3] or ["a", "b"]): ${text}`);
    throw new Error(`a ${type} is a number, not "${text}"`);
  }
  if (type === 'array' && !Array.isArray(v)) throw new Error(`not a JSON array (write it as [1, 2, 3] or ["a", "b"]): ${text}`);
  if (type !== 'auto' && type !== 'array' && typeof v !== 'number') throw new Error(`a ${type} is a number, not ${text}`);
  return v;
}
