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
// Prints each run's seconds to each chart, then the medians, and the CPU seconds Chromium's
// processes spent from the click to the exact chart (utime + stime from /proc, every process
// under this one named chrom*): on a busy machine, CPU time per value is the figure to compare.
import { readdirSync, readFileSync } from 'node:fs';
import { serveSite, launchChromium, openInInspector } from './viewer-bench.mjs';

/** CPU seconds of this process's chrom* descendants (Linux /proc; 0 elsewhere). */
function chromiumCpu() {
  const procs = new Map();
  let pids = [];
  try { pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)); } catch { return 0; }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      procs.set(Number(pid), { comm, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* gone */ }
  }
  const mine = (pid) => {
    for (let p = procs.get(pid)?.ppid; p; p = procs.get(p)?.ppid) if (p === process.pid) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, p] of procs) if (/chrom/i.test(p.comm) && mine(pid)) ticks += p.ticks;
  return ticks / 100; // USER_HZ
}

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
const cpu = [];
try {
  const page = await openInInspector(browser, url, file, tensor);
  await page.check('#qerr-all');
  const workers = await page.evaluate(() => Math.min(4, navigator.hardwareConcurrency));
  for (let run = 0; run < runs; run++) {
    await page.evaluate(() => { delete document.querySelector('#qerr-chart').dataset.pass; });
    const start = Date.now();
    const cpu0 = chromiumCpu();
    await page.click('#qerr-run');
    await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass !== undefined, null, { timeout: 600000, polling: 20 });
    sampled.push((Date.now() - start) / 1000);
    await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 600000, polling: 50 });
    exact.push((Date.now() - start) / 1000);
    cpu.push(chromiumCpu() - cpu0);
    const note = await page.$eval('#qerr-note', (e) => e.textContent);
    const points = await page.$$eval('#qerr-chart .point', (gs) => gs.length);
    console.log(`run ${run + 1}: sampled ${sampled.at(-1).toFixed(3)} s, exact ${exact.at(-1).toFixed(3)} s, ${cpu.at(-1).toFixed(2)} CPU s (${points} types, ${workers} workers; ${note})`);
  }
} finally {
  await browser.close();
  server.kill();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`median: sampled ${median(sampled).toFixed(3)} s, exact ${median(exact).toFixed(3)} s, ${median(cpu).toFixed(2)} CPU s to the exact chart`);
