// <gguf-preview>: what the Hugging Face Hub's GGUF panel shows, as a custom element any page can
// embed — architecture, parameters, quant label and mix, context, the metadata table with the chat
// template and a tokenizer summary, and the tensor list — read from the header alone.
//
//   import 'gguf-lens/preview';
//   <gguf-preview src="https://example.com/model-Q4_K_M.gguf"></gguf-preview>
//   element.file = fileFromAnInput;   // or any input openGguf takes, via element.source
//
// No framework; styles live in the shadow root and follow CSS custom properties (--gguf-preview-*,
// light and dark); the wasm engine loads only when the first file is opened. Everything the file
// says is set as text, never as HTML. Events: `load` (detail: { summary }) and `error`
// (detail: { message }).

import { typeColour, formatCount, formatBytes, formatBitsPerWeight, formatInt } from './display.js';

const STYLE = `
:host { display: block; --bg: var(--gguf-preview-bg, #ffffff); --fg: var(--gguf-preview-fg, #1f2328);
  --muted: var(--gguf-preview-muted, #59636e); --border: var(--gguf-preview-border, #d1d9e0);
  --accent: var(--gguf-preview-accent, #0969da); --code-bg: var(--gguf-preview-code-bg, #f6f8fa);
  --radius: var(--gguf-preview-radius, 8px);
  font: var(--gguf-preview-font, 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif);
  color: var(--fg); background: var(--bg); border: 1px solid var(--border); border-radius: var(--radius); }
@media (prefers-color-scheme: dark) {
  :host(:not([theme=light])) { --bg: var(--gguf-preview-bg, #0d1117); --fg: var(--gguf-preview-fg, #e6edf3);
    --muted: var(--gguf-preview-muted, #9198a1); --border: var(--gguf-preview-border, #3d444d);
    --accent: var(--gguf-preview-accent, #4493f8); --code-bg: var(--gguf-preview-code-bg, #151b23); }
}
:host([theme=dark]) { --bg: var(--gguf-preview-bg, #0d1117); --fg: var(--gguf-preview-fg, #e6edf3);
  --muted: var(--gguf-preview-muted, #9198a1); --border: var(--gguf-preview-border, #3d444d);
  --accent: var(--gguf-preview-accent, #4493f8); --code-bg: var(--gguf-preview-code-bg, #151b23); }
:host([hidden]) { display: none; }
.wrap { padding: 16px; }
h2 { font-size: 1.15em; margin: 0 0 4px; word-break: break-word; }
h3 { font-size: 1em; margin: 18px 0 8px; }
.muted { color: var(--muted); }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px 16px; margin: 12px 0 0; }
.facts div { min-width: 0; }
dt { font-size: .75em; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.bar { display: flex; height: 10px; border-radius: 5px; overflow: hidden; background: var(--code-bg); margin: 6px 0; }
.bar span { display: block; height: 100%; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: .85em; }
.legend i { display: inline-block; width: 9px; height: 9px; border-radius: 2px; margin-right: 4px; }
table { width: 100%; border-collapse: collapse; font-size: .875em; }
caption { text-align: left; color: var(--muted); padding: 0 0 4px; }
th, td { text-align: left; padding: 4px 8px; border-top: 1px solid var(--border); vertical-align: top; }
th { font-weight: 600; color: var(--muted); }
th.n { text-align: right; }
td.k, td.n { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
td.n { text-align: right; white-space: nowrap; }
pre { background: var(--code-bg); border-radius: 6px; padding: 8px; overflow: auto; max-height: 320px;
  font: .85em/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; margin: 4px 0; }
details { border-top: 1px solid var(--border); padding: 4px 0; }
summary { cursor: pointer; padding: 2px 0; }
summary:focus-visible, button:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
button { font: inherit; color: var(--accent); background: none; border: 1px solid var(--border);
  border-radius: 6px; padding: 2px 10px; cursor: pointer; margin-top: 6px; }
.chip { display: inline-block; border: 1px solid var(--border); border-radius: 999px; padding: 0 8px; margin: 2px 4px 2px 0; font-size: .85em; }
.error { color: #d1242f; }
`;

/** @import { ArrayEntry, GgufInput, Summary, TensorInfo } from './types.js' */
/** @import { GgufModel } from './model.js' */
/** @import { Writable } from './internal.js' */

/** The one style sheet every element shares (created on first use).
 * @type {CSSStyleSheet | null} */
let sheet = null;

/** Array items shown inline in the metadata table. */
const ARRAY_PREVIEW = 6;
/** Longest string shown inline; longer ones go in a collapsible block. */
const INLINE_TEXT = 160;
/** Tensor rows shown before "Show all". */
const TENSOR_ROWS = 200;

/**
 * A DOM element with properties and children (strings become text nodes: never parsed as HTML).
 * @param {string} tag
 * @param {Record<string, any>} [props]
 * @param {...unknown} children nodes, text, numbers (shown as text), arrays of them; null: none
 */
function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    // CSSOM, not a style attribute: pages with a strict CSP (no 'unsafe-inline') allow it.
    else if (key === 'style') Object.assign(node.style, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  // append() shows anything but a Node as its text.
  for (const child of children.flat()) if (child != null) node.append(/** @type {Node | string} */ (child));
  return node;
}

// The viewer's formats and colours (display.js): the embed and the viewer show the same.
/** 918784 → "918.8K", 7.24e9 → "7.24B". */
export const compactCount = formatCount;
export { formatBytes };

/**
 * llama.cpp's label without its prefix: "MOSTLY_Q4_K_M" → "Q4_K_M", "ALL_F32" → "F32".
 * @param {Summary} summary
 */
export function quantLabel(summary) {
  const label = summary.fileTypeLabel;
  if (label) return label.replace(/^(MOSTLY|ALL)_/, '');
  const top = [...summary.quantMix].sort((a, b) => b.bytes - a.bytes)[0];
  return top ? `${top.type} (by tensor mix)` : '—';
}

/**
 * A metadata value as short text.
 * @param {unknown} value
 */
function valueText(value) {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(7)));
  if (typeof value === 'string') return JSON.stringify(value);
  if (value && typeof value === 'object' && 'value' in value) {
    const nested = /** @type {{ itemType: string, len: number }} */ (/** @type {unknown} */ (value));
    return `${nested.itemType}[${nested.len}]`;
  }
  return String(value);
}

// Importing this module outside a browser (SSR, Node) must not throw: the element is only
// defined where custom elements exist.
// (Typed as HTMLElement: the plain class stands in only where no element is ever made.)
const Base = /** @type {typeof HTMLElement} */ (typeof HTMLElement === 'undefined' ? class {} : HTMLElement);

/** Shows what a GGUF file holds, read from its header alone. Attributes: `src` (a URL), `theme`
 * (`light` | `dark`; default: the user's colour scheme). Styled with CSS custom properties
 * `--gguf-preview-bg`, `-fg`, `-muted`, `-border`, `-accent`, `-code-bg`, `-radius`, `-font`.
 * Events: `load` (detail `{ summary }`), `error` (detail `{ message }`). */
export class GgufPreview extends Base {
  /** The open model once loaded. @readonly @type {GgufModel | null} */
  model;
  /** @internal @type {ShadowRoot} */
  _root;
  /** @internal @type {HTMLElement} */
  _body;
  /** What `source` was set to. @internal @type {unknown} */
  _source;
  /** @internal @type {number} */
  _generation;

  /** @internal */
  static get observedAttributes() { return ['src']; }

  constructor() {
    super();
    this._root = this.attachShadow({ mode: 'open' });
    // A constructed style sheet works under a strict CSP; a <style> element is the fallback.
    if ('adoptedStyleSheets' in this._root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
      sheet ??= new CSSStyleSheet();
      if (!sheet.cssRules.length) sheet.replaceSync(STYLE);
      this._root.adoptedStyleSheets = [sheet];
    } else {
      this._root.append(h('style', {}, STYLE));
    }
    this._body = h('div', { class: 'wrap', role: 'region', 'aria-label': 'GGUF model preview', 'aria-live': 'polite' });
    this._root.append(this._body);
    this._source = null;
    this._generation = 0;
    this.model = null;
  }

  /** A File or Blob to preview (read with slice(): only the header's bytes). */
  get file() { return this._source instanceof Blob ? this._source : null; }
  set file(blob) { this.source = /** @type {Blob | null} */ (blob); }

  /** Anything `openGguf` takes: URL, File/Blob, ArrayBuffer, Uint8Array, {byteLength, slice};
   * setting it (re)loads the preview.
   * @returns {GgufInput | null} */
  get source() { return /** @type {GgufInput | null} */ (this._source) ?? this.getAttribute('src'); }
  set source(/** @type {GgufInput | null} */ input) {
    this._source = input;
    this._load(input);
  }

  /**
   * @param {string} name
   * @param {string | null} old
   * @param {string | null} value
   */
  attributeChangedCallback(name, old, value) {
    if (name === 'src' && value && value !== old && this._source == null) this._load(value);
  }

  connectedCallback() {
    if (!this._body.childNodes.length && !this.getAttribute('src') && this._source == null) {
      this._body.append(h('p', { class: 'muted' }, 'No model: set src="…" or the file property.'));
    }
  }

  /** @param {unknown} input @internal */
  async _load(input) {
    const generation = ++this._generation;
    this._body.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Reading the header…'));
    this._body.setAttribute('aria-busy', 'true');
    try {
      const { openGguf } = await import('./index.js');
      const previous = this.model;
      // Whatever the page set: openGguf's error says what it cannot open.
      const model = await openGguf(/** @type {GgufInput} */ (input));
      if (generation !== this._generation) { await model.close(); return; }
      /** @type {Writable<this>} */ (this).model = model;
      await previous?.close();
      this._render(model);
      this.dispatchEvent(new CustomEvent('load', { detail: { summary: model.summary() } }));
    } catch (err) {
      if (generation !== this._generation) return;
      const error = /** @type {{ message?: string } | null | undefined} */ (err);
      const message = error && error.message ? error.message : String(err);
      this._body.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Could not read this file: ${message}`));
      this.dispatchEvent(new CustomEvent('error', { detail: { message } }));
    } finally {
      if (generation === this._generation) this._body.removeAttribute('aria-busy');
    }
  }

  /** @param {GgufModel} model @internal */
  _render(model) {
    const s = model.summary();
    const get = (/** @type {string} */ key) => model.get(key);
    const title = s.name ?? (typeof get('general.basename') === 'string' ? get('general.basename') : 'GGUF model');
    const facts = [
      ['Architecture', s.architecture ?? '—'],
      ['Parameters', `${compactCount(s.parameterCount)} (${formatInt(s.parameterCount)})`],
      ['Quantization', quantLabel(s)],
      ['Bits per weight', formatBitsPerWeight(s.bitsPerWeight)],
      ['Context', s.contextLength == null ? '—' : s.contextLength.toLocaleString('en-US')],
      ['Layers', s.layers ?? '—'],
      ['Embedding', s.embeddingSize ?? '—'],
      ['Heads / KV heads', s.heads == null ? '—' : `${s.heads} / ${s.kvHeads ?? s.heads}`],
      ['Vocabulary', s.vocabSize == null ? '—' : s.vocabSize.toLocaleString('en-US')],
      ['File size', formatBytes(model.byteLength)],
      ['Tensors', model.tensors.length.toLocaleString('en-US')],
    ];
    this._body.replaceChildren(
      h('h2', {}, title),
      h('div', { class: 'muted' }, `GGUF v${model.version}${model.shards.length > 1 ? ` · split in ${model.shards.length} files` : ''}`),
      h('dl', { class: 'facts', part: 'facts' }, facts.map(([k, v]) => h('div', { 'data-fact': k }, h('dt', {}, k), h('dd', {}, String(v))))),
      this._mix(s),
      this._tokenizer(model),
      this._metadata(model),
      this._tensors(model),
    );
  }

  /** @param {Summary} s @internal */
  _mix(s) {
    const mix = [...s.quantMix].sort((a, b) => b.bytes - a.bytes);
    return h('section', { 'aria-labelledby': 'mix-h' },
      h('h3', { id: 'mix-h' }, 'Quant mix'),
      h('div', { class: 'bar', role: 'img', 'aria-label': mix.map((m) => `${m.type} ${(m.share * 100).toFixed(1)}%`).join(', ') },
        mix.map((m) => h('span', { style: { width: `${(m.share * 100).toFixed(3)}%`, background: typeColour(m.type) }, title: m.type }))),
      h('div', { class: 'legend' }, mix.map((m) => h('span', { 'data-type': m.type },
        h('i', { style: { background: typeColour(m.type) } }), `${m.type} ${(m.share * 100).toFixed(1)}% · ${m.tensors} tensors`))));
  }

  /** @param {GgufModel} model @internal */
  _tokenizer(model) {
    const tokens = /** @type {ArrayEntry | undefined} */ (model.get('tokenizer.ggml.tokens'));
    const merges = /** @type {ArrayEntry | undefined} */ (model.get('tokenizer.ggml.merges'));
    const kind = model.get('tokenizer.ggml.model');
    const pre = model.get('tokenizer.ggml.pre');
    const template = model.get('tokenizer.chat_template');
    const tokenText = (/** @type {number} */ id) => {
      if (!tokens || typeof tokens !== 'object' || id >= tokens.len) return '(out of vocabulary)';
      return String(tokens.items(id, id + 1)[0]);
    };
    const special = model.specialTokens();
    /** @type {[string, string][]} */
    const rows = [];
    if (typeof kind === 'string') rows.push(['Model', kind]);
    if (typeof pre === 'string') rows.push(['Pre-tokenizer', pre]);
    if (tokens && typeof tokens === 'object') rows.push(['Tokens', tokens.len.toLocaleString('en-US')]);
    if (merges && typeof merges === 'object') rows.push(['Merges', merges.len.toLocaleString('en-US')]);
    return h('section', { 'aria-labelledby': 'tok-h' },
      h('h3', { id: 'tok-h' }, 'Tokenizer and chat template'),
      rows.length ? h('dl', { class: 'facts' }, rows.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v)))) : h('p', { class: 'muted' }, 'No tokenizer in the metadata.'),
      special.length ? h('p', { class: 'special' }, special.map((t) => h('span', { class: 'chip', 'data-special': t.name, title: t.key },
        `${t.name} ${t.id} `, h('code', {}, tokenText(t.id))))) : null,
      typeof template === 'string'
        ? h('details', { class: 'template' }, h('summary', {}, `Chat template (${template.length.toLocaleString('en-US')} characters)`), h('pre', {}, template))
        : h('p', { class: 'muted' }, 'No chat template in the metadata.'));
  }

  /** @param {GgufModel} model @internal */
  _metadata(model) {
    const rows = model.metadata.map((/** @type {any} */ entry) => {
      let shown;
      if (entry.type === 'array') {
        const n = Math.min(entry.len, ARRAY_PREVIEW);
        const items = entry.items(0, n).map(valueText);
        shown = `${entry.itemType}[${entry.len}] [${items.join(', ')}${entry.len > n ? ', …' : ''}]`;
      } else {
        shown = valueText(entry.value);
      }
      const cell = shown.length > INLINE_TEXT
        ? h('details', {}, h('summary', {}, `${shown.slice(0, 60)}…`), h('pre', {}, entry.type === 'string' ? String(entry.value) : shown))
        : shown;
      return h('tr', { 'data-key': entry.key }, h('td', { class: 'k' }, entry.key), h('td', {}, entry.type), h('td', { class: 'k' }, cell));
    });
    return h('section', { 'aria-labelledby': 'meta-h' },
      h('h3', { id: 'meta-h' }, 'Metadata'),
      h('table', { class: 'metadata' },
        h('caption', {}, `${model.metadata.length} keys`),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Value'))),
        h('tbody', {}, rows)));
  }

  /** @param {GgufModel} model @internal */
  _tensors(model) {
    const tbody = h('tbody', {});
    const row = (/** @type {TensorInfo} */ t) => h('tr', { 'data-tensor': t.name },
      h('td', { class: 'k' }, t.name), h('td', {}, t.type),
      // The package's shape is outermost first, as numpy/PyTorch print shapes.
      h('td', { class: 'n' }, `[${t.shape.join(', ')}]`),
      h('td', { class: 'n' }, formatBytes(t.nBytes)));
    const fill = (/** @type {number} */ n) => tbody.replaceChildren(...model.tensors.slice(0, n).map(row));
    fill(TENSOR_ROWS);
    const more = model.tensors.length > TENSOR_ROWS
      ? h('button', { type: 'button', onclick: (/** @type {MouseEvent} */ e) => { fill(model.tensors.length); /** @type {Element} */ (e.target).remove(); } }, `Show all ${model.tensors.length.toLocaleString('en-US')} tensors`)
      : null;
    return h('section', { 'aria-labelledby': 'tensors-h' },
      h('h3', { id: 'tensors-h' }, 'Tensors'),
      h('table', { class: 'tensors' },
        h('caption', {}, `${model.tensors.length} tensors (shape outermost first)`),
        h('thead', {}, h('tr', {}, ['Name', 'Type', 'Shape', 'Size'].map((c, i) => h('th', { scope: 'col', class: i > 1 ? 'n' : '' }, c)))),
        tbody),
      more);
  }
}

if (typeof customElements !== 'undefined' && !customElements.get('gguf-preview')) {
  customElements.define('gguf-preview', GgufPreview);
}
