//! The tensor-mix guess on the sample files llama.cpp's quantizer wrote (their
//! `general.file_type` was set by llama-quantize, so it is the oracle here).

use gguf_lens::effective_ftype::guess_file_type_of;
use gguf_lens::gguf::GgufFile;
use gguf_lens::model::Summary;

fn guess_and_label(path: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let bytes = std::fs::read(path).unwrap();
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let summary = Summary::of_gguf(&file);
    let detail = summary.gguf().unwrap();
    (
        guess_file_type_of(&file),
        detail.file_type,
        detail.file_type_by_tensor_mix,
    )
}

#[test]
fn sample_files_guess_their_own_file_type() {
    for (path, ftype) in [
        ("fixtures/sample/tiny-llama-Q4_K_M.gguf", 15),
        ("fixtures/sample/tiny-llama-Q8_0.gguf", 7),
    ] {
        let (guess, label, disagreement) = guess_and_label(path);
        assert_eq!(label, Some(ftype), "{path}");
        assert_eq!(guess, Some(ftype), "{path}");
        assert_eq!(disagreement, None, "{path}: shown only when it disagrees");
    }
}
