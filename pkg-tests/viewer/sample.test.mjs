// The bundled sample opens with no file given; every summary field equals gguf-py's reading.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, field, readJson, FIXTURES, ARTIFACTS } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

test('with no file the page opens the sample; summary fields equal gguf-py', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  const s = expected.summary;
  for (const f of ['architecture', 'name', 'tokenizer-model']) assert.equal((await field(page, f)).text, s[f], f);
  for (const f of ['parameter-count', 'file-size', 'context-length', 'embedding-length', 'block-count', 'head-count', 'head-count-kv', 'vocab-size', 'tensor-count']) {
    assert.equal(Number((await field(page, f)).value), s[f], f);
  }
  assert.equal((await field(page, 'file-type')).text, s['file-type']);
  assert.equal(Number((await field(page, 'file-type')).value), s['file-type-id']);
  assert.ok(Math.abs(Number((await field(page, 'bits-per-weight')).value) - s['bits-per-weight']) < 1e-9);
  // One row for the file type: llama.cpp's label "Q4_K - Medium" (llama_model_ftype_name(15))
  // says nothing Q4_K_M does not, so no second row repeats it.
  assert.equal(await page.$$eval('.facts dt', (dts) => dts.filter((d) => /quant label/i.test(d.textContent)).length), 0);
  assert.equal(await page.$$eval('[data-field="quant-label"]', (e) => e.length), 0);
  assert.match((await field(page, 'quant-mix')).text, /Q4_K .*Q6_K .*F32/);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.errors, []);
  await page.screenshot({ path: path.join(ARTIFACTS, 'sample-overview-light.png'), fullPage: true });
});

test('the file type row adds llama.cpp\'s label only where it says more than the short name', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  const text = await page.evaluate(async () => {
    const { fileTypeText } = await import('./format.js');
    return Object.fromEntries([0, 1, 15, 17, 10, 19, 27, 38, 15 | 1024, 99].map((ft) => [ft, fileTypeText(ft)]));
  });
  assert.deepEqual(text, {
    0: 'F32', // "all F32"
    1: 'F16',
    15: 'Q4_K_M', // "Q4_K - Medium"
    17: 'Q5_K_M',
    10: 'Q2_K (Medium)', // llama.cpp labels plain Q2_K "Q2_K - Medium"
    19: 'IQ2_XXS (2.0625 bpw)',
    27: 'IQ3_M (IQ3_S mix - 3.66 bpw)',
    38: 'MXFP4_MOE', // "MXFP4 MoE"
    [15 | 1024]: 'Q4_K_M (guessed)',
    99: 'type 99 (unknown to llama.cpp)',
  });
  assert.equal((await field(page, 'file-type')).text, 'Q4_K_M');
});

test('tensors, metadata, tokenizer and chat template match gguf-py', async () => {
  const { page } = await newPage(browser, { colorScheme: 'dark' });
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.screenshot({ path: path.join(ARTIFACTS, 'sample-overview-dark.png'), fullPage: true });

  await page.click('[data-tab="tensors"]');
  const rows = await page.$$eval('#tensor-table tbody tr[data-tensor]', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, expected.tensors.length);
  for (const t of expected.tensors) {
    const r = rows.find((x) => x[0] === t.name);
    assert.ok(r, t.name);
    assert.equal(r[1], t.type);
    assert.equal(r[2], `[${[...t.shape].reverse().join(', ')}]`); // gguf-py gives ne (innermost first); the viewer shows shapes outermost first
    assert.equal(Number(r[3].replace(/,/g, '')), t.n_elements);
    assert.equal(Number(r[4].replace(/,/g, '')), t.n_bytes);
  }
  const groups = await page.$$eval('#tensor-table tr.group th', (ths) => ths.map((th) => th.firstChild.textContent));
  assert.deepEqual(groups, ['other', 'blk.0', 'blk.1']);
  await page.screenshot({ path: path.join(ARTIFACTS, 'sample-tensors-dark.png'), fullPage: true });

  await page.click('[data-tab="metadata"]');
  const keys = await page.$$eval('#meta-table tbody tr', (trs) => trs.map((tr) => tr.dataset.key));
  assert.deepEqual(keys, expected.metadata_keys);
  await page.fill('#meta-filter', 'head_count');
  // The filter renders after the worker's answer (matches inside arrays): wait for that render.
  await page.waitForFunction((n) => document.querySelectorAll('#meta-table tbody tr').length !== n, keys.length);
  assert.deepEqual(await page.$$eval('#meta-table tbody tr', (trs) => trs.map((tr) => tr.dataset.key)), ['llama.attention.head_count', 'llama.attention.head_count_kv']);
  await page.fill('#meta-filter', 'tokens');
  await page.click('#meta-table tbody tr[data-key="tokenizer.ggml.tokens"] button.link');
  await page.waitForSelector('#meta-table .array-items li');
  const firstPage = await page.$$eval('#meta-table .array-items code', (cs) => cs.map((c) => c.textContent));
  assert.equal(firstPage.length, 50);
  assert.equal(firstPage[0], expected.tokens['0']);
  await page.click('#meta-table .array-view .pager button:last-child');
  await page.waitForFunction(() => document.querySelector('#meta-table .array-items .idx').textContent === '50');
  await page.screenshot({ path: path.join(ARTIFACTS, 'sample-metadata-dark.png'), fullPage: true });

  await page.click('[data-tab="tokenizer"]');
  await page.waitForSelector('#tok-table tbody tr');
  assert.equal(await page.$eval('[data-special="bos"] code', (e) => e.textContent), expected.tokens['1']);
  assert.equal(await page.$eval('[data-special="eos"] code', (e) => e.textContent), expected.tokens['2']);
  await page.selectOption('#tok-mode', 'id');
  await page.fill('#tok-query', '70');
  await page.waitForFunction(() => document.querySelectorAll('#tok-table tbody tr').length === 1 && document.querySelector('#tok-table tbody tr').dataset.tokenId === '70');
  assert.equal(await page.$eval('#tok-table tbody tr code', (e) => e.textContent), expected.tokens['70']);
  await page.selectOption('#tok-mode', 'text');
  await page.fill('#tok-query', 'w16');
  await page.waitForFunction(() => document.querySelector('#tok-total').textContent.endsWith('of 9'));
  await page.screenshot({ path: path.join(ARTIFACTS, 'sample-tokenizer-dark.png'), fullPage: true });

  await page.click('[data-tab="template"]');
  assert.equal(await page.$eval('#chat-template', (e) => e.textContent), expected.chat_template);
});

test('exports JSON and Markdown', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const json = JSON.parse(await (await import('node:fs/promises')).readFile(await dl.path(), 'utf8'));
  assert.equal(json.summary.parameterCount, expected.summary['parameter-count']);
  assert.equal(json.tensors.length, expected.tensors.length);
  assert.equal(json.metadata.length, expected.metadata_keys.length);
  const [dm] = await Promise.all([page.waitForEvent('download'), page.click('#export-md')]);
  const md = await (await import('node:fs/promises')).readFile(await dm.path(), 'utf8');
  assert.match(md, /^# gguf-lens tiny sample/);
  assert.match(md, /\| Q4_K \| 12 \|/);
});
