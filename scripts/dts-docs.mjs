// Moves each JSDoc @typedef's description onto the type alias tsc emits for it, in the .d.ts
// files given. tsc 7 (the Go port) emits the alias without its comment and leaves the whole
// @typedef block before the next declaration, which then shows the typedef's text as its own
// (microsoft/TypeScript#63958, open). The alias's members keep their @property docs either way.
import { readFileSync, writeFileSync } from 'node:fs';

/** The index just past the `{...}` type that starts at `at` (braces balanced). */
function typeEnd(text, at) {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

/** A comment block's lines, without the `/**`, `*` and `*\/` around them. */
function commentLines(block) {
  return block.slice(3, -2).split('\n').map((line) => line.replace(/^\s*\* ?/, '').trimEnd());
}

for (const file of process.argv.slice(2)) {
  let text = readFileSync(file, 'utf8');
  /** @type {Map<string, string[]>} */
  const docs = new Map();
  text = text.replace(/[ \t]*\/\*\*(?:(?!\*\/)[\s\S])*\*\/[ \t]*\n?/g, (block) => {
    const comment = block.trim();
    if (/^\/\*\*\s*@import\b/.test(comment)) return ''; // tsc's import line is beside it
    if (!/@typedef\s*\{/.test(comment)) return block;
    const body = comment.slice(3, -2);
    const at = body.indexOf('@typedef');
    const open = body.indexOf('{', at);
    const end = typeEnd(body, open);
    const named = /^\s*([A-Za-z_$][\w$]*)([^\n]*)/.exec(body.slice(end));
    if (end < 0 || !named) throw new Error(`dts-docs: ${file}: an @typedef without a name: ${comment.slice(0, 80)}`);
    const before = commentLines(`/**${body.slice(0, at)}*/`);
    const after = named[2].trim();
    const lines = [...before, ...(after ? [after] : [])].join('\n').trim();
    if (lines) docs.set(named[1], lines.split('\n'));
    return '';
  });
  for (const [name, lines] of docs) {
    const decl = new RegExp(`^(export )?type ${name.replace(/\$/g, '\\$')}\\b`, 'm');
    const found = decl.exec(text);
    if (!found) throw new Error(`dts-docs: ${file}: no type alias ${name} for its @typedef's description`);
    const doc = lines.length === 1 ? `/** ${lines[0]} */\n` : `/**\n${lines.map((l) => ` *${l ? ` ${l}` : ''}`).join('\n')}\n */\n`;
    text = text.slice(0, found.index) + doc + text.slice(found.index);
  }
  writeFileSync(file, text);
}
