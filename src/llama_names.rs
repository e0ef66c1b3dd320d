//! Hugging Face llama tensor names as llama.cpp's converter names them in GGUF
//! (`model.layers.N.self_attn.q_proj.weight` -> `blk.N.attn_q.weight`, what `diff
//! --llama-names` compares by), the llama subset of gguf-py's `TensorNameMap` (checked against
//! it in the tests). Other names are kept.
//!
//! llama.cpp permutes the rows of Q and K per attention head when it converts a llama (its
//! `LlamaModel.permute`), so `attn_q` / `attn_k` values do not line up elementwise with the
//! Hugging Face tensors: [`rows_permuted`] names them, and `diff` does not compare their values.

/// `<stem>.<weight|bias>` -> GGUF name, or None when the name is not a llama tensor name.
pub fn gguf_name(hf: &str) -> Option<String> {
    let (stem, suffix) = hf.rsplit_once('.')?;
    if !matches!(suffix, "weight" | "bias") {
        return None;
    }
    let mapped = match stem {
        "model.embed_tokens" => "token_embd".to_string(),
        "model.norm" => "output_norm".to_string(),
        "lm_head" => "output".to_string(),
        _ => {
            let (block, part) = stem.strip_prefix("model.layers.")?.split_once('.')?;
            block.parse::<u64>().ok()?;
            let part = match part {
                "input_layernorm" => "attn_norm",
                "post_attention_layernorm" => "ffn_norm",
                "self_attn.q_proj" => "attn_q",
                "self_attn.k_proj" => "attn_k",
                "self_attn.v_proj" => "attn_v",
                "self_attn.o_proj" => "attn_output",
                "mlp.gate_proj" => "ffn_gate",
                "mlp.up_proj" => "ffn_up",
                "mlp.down_proj" => "ffn_down",
                _ => return None,
            };
            format!("blk.{block}.{part}")
        }
    };
    Some(format!("{mapped}.{suffix}"))
}

/// Whether llama.cpp permutes this GGUF tensor's rows (`blk.N.attn_q` / `attn_k`).
pub fn rows_permuted(gguf: &str) -> bool {
    let Some(rest) = gguf.strip_prefix("blk.") else {
        return false;
    };
    let Some((block, part)) = rest.split_once('.') else {
        return false;
    };
    block.parse::<u64>().is_ok()
        && matches!(
            part,
            "attn_q.weight" | "attn_q.bias" | "attn_k.weight" | "attn_k.bias"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fixtures/diff/expected.json's `llama_names`: gguf-py's TensorNameMap for llama.
    #[test]
    fn matches_gguf_py_tensor_name_map() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/diff/expected.json");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let cases = doc["llama_names"].as_array().unwrap();
        assert!(cases.len() > 50);
        for case in cases {
            let hf = case[0].as_str().unwrap();
            let want = case[1].as_str().unwrap_or(hf);
            assert_eq!(gguf_name(hf).as_deref().unwrap_or(hf), want, "{hf}");
        }
    }

    #[test]
    fn only_q_and_k_are_permuted() {
        assert!(rows_permuted("blk.0.attn_q.weight"));
        assert!(rows_permuted("blk.31.attn_k.bias"));
        assert!(!rows_permuted("blk.0.attn_v.weight"));
        assert!(!rows_permuted("blk.x.attn_q.weight"));
        assert!(!rows_permuted("token_embd.weight"));
    }
}
