//! The tokenizer oracle fixtures' shared fields (fixtures/make_tokenizer.py and the generators
//! after it): `texts` (each `{"text"}` or, for bytes that are not UTF-8, `{"hex"}`) and `modes`
//! (`{"add_special", "parse_special"}`).

/// The bytes of every entry of `doc["texts"]`.
pub fn texts(doc: &serde_json::Value) -> Vec<Vec<u8>> {
    doc["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(text_bytes)
        .collect()
}

/// One text entry's bytes.
pub fn text_bytes(t: &serde_json::Value) -> Vec<u8> {
    match (t.get("text"), t.get("hex")) {
        (Some(s), _) => s.as_str().unwrap().as_bytes().to_vec(),
        (_, Some(h)) => {
            let h = h.as_str().unwrap();
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        }
        _ => panic!("text entry without text or hex"),
    }
}

/// `(add_special, parse_special)` of every entry of `doc["modes"]`.
pub fn modes(doc: &serde_json::Value) -> Vec<(bool, bool)> {
    doc["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["add_special"].as_bool().unwrap(),
                m["parse_special"].as_bool().unwrap(),
            )
        })
        .collect()
}
