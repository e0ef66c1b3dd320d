//! Lint for JS: a file's report, or a split model's over all its shards (a joined handle; the
//! core's checks).

use wasm_bindgen::prelude::*;

use super::{to_js, ModelHeader};
use crate::lint::{lint_model, Report};

#[wasm_bindgen]
impl ModelHeader {
    /// `{ findings: [{code, severity, message, offset?, key?, tensor?, shard?}], errors, warnings,
    /// infos }`, errors first.
    pub fn lint(&self) -> Result<JsValue, JsError> {
        Ok(to_js(&Report::new(lint_model(self.gguf_model()?))))
    }
}
