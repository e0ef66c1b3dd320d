// The fit on the memory card against llama.cpp's llama-fit-params (fixtures/fit/grid.json, written
// by fixtures/make_fit_grid.py): two GPUs added through the device list show the flags it printed
// for the same budgets, Copy puts that line on the clipboard, the bars and the experts kept on the
// CPU follow the flags, axe finds nothing serious in light and dark, and the Hub repo view (a
// local mock of the Hub) says a MoE fits with its experts on the CPU, with the grid's flags.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, launch, newPage, readJson, ROOT, HERE } from './helpers.mjs';
import { startHubMock } from '../hub-mock.mjs';

const AXE = path.join(HERE, 'node_modules/axe-core/axe.min.js');
const grid = readJson(path.join(ROOT, 'fixtures/fit/grid.json'));
// The grid's inputs as they were: each RPC device reported free F (the host's) and had the
// margin F - B for a budget B; the card takes the same free sizes and a margin per GPU (llama.cpp
// splits by free memory, so free B + 1024 with the default margin would be another question).
const CASES = [
  ['mixtral', [2048, 4096], null],
  ['mixtral', [12288, 2048], 8192],
  ['qwen3moe', [12288, 2048], null],
];
// llama.cpp named the grid's devices RPC0[host:port]; the card's are CUDA0, CUDA1, ... (the names
// llama-fit-params prints for CUDA GPUs), the only difference in its line.
const llamaFlags = (c) => c.endpoints.reduce((f, e, i) => f.split(`=RPC0[${e}]`).join(`=CUDA${i}`), c.flags);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fit-viewer-'));
let server, browser, hub;
before(async () => {
  // sparse copies of the models' sizes: the header is read, the tensor data never
  for (const name of new Set(CASES.map(([n]) => n))) {
    const size = grid.cases.find((c) => c.model === name).file_size;
    fs.copyFileSync(path.join(ROOT, `fixtures/fit/${name}.gguf`), path.join(dir, `${name}.gguf`));
    fs.truncateSync(path.join(dir, `${name}.gguf`), size);
  }
  server = await startServer({ mounts: [`/fit-models=${dir}`] });
  browser = await launch();
  const fit = (name) => ({ fixture: path.join(ROOT, `fixtures/fit/${name}.gguf`), size: grid.cases.find((c) => c.model === name).file_size });
  hub = await startHubMock({ repos: { 'acme/moe-GGUF': { files: { 'mixtral.gguf': fit('mixtral'), 'dense.gguf': fit('dense') } } } });
});
after(async () => {
  await browser?.close();
  server?.close();
  await hub?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function open(page, name, query = '') {
  await page.goto(`${server.url}?url=${encodeURIComponent(`${server.url}fit-models/${name}.gguf`)}${query}`);
  await page.waitForFunction(() => !document.querySelector('#mem-card').hidden
    && document.querySelector('[data-mem="total"]').dataset.value, null, { timeout: 30000 });
}

async function addGpu(page, mib) {
  await page.selectOption('#fit-preset', 'custom');
  await page.fill('#fit-custom', String(mib));
  await page.click('#fit-add');
}

const flagsShown = (page, want) => page.waitForFunction((w) => document.querySelector('#fit-flags').textContent === w
  && !document.querySelector('#fit-result').hidden, want, { timeout: 20000 }).then(() => true, () => false);

test('two GPUs added on the card give llama-fit-params\' flags; Copy copies them', async () => {
  const { page, log, context } = await newPage(browser);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url.replace(/\/$/, '') });
  for (const [name, budgets, ctx] of CASES) {
    const c = grid.cases.find((x) => x.model === name && x.ctx === ctx && JSON.stringify(x.gpu_mib) === JSON.stringify(budgets));
    assert.ok(c && c.status === 0, `${name} ${budgets} ${ctx} is in the grid`);
    await open(page, name);
    // a new model keeps the GPUs (they are the user's): start from none
    while (await page.$('#fit-devices [data-remove]')) await page.click('#fit-devices [data-remove]');
    if (ctx) await page.fill('#fit-ctx', String(ctx)); else await page.fill('#fit-ctx', '');
    await page.fill('#fit-margin', c.margin_mib.join(','));
    for (const _ of budgets) await addGpu(page, c.free_mib);
    const what = `${name} ${budgets} ${ctx}`;
    assert.ok(await flagsShown(page, llamaFlags(c)), `${what}: shown ${await page.textContent('#fit-flags')}, llama.cpp ${c.flags}`);
    assert.equal(await page.$$eval('#fit-devices [data-gpu]', (e) => e.length), 2);
    // one bar per GPU and the CPU; the URL keeps the list
    assert.deepEqual(await page.$$eval('#fit-bars [data-device]', (e) => e.map((x) => x.dataset.device)), ['GPU0', 'GPU1', 'CPU']);
    assert.equal(new URL(page.url()).searchParams.get('fit'), budgets.map(() => c.free_mib).join(','));
    assert.equal(new URL(page.url()).searchParams.get('fitt'), c.margin_mib.join(','));
    // the experts line names the layers whose experts the flags keep on the CPU
    const whole = [...c.flags.matchAll(/blk\\\.(\d+)\\\.ffn_\(up\|down/g)].map((m) => m[1]).join(',');
    assert.equal(await page.$eval('#fit-experts', (e) => e.dataset.layers), whole, what);
    await page.click('#fit-copy');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), llamaFlags(c), what);
  }
  // a linked fit reopens with its GPUs and context
  const [name, budgets, ctx] = CASES[1];
  const c = grid.cases.find((x) => x.model === name && x.ctx === ctx && JSON.stringify(x.gpu_mib) === JSON.stringify(budgets));
  const { page: again } = await newPage(browser);
  await open(again, name, `&fit=${budgets.map(() => c.free_mib).join('%2C')}&fitt=${c.margin_mib.join('%2C')}&fctx=${ctx}`);
  assert.ok(await flagsShown(again, llamaFlags(c)), `link: ${await again.textContent('#fit-flags')}`);
  // removing a GPU leaves two margins for one: refused in one line; one margin fits the GPU left
  await again.click('#fit-devices [data-remove]');
  await again.waitForSelector('#fit-error:not([hidden])');
  assert.match(await again.textContent('#fit-error'), /^margin: 2 values for 1 GPUs$/);
  await again.fill('#fit-margin', '1024');
  await again.waitForFunction(() => document.querySelectorAll('#fit-bars [data-device]').length === 2, null, { timeout: 20000 });
  assert.deepEqual(log.errors, []);
});

for (const colorScheme of ['light', 'dark']) {
  test(`axe: the fit on the memory card has no serious or critical violation (${colorScheme})`, async () => {
    const { page } = await newPage(browser, { colorScheme, bypassCSP: true });
    const c = grid.cases.find((x) => x.model === 'mixtral' && x.ctx === null && JSON.stringify(x.gpu_mib) === '[2048,4096]');
    await open(page, 'mixtral', `&fit=${c.free_mib}%2C${c.free_mib}&fitt=${c.margin_mib.join('%2C')}`);
    assert.ok(await flagsShown(page, llamaFlags(c)));
    // the controls are reachable by keyboard: Tab from the preset reaches Add GPU
    await page.focus('#fit-preset');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'fit-add');
    await page.addScriptTag({ path: AXE });
    const found = await page.evaluate(async () => {
      const r = await window.axe.run('#mem-card', { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .flatMap((v) => v.nodes.map((n) => `${v.id} ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`));
    });
    assert.deepEqual(found, []);
  });
}

test('the Hub repo view says a MoE fits with its experts on the CPU, with llama-fit-params\' flags', async () => {
  // One GPU: llama.cpp's fit targets free - margin (the split by free memory needs two), so the
  // view's 9 GiB with the default 1024 MiB margin is the grid's 8192 MiB budget.
  const c = grid.cases.find((x) => x.model === 'mixtral' && x.ctx === 8192 && JSON.stringify(x.gpu_mib) === '[8192]');
  assert.ok(c && /exps=CPU/.test(c.flags));
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?repo=acme/moe-GGUF&endpoint=${encodeURIComponent(hub.base)}&gpu=9&mctx=8192`);
  await page.waitForSelector('#repo-view[data-state="done"]', { timeout: 30000 });
  const cell = (name) => page.$eval(`#repo-table tbody tr[data-name="${name}"]`, (tr) => ({ fits: tr.cells[5].dataset.fits, flags: tr.cells[5].dataset.fitFlags, text: tr.cells[5].textContent }));
  const moe = await cell('mixtral.gguf');
  assert.equal(moe.fits, 'experts-cpu');
  assert.equal(moe.flags, c.flags);
  const layers = [...c.flags.matchAll(/_\(ch\|\)exps=CPU/g)].length;
  assert.match(moe.text, new RegExp(`^fits with the experts of ${layers} layers on the CPU · -c 8,192$`));
  // a dense model has no experts to move: the planner's own verdict stays
  assert.notEqual((await cell('dense.gguf')).fits, 'experts-cpu');
  assert.deepEqual(log.errors, []);
});
