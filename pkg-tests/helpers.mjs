// Shared test helpers: fixture paths, the oracle manifest, a GGUF writer for big headers.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

export const REPO = process.env.GGUF_LENS_REPO;
if (!REPO) throw new Error('GGUF_LENS_REPO must point at the gguf-lens checkout (scripts/test-npm.sh sets it)');
export const DEQUANT = path.join(REPO, 'fixtures/dequant');
export const META = path.join(REPO, 'fixtures/meta');

/** Debian's Chromium, headless, driven by playwright-core (which never downloads a browser). */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export function launchChromium() {
  const { chromium } = createRequire(path.join(REPO, 'tools/package.json'))('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export function manifest() {
  return JSON.parse(fs.readFileSync(path.join(DEQUANT, 'manifest.json'), 'utf8'));
}

export function expectedF32(name) {
  const b = fs.readFileSync(path.join(DEQUANT, name));
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export function bytesOf(f32) {
  return new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength);
}

/** True when two byte arrays are equal. */
export function sameBytes(a, b) {
  return a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
}

/**
 * A GGUF v3 file with a big tokenizer (nTokens strings) and nTensors small F32 tensors, so a
 * header of any size can be made without external tools. Returns the bytes.
 */
export function makeBigHeader({ nTokens = 150_000, nTensors = 200, seed = 1, namePrefix = '', extraDataBytes = 0, bpe = false, split = null } = {}) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  let x = seed;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  parts.push(Buffer.from('GGUF'));
  u32(3);
  u64(nTensors);
  u64((bpe ? 7 : 4) + (split ? 3 : 0));
  str('general.architecture'); u32(8); str('llama');
  // llama.cpp's gguf-split keys: split.no, split.count (uint16), split.tensors.count (int32).
  const u16 = (v) => { const b = Buffer.alloc(2); b.writeUInt16LE(v); parts.push(b); };
  if (split) {
    str('split.no'); u32(2); u16(split.no);
    str('split.count'); u32(2); u16(split.count);
    str('split.tensors.count'); u32(5); u32(split.tensors);
  }
  if (bpe) { str('tokenizer.ggml.model'); u32(8); str('gpt2'); }
  str('llama.block_count'); u32(4); u32(nTensors);
  str('general.file_type'); u32(4); u32(0);
  str('tokenizer.ggml.tokens'); u32(9); u32(8); u64(nTokens);
  for (let i = 0; i < nTokens; i++) {
    let t = '';
    const len = 1 + Math.floor(rand() * 10);
    for (let j = 0; j < len; j++) t += String.fromCharCode(97 + Math.floor(rand() * 26));
    // Fixed-width ids keep token lengths independent of rank (a rank-growing tail is what
    // real BPE vocabularies have; tests/real_vocab_estimate.rs covers those).
    str(t + String(i).padStart(6, '0'));
  }
  if (bpe) {
    // Token types, then one merge per token ("a b" made from the token's text).
    str('tokenizer.ggml.token_type'); u32(9); u32(5); u64(nTokens);
    parts.push(Buffer.alloc(4 * nTokens, 1));
    str('tokenizer.ggml.merges'); u32(9); u32(8); u64(nTokens);
    for (let i = 0; i < nTokens; i++) {
      const t = String(i) + 'abcdefgh'.slice(0, 1 + Math.floor(rand() * 8));
      str(t.slice(0, 1) + ' ' + t.slice(1));
    }
  }
  const ROW = 8;
  for (let i = 0; i < nTensors; i++) {
    str(`${namePrefix}blk.${i}.weight`); u32(2); u64(ROW); u64(2); u32(0); u64(i * 64);
  }
  let header = Buffer.concat(parts);
  const dataOffset = Math.ceil(header.length / 32) * 32;
  const data = Buffer.alloc(nTensors * 64 + extraDataBytes);
  for (let i = 0; i < nTensors * 16; i++) data.writeFloatLE(i * 0.5, i * 4);
  return { bytes: Buffer.concat([header, Buffer.alloc(dataOffset - header.length), data]), dataOffset };
}
