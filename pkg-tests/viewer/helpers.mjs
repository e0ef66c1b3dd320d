// Shared set-up for the viewer tests: the built site (scripts/build-site.sh), the repo's static
// Range server on 127.0.0.1, and Debian's Chromium driven by playwright-core (never a download).
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const SITE = path.join(ROOT, 'site-test');
export const ARTIFACTS = path.join(HERE, 'artifacts');
export const FIXTURES = path.join(HERE, 'fixtures');
export const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

// run.sh builds the site once for all test files and says so; a test file run alone builds it.
let built = process.env.GGUF_LENS_SITE_BUILT === '1';
export function buildSite() {
  if (built) return;
  execFileSync('bash', [path.join(ROOT, 'scripts/build-site.sh'), SITE], { stdio: ['ignore', 'inherit', 'inherit'] });
  built = true;
}

/** llama.cpp's models/ folder in the llama-cpp-python sdist (scripts/llama-sdist.sh fetches it
 * once): its ggml-vocab-*.gguf are GGUF files llama.cpp's own tools wrote. Null when it cannot be
 * had; a test that needs it then fails on the missing file. */
let llamaModelsDir;
export function llamaModels() {
  if (llamaModelsDir === undefined) {
    try {
      llamaModelsDir = path.join(execFileSync('bash', [path.join(ROOT, 'scripts/llama-sdist.sh')], { encoding: 'utf8' }).trim(), 'models');
    } catch {
      llamaModelsDir = null;
    }
  }
  return llamaModelsDir;
}

/** A real model (all-MiniLM-L6-v2 as GGUF F16, Q8_0 and Q4_K, and gguf-py's expected.json):
 * scripts/real-model.sh makes it once (cached outside the repo); run.sh makes it first and
 * passes its folder in GGUF_LENS_REAL_MODEL. Null when it cannot be had; a test that needs it
 * then fails on the missing file. */
let realModelDir;
export function realModel() {
  if (realModelDir === undefined) {
    try {
      realModelDir = process.env.GGUF_LENS_REAL_MODEL || execFileSync('bash', [path.join(ROOT, 'scripts/real-model.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    } catch {
      realModelDir = null;
    }
  }
  return realModelDir;
}

/** The site and the fixtures on 127.0.0.1; `real: true` also serves realModel() at /real-model/;
 * `mounts` adds `/prefix=DIR` folders. */
export async function startServer({ real: withReal = false, mounts = [] } = {}) {
  buildSite();
  const models = llamaModels();
  const real = withReal ? realModel() : null;
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/viewer-server.mjs'), SITE, '0', ...(models ? [`/llama-models=${models}`] : []), ...(real ? [`/real-model=${real}`] : []), `/fixtures=${FIXTURES}`, `/sample-fixtures=${path.join(ROOT, 'fixtures/sample')}`, `/gptq-fixtures=${path.join(ROOT, 'fixtures/gptq')}`, `/mlx-fixtures=${path.join(ROOT, 'fixtures/mlx')}`, `/fp8-fixtures=${path.join(ROOT, 'fixtures/fp8')}`, `/ct-fixtures=${path.join(ROOT, 'fixtures/ct')}`, `/mxfp4-fixtures=${path.join(ROOT, 'fixtures/mxfp4')}`, `/bnb-fixtures=${path.join(ROOT, 'fixtures/bnb')}`, `/diff-fixtures=${path.join(ROOT, 'fixtures/diff')}`, `/plan-fixtures=${path.join(ROOT, 'fixtures/plan')}`, ...mounts], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { url, close: () => child.kill() };
}

export async function launch() {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

// A page that records dialogs, console errors and page errors; dialogs are dismissed.
export async function newPage(browser, opts = {}) {
  // bypassCSP: only for injecting a test tool (axe-core) into the page.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: opts.colorScheme || 'light', bypassCSP: Boolean(opts.bypassCSP) });
  const page = await context.newPage();
  const log = { dialogs: [], errors: [], console: [], requests: [] };
  page.on('dialog', (d) => { log.dialogs.push(d.type() === 'beforeunload' ? 'beforeunload' : d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => log.errors.push(String(e)));
  page.on('console', (m) => log.console.push(`${m.type()}: ${m.text()}`));
  page.on('request', (r) => log.requests.push(r.url()));
  return { page, log, context };
}

export async function waitLoaded(page, name) {
  await page.waitForFunction((n) => document.querySelector('[data-field="name"]').textContent === n, name, { timeout: 20000 });
}

export const field = (page, f) => page.$eval(`[data-field="${f}"]`, (e) => ({ text: e.textContent, value: e.dataset.value }));

// The inspector has drawn the first values and finished the whole-tensor statistics.
export async function waitInspected(page) {
  await page.waitForFunction(() => document.querySelectorAll('#insp-values .v').length > 0 && document.querySelector('[data-stat="count"]').dataset.value !== undefined, null, { timeout: 20000 });
}

/** Clicks an export button: the download's suggested name and text. */
export async function exported(page, button) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return { name: dl.suggestedFilename(), text: await readFile(await dl.path(), 'utf8') };
}
