//! The "need more bytes" estimate: cut inside a vocabulary, it predicts the arrays llama.cpp
//! writes after it (token types, merges or scores), so a range reader needs one more read.

mod common;

use common::Builder;
use gguf_lens::{parse, GgufFile, ParseStatus};

/// A header like llama.cpp writes: model name, tokens, token types, then merges (BPE) or
/// scores (SentencePiece).
fn vocab_header(model: &str, n: usize) -> Vec<u8> {
    let tokens: Vec<String> = (0..n).map(|i| format!("tok{i}")).collect();
    let mut b = Builder::new(3);
    b.header(0, 4)
        .kv_str("tokenizer.ggml.model", model.as_bytes());
    b.string(b"tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .u64(n as u64);
    for t in &tokens {
        b.string(t.as_bytes());
    }
    b.string(b"tokenizer.ggml.token_type")
        .u32(9)
        .u32(5)
        .u64(n as u64);
    for _ in 0..n {
        b.u32(1);
    }
    if model == "gpt2" {
        b.string(b"tokenizer.ggml.merges")
            .u32(9)
            .u32(8)
            .u64(n as u64);
        for t in &tokens {
            let (a, c) = t.split_at(2);
            b.string(format!("{a} {c}").as_bytes());
        }
    } else {
        b.string(b"tokenizer.ggml.scores")
            .u32(9)
            .u32(6)
            .u64(n as u64);
        for _ in 0..n {
            b.u32(0);
        }
    }
    b.build()
}

#[test]
fn estimate_inside_the_vocabulary_covers_the_arrays_after_it() {
    for model in ["gpt2", "llama"] {
        let bytes = vocab_header(model, 20_000);
        let header_len = GgufFile::from_bytes(&bytes).unwrap().header_len();
        let cut = bytes.len() / 10;
        let ParseStatus::NeedMore { at_least, estimate } =
            parse(&bytes[..cut], Some(bytes.len() as u64)).unwrap()
        else {
            panic!("{model}: a tenth of the header cannot be all of it")
        };
        assert!(
            at_least <= header_len,
            "{model}: at_least {at_least} > {header_len}"
        );
        let ratio = estimate as f64 / header_len as f64;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "{model}: estimate {estimate} vs {header_len}"
        );
        // Without the vocabulary heuristic the estimate would stop at the tokens array's end.
        assert!(estimate > header_len / 2, "{model}");
    }
}

#[test]
fn a_vocabulary_that_is_the_last_key_predicts_nothing_after_it() {
    let n = 20_000;
    let mut b = Builder::new(3);
    b.header(0, 1);
    b.string(b"tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .u64(n as u64);
    for i in 0..n {
        b.string(format!("tok{i}").as_bytes());
    }
    let bytes = b.build();
    let ParseStatus::NeedMore { estimate, .. } =
        parse(&bytes[..bytes.len() / 10], Some(bytes.len() as u64)).unwrap()
    else {
        panic!("a tenth of the header cannot be all of it")
    };
    let ratio = estimate as f64 / bytes.len() as f64;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "estimate {estimate} vs {}",
        bytes.len()
    );
}

/// `parse_owned` (the wasm path: the prefix becomes the header without a copy) gives what
/// `parse` gives, for every cut of a real fixture: the same NeedMore figures, the same error,
/// or the same header bytes and layout.
#[test]
fn parse_owned_agrees_with_parse_at_every_cut() {
    let whole = std::fs::read("fixtures/meta/arrays.gguf").unwrap();
    let size = Some(whole.len() as u64);
    for cut in 0..=whole.len() {
        let prefix = &whole[..cut];
        let borrowed = parse(prefix, size);
        let owned = gguf_lens::gguf::parse_owned(prefix.to_vec(), size);
        match (borrowed, owned) {
            (Ok(ParseStatus::Complete(a)), Ok(ParseStatus::Complete(b))) => {
                assert_eq!(a.header_len(), b.header_len(), "cut {cut}");
                assert_eq!(a.data_offset(), b.data_offset(), "cut {cut}");
                assert_eq!(a.tensors().len(), b.tensors().len(), "cut {cut}");
                assert_eq!(a.metadata().count(), b.metadata().count(), "cut {cut}");
            }
            (
                Ok(ParseStatus::NeedMore {
                    at_least: a,
                    estimate: e,
                }),
                Ok(ParseStatus::NeedMore {
                    at_least: b,
                    estimate: f,
                }),
            ) => assert_eq!((a, e), (b, f), "cut {cut}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "cut {cut}"),
            (a, b) => panic!("cut {cut}: parse gave {a:?}, parse_owned gave {b:?}"),
        }
    }
    // A prefix longer than the header: the header keeps only its own bytes.
    let ParseStatus::Complete(file) = gguf_lens::gguf::parse_owned(whole.clone(), size).unwrap()
    else {
        panic!("whole file");
    };
    let header_len = usize::try_from(file.header_len()).unwrap();
    assert!(header_len <= whole.len());
    let ParseStatus::Complete(again) = parse(&whole[..header_len], None).unwrap() else {
        panic!("the header alone is a whole header");
    };
    assert_eq!(again.header_len(), file.header_len());
}

/// One 60,000-byte string then 2^20 - 1 empty ones: an 8 MiB header whose first item, taken
/// as the average, predicts 63 GB.
fn long_first_string_header() -> Vec<u8> {
    let n: u64 = 1 << 20;
    let mut b = Builder::new(3);
    b.header(0, 1);
    b.string(b"tokenizer.ggml.tokens").u32(9).u32(8).u64(n);
    b.string(&vec![b'a'; 60_000]);
    for _ in 1..n {
        b.string(b"");
    }
    b.build()
}

#[test]
fn a_long_first_string_does_not_make_a_huge_estimate() {
    let bytes = long_first_string_header();
    let file_size = 20u64 << 30;
    let prefix = &bytes[..64 << 10];
    let ParseStatus::NeedMore { at_least, estimate } = parse(prefix, Some(file_size)).unwrap()
    else {
        panic!("64 KiB cannot hold an 8 MiB header")
    };
    assert!(at_least <= bytes.len() as u64);
    // Only what the bytes justify: the empty strings' length fields make at_least (the whole
    // header); the first string's length, taken as the average, would have made 63 GB.
    assert!(
        estimate <= at_least.max(prefix.len() as u64 * gguf_lens::gguf::MAX_ESTIMATE_GROWTH),
        "estimate {estimate} from a {} byte prefix (at_least {at_least})",
        prefix.len()
    );
    assert!(estimate <= 2 * bytes.len() as u64, "estimate {estimate}");
    // Never past the end of the file.
    let small = bytes.len() as u64 + 100;
    let ParseStatus::NeedMore { estimate, .. } = parse(prefix, Some(small)).unwrap() else {
        panic!("64 KiB cannot hold an 8 MiB header")
    };
    assert!(estimate <= small, "{estimate}");
}

/// `read_header` on a sparse 20 GiB file with that header reads about the header, counted
/// through the reader.
#[cfg(not(target_os = "wasi"))]
#[test]
fn read_header_reads_what_the_header_needs() {
    use std::io::{Read, Seek, SeekFrom, Write};
    struct Counting<R>(R, u64);
    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1 += n as u64;
            Ok(n)
        }
    }
    impl<R: Seek> Seek for Counting<R> {
        fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
            self.0.seek(to)
        }
    }
    let bytes = long_first_string_header();
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&bytes).unwrap();
    let size = 20u64 << 30;
    f.set_len(size).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    let mut r = Counting(f, 0);
    let file = gguf_lens::gguf::read_header(&mut r, size).unwrap();
    assert_eq!(file.header_len(), bytes.len() as u64);
    assert!(
        r.1 <= 3 * bytes.len() as u64,
        "read {} bytes for a {} byte header",
        r.1,
        bytes.len()
    );
}
