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
const TYPE_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
/** llama.cpp's short name of general.file_type, or "type N". */
export const ftypeShort = (ft) => FTYPE_SHORT[ft & ~1024] ?? `type ${ft}`;

export const fmtInt = (n) => (n === undefined || n === null || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US'));
export function fmtBytes(n) {
  if (n === undefined || n === null) return '—';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, v = Number(n);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 1 : 2)} ${u[i]}`;
}
export function fmtCount(n) {
  if (n === undefined || n === null) return '—';
  const v = Number(n);
  if (v >= 1e12) return `${(v / 1e12).toFixed(2)} T`;
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} B`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} K`;
  return String(v);
}
export const fmtNum = (x) => (typeof x !== 'number' ? String(x) : Number.isNaN(x) ? 'NaN' : !Number.isFinite(x) ? (x > 0 ? '+Inf' : '-Inf') : Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-4) ? x.toExponential(4) : x.toPrecision(6).replace(/\.?0+$/, ''));
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


// One colour per ggml type, the same in every file: families share a hue, wider types are lighter.
const FIXED_COLORS = {
  F32: '#8c9aab', F16: '#6f8fb8', BF16: '#7a7fc0', F64: '#a0a8b5', Q8_0: '#2f9e8f', Q8_K: '#2f9e8f',
  Q6_K: '#e8872e', Q5_K: '#d4a72c', Q5_0: '#c9b43a', Q5_1: '#bfae4a', Q4_K: '#4e79a7', Q4_0: '#5b8fd1', Q4_1: '#6d9bd6',
  Q3_K: '#b07aa1', Q2_K: '#e15759', IQ4_XS: '#3f6f9c', IQ4_NL: '#41729e', IQ3_S: '#9b6a92', IQ3_XXS: '#8f5f87',
  IQ2_XXS: '#c94b4d', IQ2_XS: '#cf5557', IQ2_S: '#d45f61', IQ1_S: '#a33b3d', IQ1_M: '#ad4547', TQ1_0: '#7b5ea7', TQ2_0: '#8968b5',
  MXFP4: '#59a14f', NVFP4: '#4c8f43',
};
export function typeColor(type) {
  if (FIXED_COLORS[type]) return FIXED_COLORS[type];
  let h = 0;
  for (const c of type) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return TYPE_COLORS[h % TYPE_COLORS.length];
}

/** WCAG relative luminance of a #rrggbb colour. */
function luminance(hex) {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
/** WCAG contrast ratio of two #rrggbb colours. */
export function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}
/** Black or white text on background `bg` (#rrggbb), whichever contrasts more. */
export const textOn = (bg) => (contrast(bg, '#000000') >= contrast(bg, '#ffffff') ? '#000000' : '#ffffff');

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
