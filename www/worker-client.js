// The page's side of worker.js's protocol ({id, op, args} → progress*, then result or error).
// createWorkerClient() starts the worker; its state (pending requests, the one long task driving
// the progress bar) lives in the returned client, not in this module.
import { $ } from './dom.js';
import { fmtBytes } from './format.js';

/** onFailure(message): the worker itself failed (every pending request is rejected too). */
export function createWorkerClient({ onFailure }) {
  let nextId = 1;
  const pending = new Map();
  const worker = new Worker('worker.js', { type: 'module' });
  worker.onmessage = (ev) => {
    const { id, result, error, progress } = ev.data;
    const p = pending.get(id);
    if (!p) return;
    if (progress) { if (p.onProgress) p.onProgress(progress); return; }
    pending.delete(id);
    if (error) {
      const e = new Error(error.message);
      e.name = error.name;
      p.reject(e);
    } else p.resolve(result);
  };
  worker.onerror = (ev) => {
    onFailure(`the worker failed: ${ev.message || 'unknown error'}`);
    for (const p of pending.values()) p.reject(new Error('worker failed'));
    pending.clear();
  };

  function request(op, args, { onProgress, transfer = [] } = {}) {
    const id = nextId++;
    const promise = new Promise((resolve, reject) => pending.set(id, { resolve, reject, onProgress }));
    worker.postMessage({ id, op, args }, transfer);
    return { id, promise, cancel: () => worker.postMessage({ id: nextId++, op: 'cancel', args: { target: id } }) };
  }

  // One long action at a time drives the progress bar; Cancel aborts it.
  let activeTask = null;
  async function longTask(label, op, args) {
    if (activeTask) activeTask.cancel();
    const status = $('#status'), bar = $('#progress'), text = $('#progress-text');
    const task = request(op, args, {
      onProgress: ({ loaded, total }) => {
        if (total) { bar.max = total; bar.value = loaded; } else bar.removeAttribute('value');
        text.textContent = total ? `${label}: ${fmtBytes(loaded)} of ${fmtBytes(total)}` : `${label}: ${fmtBytes(loaded)}`;
      },
    });
    activeTask = task;
    status.hidden = false;
    bar.removeAttribute('value');
    text.textContent = `${label}…`;
    try {
      return await task.promise;
    } finally {
      if (activeTask === task) { activeTask = null; status.hidden = true; }
    }
  }
  const cancelActive = () => { if (activeTask) activeTask.cancel(); };
  return { request, longTask, cancelActive };
}
