// The tokenizer and chat-template lab in Chromium. Tokens: the spans are the package's
// tokenize() of the text (the core's tokenizer, checked against llama.cpp's own vectors and a
// corpus in tests/oracle_tokenizer.rs). Templates: real llama.cpp templates (from the sdist that
// scripts/test.sh fetches) rendered live in the page over the fixture's conversations equal what
// jinja2 configured as transformers gave (fixtures/chat/expected.json).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, ROOT, ARTIFACTS } from './helpers.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

test('tokenize as you type: the spans are the package\'s ids, control tokens marked', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.click('[data-tab="tokenizer"]');
  const text = 'Hello <s> world!\n\tdef f(x): return x';
  await page.fill('#tok-text', text);
  const shown = async () => {
    await page.waitForFunction((n) => document.querySelector('#tok-count').dataset.count !== undefined, null);
    return page.$$eval('#tok-spans .tok', (ss) => ss.map((s) => [Number(s.dataset.id), s.classList.contains('special')]));
  };
  const want = (parseSpecial) => page.evaluate(async ([t, p]) => {
    const { openGguf } = await import('./pkg/index.js');
    const m = await openGguf('sample/tiny-llama-Q4_K_M.gguf');
    const ids = Array.from(await m.tokenize(t, { addSpecial: true, parseSpecial: p }));
    const { control } = await m.tokenPieces(ids);
    return ids.map((id, i) => [id, control[i]]);
  }, [text, parseSpecial]);
  await page.waitForFunction((n) => document.querySelector('#tok-count').textContent.startsWith(String(n)), (await want(false)).length);
  assert.deepEqual(await shown(), await want(false));
  await page.check('#tok-parse-special');
  const special = await want(true);
  await page.waitForFunction((n) => document.querySelector('#tok-count').textContent.startsWith(String(n)), special.length);
  assert.deepEqual(await shown(), special);
  await page.screenshot({ path: path.join(ARTIFACTS, 'tokenizer-live.png'), fullPage: false });
  assert.deepEqual(log.errors, []);
});

test('chat templates render live as jinja2 renders them (real llama.cpp templates)', async () => {
  const sdist = execFileSync('bash', [path.join(ROOT, 'scripts/llama-sdist.sh')], { encoding: 'utf8' }).trim();
  const dir = path.join(sdist, 'models/templates');
  const fixture = readJson(path.join(ROOT, 'fixtures/chat/expected.json'));
  // Templates whose output does not depend on the file's BOS/EOS text or on today's date.
  const cases = fixture.cases.filter((c) => c.conversation === 'system_multi_turn' && c.add_generation_prompt
    && typeof c.output === 'string' && !/<\|BOS\|>|<\|EOS\|>|2026/.test(c.output) && existsSync(path.join(dir, c.template))).slice(0, 4);
  assert.ok(cases.length >= 3, `${cases.length} usable cases`);
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.click('[data-tab="template"]');
  await page.check('#chat-use-edited');
  await page.check('#chat-gen');
  const conversation = fixture.conversations.system_multi_turn;
  await page.fill('#chat-messages', JSON.stringify(conversation.messages));
  await page.fill('#chat-tools', '');
  await page.fill('#chat-vars', '');
  for (const c of cases) {
    await page.fill('#chat-template-edit', readFileSync(path.join(dir, c.template), 'utf8'));
    await page.waitForFunction((want) => document.querySelector('#chat-output').dataset.text === want, c.output, { timeout: 10000 })
      .catch(async () => assert.equal(await page.$eval('#chat-output', (e) => e.dataset.text), c.output, c.template));
  }
  // A template error shows inline, one line.
  await page.fill('#chat-template-edit', '{{ raise_exception("no system role here") }}');
  await page.waitForFunction(() => !document.querySelector('#chat-error').hidden);
  assert.match(await page.textContent('#chat-error'), /no system role here/);
  // The presets render the file's own template; the count is the rendered text's tokens.
  await page.uncheck('#chat-use-edited');
  await page.selectOption('#chat-preset', 'tools');
  await page.waitForFunction(() => document.querySelector('#chat-error').hidden && Number(document.querySelector('#chat-count').dataset.count) > 0);
  await page.screenshot({ path: path.join(ARTIFACTS, 'chat-template.png'), fullPage: false });
  assert.deepEqual(log.errors, []);
});

test('a piece that is half a character shows its bytes as <0xNN>, never as U+FFFD', async () => {
  // llama.cpp's Phi-3 vocabulary (SentencePiece with byte fallback): a character it has no
  // token for is spelled in byte tokens, each one byte of its UTF-8, which the vocabulary itself
  // names <0xF0>, <0x9F>… — the oracle for what each span shows.
  const { page, log } = await newPage(browser);
  const file = '/llama-models/ggml-vocab-phi-3.gguf';
  await page.goto(`${server.url}?url=${encodeURIComponent(file)}`);
  await page.waitForFunction(() => document.querySelector('#model-source').textContent.includes('ggml-vocab-phi-3.gguf'), null, { timeout: 20000 });
  await page.click('[data-tab="tokenizer"]');
  const text = 'llama 🦙 “quoted”';
  await page.fill('#tok-text', text);
  const want = await page.evaluate(async ([f, t]) => {
    const { openGguf } = await import('./pkg/index.js');
    const m = await openGguf(f);
    const ids = Array.from(await m.tokenize(t, { addSpecial: document.querySelector('#tok-add-special').checked }));
    const vocab = m.get('tokenizer.ggml.tokens');
    const rows = [];
    for (const id of ids) rows.push({ id, token: String(vocab.items(id, id + 1)[0]), bytes: Array.from(await m.tokenPiece(id)) });
    return rows;
  }, [file, text]);
  await page.waitForFunction((n) => document.querySelector('#tok-count').dataset.count !== undefined && document.querySelectorAll('#tok-spans .tok').length === n, want.length);
  const spans = await page.$$eval('#tok-spans .tok', (ss) => ss.map((s) => ({ id: Number(s.dataset.id), text: s.textContent })));
  assert.deepEqual(spans.map((s) => s.id), want.map((w) => w.id));
  const byteTokens = want.filter((w) => /^<0x[0-9A-F]{2}>$/.test(w.token));
  // 🦙 is four bytes and no token: four byte tokens, none valid UTF-8 alone
  assert.deepEqual(byteTokens.map((w) => w.token), ['<0xF0>', '<0x9F>', '<0xA6>', '<0x99>']);
  for (const [i, w] of want.entries()) {
    if (w.token === '<s>') assert.equal(spans[i].text, '<s>'); // BOS, a control token
    else if (byteTokens.includes(w)) assert.equal(spans[i].text, w.token, `id ${w.id}`);
    else assert.equal(spans[i].text, new TextDecoder().decode(new Uint8Array(w.bytes)).replace(/ /g, '·'), `id ${w.id}`);
  }
  assert.ok(spans.every((s) => !s.text.includes('\uFFFD')), JSON.stringify(spans));
  // A piece mixing a whole character and a stray byte keeps the character as text.
  const mixed = await page.evaluate(async () => (await import('./format.js')).pieceText(new Uint8Array([0x61, 0xe2, 0x80, 0xe2, 0x80, 0x9c, 0xff, 0xed, 0xa0, 0x80])));
  assert.equal(mixed, 'a<0xE2><0x80>“<0xFF><0xED><0xA0><0x80>');
  assert.deepEqual(log.errors, []);
});
