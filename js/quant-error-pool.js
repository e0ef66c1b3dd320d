// The page side of quantError({ workers }): the rows to quantize (every row, or the sampled
// runs) are cut into one contiguous share per worker; each worker opens the model from
// `model.input` (once), quantizes its rows to every type and sends its sums back
// (quant-error-part.js, running in the same workers as tensorStats'). The sums are exact
// (src/quantize/error.rs), so the result is bit for bit the one a single pass gives.

/** Cuts `runs` ([first, last) row ranges, in order) into `n` shares of about equal rows. */
export function shareRuns(runs, n) {
  const total = runs.reduce((s, [a, b]) => s + b - a, 0);
  const shares = [];
  let r = 0;
  let at = runs.length ? runs[0][0] : 0;
  for (let i = 0; i < n && r < runs.length; i++) {
    let want = Math.ceil((total * (i + 1)) / n) - Math.ceil((total * i) / n);
    const share = [];
    while (want > 0 && r < runs.length) {
      const end = Math.min(runs[r][1], at + want);
      share.push([at, end]);
      want -= end - at;
      at = end;
      if (at >= runs[r][1]) {
        r++;
        if (r < runs.length) at = runs[r][0];
      }
    }
    if (share.length) shares.push(share);
  }
  return shares;
}

let nextJob = 0;

/**
 * The quantization error of `runs` of tensor `t` on `workers`; `job` is the page's empty
 * QuantErrorJob (its types and row length), which absorbs the parts in row order.
 * `onRows(n)` is told of every chunk of rows quantized.
 */
export async function quantErrorOnWorkers(model, t, runs, job, types, workers, options) {
  const { signal, chunkBytes, onRows, inputId, wasmModule } = options;
  const input = model.input; // model.js checked that workers can open it
  const jobId = `qerr${++nextJob}`;
  const shares = shareRuns(runs, workers.length);
  const used = workers.slice(0, shares.length);
  const listeners = [];
  let stop;
  const stopped = new Promise((_, reject) => { stop = reject; });
  stopped.catch(() => {});
  const cancelAll = () => {
    for (const [i, w] of used.entries()) w.postMessage({ type: 'gguf-lens-qerr-cancel', id: `${jobId}:${i}` });
  };
  const onAbort = () => {
    cancelAll();
    stop(signal.reason ?? new DOMException('The operation was aborted.', 'AbortError'));
  };
  for (const w of used) w.ref?.();
  try {
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort);
    const parts = used.map((worker, i) => new Promise((resolve, reject) => {
      const id = `${jobId}:${i}`;
      const onMessage = (event) => {
        const data = event.data;
        if (data?.id !== id) return;
        if (data.type === 'gguf-lens-qerr-progress') {
          onRows?.(data.rows);
        } else if (data.type === 'gguf-lens-qerr-part') {
          if (data.error) reject(new Error(`gguf-lens: a quantization worker failed: ${data.error}`));
          else resolve(data.state);
        }
      };
      worker.addEventListener('message', onMessage);
      listeners.push([worker, onMessage]);
      worker.postMessage({
        type: 'gguf-lens-qerr', id, input, inputId, openOptions: model.openOptions, name: t.name,
        types, runs: shares[i], chunkBytes, wasmModule,
      });
    }));
    let states;
    try {
      states = await Promise.race([Promise.all(parts), stopped]);
    } catch (err) {
      cancelAll(); // one worker failed: the others stop too
      throw err;
    }
    for (const state of states) job.absorbState(state);
    return job.result();
  } finally {
    signal?.removeEventListener('abort', onAbort);
    for (const [w, fn] of listeners) w.removeEventListener('message', fn);
    for (const w of used) w.unref?.();
  }
}
