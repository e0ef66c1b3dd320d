// The npm package's tokenizer (wasm): in Node, the median MB/s of model.tokenize(text) per vocab
// file (after one warm-up call that builds the lazy indexes), with the token count and the same
// FNV hash of the ids benches/tokenize.rs prints; in headless Chromium, open-to-first-token on
// the biggest vocab: the GGUF bytes already in memory -> openGguf -> tokenize('Hello') ids, the
// first open with the wasm module not yet loaded (cold), the first open after loading it as the
// viewer's worker does at page load (viewer), and the median of later opens.
// One JSON line per measurement.
//   node tokenize-npm.mjs TEXT_FILE RUNS BIG_VOCAB.gguf GGUF...   (run by benches/tokenize.sh)
import fs from 'node:fs';
import path from 'node:path';

const [textFile, runsArg, bigVocab, ...files] = process.argv.slice(2);
const RUNS = Number(runsArg);
const REPO = process.env.GGUF_LENS_REPO;
const { openGguf } = await import('gguf-lens');
const text = new Uint8Array(fs.readFileSync(textFile));

function fnv(ids) {
  let h = 0xcbf29ce484222325n;
  const bytes = new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength);
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

for (const file of files) {
  const model = await openGguf(file);
  await model.tokenize('Hello');
  const ids = await model.tokenize(text);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await model.tokenize(text);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)];
  console.log(JSON.stringify({ where: `node ${process.version}`, file, mb_s: +(text.length / 1e3 / ms).toFixed(2), tokens: ids.length, hash: fnv(ids) }));
  await model.close();
}

const { startServer } = await import(path.join(REPO, 'pkg-tests/server.mjs'));
const { launchChromium, CHROMIUM } = await import(path.join(REPO, 'pkg-tests/helpers.mjs'));
if (!fs.existsSync(CHROMIUM)) {
  process.stderr.write(`no ${CHROMIUM}: no Chromium figure\n`);
  process.exit(0);
}
const root = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'tok-bench-'));
fs.symlinkSync(path.resolve('node_modules/gguf-lens'), path.join(root, 'gguf-lens'));
fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>tokenize bench</title>');
fs.copyFileSync(path.join(REPO, 'www/warm-up.js'), path.join(root, 'warm-up.js'));
const server = await startServer({
  files: {
    '/big.gguf': new Uint8Array(fs.readFileSync(bigVocab)),
    '/sample.gguf': new Uint8Array(fs.readFileSync(path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf'))),
  },
  staticRoot: root,
});
const browser = await launchChromium();
// Each case in a fresh browser context (its own caches). "cold": the package alone, the first
// open compiles and instantiates the wasm module (as `<gguf-preview>` does, lazily). "viewer":
// as the viewer's worker does at page load, the module is loaded first (kernelName()) and the
// engine warmed up on a synthetic vocabulary (www/warm-up.js), then,
// PAUSE_MS later (the user choosing a file), the first open. "sample": as the viewer at page load
// without ?url=, the bundled sample (tiny-llama) is opened (and here tokenized) first.
const PAUSE_MS = 500;
async function measure(warm, sample) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(server.url('/index.html'));
    return await page.evaluate(async ([runs, warm, sample, pauseMs]) => {
      const bytes = new Uint8Array(await (await fetch('/big.gguf')).arrayBuffer());
      // "Open" is: the GGUF bytes already in memory -> openGguf (header, tokenizer) -> ids of 'Hello'.
      const openToFirstToken = async (openGguf) => {
        const t = performance.now();
        const model = await openGguf({ byteLength: bytes.length, slice: (a, b) => bytes.subarray(a, b) });
        const ids = await model.tokenize('Hello');
        const ms = performance.now() - t;
        await model.close();
        return { ms, ids: Array.from(ids) };
      };
      const t0 = performance.now();
      const { openGguf, kernelName } = await import('/gguf-lens/index.js');
      const importMs = performance.now() - t0;
      let warmMs = 0;
      if (warm) {
        const t1 = performance.now();
        await kernelName();
        await (await import('/warm-up.js')).warmUp(openGguf);
        if (sample) {
          const b = new Uint8Array(await (await fetch('/sample.gguf')).arrayBuffer());
          const m = await openGguf({ byteLength: b.length, slice: (x, y) => b.subarray(x, y) });
          await m.tokenize('Hello');
          await m.close();
        }
        warmMs = performance.now() - t1;
        await new Promise((r) => setTimeout(r, pauseMs));
      }
      const first = await openToFirstToken(openGguf);
      const later = [];
      for (let i = 0; i < runs; i++) later.push((await openToFirstToken(openGguf)).ms);
      later.sort((a, b) => a - b);
      return { importMs, warmMs, first, median: later[Math.floor(later.length / 2)] };
    }, [RUNS, warm, sample, PAUSE_MS]);
  } finally {
    await context.close();
  }
}
try {
  const cold = await measure(false, false);
  const viewer = await measure(true, false);
  const sample = await measure(true, true);
  console.log(JSON.stringify({
    where: `chromium ${browser.version()}`, file: bigVocab,
    open_to_first_token_ms: +viewer.median.toFixed(1),
    viewer_first_open_ms: +viewer.first.ms.toFixed(1), viewer_load_and_warm_up_ms: +viewer.warmMs.toFixed(1),
    after_sample_first_open_ms: +sample.first.ms.toFixed(1), sample_open_ms: +sample.warmMs.toFixed(1),
    cold_first_open_ms: +cold.first.ms.toFixed(1), cold_later_ms: +cold.median.toFixed(1),
    import_ms: +cold.importMs.toFixed(1), ids: viewer.first.ids,
  }));
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
}
