// How a model's figures look on screen, one copy for every front end of the package: the
// <gguf-preview> element (preview.js) and the viewer (www/, which serves this file as
// ./pkg/display.js) show the same colour for a ggml type and the same text for a number.
// Pure functions, no DOM.

/** A number as the formats take it: absent (null, undefined, NaN) shows as —.
 * @typedef {number | bigint | string | null | undefined} Figure */

/** One colour per ggml type, the same in every file: families share a hue, wider types are lighter.
 * @type {Record<string, string>} */
const TYPE_COLOURS = {
  F32: '#8c9aab', F16: '#6f8fb8', BF16: '#7a7fc0', F64: '#a0a8b5', Q8_0: '#2f9e8f', Q8_K: '#2f9e8f',
  Q6_K: '#e8872e', Q5_K: '#d4a72c', Q5_0: '#c9b43a', Q5_1: '#bfae4a', Q4_K: '#4e79a7', Q4_0: '#5b8fd1', Q4_1: '#6d9bd6',
  Q3_K: '#b07aa1', Q2_K: '#e15759', IQ4_XS: '#3f6f9c', IQ4_NL: '#41729e', IQ3_S: '#9b6a92', IQ3_XXS: '#8f5f87',
  IQ2_XXS: '#c94b4d', IQ2_XS: '#cf5557', IQ2_S: '#d45f61', IQ1_S: '#a33b3d', IQ1_M: '#ad4547', TQ1_0: '#7b5ea7', TQ2_0: '#8968b5',
  MXFP4: '#59a14f', NVFP4: '#4c8f43',
};
/** Types not listed above (and GPTQ-Nbit, I8…) hash into these, so a name keeps its colour. */
const OTHER_COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/**
 * The #rrggbb colour of a ggml type name ("Q4_K").
 * @param {string} type
 * @returns {string}
 */
export function typeColour(type) {
  const name = String(type);
  if (Object.hasOwn(TYPE_COLOURS, name)) return TYPE_COLOURS[name];
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return OTHER_COLOURS[h % OTHER_COLOURS.length];
}

/**
 * WCAG relative luminance of a #rrggbb colour.
 * @param {string} hex
 */
function luminance(hex) {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
/**
 * WCAG contrast ratio of two #rrggbb colours.
 * @param {string} a
 * @param {string} b
 */
export function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}
/** Black or white text on background `bg` (#rrggbb), whichever contrasts more. */
export const textOn = (/** @type {string} */ bg) => (contrast(bg, '#000000') >= contrast(bg, '#ffffff') ? '#000000' : '#ffffff');

const missing = (/** @type {Figure} */ n) => n === undefined || n === null || Number.isNaN(Number(n));

/** A whole number with thousands separators ("918,784"); — when absent. */
export const formatInt = (/** @type {Figure} */ n) => (missing(n) ? '—' : Number(n).toLocaleString('en-US'));

/**
 * A count in short form: 918784 → "918.8K", 7.24e9 → "7.24B" (3 significant digits, 4 from 100).
 * @param {Figure} n
 */
export function formatCount(n) {
  if (missing(n)) return '—';
  const v = Number(n);
  for (const [unit, size] of /** @type {[string, number][]} */ ([['T', 1e12], ['B', 1e9], ['M', 1e6], ['K', 1e3]])) {
    if (v >= size) return `${(v / size).toPrecision(v / size >= 100 ? 4 : 3).replace(/\.0+$/, '')}${unit}`;
  }
  return String(v);
}

/**
 * Bytes with a binary unit: "512 B", "1.50 KiB", "566.4 KiB" (2 decimals, 1 from 100).
 * @param {Figure} n
 */
export function formatBytes(n) {
  if (missing(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, v = Number(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 1 : 2)} ${units[i]}`;
}

/** Bits per weight, 2 decimals ("4.89"). */
export const formatBitsPerWeight = (/** @type {Figure} */ bpw) => (missing(bpw) ? '—' : Number(bpw).toFixed(2));
