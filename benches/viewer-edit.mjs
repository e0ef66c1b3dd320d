// Editing the chat template of a 4 GiB GGUF in Chromium (issue #16: <= 2 s), as the viewer does
// it: a dropped local File, opened by the npm package, edited, and the new file made as a Blob
// (new header + File slices). Also timed: reading the whole edited Blob once through its stream
// (what any save must at least read; the data is a hole here, so this is the browser's own
// per-byte cost, not the disk's).
//
//   node benches/viewer-edit.mjs [SIZE_GIB]      (after scripts/build-site.sh site-test)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serveSite, launchChromium, ROOT } from './viewer-bench.mjs';

const gib = Number(process.argv[2] ?? 4);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-lens-edit-'));
const file = path.join(dir, 'big.gguf');
// Header by hand: one F32 tensor of gib GiB, a chat template; the data is a hole.
execFileSync('python3', ['-c', `
import struct, sys
n = ${gib} << 28
name = b"big.weight"
key = b"tokenizer.chat_template"; tpl = b"{{ messages }}"
h = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
h += struct.pack("<Q", len(key)) + key + struct.pack("<I", 8) + struct.pack("<Q", len(tpl)) + tpl
h += struct.pack("<Q", len(name)) + name + struct.pack("<IQIQ", 1, n, 0, 0)
h += b"\\0" * ((-len(h)) % 32)
f = open(sys.argv[1], "wb"); f.write(h); f.truncate(len(h) + n * 4); f.close()
`, file]);
const site = path.join(ROOT, 'site-test');
const { url, server } = await serveSite(site);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(url);
  // An input of our own: the viewer's clears itself once it has opened a file.
  await page.evaluate(() => { const i = document.createElement('input'); i.type = 'file'; i.id = 'bench-input'; document.body.append(i); });
  await page.setInputFiles('#bench-input', file);
  const handle = await page.$('#bench-input');
  const result = await page.evaluate(async (input) => {
    const { openGguf } = await import('./pkg/index.js');
    const picked = input.files[0];
    const t0 = performance.now();
    const model = await openGguf(picked);
    const t1 = performance.now();
    const blob = await (await model.edit()).setChatTemplate('{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}').toBlob();
    const t2 = performance.now();
    let read = 0;
    for (const reader = blob.stream().getReader(); ;) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.length;
    }
    const t3 = performance.now();
    const edited = await openGguf(blob);
    const template = edited.get('tokenizer.chat_template');
    return { open: t1 - t0, edit: t2 - t1, stream: t3 - t2, size: blob.size, inSize: picked.size, read, template };
  }, handle);
  if (!result.template.startsWith('{% for m')) throw new Error('the edited Blob does not hold the new template');
  const s = (ms) => (ms / 1000).toFixed(3);
  console.log(`input ${result.inSize} bytes, edited ${result.size} bytes`);
  console.log(`open header: ${s(result.open)} s; edit to a ready Blob: ${s(result.edit)} s; total ${s(result.open + result.edit)} s (target <= 2 s)`);
  console.log(`reading the whole edited Blob once (stream): ${s(result.stream)} s, ${(result.read / result.stream / 1e6).toFixed(2)} GB/s`);
} finally {
  await browser.close();
  server.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
