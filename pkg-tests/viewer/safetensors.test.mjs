// safetensors in the viewer: summary (counts, dtype mix, GPTQ config), the tensor table grouped by
// layer, and inspector statistics of a GPTQ layer and a plain tensor against the committed oracles
// in fixtures/gptq/ (llama.cpp / GPTQModel dequantization, torch's f32 conversion).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startServer, launch, newPage, waitLoaded, field, ROOT, ARTIFACTS, waitInspected } from './helpers.mjs';

const GPTQ = path.join(ROOT, 'fixtures/gptq');
const manifest = JSON.parse(readFileSync(path.join(GPTQ, 'manifest.json'), 'utf8'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const close = (a, b, rel) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-30);

/** count, min, max, mean, std (population), nan, inf, zero of an f32 oracle file. */
function oracleStats(file) {
  const b = readFileSync(file);
  const v = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const fin = [...v].filter(Number.isFinite);
  const mean = fin.reduce((s, x) => s + x, 0) / fin.length;
  const std = Math.sqrt(fin.reduce((s, x) => s + (x - mean) ** 2, 0) / fin.length);
  return {
    count: v.length, min: Math.min(...fin), max: Math.max(...fin), mean, std,
    nan: v.filter(Number.isNaN).length, inf: v.length - fin.length - v.filter(Number.isNaN).length, zero: fin.filter((x) => x === 0).length,
    first: [...v.slice(0, 8)],
  };
}

async function inspectRow(page, name, want) {
  await page.click('[data-tab="tensors"]');
  await page.click(`#tensor-table tr[data-tensor="${name}"]`);
  await waitInspected(page);
  const stat = (k) => page.$eval(`[data-stat="${k}"]`, (e) => Number(e.dataset.value));
  assert.equal(await stat('min'), want.min, `${name} min`);
  assert.equal(await stat('max'), want.max, `${name} max`);
  assert.ok(close(await stat('mean'), want.mean, 1e-9) || Math.abs(await stat('mean') - want.mean) < 1e-12, `${name} mean ${await stat('mean')} vs ${want.mean}`);
  assert.ok(close(await stat('std'), want.std, 1e-6), `${name} std`);
  for (const k of ['nan', 'inf', 'zero', 'count']) assert.equal(await stat(k), want[k], `${name} ${k}`);
  const first = await page.$$eval('#insp-values .v', (vs) => vs.slice(0, 8).map((v) => Number(v.textContent)));
  assert.ok(first.every((x, i) => close(x, want.first[i], 1e-5)), `${first} vs ${want.first}`);
}

for (const name of ['b4_actorder_v1', 'b3_actorder_v2', 'b8_g32_v1']) {
  test(`viewer: GPTQ ${name} — summary, table and inspector against the oracle`, async () => {
    const c = manifest.cases.find((x) => x.case === name);
    const { page, log } = await newPage(browser);
    await page.goto(`${server.url}?url=${encodeURIComponent(`/gptq-fixtures/${name}/model.safetensors`)}`);
    await waitLoaded(page, `${name}/model.safetensors`);
    assert.equal((await field(page, 'gptq-bits')).value, String(c.bits));
    assert.equal((await field(page, 'gptq-group-size')).value, String(c.group_size));
    assert.equal((await field(page, 'gptq-desc-act')).text, String(c.desc_act));
    assert.equal((await field(page, 'gptq-format')).text, c.checkpoint_format);
    assert.equal((await field(page, 'gptq-sym')).text === 'true' || (await field(page, 'gptq-sym')).text === 'false', true);
    assert.match((await field(page, 'gptq-layers')).text, /quantize_config\.json|config\.json/);
    assert.match((await field(page, 'quant-mix')).text, new RegExp(`GPTQ-${c.bits}bit`));
    const groups = await page.$$eval('#tensor-table tr.group th', (ths) => ths.map((t) => t.firstChild.textContent));
    assert.ok(groups.includes('model.layers.0'), groups.join(', '));
    // The viewer reads v1 zeros as llama.cpp does; v2 zeros are read alike by both oracles.
    const [file] = Object.entries(c.expected).find(([, o]) => o.includes('llama.cpp') || c.checkpoint_format === 'gptq_v2');
    await inspectRow(page, c.layer, oracleStats(path.join(GPTQ, name, file)));
    assert.deepEqual(log.errors, []);
    if (name === 'b4_actorder_v1') await page.screenshot({ path: path.join(ARTIFACTS, 'safetensors-gptq.png'), fullPage: true });
  });
}

test('viewer: plain tensors of a GPTQ checkpoint and its summary counts', async () => {
  const c = manifest.cases.find((x) => x.case === 'b4_g32_v1');
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/gptq-fixtures/b4_g32_v1/model.safetensors')}`);
  await waitLoaded(page, 'b4_g32_v1/model.safetensors');
  const plain = Object.values(c.plain).reduce((s, p) => s + p.shape.reduce((x, y) => x * y, 1), 0);
  assert.equal((await field(page, 'parameter-count')).value, String(plain + c.in_features * c.out_features));
  const st = readFileSync(path.join(GPTQ, 'b4_g32_v1/model.safetensors'));
  const header = JSON.parse(st.subarray(8, 8 + Number(st.readBigUInt64LE(0))).toString());
  const stored = Object.keys(header).filter((k) => k !== '__metadata__').length;
  // The stored tensors plus one row per GPTQ layer.
  assert.equal((await field(page, 'tensor-count')).value, String(stored + 1));
  for (const [name, info] of Object.entries(c.plain)) {
    if (info.shape.length !== 2) continue;
    await inspectRow(page, name, oracleStats(path.join(GPTQ, 'b4_g32_v1', info.file)));
  }
  assert.deepEqual(log.errors, []);
});

async function dropFile(page, bytes, name) {
  await page.evaluate(async ({ b64, name }) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bin], name, { type: 'application/octet-stream' }));
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { b64: Buffer.from(bytes).toString('base64'), name });
}

test('viewer: a dropped safetensors file with injection payloads stays inert', async () => {
  const evilName = 'model.layers.0.<img src=x onerror=alert(1)>.weight';
  const evilMeta = '<script>alert(2)</script>';
  const header = {
    __metadata__: { [evilMeta]: 'javascript:alert(3)', format: '<b onmouseover=alert(4)>pt</b>' },
    [evilName]: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] },
  };
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const data = Buffer.alloc(16);
  [1, -2, 3.5, 0].forEach((v, i) => data.writeFloatLE(v, 4 * i));
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await dropFile(page, Buffer.concat([len, json, data]), 'evil.safetensors');
  await waitLoaded(page, 'evil.safetensors');
  await page.click('[data-tab="tensors"]');
  const names = await page.$$eval('#tensor-table tbody tr[data-tensor] td:first-child', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(names, [evilName]);
  await page.click('[data-tab="metadata"]');
  const text = await page.$eval('#meta-table', (e) => e.textContent);
  assert.ok(text.includes(evilMeta) && text.includes('javascript:alert(3)'));
  assert.equal(await page.$$eval('main img, main script, main b[onmouseover]', (es) => es.length), 0);
  await page.click('[data-tab="tensors"]');
  await page.click(`#tensor-table tr[data-tensor="${evilName.replace(/"/g, '\\"')}"]`);
  await waitInspected(page);
  assert.equal(await page.$eval('[data-stat="min"]', (e) => Number(e.dataset.value)), -2);
  assert.equal(await page.$eval('[data-stat="max"]', (e) => Number(e.dataset.value)), 3.5);
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.errors, []);
});

test('viewer: a sharded GPTQ checkpoint opened from its index', async () => {
  const c = manifest.cases.find((x) => x.case === manifest.sharded.same_as);
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/gptq-fixtures/sharded/model.safetensors.index.json')}`);
  await waitLoaded(page, 'sharded/model.safetensors.index.json');
  assert.equal((await field(page, 'gptq-bits')).value, String(c.bits));
  assert.match(await page.$eval('#file-info', (e) => e.textContent), /2 shards/);
  await inspectRow(page, c.layer, oracleStats(path.join(GPTQ, c.case, 'expected.f32')));
  assert.deepEqual(log.errors, []);
});
