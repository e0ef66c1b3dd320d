// Times the viewer's Inspector quantization-error chart (all 17 types) of one tensor of a local
// file picked in headless Chromium (a File, read with slice() by every worker of the pool), from
// the click on "Quantize to every type" to the sampled chart and to the exact one (every row;
// "then every row" ticked). Debian's Chromium, playwright-core from pkg-tests/viewer/node_modules
// (run `bash pkg-tests/viewer/setup.sh` once).
//
//   bash scripts/build-site.sh SITE
//   python benches/make_e2e_model.py /tmp/e2e100m.gguf --cols 24576   # 100.7M-value tensors
//   node benches/viewer-quant-error.mjs SITE /tmp/e2e100m.gguf big_q4_k.weight [--runs 3]
//
// Prints each run's seconds to each chart, then the medians.
import { serveSite, launchChromium, openInInspector } from './viewer-bench.mjs';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 3;
const [site, file, tensor] = args;
if (!site || !file || !tensor) {
  console.error('usage: node benches/viewer-quant-error.mjs SITE FILE.gguf TENSOR [--runs N]');
  process.exit(2);
}
const { url, server } = await serveSite(site, []);
const browser = await launchChromium();
const sampled = [];
const exact = [];
try {
  const page = await openInInspector(browser, url, file, tensor);
  await page.check('#qerr-all');
  const workers = await page.evaluate(() => Math.min(4, navigator.hardwareConcurrency));
  for (let run = 0; run < runs; run++) {
    await page.evaluate(() => { delete document.querySelector('#qerr-chart').dataset.pass; });
    const start = Date.now();
    await page.click('#qerr-run');
    await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass !== undefined, null, { timeout: 600000, polling: 20 });
    sampled.push((Date.now() - start) / 1000);
    await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 600000, polling: 50 });
    exact.push((Date.now() - start) / 1000);
    const note = await page.$eval('#qerr-note', (e) => e.textContent);
    const points = await page.$$eval('#qerr-chart .point', (gs) => gs.length);
    console.log(`run ${run + 1}: sampled ${sampled.at(-1).toFixed(3)} s, exact ${exact.at(-1).toFixed(3)} s (${points} types, ${workers} workers; ${note})`);
  }
} finally {
  await browser.close();
  server.kill();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`median: sampled ${median(sampled).toFixed(3)} s, exact ${median(exact).toFixed(3)} s`);
