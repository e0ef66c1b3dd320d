//! Editing and hashing for JS: an edit plan (new header + pieces of the input) that the wrapper
//! turns into a Blob or a stream, and a hasher fed tensor by tensor.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::{to_js, ModelHeader};
use crate::edit::{from_json, plan, EditPlan, Edits};
use crate::hash::{Algorithms, Hasher};

/// One `set`: a JSON-like value and, optionally, its spec type name (for an array, its items').
#[derive(Deserialize)]
struct SetJs {
    key: String,
    value: serde_json::Value,
    #[serde(rename = "type", default)]
    ty: Option<String>,
}

#[derive(Deserialize)]
struct EditsJs {
    #[serde(default)]
    set: Vec<SetJs>,
    #[serde(default)]
    remove: Vec<String>,
}

/// The edited file: `header` bytes, then `pieces` ({from, len}: bytes of the input at `from`,
/// or `len` zeros when `from` is null), `len` bytes in all (`len` everywhere for a count, as
/// metadata arrays' `len`).
#[wasm_bindgen]
pub struct EditPlanJs {
    plan: EditPlan,
}

#[wasm_bindgen]
impl EditPlanJs {
    #[wasm_bindgen(getter)]
    pub fn header(&self) -> Vec<u8> {
        self.plan.header.clone()
    }

    #[wasm_bindgen(getter)]
    pub fn pieces(&self) -> JsValue {
        to_js(&self.plan.pieces)
    }

    #[wasm_bindgen(getter)]
    #[allow(clippy::len_without_is_empty)] // a size getter for JS, not a collection
    pub fn len(&self) -> f64 {
        self.plan.len as f64
    }
}

#[wasm_bindgen]
impl ModelHeader {
    /// Plans an edit: `edits` is `{ set: [{key, value, type?}], remove: [key] }`; `fileSize` the
    /// input's length. Throws with one line naming the key when an edit is invalid.
    #[wasm_bindgen(js_name = editPlan)]
    pub fn edit_plan(&self, edits: JsValue, file_size: f64) -> Result<EditPlanJs, JsError> {
        let given: EditsJs = serde_wasm_bindgen::from_value(edits)
            .map_err(|e| JsError::new(&format!("edits: {e}")))?;
        let mut edits = Edits {
            remove: given.remove,
            ..Default::default()
        };
        for set in given.set {
            let value = from_json(self.gguf()?, &set.key, &set.value, set.ty.as_deref())
                .map_err(super::js_error)?;
            edits.set.push((set.key, value));
        }
        let plan = plan(self.gguf()?, file_size as u64, &edits).map_err(super::js_error)?;
        Ok(EditPlanJs { plan })
    }
}

/// llama-gguf-hash's digests, fed tensor by tensor.
#[wasm_bindgen]
pub struct TensorHasher {
    inner: Option<Hasher>,
}

#[wasm_bindgen]
impl TensorHasher {
    #[wasm_bindgen(constructor)]
    pub fn new(
        xxh64: bool,
        sha1: bool,
        sha256: bool,
        uuid: bool,
        per_tensor: bool,
    ) -> TensorHasher {
        let algorithms = Algorithms {
            xxh64,
            sha1,
            sha256,
            uuid,
        }
        .or_default();
        TensorHasher {
            inner: Some(Hasher::new(algorithms, per_tensor)),
        }
    }

    /// The next bytes of the current tensor.
    pub fn update(&mut self, bytes: &[u8]) {
        if let Some(h) = self.inner.as_mut() {
            h.update(bytes);
        }
    }

    /// Ends the current tensor.
    #[wasm_bindgen(js_name = endTensor)]
    pub fn end_tensor(&mut self, name: &str) {
        if let Some(h) = self.inner.as_mut() {
            h.end_tensor(name);
        }
    }

    /// `{ tensors: [{name, xxh64?, sha1?, sha256?}], model: {xxh64?, sha1?, sha256?, uuid?},
    /// lines }`, `lines` being llama-gguf-hash's output for `fileName`. Once only.
    pub fn finish(&mut self, file_name: &str) -> Result<JsValue, JsError> {
        let report = self
            .inner
            .take()
            .ok_or_else(|| JsError::new("the hasher has finished already"))?
            .finish();
        #[derive(serde::Serialize)]
        struct Out<'a> {
            tensors: &'a [crate::hash::TensorDigests],
            model: &'a crate::hash::Digests,
            lines: String,
        }
        Ok(to_js(&Out {
            tensors: &report.tensors,
            model: &report.model,
            lines: report.to_lines(file_name),
        }))
    }
}
