// Times the viewer's Inspector statistics (whole tensor: moments, histogram, percentiles) of one
// tensor of a local file picked in headless Chromium (a File, read with slice()), from the click
// on "Analyse" to the numbers shown. Debian's Chromium, playwright-core from
// pkg-tests/viewer/node_modules (run `bash pkg-tests/viewer/setup.sh` once).
//
//   bash scripts/build-site.sh SITE
//   node benches/viewer-stats.mjs SITE FILE.gguf TENSOR [--runs 3]
//
// Prints each run's seconds, then the median.
import { serveSite, launchChromium, openInInspector } from './viewer-bench.mjs';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 3;
const [site, file, tensor] = args;
if (!site || !file || !tensor) {
  console.error('usage: node benches/viewer-stats.mjs SITE FILE.gguf TENSOR [--runs N]');
  process.exit(2);
}
const { url, server } = await serveSite(site, []);
const browser = await launchChromium();
const times = [];
try {
  const page = await openInInspector(browser, url, file, tensor);
  await page.selectOption('#insp-scope', 'all');
  for (let run = 0; run < runs; run++) {
    await page.evaluate(() => { for (const e of document.querySelectorAll('[data-stat]')) delete e.dataset.value; });
    const start = Date.now();
    await page.click('#insp-run');
    await page.waitForFunction(() => document.querySelector('[data-stat="count"]').dataset.value !== undefined, null, { timeout: 120000 });
    times.push((Date.now() - start) / 1000);
    console.log(`run ${run + 1}: ${times.at(-1).toFixed(3)} s`);
  }
} finally {
  await browser.close();
  server.kill();
}
times.sort((a, b) => a - b);
console.log(`median: ${times[Math.floor(times.length / 2)].toFixed(3)} s`);
