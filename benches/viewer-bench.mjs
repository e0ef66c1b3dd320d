// What the viewer benchmarks share: the site served by scripts/viewer-server.mjs (with extra
// `/prefix=DIR` mounts) and Debian's Chromium, headless, driven by playwright-core from
// pkg-tests/viewer/node_modules (run `bash pkg-tests/viewer/setup.sh` once).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Serves `site`; resolves to { url, server } once it listens. */
export async function serveSite(site, mounts = []) {
  const server = spawn(process.execPath, [path.join(ROOT, 'scripts/viewer-server.mjs'), site, '0', ...mounts], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => { out += d; const m = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out); if (m) resolve(m[1]); });
    server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { url, server };
}

/** Headless Chromium (never a downloaded browser). */
export function launchChromium() {
  const { chromium } = createRequire(path.join(ROOT, 'pkg-tests/viewer/package.json'))('playwright-core');
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Opens the viewer at `url` in a new page, picks the local `file` (a File, as a drop gives) and
 * selects `tensor` in the Inspector; resolves to the page. */
export async function openInInspector(browser, url, file, tensor) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('[data-field="name"]').textContent !== 'No model', null, { timeout: 30000 });
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction((n) => [...document.querySelectorAll('#insp-tensor option')].some((o) => o.value === n), tensor, { timeout: 30000 });
  await page.click('[data-tab="inspector"]');
  await page.selectOption('#insp-tensor', tensor);
  return page;
}
