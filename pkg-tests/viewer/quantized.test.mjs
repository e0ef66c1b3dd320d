// MLX, FP8 block-scaled and compressed-tensors checkpoints in the viewer (fixtures/mlx from mlx's
// own writer and mx.dequantize; fixtures/fp8 from numpy + ml_dtypes replaying transformers'
// Fp8Dequantize; fixtures/ct from compressed-tensors' own compress and decompress; fixtures/mxfp4
// from transformers' convert_moe_packed_tensors; fixtures/bnb from bitsandbytes): the
// summary's parameter count and mix, each layer listed once in its logical shape, and the
// inspector's statistics against the expected values (expected.safetensors, decoded here).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startServer, launch, newPage, waitLoaded, field, ROOT, waitInspected } from './helpers.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** The f32 values of `name` in `dir`/expected.safetensors. */
function expected(dir, name) {
  const b = readFileSync(path.join(ROOT, 'fixtures', dir, 'expected.safetensors'));
  const n = Number(b.readBigUInt64LE(0));
  const [s, e] = JSON.parse(b.subarray(8, 8 + n).toString())[name].data_offsets;
  const bytes = b.subarray(8 + n + s, 8 + n + e);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** The logical elements of fixtures/bnb's `which` checkpoint, from its manifest. */
function bnbLogical(which) {
  return JSON.parse(readFileSync(path.join(ROOT, 'fixtures/bnb/manifest.json'), 'utf8')).checkpoints[which]
    .reduce((n, l) => n + l.shape.reduce((a, d) => a * d, 1), 0);
}

const cases = [
  { dir: 'mlx', name: 'model.layers.b5_g64_f32.weight', type: 'MLX-5bit-g64', shape: [4, 256], others: 256 },
  { dir: 'fp8', name: 'model.layers.0.mlp.down_proj.weight', type: 'FP8-E4M3-block128', shape: [136, 200], others: 32 * 256 + 256 },
  // One layer each (no manifest); the others are the plain lm_head [8, in].
  { dir: 'ct/w4a16-g32-asym', name: 'model.layers.0.mlp.up_proj.weight', type: 'CT-W4A16-g32-asym', shape: [40, 64], others: 8 * 64, logical: 40 * 64 },
  { dir: 'ct/fp8-ch', name: 'model.layers.0.mlp.up_proj.weight', type: 'CT-FP8-E4M3-ch', shape: [32, 64], others: 8 * 64, logical: 32 * 64 },
  // Biases [2, 24] and [3, 16], router [3, 64], lm_head [8, 64] plain.
  { dir: 'mxfp4', name: 'model.layers.0.mlp.experts.down_proj', type: 'MXFP4', shape: [3, 96, 16], others: 2 * 24 + 3 * 16 + 3 * 64 + 8 * 64 },
  // bitsandbytes (fixtures/bnb from bitsandbytes' own Linear4bit writer and reference
  // dequantize_4bit; the layers in the shared manifest): the plain model.norm.weight [16].
  { dir: 'bnb/nf4', name: 'model.layers.0.self_attn.q_proj.weight', type: 'NF4-b64-dq', shape: [32, 96], others: 16, logical: bnbLogical('nf4') },
  { dir: 'bnb/fp4', name: 'model.layers.0.mlp.gate_proj.weight', type: 'FP4-b64', shape: [10, 27], others: 16, logical: bnbLogical('fp4') },
];

for (const c of cases) {
  test(`viewer: ${c.type} — summary, table and inspector against the expected values`, async () => {
    const logical = c.logical ?? JSON.parse(readFileSync(path.join(ROOT, 'fixtures', c.dir, 'manifest.json'), 'utf8'))
      .layers.reduce((n, l) => n + l.shape.reduce((a, d) => a * d, 1), 0);
    const [top, ...sub] = c.dir.split('/');
    const file = `${top}-fixtures/${sub.map((d) => `${d}/`).join('')}model.safetensors`;
    const { page, log } = await newPage(browser);
    await page.goto(`${server.url}?url=${encodeURIComponent(`/${file}`)}`);
    // The page names a checkpoint by its URL's last two path segments.
    await waitLoaded(page, file.split('/').slice(-2).join('/'));
    assert.equal((await field(page, 'parameter-count')).value, String(logical + c.others));
    assert.match((await field(page, 'quant-mix')).text, new RegExp(c.type));
    await page.click('[data-tab="tensors"]');
    // Listed once: the stored weight of the same name is the layer's row.
    assert.equal(await page.$$eval(`#tensor-table tr[data-tensor="${c.name}"]`, (rows) => rows.length), 1);
    await page.click(`#tensor-table tr[data-tensor="${c.name}"]`);
    await waitInspected(page);
    const info = await page.$eval('#insp-info', (e) => e.textContent);
    assert.ok(info.startsWith(`${c.type} · shape [${c.shape.join(', ')}]`), info);
    const want = expected(c.dir, c.name);
    const stat = (k) => page.$eval(`[data-stat="${k}"]`, (e) => Number(e.dataset.value));
    assert.equal(await stat('count'), want.length);
    assert.equal(await stat('min'), Math.min(...want));
    assert.equal(await stat('max'), Math.max(...want));
    assert.equal(await stat('zero'), want.filter((x) => x === 0).length);
    const first = await page.$$eval('#insp-values .v', (vs) => vs.slice(0, 8).map((v) => Number(v.textContent)));
    assert.ok(first.every((x, i) => Math.abs(x - want[i]) <= 1e-5 * Math.max(Math.abs(want[i]), 1e-30)), `${first} vs ${want.slice(0, 8)}`);
    assert.deepEqual(log.errors, []);
  });
}
