// The Integrity tab: the core's lint (run when a file opens: header only), and tensor-data
// hashes exactly as llama.cpp's llama-gguf-hash prints them (computed in the worker from the
// file, with progress and Cancel), downloadable as a manifest.

/** @param {object} ctx the page's helpers: el, clear, request, longTask, showError, model(), sourceName() */
export function setupIntegrity(ctx) {
  const { el, clear, request, longTask, showError } = ctx;
  const $ = (sel) => document.querySelector(sel);
  let lines = '';

  async function computeHashes() {
    const options = {
      xxh64: $('#hash-xxh64').checked,
      sha1: $('#hash-sha1').checked,
      sha256: $('#hash-sha256').checked,
      uuid: $('#hash-uuid').checked,
      perTensor: $('#hash-per-tensor').checked,
      fileName: String(ctx.sourceName()).split(/[\\/]/).pop(),
    };
    const started = performance.now();
    try {
      const report = await longTask('Hashing', 'hash', { options }, { key: 'hash' });
      const seconds = (performance.now() - started) / 1000;
      lines = report.lines;
      const body = clear($('#hash-model tbody'));
      for (const [k, v] of Object.entries(report.model)) {
        body.append(el('tr', { dataset: { hash: k } }, el('th', {}, k), el('td', { class: 'mono' }, v)));
      }
      $('#hash-lines').textContent = lines;
      $('#hash-time').textContent = `${report.tensors.length} tensors, ${seconds.toFixed(2)} s`;
      $('#hash-result').hidden = false;
    } catch (e) {
      if (e.name === 'AbortError') { if (!e.replaced) showError('hashing', 'Cancelled'); }
      else showError(`could not hash: ${e.message}`);
    }
  }

  function downloadManifest() {
    const blob = new Blob([lines], { type: 'text/plain' });
    const url = URL.createObjectURL(blob);
    const a = el('a', { href: url, download: `${String(ctx.sourceName()).split(/[\\/]/).pop()}.manifest` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }

  $('#hash-run').addEventListener('click', () => { if (ctx.model()) computeHashes(); });
  $('#hash-download').addEventListener('click', downloadManifest);
  async function runLint() {
    const body = clear($('#lint-table tbody'));
    const badge = $('#lint-badge');
    badge.hidden = true;
    if (ctx.model()?.info.format !== 'gguf') {
      $('#lint-summary').textContent = 'Lint checks GGUF files.';
      return;
    }
    const report = await request('lint', {}).promise;
    const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;
    $('#lint-summary').textContent = `${plural(report.errors, 'error')}, ${plural(report.warnings, 'warning')}, ${plural(report.infos, 'note')}`;
    $('#lint-summary').dataset.errors = String(report.errors);
    for (const f of report.findings) {
      const where = [f.shard !== undefined && f.shard !== null ? `shard ${f.shard}` : '', f.tensor ?? f.key ?? (f.offset !== undefined && f.offset !== null ? `byte ${f.offset}` : 'file')].filter(Boolean).join(' ');
      body.append(el('tr', { dataset: { code: f.code, severity: f.severity } },
        el('td', {}, el('span', { class: `tag sev-${f.severity}` }, f.severity)),
        el('td', { class: 'mono' }, f.code), el('td', { class: 'mono' }, where), el('td', {}, f.message)));
    }
    if (report.errors) {
      badge.textContent = String(report.errors);
      badge.title = `${plural(report.errors, 'lint error')}`;
      badge.hidden = false;
    }
  }

  return {
    reset() {
      runLint().catch((e) => { if (!e.workerFailed) showError(`lint failed: ${e.message}`); });
      lines = '';
      $('#hash-result').hidden = true;
      const gguf = ctx.model()?.info.format === 'gguf';
      $('#hash-run').disabled = !gguf;
      $('#hash-note').textContent = gguf ? '' : 'Hashes are defined for GGUF files.';
    },
  };
}
