// The memory planner card: what llama.cpp allocates to run the model (the core's planner through
// the package's planMemory, checked against llama.cpp's own log): weights per device, the KV cache
// (K, V, sliding-window, recurrent state), the compute buffer estimate; the context that fits a
// GPU, the layers to offload, and the llama-server command. Every choice is in the URL
// (mctx, np, ctk, ctv, fa, gpu, ngl), so a plan can be linked.

const GIB = 1024 ** 3;
const GPU_PRESETS = [['', 'no GPU (all on CPU)'], ['8', '8 GiB'], ['12', '12 GiB'], ['16', '16 GiB'], ['24', '24 GiB'], ['48', '48 GiB'], ['80', '80 GiB'], ['custom', 'custom…']];
const KV_TYPES = ['f16', 'f32', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1'];

/** @param {object} ctx the page's helpers: el, clear, request, model(), fmtBytes, fmtInt */
export function setupMemory(ctx) {
  const { el, clear, request } = ctx;
  const $ = (sel) => document.querySelector(sel);
  let ticket = 0;

  const form = $('#mem-form');
  for (const id of ['#mem-ctk', '#mem-ctv']) {
    for (const t of KV_TYPES) $(id).append(el('option', { value: t }, t));
  }
  for (const [v, label] of GPU_PRESETS) $('#mem-gpu').append(el('option', { value: v }, label));

  /** The form's choices as planMemory options (ngl absent: the most that fit the GPU). */
  function options() {
    const gpuChoice = $('#mem-gpu').value;
    const gib = gpuChoice === 'custom' ? Number($('#mem-gpu-custom').value) : Number(gpuChoice);
    const o = {
      // 0 is the model's own context, as llama.cpp's -c 0 (the planner reads it so too).
      ctx: Math.max(0, Math.round(Number($('#mem-ctx').value) || 0)),
      parallel: Math.max(1, Math.round(Number($('#mem-np').value) || 1)),
      cacheTypeK: $('#mem-ctk').value,
      cacheTypeV: $('#mem-ctv').value,
      flashAttn: $('#mem-fa').checked,
      file: String(ctx.sourceName()).split(/[\\/]/).pop() || 'model.gguf',
    };
    if (gib > 0) o.gpuMem = Math.round(gib * GIB);
    if (!$('#mem-ngl-auto').checked) o.ngl = Number($('#mem-ngl').value);
    return o;
  }

  function toUrl(o) {
    const q = new URLSearchParams(location.search);
    const put = (k, v, dflt) => (v === undefined || v === dflt ? q.delete(k) : q.set(k, String(v)));
    put('mctx', o.ctx, ctx.model()?.summary.contextLength);
    put('np', o.parallel, 1);
    put('ctk', o.cacheTypeK, 'f16');
    put('ctv', o.cacheTypeV, 'f16');
    put('fa', o.flashAttn ? 1 : undefined);
    put('gpu', o.gpuMem ? +(o.gpuMem / GIB).toFixed(3) : undefined);
    put('ngl', o.ngl);
    history.replaceState(null, '', `?${q}`);
  }

  function fromUrl() {
    const q = new URLSearchParams(location.search);
    if (q.get('mctx')) $('#mem-ctx').value = q.get('mctx');
    if (q.get('np')) $('#mem-np').value = q.get('np');
    if (q.get('ctk')) $('#mem-ctk').value = q.get('ctk');
    if (q.get('ctv')) $('#mem-ctv').value = q.get('ctv');
    $('#mem-fa').checked = q.get('fa') === '1';
    const gpu = q.get('gpu');
    if (gpu) {
      const preset = GPU_PRESETS.find(([v]) => v === gpu);
      $('#mem-gpu').value = preset ? gpu : 'custom';
      $('#mem-gpu-custom').value = gpu;
    }
    if (q.get('ngl') !== null) { $('#mem-ngl-auto').checked = false; $('#mem-ngl').value = q.get('ngl'); }
  }

  function set(k, v, text) {
    const e = $(`[data-mem="${k}"]`);
    e.textContent = text;
    e.dataset.value = v === undefined || v === null ? '' : String(v);
  }

  function bar(p) {
    const root = clear($('#mem-bar'));
    const rows = [['CPU', [['weights', p.weights.cpuBytes], ['KV cache', p.kvCache.cpuBytes], ['compute', p.compute.cpuBytes]]],
      ['GPU', [['weights', p.weights.gpuBytes], ['KV cache', p.kvCache.gpuBytes], ['compute', p.compute.gpuBytes]]]];
    const scale = Math.max(p.cpuBytes, p.gpuMem ?? 0, p.gpuBytes, 1);
    for (const [device, parts] of rows) {
      if (device === 'GPU' && !p.gpuMem && !p.gpuBytes) continue;
      const track = el('div', { class: 'mem-track' });
      for (const [label, bytes] of parts) {
        if (!bytes) continue;
        const seg = el('div', { class: `mem-seg mem-${label.replace(' ', '-').toLowerCase()}`, title: `${label}: ${ctx.fmtBytes(bytes)}`, dataset: { part: label } }, label);
        seg.style.width = `${(bytes / scale) * 100}%`;
        track.append(seg);
      }
      if (device === 'GPU' && p.gpuMem) {
        const cap = el('div', { class: 'mem-cap', title: `GPU memory ${ctx.fmtBytes(p.gpuMem)}` });
        cap.style.left = `${(p.gpuMem / scale) * 100}%`;
        track.append(cap);
      }
      root.append(el('div', { class: 'mem-row', dataset: { device, bytes: String(device === 'CPU' ? p.cpuBytes : p.gpuBytes) } }, el('span', { class: 'muted small' }, device), track,
        el('span', { class: 'small' }, ctx.fmtBytes(device === 'CPU' ? p.cpuBytes : p.gpuBytes))));
    }
    // A segment too narrow for its word shows none (never a clipped one); the legend names them all.
    for (const seg of root.querySelectorAll('.mem-seg')) if (seg.scrollWidth > seg.clientWidth) seg.textContent = '';
    root.append(el('div', { class: 'mem-legend small muted' }, ...['weights', 'KV cache', 'compute'].map((label) =>
      el('span', {}, el('i', { class: `mem-seg mem-${label.replace(' ', '-').toLowerCase()}` }), label))));
  }

  /**
   * A short reason beside each figure that jumps when a choice changes: what the GPU holds
   * (and the tied output's copy of token_embd that makes the weights grow), the sliding-window
   * cache, the compute buffer, a largest context beyond the trained one.
   */
  function notes(p) {
    const b = ctx.fmtBytes, n = ctx.fmtInt;
    const out = { weights: '', kv: '', compute: '', 'max-ctx': '' };
    if (p.weights.gpuBytes) {
      const layers = Math.max(0, p.ngl - 1);
      out.weights = `GPU: the output layer${layers ? ` and the last ${n(layers)} of ${n(p.nLayer)} layers` : ''}.`;
      if (p.tiedOutputCopyBytes) {
        out.weights += ` The output is tied to token_embd (the file has no output.weight): offloaded, llama.cpp`
          + ` gives the GPU its own copy (${b(p.tiedOutputCopyBytes)}) while the input embedding stays on the CPU,`
          + ` so the weights grow by that copy.`;
      }
    }
    const kv = [];
    const swa = p.kvCache.caches.find((c) => c.swa);
    const full = p.kvCache.caches.find((c) => !c.swa);
    if (swa) {
      kv.push(`${n(swa.layers)} sliding-window layers keep ${n(swa.cells)} cells per slot (at most the window plus one batch, ${b(swa.kBytes + swa.vBytes)})`
        + (full ? `; the other ${n(full.layers)} the whole ${n(full.cells)}.` : '.'));
    }
    if (p.kvCache.recurrent) kv.push(`Recurrent state (${b(p.kvCache.recurrentBytes)}): one cell per slot, the same at any context.`);
    if (p.kvCache.gpuBytes && p.kvCache.cpuBytes) kv.push(`The offloaded layers' cache is on the GPU (${b(p.kvCache.gpuBytes)}), the rest on the CPU.`);
    out.kv = kv.join(' ');
    out.compute = p.compute.gpuBytes
      ? `Estimated for one batch of 512 tokens: each device holds its own working set; the GPU's (${b(p.compute.gpuBytes)}) includes the logits.`
      : `Estimated for one batch of 512 tokens: the attention masks and the largest step${p.flashAttn ? '' : ' (with flash attention off, the attention scores)'}.`;
    if (p.maxCtx !== null && !p.kvCache.gpuBytes) {
      out['max-ctx'] = 'Offload more layers (-ngl) to put their KV cache on the GPU.';
    } else if (p.maxCtx !== null && p.maxCtx > p.nCtxTrain * p.nSeqMax) {
      out['max-ctx'] = `With -ngl ${p.ngl}. Beyond the model's trained context (${n(p.nCtxTrain)}): llama.cpp runs it, with a warning.`;
    } else if (p.maxCtx !== null) {
      out['max-ctx'] = `With -ngl ${p.ngl}.`;
    }
    return out;
  }

  async function render() {
    const m = ctx.model();
    if (!m) return;
    const mine = ++ticket;
    const o = options();
    toUrl(o);
    let p;
    try {
      p = await request('planMemory', { options: o }).promise;
    } catch (e) {
      if (mine !== ticket) return;
      $('#mem-error').textContent = e.message;
      $('#mem-error').hidden = false;
      return;
    }
    if (mine !== ticket) return; // a newer choice is on its way
    $('#mem-error').hidden = true;
    const nglIn = $('#mem-ngl');
    nglIn.max = String(p.nLayer + 1);
    if ($('#mem-ngl-auto').checked) nglIn.value = String(p.ngl);
    $('#mem-ngl-value').textContent = `${p.ngl} of ${p.nLayer + 1}`;
    set('weights', p.weightsBytes, `${ctx.fmtBytes(p.weightsBytes)}${p.weights.gpuBytes ? ` (GPU ${ctx.fmtBytes(p.weights.gpuBytes)})` : ''}`);
    const kvParts = [`K ${ctx.fmtBytes(p.kvCache.kBytes)}`, `V ${ctx.fmtBytes(p.kvCache.vBytes)}`];
    if (p.kvCache.swaBytes) kvParts.push(`sliding window ${ctx.fmtBytes(p.kvCache.swaBytes)}`);
    if (p.kvCache.recurrentBytes) kvParts.push(`recurrent ${ctx.fmtBytes(p.kvCache.recurrentBytes)}`);
    set('kv', p.kvCacheBytes, `${ctx.fmtBytes(p.kvCacheBytes)} (${kvParts.join(', ')})`);
    set('compute', p.computeBytes, `${ctx.fmtBytes(p.computeBytes)} (estimate${p.compute.gpuBytes ? `, GPU ${ctx.fmtBytes(p.compute.gpuBytes)}` : ''})`);
    set('total', p.totalBytes, ctx.fmtBytes(p.totalBytes));
    // With no layer's cache on the GPU the context does not grow the GPU's share: the planner's
    // search then ends at llama.cpp's u32 limit, a figure that says nothing about the GPU.
    const cacheOnGpu = p.kvCache.gpuBytes > 0;
    if (p.maxCtx !== null && !cacheOnGpu) set('max-ctx', null, `not limited by the GPU (-ngl ${p.ngl} keeps every cache on the CPU)`);
    else set('max-ctx', p.maxCtx, p.maxCtx === null ? (p.gpuMem ? 'none fits (not even 256 per slot)' : '— (choose a GPU)') : ctx.fmtInt(p.maxCtx));
    for (const [k, text] of Object.entries(notes(p))) {
      const e = $(`[data-mem-note="${k}"]`);
      e.textContent = text;
      e.hidden = !text;
    }
    // -c 0 as typed: llama-server then takes the model's context, as planned here.
    $('#mem-command').textContent = o.ctx === 0 ? p.command.replace(/(^|\s)-c \d+(?=\s|$)/, '$1-c 0') : p.command;
    $('#mem-ctx-note').textContent = o.ctx === 0 ? `0: the model's context, ${ctx.fmtInt(ctx.model().summary.contextLength ?? 0)}` : '';
    bar(p);
  }

  const onInput = () => { render(); };
  form.addEventListener('input', (e) => {
    if (e.target.id === 'mem-ngl') $('#mem-ngl-auto').checked = false;
    if (e.target.id === 'mem-ctx-range') $('#mem-ctx').value = e.target.value;
    if (e.target.id === 'mem-ctx') $('#mem-ctx-range').value = e.target.value;
    $('#mem-gpu-custom').hidden = $('#mem-gpu').value !== 'custom';
    onInput();
  });
  form.addEventListener('submit', (e) => e.preventDefault());
  $('#mem-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('#mem-command').textContent);
      $('#mem-copy').textContent = 'Copied';
    } catch {
      $('#mem-copy').textContent = 'Select and copy';
    }
    setTimeout(() => { $('#mem-copy').textContent = 'Copy'; }, 1500);
  });

  return {
    /** A new model: defaults (its training context), then any choices in the URL. */
    reset(first) {
      const m = ctx.model();
      const gguf = m?.info.format === 'gguf';
      $('#mem-card').hidden = !gguf;
      if (!gguf) return;
      const train = m.summary.contextLength || 4096;
      $('#mem-ctx').value = String(train);
      $('#mem-ctx-range').max = String(Math.max(512, train));
      $('#mem-ctx-range').value = String(train);
      $('#mem-np').value = '1';
      $('#mem-ctk').value = 'f16';
      $('#mem-ctv').value = 'f16';
      $('#mem-fa').checked = false;
      $('#mem-gpu').value = '';
      $('#mem-gpu-custom').hidden = true;
      $('#mem-ngl-auto').checked = true;
      if (first) fromUrl();
      $('#mem-ctx-range').value = $('#mem-ctx').value;
      $('#mem-gpu-custom').hidden = $('#mem-gpu').value !== 'custom';
      render();
    },
  };
}
