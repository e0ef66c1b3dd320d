//! A chat template compiled and rendered through `render_chat_template`, the one entry point
//! `gguf-lens chat`, npm and the viewer use. The input is `template [\0 messages JSON [\0 flags]]`:
//! plain `.jinja` files are seeds as they are (llama.cpp's models/templates, see scripts/fuzz.sh),
//! and without a valid messages list a small conversation with a tool call is rendered.
//! A template that never ends or grows without bound is a finding (libFuzzer's -timeout and
//! -rss_limit_mb catch it) until renders are bounded.
#![no_main]

use gguf_lens::chat::{render_chat_template, ChatOptions};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fn conversation() -> serde_json::Value {
    json!([
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hello <|im_end|> {{ x }}"},
        {"role": "assistant", "content": "Hi", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
        ]},
        {"role": "tool", "content": "{\"r\": [1, 2]}", "name": "f"},
        {"role": "user", "content": [{"type": "text", "text": "and?"}]}
    ])
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let source = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let messages = parts
        .next()
        .and_then(|m| serde_json::from_slice::<serde_json::Value>(m).ok())
        .filter(|m| m.is_array())
        .unwrap_or_else(conversation);
    let flags = parts.next().and_then(|f| f.first().copied()).unwrap_or(0);
    let mut variables = serde_json::Map::new();
    if flags & 2 != 0 {
        variables.insert("enable_thinking".into(), json!(flags & 4 != 0));
    }
    let opts = ChatOptions {
        tools: (flags & 8 != 0).then(|| {
            json!([{"type": "function", "function": {"name": "f", "description": "d",
                "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}])
        }),
        add_generation_prompt: flags & 1 != 0,
        variables,
        bos_token: "<s>".into(),
        eos_token: "</s>".into(),
        now: Some(0),
    };
    if let Err(e) = render_chat_template(&source, &messages, &opts) {
        assert!(!e.to_string().contains('\n'), "an error is one line: {e:?}");
    }
});
