// The tokenizer and chat templates through the installed package, against the oracles:
// model.tokenize / tokenPiece give llama.cpp's ids and pieces (fixtures/tokenizer/corpus.json,
// fixtures/make_tokenizer.py) and renderChatTemplate gives jinja2's text
// (fixtures/chat/expected.json, fixtures/make_chat.py). The vocab files and templates come from
// the llama.cpp sdist (scripts/llama-sdist.sh); without it the tests print SKIPPED and fail
// under CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const SDIST = process.env.LLAMA_CPP_SDIST
  ? path.join(process.env.LLAMA_CPP_SDIST, 'vendor/llama.cpp')
  : path.join(process.env.GGUF_LENS_CACHE ?? path.join(os.homedir(), '.cache/gguf-lens'),
    'llama_cpp_python-0.3.36/vendor/llama.cpp');

function sdistOrSkip(t) {
  if (fs.existsSync(path.join(SDIST, 'models'))) return true;
  if (process.env.CI === 'true' || process.env.CI === '1') assert.fail('the llama.cpp sdist is required under CI');
  console.log('SKIPPED: llama.cpp sdist not found (run scripts/llama-sdist.sh)');
  t.skip('SKIPPED');
  return false;
}

const hexBytes = (h) => Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));

test('tokenize and tokenPiece match llama.cpp on the corpus (SPM and BPE)', async (t) => {
  if (!sdistOrSkip(t)) return;
  const corpus = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/tokenizer/corpus.json'), 'utf8'));
  const texts = corpus.texts.map((e) => (e.text !== undefined ? new TextEncoder().encode(e.text) : hexBytes(e.hex)));
  for (const name of ['ggml-vocab-llama-spm.gguf', 'ggml-vocab-llama-bpe.gguf', 'ggml-vocab-qwen2.gguf', 'ggml-vocab-gemma-4.gguf']) {
    const model = await openGguf(path.join(SDIST, 'models', name));
    const v = corpus.vocabs[name];
    for (const [i, bytes] of texts.entries()) {
      for (const [k, m] of corpus.modes.entries()) {
        const ids = await model.tokenize(bytes, { addSpecial: m.add_special, parseSpecial: m.parse_special });
        assert.ok(ids instanceof Int32Array);
        assert.equal(Array.from(ids).join(' '), v.ids[i][k], `${name} text ${i} mode ${k}`);
      }
    }
    for (const [id, [withSpecial, without]] of Object.entries(v.pieces)) {
      assert.deepEqual(await model.tokenPiece(Number(id)), hexBytes(withSpecial));
      assert.deepEqual(await model.tokenPiece(Number(id), { special: false }), hexBytes(without));
    }
    const ids = await model.tokenize('Hello world', { addSpecial: false });
    assert.equal(await model.detokenize(ids), 'Hello world'.replace(/^/, name.includes('spm') ? ' ' : ''));
    await model.close();
  }
});

test('renderChatTemplate renders as jinja2 (transformers) does', async (t) => {
  if (!sdistOrSkip(t)) return;
  const doc = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/chat/expected.json'), 'utf8'));
  // bos/eos come from the file: pick cases whose output has none, and no date.
  const model = await openGguf(path.join(REPO, 'fixtures/real/ggml-vocab-bert-bge.gguf'));
  let checked = 0;
  for (const c of doc.cases) {
    if (c.output !== undefined && /<\|BOS\|>|<\|EOS\|>|2026/.test(c.output)) continue;
    const conv = doc.conversations[c.conversation];
    const template = fs.readFileSync(path.join(SDIST, 'models/templates', c.template), 'utf8');
    const render = () => model.renderChatTemplate(conv.messages, {
      tools: conv.tools, addGenerationPrompt: c.add_generation_prompt, variables: conv.variables, template,
    });
    // Where jinja2 raises (e.g. a for loop over tools=None), we throw too.
    if (c.output === undefined) {
      await assert.rejects(render, `${c.template} / ${c.conversation}`);
      checked++;
      continue;
    }
    const out = await render();
    assert.equal(out, c.output, `${c.template} / ${c.conversation}`);
    checked++;
  }
  assert.ok(checked > 100, `${checked} cases`);
  await assert.rejects(() => model.renderChatTemplate([], { template: "{{ raise_exception('nope') }}" }), /nope/);
  // bert-bge is a WPM vocabulary: tokenized too (its ids are checked in tests/oracle_tokenizer.rs).
  assert.ok((await model.tokenize('x')).length > 0);
  await model.close();
});

test('renderChatTemplate stops runaway templates with the limit named, and renders after', async () => {
  const model = await openGguf(path.join(REPO, 'fixtures/real/ggml-vocab-bert-bge.gguf'));
  const cases = [
    ['{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', /\(fuel limit\)/],
    ["{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}", /\(value size limit\)/],
    ['{% for i in range(100000) %}{% for j in range(1000) %}0123456789{% endfor %}{% endfor %}', /\(output limit\)/],
    ['{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}', /\(recursion limit\)/],
  ];
  for (const [template, limit] of cases) {
    const start = Date.now();
    await assert.rejects(() => model.renderChatTemplate([], { template }), limit, template);
    assert.ok(Date.now() - start < 20000, `${template}: ${Date.now() - start} ms`);
    assert.equal(await model.renderChatTemplate([{ role: 'user', content: 'hi' }], {
      template: '{% for m in messages %}{{ m.role }}:{{ m.content }}{% endfor %}',
    }), 'user:hi');
  }
  await assert.rejects(() => model.tokenize(new Uint8Array((8 << 20) + 1)), /input limit of 8388608 bytes/);
  assert.ok((await model.tokenize('x')).length > 0);
  await model.close();
});
