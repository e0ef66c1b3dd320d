//! The tokenizer and chat templates for JS.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::ModelHeader;
use crate::chat::{file_template, render_chat_template, token_text_for, ChatOptions};
use crate::tokenizer::Tokenizer;

/// The file's tokenizer (llama.cpp's ids).
#[wasm_bindgen]
pub struct TokenizerJs {
    tok: Tokenizer,
}

#[wasm_bindgen]
impl TokenizerJs {
    /// Token ids of `text` (UTF-8 bytes; invalid sequences as llama.cpp treats them); an
    /// error for text over the input limit.
    pub fn tokenize(
        &self,
        text: &[u8],
        add_special: bool,
        parse_special: bool,
    ) -> Result<Vec<i32>, JsError> {
        self.tok
            .try_tokenize(text, add_special, parse_special)
            .map_err(super::js_error)
    }

    /// The pieces of `ids` concatenated (control tokens only when `special`).
    pub fn detokenize(&self, ids: &[i32], special: bool) -> Vec<u8> {
        self.tok.detokenize(ids, special)
    }

    /// llama_token_to_piece(id, special): empty for an id out of range.
    #[wasm_bindgen(js_name = tokenToPiece)]
    pub fn token_to_piece(&self, id: i32, special: bool) -> Vec<u8> {
        self.tok.token_to_piece(id, special).to_vec()
    }

    /// The token's attribute bits (llama_token_attr).
    #[wasm_bindgen(js_name = tokenAttr)]
    pub fn token_attr(&self, id: i32) -> u32 {
        self.tok.token_attr(id)
    }

    #[wasm_bindgen(getter, js_name = nTokens)]
    pub fn n_tokens(&self) -> u32 {
        self.tok.len() as u32
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ChatOptionsJs {
    #[serde(default)]
    tools: Option<serde_json::Value>,
    #[serde(default)]
    add_generation_prompt: bool,
    #[serde(default)]
    variables: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    template: Option<String>,
}

#[wasm_bindgen]
impl ModelHeader {
    /// The file's tokenizer; throws with one line when it cannot be built.
    pub fn tokenizer(&self) -> Result<TokenizerJs, JsError> {
        Tokenizer::from_gguf(self.gguf()?)
            .map(|tok| TokenizerJs { tok })
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Renders the chat template (`options.template`, else the file's) over `messages`;
    /// options: `{ tools, addGenerationPrompt, variables, template }`. Throws with one line.
    #[wasm_bindgen(js_name = renderChatTemplate)]
    pub fn render_chat_template(
        &self,
        messages: JsValue,
        options: JsValue,
    ) -> Result<String, JsError> {
        let messages: serde_json::Value = serde_wasm_bindgen::from_value(messages)
            .map_err(|e| JsError::new(&format!("messages: {e}")))?;
        let opts: ChatOptionsJs = if options.is_undefined() || options.is_null() {
            ChatOptionsJs::default()
        } else {
            serde_wasm_bindgen::from_value(options)
                .map_err(|e| JsError::new(&format!("options: {e}")))?
        };
        let source = match opts.template {
            Some(t) => t,
            None => file_template(self.gguf()?)
                .ok_or_else(|| JsError::new("no tokenizer.chat_template in the file"))?,
        };
        let chat = ChatOptions {
            tools: opts.tools.filter(|t| !t.is_null()),
            add_generation_prompt: opts.add_generation_prompt,
            variables: opts.variables,
            bos_token: token_text_for(self.gguf()?, "tokenizer.ggml.bos_token_id"),
            eos_token: token_text_for(self.gguf()?, "tokenizer.ggml.eos_token_id"),
            now: None,
        };
        render_chat_template(&source, &messages, &chat).map_err(super::js_error)
    }
}
