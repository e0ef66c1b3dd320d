//! `RowReader`: the wasm side of readTensor on workers. A worker reads a tensor's bytes into the
//! reader's byte buffer (in wasm memory, filled in place by JS), dequantizes them slice by slice
//! into its small value buffer, and copies each slice from wasm memory into the caller's shared
//! array (the one copy): the slice stays in cache between the kernel's writes and the copy.

use wasm_bindgen::prelude::*;

use super::{js_error, whole_rows, ModelHeader};

/// Largest buffer a reader holds (either one).
const MAX_BYTES: u64 = 1 << 30;

#[wasm_bindgen]
pub struct RowReader {
    bytes: Vec<u8>,
    values: Vec<f32>,
}

#[wasm_bindgen]
impl RowReader {
    /// A reader with `bytes` bytes for the quantized rows and room for `values` f32 values
    /// (each at most 1 GiB).
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: f64, values: f64) -> Result<RowReader, JsError> {
        let (bytes, values) = (bytes as u64, values as u64);
        if bytes > MAX_BYTES || values.saturating_mul(4) > MAX_BYTES {
            return Err(JsError::new(&format!(
                "a reader of {bytes} bytes and {values} values is over 1 GiB"
            )));
        }
        // Both fit in 1 GiB, so in usize on wasm32.
        Ok(RowReader {
            bytes: vec![0; bytes as usize],
            values: vec![0.0; values as usize],
        })
    }

    /// The address of the byte buffer in wasm memory (JS reads the file there).
    #[wasm_bindgen(js_name = bytesPtr)]
    pub fn bytes_ptr(&self) -> u32 {
        self.bytes.as_ptr() as usize as u32
    }

    /// The address of the value buffer in wasm memory (JS copies the values from there).
    #[wasm_bindgen(js_name = valuesPtr)]
    pub fn values_ptr(&self) -> u32 {
        self.values.as_ptr() as usize as u32
    }

    /// Dequantizes the whole rows of tensor `name` in bytes `offset..offset + len` of the byte
    /// buffer into the start of the value buffer; returns how many values it wrote.
    pub fn dequantize(
        &mut self,
        header: &ModelHeader,
        name: &str,
        offset: u32,
        len: u32,
    ) -> Result<u32, JsError> {
        let tensor = header.gguf()?.tensor(name).map_err(js_error)?;
        let (start, end) = (
            offset as usize,
            (offset as usize).saturating_add(len as usize),
        );
        let bytes = self.bytes.get(start..end).ok_or_else(|| {
            JsError::new(&format!(
                "bytes {start}..{end} asked of a {}-byte reader",
                self.bytes.len()
            ))
        })?;
        let rows = whole_rows(name, tensor.row_bytes(), bytes.len())?;
        let n = rows.saturating_mul(tensor.row_len());
        let held = self.values.len();
        let out = usize::try_from(n)
            .ok()
            .and_then(|n| self.values.get_mut(..n))
            .ok_or_else(|| {
                JsError::new(&format!(
                    "{rows} rows of {name} need {n} values, the reader holds {held}"
                ))
            })?;
        header.dequantize_to(tensor, bytes, out)?;
        // n ≤ values.len() ≤ 2^28.
        Ok(n as u32)
    }
}
