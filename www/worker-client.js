// The page's side of worker.js's protocol ({id, op, args} → progress*, then result or error).
// createWorkerClient() starts the worker; its state (pending requests, the long tasks shown in
// the status area) lives in the returned client, not in this module.
//
// The worker can always be stopped, and a broken one never freezes the page: a Cancel (of the
// only long task; beside others, of one the worker does not stop at once) terminates the worker
// and starts a fresh one, which opens the files the old one had open (the
// same File objects or URLs, the same headers) before it gets any other request; the requests
// the old one had not answered are sent to it again. A worker that fails (its error event), that
// does not answer a quick request within the watchdog's time, or whose wasm module trapped, is
// replaced the same way; the request that failed (every request, for an error event) ends with
// one plain error, which onFailure shows.
import { $, el } from './dom.js';
import { fmtBytes } from './format.js';

/** Requests that answer at once on a working worker (header data, tokenizer, templates, planner):
 * one that takes longer than WATCHDOG_MS means the worker is stuck. */
const QUICK_OPS = new Set(['meta', 'metaFind', 'tokens', 'merges', 'editChanges', 'tokenize', 'renderChat', 'planMemory', 'fit', 'lint', 'warmPool', 'testBusy']);
export const WATCHDOG_MS = 20000;
/** A cancel the worker has not acknowledged by then (its thread is busy in wasm): restarted. */
export const CANCEL_ACK_MS = 2000;

function abortError() {
  const e = new Error('cancelled');
  e.name = 'AbortError';
  return e;
}

/**
 * onFailure(message): the worker failed and was restarted (shown once per failure).
 * watchdogMs: the quick requests' time limit; testHooks: the worker gets its tests' request
 * (worker.js), and the client returns a handle on the worker (both for the viewer's tests).
 */
export function createWorkerClient({ onFailure, watchdogMs = WATCHDOG_MS, testHooks = false }) {
  let nextId = 1;
  // id → {op, args, transfer, onProgress, resolve, reject, timer, sent}
  const pending = new Map();
  // The last successful open and openCompare: what a fresh worker opens again.
  const opened = { open: null, openCompare: null };
  let worker = null;
  let reopening = false; // a fresh worker is opening the files again: requests wait
  let broken = null; // the error every request gets once workers fail as they start
  let failedInARow = 0; // failures with no answer since: a worker that cannot start stops here
  let restarts = 0;

  function start() {
    const w = new Worker(testHooks ? 'worker.js?test-hooks' : 'worker.js', { type: 'module' });
    w.onmessage = (ev) => { if (w === worker) onMessage(ev.data); };
    w.onerror = (ev) => {
      if (w !== worker) return;
      ev.preventDefault?.();
      fail(`the viewer's worker failed (${ev.message || 'an error'}); it was restarted`, { all: true });
    };
    worker = w;
  }

  function onMessage({ id, result, error, progress, ack }) {
    failedInARow = 0;
    if (ack) return; // a cancel was heard (its request has ended here already)
    const p = pending.get(id);
    if (!p) return;
    if (progress) { if (p.onProgress) p.onProgress(progress); return; }
    settle(id, p);
    if (error) {
      // The package discarded its wasm instance, and the worker's models with it: a fresh
      // worker opens them again.
      const trapped = error.name === 'WasmTrapError';
      const e = new Error(trapped ? `${error.message.replace(/; it was restarted.*$/, '')}; the viewer opened the file again` : error.message);
      e.name = error.name;
      p.reject(e);
      if (trapped) restart();
    } else {
      if (p.op === 'open' || p.op === 'openCompare') remember(p.op, p.args, result);
      p.resolve(result);
    }
  }

  function remember(op, args, result) {
    if (result === null) return; // a cancelled open: the worker kept what it had
    if (op === 'open') opened.openCompare = null; // the worker dropped the compared file
    opened[op] = args;
  }

  function settle(id, p) {
    pending.delete(id);
    clearTimeout(p.timer);
  }

  function send(id, p) {
    p.sent = true;
    const w = worker;
    w.postMessage({ id, op: p.op, args: p.args }, p.transfer);
    clearTimeout(p.timer); // a request sent again: the old worker's time is over
    if (QUICK_OPS.has(p.op)) {
      p.timer = setTimeout(() => {
        if (pending.get(id) === p && w === worker) fail(`the viewer's worker did not answer (${p.op}) within ${Math.round(watchdogMs / 1000)} s; it was restarted`, { culprit: id });
      }, watchdogMs);
    }
  }

  /**
   * Ends the worker: the culprit request (or every one, with `all`) fails with `message`, shown
   * with onFailure; the others go to the fresh worker.
   */
  function fail(message, { culprit, all = false }) {
    for (const [id, p] of [...pending]) {
      if (all || id === culprit) {
        settle(id, p);
        // Shown once, below: a panel whose request this was need not say it again.
        p.reject(Object.assign(new Error(message), { workerFailed: true }));
      }
    }
    onFailure(message);
    restart();
  }

  /**
   * Replaces the worker: the new one opens the files again, then gets the requests left.
   * `failed`: the old one failed (not the user's Cancel); three failures with no answer in
   * between (a worker that fails as it starts) stop there.
   */
  function restart({ failed = true } = {}) {
    worker.terminate();
    const epoch = ++restarts;
    for (const [id, p] of [...pending]) {
      // The old worker's reopening is over; a request whose buffers went with it cannot be sent again.
      if (p.internal || (p.sent && p.transfer.length)) { settle(id, p); p.reject(new Error("the viewer's worker was restarted")); }
    }
    if (failed && ++failedInARow > 2) {
      broken = new Error("the viewer's worker cannot start");
      for (const [id, p] of [...pending]) { settle(id, p); p.reject(broken); }
      return;
    }
    start();
    const reopen = async () => {
      for (const op of ['open', 'openCompare']) {
        if (!opened[op]) continue;
        try {
          await internal(op, opened[op]);
        } catch (err) {
          if (epoch !== restarts) return; // restarted again meanwhile
          if (op === 'openCompare') { opened.openCompare = null; continue; }
          opened.open = null;
          throw new Error(`the viewer restarted its worker and could not open the file again: ${err.message}`);
        }
      }
    };
    reopening = true;
    reopen().then(() => {
      if (epoch !== restarts) return;
      reopening = false;
      for (const [id, p] of pending) if (!p.internal) send(id, p);
    }, (err) => {
      if (epoch !== restarts) return;
      reopening = false;
      onFailure(err.message);
      for (const [id, p] of [...pending]) { settle(id, p); p.reject(err); }
    });
  }

  /** A request of the client's own (reopening): sent at once, not replayed. */
  function internal(op, args) {
    const id = nextId++;
    const p = { op, args, transfer: [], internal: true };
    const promise = new Promise((resolve, reject) => Object.assign(p, { resolve, reject }));
    pending.set(id, p);
    send(id, p);
    return promise;
  }

  function request(op, args, { onProgress, transfer = [] } = {}) {
    const id = nextId++;
    const p = { op, args, transfer, onProgress, sent: false };
    const promise = new Promise((resolve, reject) => Object.assign(p, { resolve, reject }));
    if (broken) p.reject(broken);
    else {
      pending.set(id, p);
      if (!reopening) send(id, p);
    }
    return { id, promise, cancel: (options) => cancel(id, options) };
  }

  /**
   * Ends request `id` here at once (an AbortError). The worker is told to abort it; with
   * `restart` (the user's Cancel), or when the worker does not acknowledge within
   * CANCEL_ACK_MS, the worker is replaced instead of waited for.
   */
  function cancel(id, { restart: now = false } = {}) {
    const p = pending.get(id);
    if (!p) return;
    settle(id, p);
    p.reject(abortError());
    if (!p.sent) return;
    if (now) { restart({ failed: false }); return; }
    const w = worker;
    const ackId = nextId++;
    const timer = setTimeout(() => { if (w === worker) restart({ failed: false }); }, CANCEL_ACK_MS);
    const onAck = (ev) => {
      if (ev.data?.ack !== ackId) return;
      clearTimeout(timer);
      w.removeEventListener('message', onAck);
    };
    w.addEventListener('message', onAck);
    w.postMessage({ id: ackId, op: 'cancel', args: { target: id } });
  }

  // Long actions run side by side, each with its own row in the status area (label, progress,
  // Cancel). A new task with the same `key` (the same panel's work: another tensor to analyse,
  // another file to open) replaces the older one (whose panel shows the newer work); tasks of
  // other keys are never stopped by it.
  const tasks = new Map(); // key -> {task, row, key, replaced}
  function taskRow(label, onCancel) {
    const text = el('span', { class: 'progress-text muted' }, `${label}…`);
    const bar = document.createElement('progress');
    bar.max = 1;
    bar.setAttribute('aria-label', label);
    const cancel = el('button', { type: 'button', class: 'cancel', 'aria-label': `Cancel: ${label}` }, 'Cancel');
    cancel.addEventListener('click', onCancel);
    const row = el('li', { class: 'task' }, bar, ' ', text, ' ', cancel);
    return { row, bar, text };
  }
  function showTasks() {
    const list = $('#tasks');
    $('#status').hidden = tasks.size === 0;
    list.dataset.count = String(tasks.size);
  }
  /**
   * Runs `op` as a long task labelled `label`. `key` (default: op) names whose work it is; an
   * older task of that key is cancelled first and rejects with an AbortError whose
   * `replaced` is true (its panel moved on, so it is not reported as the user's Cancel).
   */
  async function longTask(label, op, args, { key = op } = {}) {
    const old = tasks.get(key);
    if (old) { old.replaced = true; old.task.cancel(); }
    const entry = { replaced: false };
    const ui = taskRow(label, () => cancelEntry(entry));
    const task = request(op, args, {
      onProgress: ({ loaded, total }) => {
        if (total) { ui.bar.max = total; ui.bar.value = loaded; } else ui.bar.removeAttribute('value');
        ui.text.textContent = total ? `${label}: ${fmtBytes(loaded)} of ${fmtBytes(total)}` : `${label}: ${fmtBytes(loaded)}`;
      },
    });
    Object.assign(entry, { task, row: ui.row, key });
    tasks.set(key, entry);
    $('#tasks').append(ui.row);
    showTasks();
    try {
      return await task.promise;
    } catch (err) {
      if (err.name === 'AbortError') err.replaced = entry.replaced;
      throw err;
    } finally {
      ui.row.remove();
      if (tasks.get(key) === entry) tasks.delete(key);
      showTasks();
    }
  }
  /** The user's Cancel of one task: alone, its worker is replaced at once (it may be stuck in
   * wasm); beside other tasks, the worker is asked to stop it and replaced only if it does not
   * answer (the others are then sent again to the fresh worker and still complete). */
  function cancelEntry(entry) {
    entry.task.cancel({ restart: tasks.size <= 1 });
  }
  /** Cancels every long task but those of `keep` (their results would belong to a file no longer open). */
  function cancelTasks({ keep = [] } = {}) {
    for (const [key, entry] of [...tasks]) if (!keep.includes(key)) { entry.replaced = true; entry.task.cancel(); }
  }
  /** Cancels the task of `key`, if one runs (its panel was reset: not reported). */
  function cancelTask(key) {
    const entry = tasks.get(key);
    if (entry) { entry.replaced = true; entry.task.cancel(); }
  }

  start();
  // For the viewer's tests: the worker, to end it as a crash would.
  return { request, longTask, cancelTasks, cancelTask, ...(testHooks ? { worker: () => worker } : {}) };
}
