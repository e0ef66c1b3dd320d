// Warms the engine up while the page waits for a file: opens a synthetic byte-level BPE
// vocabulary built here and tokenizes a line, so the wasm functions every real open runs (header
// parse, token and merge tables, the BPE merge loop) have already been through the browser's
// optimizing compiler when the user opens a file: browsers compile wasm with a fast baseline tier
// first and optimize hot functions later, so the first real open would otherwise run unoptimized
// (figures: docs/benchmarks.md, tokenizer section). It runs once, in the worker, never on the
// page's thread.

const GGUF_STRING = 8;
const GGUF_ARRAY = 9;
const GGUF_INT32 = 5;

/** GPT-2's byte-to-character map (byte-level BPE spells every byte as one printable character). */
function byteChars() {
  const chars = [];
  let extra = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    chars.push(String.fromCodePoint(printable ? b : extra++));
  }
  return chars;
}

/**
 * A GGUF with no tensors and a byte-level BPE tokenizer of `tokenCount` tokens: the 256 byte
 * characters, then one merge per further token (each a token joined with a byte character).
 * @param {number} tokenCount
 * @returns {Uint8Array}
 */
export function warmUpGguf(tokenCount = 30000) {
  const base = byteChars();
  const tokens = base.slice();
  const merges = [];
  const seen = new Set(tokens);
  // Pairs (one of the first 4096 tokens, a byte character), each tried once: i and i + m*4096
  // share the token and differ in the byte (4097 = 1 mod 256), so every byte, letters included,
  // comes early and real text finds merges to apply.
  for (let i = 0; tokens.length < tokenCount && i < 4096 * 256; i++) {
    const a = tokens[i % Math.min(tokens.length, 4096)];
    const b = base[(Math.floor(i / 4096) + i) % 256];
    const joined = a + b;
    if (a.length > 12 || seen.has(joined)) continue;
    seen.add(joined);
    tokens.push(joined);
    merges.push(`${a} ${b}`);
  }
  // One buffer, grown by doubling; strings encoded in place.
  const enc = new TextEncoder();
  let buf = new Uint8Array(1 << 20);
  let view = new DataView(buf.buffer);
  let at = 0;
  const room = (n) => {
    if (at + n <= buf.length) return;
    const bigger = new Uint8Array(Math.max(2 * buf.length, at + n));
    bigger.set(buf.subarray(0, at));
    buf = bigger;
    view = new DataView(buf.buffer);
  };
  const u32 = (v) => { room(4); view.setUint32(at, v, true); at += 4; };
  const u64 = (v) => { room(8); view.setBigUint64(at, BigInt(v), true); at += 8; };
  const str = (s) => {
    room(8 + 3 * s.length);
    const { written } = enc.encodeInto(s, buf.subarray(at + 8));
    view.setBigUint64(at, BigInt(written), true);
    at += 8 + written;
  };
  const kvString = (key, value) => { str(key); u32(GGUF_STRING); str(value); };
  const kvStrings = (key, list) => { str(key); u32(GGUF_ARRAY); u32(GGUF_STRING); u64(list.length); list.forEach(str); };
  buf.set(enc.encode('GGUF'), 0); // the magic; the buffer starts with room for it
  at = 4;
  u32(3); // version
  u64(0); // tensors
  u64(6); // key-values
  kvString('general.architecture', 'llama');
  kvString('tokenizer.ggml.model', 'gpt2');
  kvString('tokenizer.ggml.pre', 'qwen2');
  kvStrings('tokenizer.ggml.tokens', tokens);
  str('tokenizer.ggml.token_type'); u32(GGUF_ARRAY); u32(GGUF_INT32); u64(tokens.length);
  room(4 * tokens.length);
  for (let i = 0; i < tokens.length; i++, at += 4) view.setInt32(at, 1, true); // normal
  kvStrings('tokenizer.ggml.merges', merges);
  return buf.slice(0, at);
}

/**
 * Opens the synthetic vocabulary with the package's `openGguf` and tokenizes a mixed line.
 * @param {(source: {byteLength: number, slice: (a: number, b: number) => Uint8Array}) => Promise<any>} openGguf
 */
export async function warmUp(openGguf) {
  const bytes = warmUpGguf();
  const model = await openGguf({ byteLength: bytes.length, slice: (a, b) => bytes.subarray(a, b) });
  try {
    await model.tokenize('Hello world! def f(x): return x * 2  # 12345 你好 🙂\n');
    // Text spelled with the vocabulary's own (printable) tokens: the merge loop does real work.
    const pieces = [];
    for (let id = 256; id < 30000 && pieces.length < 1000; id++) {
      const piece = await model.tokenPiece(id);
      if (piece.every((b) => b >= 0x20 && b < 0x7f)) pieces.push(piece); // valid UTF-8
    }
    const text = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
    pieces.reduce((at, p) => { text.set(p, at); return at + p.length; }, 0);
    await model.tokenize(text);
  } finally {
    await model.close();
  }
}
