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

/// Tokenizes every text in every mode and compares with `per_text` (per text, per mode: the ids
/// as one space-separated string). The first `keep` mismatches go to `failures`, labelled
/// `name`. Returns (mismatches, cases).
pub fn check_ids(
    name: &str,
    tok: &gguf_lens::tokenizer::Tokenizer,
    texts: &[Vec<u8>],
    modes: &[(bool, bool)],
    per_text: &[serde_json::Value],
    keep: usize,
    failures: &mut Vec<String>,
) -> (usize, usize) {
    let (mut bad, mut total) = (0, 0);
    for (text, per_mode) in texts.iter().zip(per_text) {
        for (&(add, parse), want) in modes.iter().zip(per_mode.as_array().unwrap()) {
            let want: Vec<i32> = want
                .as_str()
                .unwrap()
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let got = tok.tokenize(text, add, parse);
            total += 1;
            if got != want {
                bad += 1;
                if bad <= keep {
                    failures.push(format!(
                        "{name} add_special={add} parse_special={parse} {:?}\n  want {want:?}\n  got  {got:?}",
                        String::from_utf8_lossy(text)
                    ));
                }
            }
        }
    }
    (bad, total)
}

/// Compares `token_to_piece` with `pieces` (`{id: [hex with special, hex without]}`); the first
/// three mismatches go to `failures`. Returns (mismatches, pieces compared).
pub fn check_pieces(
    name: &str,
    tok: &gguf_lens::tokenizer::Tokenizer,
    pieces: &serde_json::Map<String, serde_json::Value>,
    failures: &mut Vec<String>,
) -> (usize, usize) {
    let mut bad = 0;
    for (id, pair) in pieces {
        let id: i32 = id.parse().unwrap();
        for (special, want) in [true, false].into_iter().zip(pair.as_array().unwrap()) {
            let got: String = tok
                .token_to_piece(id, special)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            if got != want.as_str().unwrap() {
                bad += 1;
                if bad <= 3 {
                    failures.push(format!(
                        "{name} token_to_piece({id}, special={special}): want {want}, got {got}"
                    ));
                }
            }
        }
    }
    (bad, 2 * pieces.len())
}
