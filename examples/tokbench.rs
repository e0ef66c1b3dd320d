//! Quick tokenizer timing: open time and MB/s on a mixed text. `cargo run --release --example tokbench FILE`
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let bytes = std::fs::read(&path).unwrap();
    let file = gguf_lens::GgufFile::from_bytes(&bytes).unwrap();
    let t = Instant::now();
    let tok = gguf_lens::tokenizer::Tokenizer::from_gguf(&file).unwrap();
    let open = t.elapsed();
    let t = Instant::now();
    let first = tok.tokenize(b"Hello world", true, false);
    let first_t = t.elapsed();
    let unit =
        "The quick brown fox jumps over the lazy dog. fn main() { println!(\"{}\", x + 1); }\n\
                你好，世界！こんにちは 안녕하세요 🙂🚀 naïve café Ärger 12345 3.14\n";
    let mut text = String::new();
    while text.len() < 1 << 20 {
        text.push_str(unit);
    }
    let t = Instant::now();
    let ids = tok.tokenize(text.as_bytes(), true, false);
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{path}: open {:?}, first tokenize {:?} ({} ids), 1 MiB -> {} ids in {:.3}s = {:.1} MB/s",
        open,
        first_t,
        first.len(),
        ids.len(),
        dt,
        text.len() as f64 / dt / 1e6
    );
}
