// Chat-template rendering through the npm package in Node: the first render, the median of 51
// renders of the same template (the compiled template is kept), and the median of 51 renders
// alternating two templates (each render compiles). One JSON line. Run where the package is
// installed (as benches/tokenize.sh installs it):
//   node chat-render-npm.mjs MODEL.gguf TEMPLATE.jinja
import fs from 'node:fs';
const { openGguf } = await import('gguf-lens');
const [file, tpl] = process.argv.slice(2);
const template = fs.readFileSync(tpl, 'utf8');
const model = await openGguf(file);
const messages = [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi there' }, { role: 'user', content: 'What is 2+2?' }];
const time = async (f) => { const t = performance.now(); await f(); return performance.now() - t; };
const first = await time(() => model.renderChatTemplate(messages, { template, addGenerationPrompt: true }));
const later = [];
for (let i = 0; i < 51; i++) later.push(await time(() => model.renderChatTemplate(messages, { template, addGenerationPrompt: true })));
// alternating two templates: every render compiles (the cache holds one)
const other = template + ' ';
const alt = [];
for (let i = 0; i < 51; i++) alt.push(await time(() => model.renderChatTemplate(messages, { template: i % 2 ? template : other, addGenerationPrompt: true })));
later.sort((a, b) => a - b); alt.sort((a, b) => a - b);
console.log(JSON.stringify({ template: tpl.split('/').pop(), bytes: template.length, first_ms: +first.toFixed(2), cached_median_ms: +later[25].toFixed(3), compiling_median_ms: +alt[25].toFixed(3) }));
