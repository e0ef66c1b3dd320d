// Times the viewer's "Compare all matching tensors" in headless Chromium on a pair of GGUF files
// served over HTTP Range requests by scripts/viewer-server.mjs (Debian's Chromium, playwright-core
// from pkg-tests/viewer/node_modules: run `bash pkg-tests/viewer/setup.sh` once).
//
//   /tmp/oracle/venv/bin/python benches/make_diff_pair.py DIR     # big-a.gguf (Q4_K), big-b.gguf (Q8_0)
//   bash scripts/build-site.sh SITE
//   node benches/viewer-compare-all.mjs SITE DIR [--runs 3]
//
// Prints each run's wall time from the click to the last tensor's metrics, then the median.
import { serveSite, launchChromium } from './viewer-bench.mjs';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 3;
const [site, dir] = args;
if (!site || !dir) {
  console.error('usage: node benches/viewer-compare-all.mjs SITE DIR [--runs N]');
  process.exit(2);
}

const { url, server } = await serveSite(site, [`/bench=${dir}`]);
const browser = await launchChromium();
const times = [];
try {
  for (let r = 0; r < runs; r++) {
    const page = await (await browser.newContext()).newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${url}?url=${encodeURIComponent('/bench/big-a.gguf')}&compare=${encodeURIComponent('/bench/big-b.gguf')}`);
    await page.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr[data-tensor]', { timeout: 60000 });
    const n = await page.$$eval('#cmp-numeric tbody tr[data-tensor]', (trs) => trs.length);
    const t0 = Date.now();
    await page.click('#cmp-all');
    await page.waitForFunction((k) => document.querySelectorAll('#cmp-numeric tr[data-done]').length === k && document.querySelector('#cmp-cancel').hidden, n, { timeout: 600000, polling: 20 });
    const ms = Date.now() - t0;
    const elems = await page.$$eval('#cmp-numeric tbody tr[data-tensor]', (trs) => trs.length);
    if (errors.length || !(await page.$eval('#error', (e) => e.hidden))) throw new Error(`page errors: ${errors.join('; ')} ${await page.$eval('#error', (e) => e.textContent)}`);
    console.log(`run ${r + 1}: ${elems} tensors compared in ${ms} ms`);
    times.push(ms);
    await page.context().close();
  }
} finally {
  await browser.close();
  server.kill();
}
times.sort((x, y) => x - y);
console.log(`median of ${runs}: ${times[Math.floor(runs / 2)]} ms`);
