//! The JSON files read beside a checkpoint, as the CLI and npm read them: the shard index
//! (`ShardIndex::from_bytes`, then `shards` and `shard_of` as a front end resolves shards), the
//! GPTQ configs (`quantize_config.json`, `config.json`'s `quantization_config`), and llama.cpp
//! split names (`split_paths`) of the same bytes as a path.
//!
//! Property: every shard name an index gives is a plain file name (issue #28's rule, restated
//! here rather than calling the library's own check): not empty, not dots only, no separator,
//! no `:` (a URL scheme or a drive), no `?` or `#`, no `%` escape, no control character. The
//! same for every split name `split_paths` gives.
#![no_main]

use gguf_lens::gptq::QuantConfig;
use gguf_lens::model::split_paths;
use gguf_lens::safetensors::ShardIndex;
use libfuzzer_sys::fuzz_target;

fn check_name(name: &str) {
    assert!(
        !name.is_empty()
            && !name.chars().all(|c| c == '.')
            && !name
                .chars()
                .any(|c| "/\\:?#%".contains(c) || c.is_control()),
        "shard {name:?} is not a plain file name"
    );
}

fuzz_target!(|data: &[u8]| {
    match ShardIndex::from_bytes(data) {
        Ok(index) => {
            let shards = index.shards();
            for (i, s) in shards.iter().enumerate() {
                check_name(s);
                assert!(!shards[..i].contains(s), "shards are distinct");
            }
            for (tensor, shard) in index.weight_map() {
                assert!(shards.contains(&shard.as_str()), "every shard is listed");
                assert_eq!(index.shard_of(tensor), Some(shard.as_str()));
            }
            let _ = index.metadata().get("total_size");
        }
        Err(e) => {
            if let Some(at) = e.offset {
                assert!(
                    at <= data.len() as u64,
                    "error offset {at} inside the input"
                );
            }
            assert!(!e.to_string().contains('\n'), "an error is one line");
        }
    }
    let _ = QuantConfig::from_quantize_config(data);
    let _ = QuantConfig::from_config_json(data);
    if data.len() <= 256 {
        let path = String::from_utf8_lossy(data);
        if let Ok(Some(paths)) = split_paths(&path) {
            assert!(!paths.is_empty());
            for p in &paths {
                let name = std::path::Path::new(p).file_name().and_then(|n| n.to_str());
                check_name(name.expect("a split path names a file"));
            }
        }
    }
});
