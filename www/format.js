// Number, value and type formatting shared by the panels. No state.

// llama.cpp's short names for general.file_type (gguf-py's LlamaFileType without MOSTLY_).
export const FTYPE_SHORT = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S', 12: 'Q3_K_M',
  13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K', 19: 'IQ2_XXS', 20: 'IQ2_XS',
  21: 'Q2_K_S', 22: 'IQ3_XS', 23: 'IQ3_XXS', 24: 'IQ1_S', 25: 'IQ4_NL', 26: 'IQ3_S', 27: 'IQ3_M', 28: 'IQ2_S',
  29: 'IQ2_M', 30: 'IQ4_XS', 31: 'IQ1_M', 32: 'BF16', 36: 'TQ1_0', 37: 'TQ2_0', 38: 'MXFP4_MOE',
};
// llama.cpp's llama_model_ftype_name() labels, by general.file_type (the "quant label").
const FTYPE_LABELS = {
  0: 'all F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K - Medium',
  11: 'Q3_K - Small', 12: 'Q3_K - Medium', 13: 'Q3_K - Large', 14: 'Q4_K - Small', 15: 'Q4_K - Medium',
  16: 'Q5_K - Small', 17: 'Q5_K - Medium', 18: 'Q6_K', 19: 'IQ2_XXS - 2.0625 bpw', 20: 'IQ2_XS - 2.3125 bpw',
  21: 'Q2_K - Small', 22: 'IQ3_XS - 3.3 bpw', 23: 'IQ3_XXS - 3.0625 bpw', 24: 'IQ1_S - 1.5625 bpw',
  25: 'IQ4_NL - 4.5 bpw', 26: 'IQ3_S - 3.4375 bpw', 27: 'IQ3_S mix - 3.66 bpw', 28: 'IQ2_S - 2.5 bpw',
  29: 'IQ2_M - 2.7 bpw', 30: 'IQ4_XS - 4.25 bpw', 31: 'IQ1_M - 1.75 bpw', 32: 'BF16', 36: 'TQ1_0 - 1.69 bpw',
  37: 'TQ2_0 - 2.06 bpw', 38: 'MXFP4 MoE',
};
export function ftypeLabel(ft) {
  if (ft === undefined || ft === null) return undefined;
  return (FTYPE_LABELS[ft & ~1024] ?? `unknown (${ft})`) + (ft & 1024 ? ' (guessed)' : '');
}
/**
 * general.file_type in one phrase: llama.cpp's short name ("Q4_K_M"), with its
 * llama_model_ftype_name() label only for what the name does not already say ("IQ2_XXS
 * (2.0625 bpw)", "IQ3_M (IQ3_S mix - 3.66 bpw)", "Q4_K_M (guessed)"); undefined when absent.
 */
export function fileTypeText(ft) {
  if (ft === undefined || ft === null) return undefined;
  const base = ft & ~1024;
  const short = FTYPE_SHORT[base];
  const label = FTYPE_LABELS[base];
  const extras = [];
  if (short === undefined || label === undefined) extras.push('unknown to llama.cpp');
  else {
    // "Q4_K - Medium" is Q4_K_M, "all F32" is F32, "MXFP4 MoE" is MXFP4_MOE: nothing to add.
    const same = label.replace(/^all /, '').replace(/ - (Small|Medium|Large)$/, (_, w) => `_${w[0]}`).replace(/ /g, '_').toUpperCase();
    if (same !== short) extras.push(label.startsWith(`${short} - `) ? label.slice(short.length + 3) : label);
  }
  if (ft & 1024) extras.push('guessed');
  return `${short ?? `type ${ft}`}${extras.length ? ` (${extras.join(', ')})` : ''}`;
}
/** llama.cpp's short name of general.file_type, or "type N". */
export const ftypeShort = (ft) => FTYPE_SHORT[ft & ~1024] ?? `type ${ft}`;

// Type colours and number formats are the package's (js/display.js, served as ./pkg/): the
// <gguf-preview> embed shows the same.
import { typeColour as typeColor, contrast, textOn, formatInt as fmtInt, formatCount as fmtCount, formatBytes as fmtBytes, formatBitsPerWeight as fmtBpw } from './pkg/display.js';
export { typeColor, contrast, textOn, fmtInt, fmtCount, fmtBytes, fmtBpw };
export const fmtNum = (x) => (typeof x !== 'number' ? String(x) : Number.isNaN(x) ? 'NaN' : !Number.isFinite(x) ? (x > 0 ? '+Inf' : '-Inf') : Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-4) ? x.toExponential(4) : x.toPrecision(6).replace(/\.?0+$/, ''));
/**
 * A token piece's bytes as text: each valid UTF-8 sequence as its character, each byte that is
 * not part of one (a piece holding half a character, as SPM byte-fallback and BPE byte tokens
 * do) as llama.cpp's byte-token notation <0xE2>, never as U+FFFD.
 */
export function pieceText(bytes) {
  let out = '';
  let run = 0; // start of the valid run not yet decoded
  const decoder = new TextDecoder();
  const flush = (end) => { if (end > run) out += decoder.decode(bytes.subarray(run, end)); };
  for (let i = 0; i < bytes.length;) {
    const n = utf8Length(bytes, i);
    if (n) { i += n; continue; }
    flush(i);
    out += `<0x${bytes[i].toString(16).toUpperCase().padStart(2, '0')}>`;
    i += 1;
    run = i;
  }
  flush(bytes.length);
  return out;
}
/** The length of the well-formed UTF-8 sequence at bytes[i] (Unicode's table 3-7), or 0. */
function utf8Length(b, i) {
  const c = b[i];
  if (c < 0x80) return 1;
  const cont = (k, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k] >= lo && b[i + k] <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}
export const pct = (x) => `${(x * 100).toFixed(1)}%`;

export function valueText(m) {
  if (m.type === 'array') return `[${m.itemType} × ${fmtInt(m.length)}]`;
  if (typeof m.value === 'string') return m.value;
  return fmtValue(m.value);
}
export function fmtValue(v) {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : fmtNum(v);
  if (v && typeof v === 'object' && v.nested) return `[${v.itemType} × ${v.length}]`;
  return String(v);
}

/** A scalar metadata value of the page's model (undefined if absent or an array). */
export function metaGet(model, key) {
  const m = model.metadata.find((e) => e.key === key);
  return m ? m.value : undefined;
}

/** tokenizer.ggml.model, when it is a string. */
export function tokenizerModel(model) {
  const t = metaGet(model, 'tokenizer.ggml.model');
  return typeof t === 'string' ? t : undefined;
}

/** A tensor's layer (blk.N / …layers.N) and its role there, or null. */
export function blockOf(name) {
  const m = /^blk\.(\d+)\.(.+)$/.exec(name);
  if (m) return { block: Number(m[1]), role: m[2], label: `blk.${m[1]}` };
  // Hugging Face names (safetensors): model.layers.N.self_attn.q_proj.weight
  const h = /^(.*\blayers)\.(\d+)\.(.+)$/.exec(name);
  return h ? { block: Number(h[2]), role: h[3], label: `${h[1]}.${h[2]}` } : null;
}
