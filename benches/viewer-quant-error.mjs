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
// The seconds are the page's own: from the click event's time stamp to the performance.now() of
// a mutation observer's call once the panel has set data-pass (the microtask after the task that
// drew the chart), so they do not depend on how often this script looks, and any build of the
// site is timed the same way. `--threads` also splits that CPU time by thread name (the pool's
// workers, V8's background compile threads, the page's main thread, ...). `--timeline` also
// prints each run's marks (ms after the click) from the page, its worker and the pool's
// workers: the panel and the pool record them only when this script sets GGUF_LENS_TIMELINE.
import { readdirSync, readFileSync } from 'node:fs';
import { serveSite, launchChromium, openInInspector } from './viewer-bench.mjs';

/** CPU ticks of this process's chrom* descendants (Linux /proc; empty elsewhere), per thread:
 * `pid:tid` → { comm (the thread's name), ticks }. */
function chromiumThreads() {
  const procs = new Map();
  let pids = [];
  try { pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d)); } catch { return new Map(); }
  const parse = (text) => {
    const close = text.lastIndexOf(')');
    const f = text.slice(close + 2).split(' ');
    return { comm: text.slice(text.indexOf('(') + 1, close), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  };
  for (const pid of pids) {
    try { procs.set(Number(pid), parse(readFileSync(`/proc/${pid}/stat`, 'utf8'))); } catch { /* gone */ }
  }
  const mine = (pid) => {
    for (let p = procs.get(pid)?.ppid; p; p = procs.get(p)?.ppid) if (p === process.pid) return true;
    return false;
  };
  const threads = new Map();
  for (const [pid, p] of procs) {
    if (!/chrom/i.test(p.comm) || !mine(pid)) continue;
    let tids = [];
    try { tids = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tids) {
      try {
        const t = parse(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
        // ns on a CPU and ns runnable but waiting for one (schedstat; absent on some kernels)
        let ran = 0, queued = 0;
        try { [ran, queued] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number); } catch { /* none */ }
        threads.set(`${pid}:${tid}`, { comm: t.comm, ticks: t.ticks, ran, queued });
      } catch { /* gone */ }
    }
  }
  return threads;
}

/** CPU seconds of the chrom* threads: in all, and by thread name, between two snapshots; and
 * each worker thread's seconds on a CPU or waiting for one (the rest of a window it slept). */
function cpuBetween(before, after) {
  const byName = new Map();
  const busy = new Map();
  let total = 0;
  for (const [key, t] of after) {
    const was = before.get(key);
    if (/Worker/.test(t.comm)) busy.set(`${t.comm}[${key.split(':')[1]}]`, (t.ran + t.queued - (was ? was.ran + was.queued : 0)) / 1e9);
    const d = (t.ticks - (before.get(key)?.ticks ?? 0)) / 100; // USER_HZ
    if (d <= 0) continue;
    total += d;
    // Workers one by one (the page's worker and the pool's), other threads by name.
    const name = /Worker/.test(t.comm) ? `${t.comm}[${key.split(':')[1]}]` : t.comm;
    byName.set(name, (byName.get(name) ?? 0) + d);
  }
  return { total, byName, busy };
}

/** The qerr:* marks of the page and of every worker (absolute ms), cleared for the next run. */
async function collectMarks(page) {
  const read = () => {
    const marks = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('qerr:'))
      .map((m) => [m.name, performance.timeOrigin + m.startTime]);
    performance.clearMarks();
    return marks;
  };
  const out = (await page.evaluate(read)).map(([name, at]) => ({ where: 'page', name, at }));
  let k = 0;
  for (const w of page.workers()) {
    const where = /stats-worker/.test(w.url()) ? `pool${k++}` : 'worker';
    for (const [name, at] of await w.evaluate(read)) out.push({ where, name, at });
  }
  return out.sort((a, b) => a.at - b.at);
}

function printTimeline(marks, clickAt) {
  console.log(`  timeline (ms after the click): ${marks.map((m) => `${(m.at - clickAt).toFixed(1)} ${m.where} ${m.name.replace(/^qerr:[a-z]+:/, '')}`).join(' · ')}`);
}

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 3;
// --threads: also each run's CPU seconds by thread name (workers, V8's compile threads, ...).
const threadsAt = args.indexOf('--threads');
const byThread = threadsAt >= 0 && Boolean(args.splice(threadsAt, 1));
// --timeline: also each run's marks, ms after the click, by context.
const timelineAt = args.indexOf('--timeline');
const timeline = timelineAt >= 0 && Boolean(args.splice(timelineAt, 1));
const [site, file, tensor] = args;
if (!site || !file || !tensor) {
  console.error('usage: node benches/viewer-quant-error.mjs SITE FILE.gguf TENSOR [--runs N] [--threads] [--timeline]');
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
  // The click's time stamp and each drawn chart's, in the page's clock.
  await page.evaluate(() => {
    const chart = document.querySelector('#qerr-chart');
    addEventListener('click', (e) => { if (e.target.id === 'qerr-run') globalThis.benchClickAt = e.timeStamp; }, true);
    new MutationObserver(() => {
      const at = performance.now();
      if (chart.dataset.pass && chart.dataset.pass !== globalThis.benchPasses.at(-1)?.pass) globalThis.benchPasses.push({ pass: chart.dataset.pass, at });
    }).observe(chart, { attributes: true, attributeFilter: ['data-pass'] });
  });
  for (let run = 0; run < runs; run++) {
    await page.evaluate((on) => {
      delete document.querySelector('#qerr-chart').dataset.pass;
      globalThis.benchPasses = [];
      globalThis.GGUF_LENS_TIMELINE = on;
    }, timeline);
    // The pool's workers take the flag from the page's worker (they may not exist yet).
    if (timeline) for (const w of page.workers()) await w.evaluate(() => { globalThis.GGUF_LENS_TIMELINE = true; performance.clearMarks(); });
    const cpu0 = chromiumThreads();
    await page.click('#qerr-run');
    await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 600000, polling: 50 });
    const { clickAt, passes, origin } = await page.evaluate(() => ({ clickAt: globalThis.benchClickAt, passes: globalThis.benchPasses, origin: performance.timeOrigin }));
    // A tensor small enough for one pass has no sampled chart: its time is the exact one's.
    const first = passes[0];
    const last = passes.findLast((p) => p.pass === 'exact');
    sampled.push((first.at - clickAt) / 1000);
    exact.push((last.at - clickAt) / 1000);
    const used = cpuBetween(cpu0, chromiumThreads());
    cpu.push(used.total);
    const note = await page.$eval('#qerr-note', (e) => e.textContent);
    const points = await page.$$eval('#qerr-chart .point', (gs) => gs.length);
    console.log(`run ${run + 1}: sampled ${sampled.at(-1).toFixed(3)} s, exact ${exact.at(-1).toFixed(3)} s, ${cpu.at(-1).toFixed(2)} CPU s (${points} types, ${workers} workers; ${note})`);
    if (byThread) {
      const names = [...used.byName].sort((a, b) => b[1] - a[1]).filter(([, s]) => s >= 0.01);
      console.log(`  CPU s by thread: ${names.map(([n, s]) => `${n} ${s.toFixed(2)}`).join(', ')}`);
      // Asleep: the click-to-exact window less the time on a CPU or queued for one (load-independent
      // idle: waiting for work, a read or a message). Only the threads that ran in the window.
      const asleep = [...used.busy].filter(([n]) => (used.byName.get(n) ?? 0) >= 0.5).map(([n, b]) => `${n} ${(exact.at(-1) - b).toFixed(3)}`);
      console.log(`  s asleep in the window: ${asleep.join(', ')}`);
    }
    if (timeline) printTimeline(await collectMarks(page), origin + clickAt);
  }
} finally {
  await browser.close();
  server.kill();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`median: sampled ${median(sampled).toFixed(3)} s, exact ${median(exact).toFixed(3)} s, ${median(cpu).toFixed(2)} CPU s to the exact chart`);
