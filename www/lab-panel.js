// The tokenizer and chat-template lab: text tokenized as you type with the file's own vocabulary
// (llama.cpp's ids; coloured spans, ids on hover, control tokens marked), and the chat template
// rendered over preset or your own conversations (transformers' apply_chat_template), the live
// edited template included, with special tokens highlighted, its token count and errors inline.
// All in the worker: the vocabulary is indexed once there, nothing is decoded per keystroke.

const PRESETS = {
  single: { label: 'single turn', messages: [{ role: 'user', content: 'Hello! Who are you?' }] },
  multi: {
    label: 'system + multi-turn',
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: 'What is GGUF?' },
      { role: 'assistant', content: 'A file format for llama.cpp models.' },
      { role: 'user', content: 'And what is in it?' },
    ],
  },
  tools: {
    label: 'tool call with tool result',
    messages: [
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', name: 'get_weather', content: '{"temperature": 21, "sky": "clear"}' },
    ],
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'The current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
  },
  reasoning: {
    label: 'reasoning',
    messages: [
      { role: 'user', content: 'Is 91 prime?' },
      { role: 'assistant', reasoning_content: '91 = 7 × 13.', content: 'No: 91 = 7 × 13.' },
      { role: 'user', content: 'And 97?' },
    ],
    variables: { enable_thinking: true },
  },
};

/** @param {object} ctx the page's helpers: el, clear, request, model() */
export function setupLab(ctx) {
  const { el, clear, request } = ctx;
  const $ = (sel) => document.querySelector(sel);
  let tokTicket = 0;
  let chatTicket = 0;

  function spans(root, pieces, control, ids) {
    clear(root);
    pieces.forEach((p, i) => {
      const text = p.replace(/\n/g, '⏎\n').replace(/\t/g, '⇥').replace(/ /g, '·');
      root.append(el('span', { class: control[i] ? 'tok special' : `tok c${i % 6}`, title: `id ${ids[i]}`, dataset: { id: String(ids[i]) } }, text || '∅'));
    });
  }

  async function tokenizeNow() {
    const mine = ++tokTicket;
    const text = $('#tok-text').value;
    try {
      const r = await request('tokenize', { text, addSpecial: $('#tok-add-special').checked, parseSpecial: $('#tok-parse-special').checked }).promise;
      if (mine !== tokTicket) return;
      $('#tok-live-error').hidden = true;
      spans($('#tok-spans'), r.pieces, r.control, r.ids);
      $('#tok-count').textContent = `${r.ids.length} tokens`;
      $('#tok-count').dataset.count = String(r.ids.length);
      $('#tok-ids').textContent = `[${r.ids.join(', ')}]`;
    } catch (e) {
      if (mine !== tokTicket) return;
      $('#tok-live-error').textContent = e.message;
      $('#tok-live-error').hidden = false;
    }
  }

  function loadPreset() {
    const p = PRESETS[$('#chat-preset').value];
    if (!p) return;
    $('#chat-messages').value = JSON.stringify(p.messages, null, 2);
    $('#chat-tools').value = p.tools ? JSON.stringify(p.tools, null, 2) : '';
    $('#chat-vars').value = p.variables ? JSON.stringify(p.variables) : '';
    renderNow();
  }

  function parsed(id, fallback) {
    const text = $(id).value.trim();
    if (!text) return fallback;
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(`${$(id).getAttribute('aria-label')}: not JSON (${e.message})`);
    }
  }

  async function renderNow() {
    const mine = ++chatTicket;
    const err = $('#chat-error');
    try {
      const args = {
        messages: parsed('#chat-messages', []),
        tools: parsed('#chat-tools', undefined),
        variables: parsed('#chat-vars', {}),
        addGenerationPrompt: $('#chat-gen').checked,
        template: $('#chat-use-edited').checked ? $('#chat-template-edit').value : undefined,
      };
      const r = await request('renderChat', args).promise;
      if (mine !== chatTicket) return;
      err.hidden = true;
      $('#chat-text').textContent = r.text;
      spans($('#chat-output'), r.pieces, r.control, r.ids);
      $('#chat-output').dataset.text = r.text;
      $('#chat-count').textContent = `${r.ids.length} tokens (special tokens parsed, none added)`;
      $('#chat-count').dataset.count = String(r.ids.length);
    } catch (e) {
      if (mine !== chatTicket) return;
      err.textContent = e.message;
      err.hidden = false;
      delete $('#chat-output').dataset.text;
      $('#chat-text').textContent = '';
    }
  }

  for (const [key, p] of Object.entries(PRESETS)) $('#chat-preset').append(el('option', { value: key }, p.label));
  $('#tok-text').addEventListener('input', tokenizeNow);
  $('#tok-add-special').addEventListener('change', tokenizeNow);
  $('#tok-parse-special').addEventListener('change', tokenizeNow);
  $('#chat-preset').addEventListener('change', loadPreset);
  for (const id of ['#chat-messages', '#chat-tools', '#chat-vars', '#chat-gen', '#chat-use-edited']) $(id).addEventListener('input', renderNow);
  $('#chat-template-edit').addEventListener('input', () => { if ($('#chat-use-edited').checked) renderNow(); });

  return {
    reset() {
      const m = ctx.model();
      const gguf = m?.info.format === 'gguf';
      $('#tok-live-card').hidden = !gguf;
      $('#chat-render-card').hidden = !gguf;
      if (!gguf) return;
      if (!$('#tok-text').value) $('#tok-text').value = 'Hello world! 你好 🦙 def f(x):\n    return x*2';
      tokenizeNow();
      loadPreset();
    },
  };
}
