// The Tokenizer and Template tabs: special tokens, the paged token and merge searches (run in the
// worker) and the chat template text. ctx: {state (app.js's: .model), request, showError}.
import { $, el, clear } from './dom.js';
import { fmtInt, fmtNum, metaGet } from './format.js';

export function setupTokenizer(ctx) {
  const { state } = ctx;
  // ----- tokenizer -----
  const tokState = { start: 0, limit: 50, total: 0 };
  const mergeState = { start: 0, limit: 50, total: 0 };
  function visible(s) { return s === null || s === undefined ? '∅' : s.replace(/ /g, '·').replace(/\n/g, '⏎').replace(/\t/g, '⇥'); }

  function renderSpecial() {
    const root = clear($('#special-tokens'));
    const entries = Object.entries(state.model.special);
    if (!entries.length) root.append(el('span', { class: 'muted' }, 'No special token ids in the metadata.'));
    for (const [k, v] of entries) {
      root.append(el('span', { class: 'chip', dataset: { special: k } }, el('b', {}, k), ' ', el('code', {}, visible(v.text)), el('span', { class: 'muted' }, ` #${v.id}`)));
    }
  }

  async function searchTokens() {
    const body = $('#tok-table tbody');
    try {
      const r = await ctx.request('tokens', { query: $('#tok-query').value, mode: $('#tok-mode').value, start: tokState.start, limit: tokState.limit }).promise;
      tokState.total = r.total;
      clear(body);
      for (const t of r.rows) {
        body.append(el('tr', { dataset: { tokenId: t.id } }, el('td', { class: 'num' }, String(t.id)), el('td', {}, el('code', { class: 'token' }, visible(t.text))), el('td', { class: 'muted' }, t.type ?? ''), el('td', { class: 'num' }, t.score === null ? '' : fmtNum(t.score))));
      }
      $('#tok-total').textContent = r.total ? `${fmtInt(tokState.start + 1)}–${fmtInt(tokState.start + r.rows.length)} of ${fmtInt(r.total)}` : 'no match';
    } catch (e) { ctx.showError(e.message); }
  }

  async function searchMerges() {
    const body = $('#merge-table tbody');
    try {
      const r = await ctx.request('merges', { query: $('#merge-query').value, start: mergeState.start, limit: mergeState.limit }).promise;
      mergeState.total = r.total;
      clear(body);
      for (const m of r.rows) body.append(el('tr', {}, el('td', { class: 'num' }, String(m.rank)), el('td', {}, el('code', { class: 'token' }, visible(m.text)))));
      $('#merge-total').textContent = r.total ? `${fmtInt(mergeState.start + 1)}–${fmtInt(mergeState.start + r.rows.length)} of ${fmtInt(r.total)}` : 'no merges';
    } catch (e) { ctx.showError(e.message); }
  }

  function renderTokenizer() {
    renderSpecial();
    tokState.start = 0; mergeState.start = 0;
    searchTokens();
    $('#merges-card').hidden = !state.model.metadata.some((m) => m.key === 'tokenizer.ggml.merges');
    if (!$('#merges-card').hidden) searchMerges();
  }

  function renderTemplate() {
    const t = metaGet(state.model, 'tokenizer.chat_template');
    $('#chat-template').textContent = typeof t === 'string' ? t : '(this file has no tokenizer.chat_template)';
    $('#chat-template-edit').value = typeof t === 'string' ? t : '';
  }

  const guard = (fn) => () => { if (state.model) fn(); };
  $('#tok-form').addEventListener('submit', (e) => e.preventDefault());
  $('#tok-query').addEventListener('input', guard(() => { tokState.start = 0; searchTokens(); }));
  $('#tok-mode').addEventListener('change', guard(() => { tokState.start = 0; searchTokens(); }));
  $('#tok-prev').addEventListener('click', guard(() => { tokState.start = Math.max(0, tokState.start - tokState.limit); searchTokens(); }));
  $('#tok-next').addEventListener('click', guard(() => { if (tokState.start + tokState.limit < tokState.total) { tokState.start += tokState.limit; searchTokens(); } }));
  $('#merge-form').addEventListener('submit', (e) => e.preventDefault());
  $('#merge-query').addEventListener('input', guard(() => { mergeState.start = 0; searchMerges(); }));
  $('#merge-prev').addEventListener('click', guard(() => { mergeState.start = Math.max(0, mergeState.start - mergeState.limit); searchMerges(); }));
  $('#merge-next').addEventListener('click', guard(() => { if (mergeState.start + mergeState.limit < mergeState.total) { mergeState.start += mergeState.limit; searchMerges(); } }));
  return { render() { renderTokenizer(); renderTemplate(); } };
}
