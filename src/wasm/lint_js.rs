//! Lint for JS: one file's report, or a split model's over all its shards (the core's checks).

use wasm_bindgen::prelude::*;

use super::{to_js, ModelHeader};
use crate::gguf::GgufFile;
use crate::lint::{lint, lint_model, Report};
use crate::model::GgufModel;

#[wasm_bindgen]
impl ModelHeader {
    /// `{ findings: [{code, severity, message, offset?, key?, tensor?, shard?}], errors, warnings,
    /// infos }`, errors first.
    pub fn lint(&self) -> Result<JsValue, JsError> {
        Ok(to_js(&Report::new(lint(self.gguf()?))))
    }
}

/// A split model's lint: add every shard in order, then `finish()`.
#[wasm_bindgen]
#[derive(Default)]
pub struct LintShards {
    shards: Vec<GgufFile>,
}

#[wasm_bindgen]
impl LintShards {
    #[wasm_bindgen(constructor)]
    pub fn new() -> LintShards {
        LintShards::default()
    }

    pub fn add(&mut self, shard: &ModelHeader) -> Result<(), JsError> {
        self.shards.push(shard.gguf()?.clone());
        Ok(())
    }

    /// The report over every shard (a shard set llama.cpp would refuse is a finding too).
    pub fn finish(&mut self) -> Result<JsValue, JsError> {
        let shards = std::mem::take(&mut self.shards);
        let model = GgufModel::from_shards(shards).map_err(super::js_error)?;
        Ok(to_js(&Report::new(lint_model(&model))))
    }
}
