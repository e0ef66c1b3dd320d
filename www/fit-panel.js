// The fit on the memory card: a list of GPUs (presets or a custom free size), llama.cpp's margin
// (-fitt) and an optional context go to the package's model.fit, which chooses what
// llama-fit-params chooses; the card shows its flags (with Copy), what each device then holds, and
// which layers' experts stay on the CPU. The list is in the URL (fit = free MiB per GPU, fitt,
// fctx) as the planner's other choices, so a fit can be linked.

const MIB = 1024 * 1024;
// Free memory in MiB as the tools show it: nvidia-smi's total for an idle card; for Apple's
// unified memory what Metal lets one process use (its recommended working set, about 2/3 of
// the RAM up to 32 GB, 3/4 above), which llama.cpp reports as the device's free memory.
const PRESETS = [
  ['12288', 'RTX 3060 12 GB'],
  ['16376', 'RTX 4080 / 5080 16 GB'],
  ['24564', 'RTX 3090 / 4090 24 GB'],
  ['32607', 'RTX 5090 32 GB'],
  ['40960', 'A100 40 GB'],
  ['81920', 'A100 80 GB'],
  ['81559', 'H100 80 GB'],
  ['10923', 'Apple M-series 16 GB unified'],
  ['21845', 'Apple M-series 32 GB unified'],
  ['49152', 'Apple M-series 64 GB unified'],
  ['custom', 'custom size…'],
];
const DEFAULT_MARGIN = 1024;

/** @param {object} ctx the page's helpers: el, clear, request, model(), fmtBytes, fmtInt */
export function setupFit(ctx) {
  const { el, clear, request } = ctx;
  const $ = (sel) => document.querySelector(sel);
  /** @type {{ mib: number, label: string }[]} */
  let gpus = [];
  let ticket = 0;

  for (const [v, label] of PRESETS) $('#fit-preset').append(el('option', { value: v }, v === 'custom' ? label : `${label} (${ctx.fmtInt(Number(v))} MiB)`));
  const presetLabel = (mib) => PRESETS.find(([v]) => v === String(mib))?.[1] ?? 'GPU';

  function toUrl() {
    const q = new URLSearchParams(location.search);
    const put = (k, v) => (v === '' ? q.delete(k) : q.set(k, v));
    put('fit', gpus.map((g) => g.mib).join(','));
    const margin = $('#fit-margin').value;
    put('fitt', gpus.length && margin.trim() !== '' && margin.trim() !== String(DEFAULT_MARGIN) ? margin.trim() : '');
    put('fctx', gpus.length ? $('#fit-ctx').value : '');
    history.replaceState(null, '', `?${q}`);
  }

  function fromUrl() {
    const q = new URLSearchParams(location.search);
    gpus = (q.get('fit') || '').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0).slice(0, 16)
      .map((mib) => ({ mib, label: presetLabel(mib) }));
    if (q.get('fitt')) $('#fit-margin').value = q.get('fitt');
    if (q.get('fctx')) $('#fit-ctx').value = q.get('fctx');
  }

  function devices() {
    const list = clear($('#fit-devices'));
    gpus.forEach((g, i) => {
      const remove = el('button', { type: 'button', class: 'link', 'aria-label': `Remove GPU${i} (${g.label})`, dataset: { remove: String(i) } }, 'Remove');
      list.append(el('li', { dataset: { gpu: String(i), mib: String(g.mib) } },
        el('span', {}, `GPU${i}: ${g.label}, ${ctx.fmtInt(g.mib)} MiB free `), remove));
    });
    if (!gpus.length) list.append(el('li', { class: 'muted small' }, 'No GPU yet: add one to fit the model.'));
  }

  function bars(r) {
    const root = clear($('#fit-bars'));
    const rows = r.gpus.map((d, i) => [`GPU${i}`, d, gpus[i].mib * MIB]);
    rows.push(['CPU', r.cpu, 0]);
    const scale = Math.max(1, ...rows.map(([, d, free]) => Math.max(d.totalBytes, free)));
    for (const [device, d, free] of rows) {
      const track = el('div', { class: 'mem-track' });
      for (const [label, bytes] of [['weights', d.weightsBytes], ['KV cache', d.kvCacheBytes], ['compute', d.computeBytes]]) {
        if (!bytes) continue;
        const seg = el('div', { class: `mem-seg mem-${label.replace(' ', '-').toLowerCase()}`, title: `${device} ${label}: ${ctx.fmtBytes(bytes)}`, dataset: { part: label, bytes: String(bytes) } }, label);
        seg.style.width = `${(bytes / scale) * 100}%`;
        track.append(seg);
      }
      if (free) {
        const cap = el('div', { class: 'mem-cap', title: `${device} free memory ${ctx.fmtBytes(free)}` });
        cap.style.left = `${Math.min(99.5, (free / scale) * 100)}%`;
        track.append(cap);
      }
      const layers = d.layers === undefined ? '' : ` · ${ctx.fmtInt(d.layers)} layers${d.partialLayers ? ` (${ctx.fmtInt(d.partialLayers)} partial)` : ''}`;
      root.append(el('div', { class: 'mem-row', role: 'group', 'aria-label': `${device}: ${ctx.fmtBytes(d.totalBytes)}`, dataset: { device, bytes: String(d.totalBytes) } },
        el('span', { class: 'muted small' }, device), track, el('span', { class: 'small' }, ctx.fmtBytes(d.totalBytes))));
      if (layers) root.lastChild.title = `${device}${layers}`;
    }
    for (const seg of root.querySelectorAll('.mem-seg')) if (seg.scrollWidth > seg.clientWidth) seg.textContent = '';
  }

  /**
   * The overrides llama.cpp writes, read back per layer: `blk\.N\.ffn_(up|down|gate_up|gate)_(ch|)exps`
   * keeps all of layer N's experts on the CPU; `blk\.N\.ffn_down.*` (or `_up`, `_gate`) only those
   * tensors, the partial layer at the edge of a device.
   */
  function experts(r) {
    const whole = [], partial = [];
    for (const o of r.overrides) {
      if (o.buffer !== 'CPU') continue;
      const m = /^blk\\\.(\d+)\\\.ffn_(.*)$/.exec(o.pattern);
      if (!m) continue;
      if (m[2].startsWith('(up|down')) whole.push(Number(m[1]));
      else partial.push(`layer ${m[1]}: ffn_${m[2].replace(/\.\*$/, '').replace(/_$/, '')}`);
    }
    const p = $('#fit-experts');
    if (!whole.length && !partial.length) {
      p.textContent = r.overrides.length ? '' : 'No tensor stays on the CPU by override.';
      p.dataset.layers = '';
      return;
    }
    const ranges = [];
    for (const n of whole.sort((a, b) => a - b)) {
      const last = ranges[ranges.length - 1];
      if (last && last[1] === n - 1) last[1] = n; else ranges.push([n, n]);
    }
    const text = ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
    p.textContent = `Experts on the CPU: ${whole.length ? `all of layer${whole.length > 1 ? 's' : ''} ${text}` : 'none whole'}`
      + `${partial.length ? `; ${partial.join(', ')}` : ''}. The attention and shared tensors of those layers stay on the GPU.`;
    p.dataset.layers = whole.join(',');
  }

  /** The margin as llama.cpp's -fitt: one value for every GPU or one per GPU, in MiB. */
  function margins() {
    const text = $('#fit-margin').value.trim();
    const list = text === '' ? [DEFAULT_MARGIN] : text.split(/\s*,\s*/).map(Number);
    if (list.some((m) => !Number.isInteger(m) || m < 0)) throw new Error(`margin: "${text}" is not whole MiB (one value, or one per GPU)`);
    if (list.length === 1) return gpus.map(() => list[0]);
    if (list.length !== gpus.length) throw new Error(`margin: ${list.length} values for ${gpus.length} GPUs`);
    return list;
  }

  async function render() {
    toUrl();
    devices();
    const m = ctx.model();
    const mine = ++ticket;
    if (!m || m.info.format !== 'gguf' || !gpus.length) {
      $('#fit-result').hidden = true;
      $('#fit-error').hidden = true;
      return;
    }
    const c = Math.round(Number($('#fit-ctx').value) || 0);
    let r;
    try {
      const options = { gpus: gpus.map((g) => g.mib * MIB), margin: margins().map((m) => m * MIB), ...(c > 0 ? { ctx: c } : {}) };
      r = await request('fit', { options }).promise;
    } catch (e) {
      if (mine !== ticket) return;
      $('#fit-error').textContent = e.message;
      $('#fit-error').hidden = false;
      $('#fit-result').hidden = true;
      return;
    }
    if (mine !== ticket) return;
    $('#fit-error').hidden = true;
    $('#fit-result').hidden = false;
    const flags = $('#fit-flags');
    flags.textContent = r.flags;
    flags.dataset.fits = String(r.fits);
    if (!r.fits) {
      $('#fit-error').textContent = 'Does not fit these GPUs even at the smallest context: llama.cpp would start with these flags and run out of memory.';
      $('#fit-error').hidden = false;
    }
    bars(r);
    experts(r);
  }

  $('#fit-preset').addEventListener('change', () => {
    $('#fit-custom-label').hidden = $('#fit-preset').value !== 'custom';
  });
  $('#fit-add').addEventListener('click', () => {
    const v = $('#fit-preset').value;
    const mib = v === 'custom' ? Math.round(Number($('#fit-custom').value)) : Number(v);
    if (!(mib > 0) || gpus.length >= 16) {
      $('#fit-error').textContent = gpus.length >= 16 ? 'At most 16 GPUs.' : 'Enter the GPU\'s free memory in MiB.';
      $('#fit-error').hidden = false;
      return;
    }
    gpus.push({ mib, label: v === 'custom' ? 'custom' : presetLabel(mib) });
    render();
  });
  $('#fit-devices').addEventListener('click', (e) => {
    const i = e.target.closest('[data-remove]')?.dataset.remove;
    if (i === undefined) return;
    gpus.splice(Number(i), 1);
    render().then(() => (gpus.length ? $('#fit-devices button') : $('#fit-add'))?.focus());
  });
  for (const id of ['#fit-margin', '#fit-ctx']) $(id).addEventListener('input', () => { render(); });
  $('#fit-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('#fit-flags').textContent);
      $('#fit-copy').textContent = 'Copied';
    } catch {
      $('#fit-copy').textContent = 'Select and copy';
    }
    setTimeout(() => { $('#fit-copy').textContent = 'Copy'; }, 1500);
  });

  return {
    /** A new model: the same GPUs (they are the user's, not the model's), the URL's on the first. */
    reset(first) {
      if (first) fromUrl();
      $('#fit-custom-label').hidden = $('#fit-preset').value !== 'custom';
      render();
    },
  };
}
