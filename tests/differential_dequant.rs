//! Seeded differential cases (fixtures/make_differential.py): random tensors of every ggml type
//! with random shapes and scale fields (ordinary, tiny, subnormal, NaN, Inf, max), drawn here from
//! the committed seed with the same splitmix64 generator, dequantized by every kernel this
//! machine runs, whole and row by row, and compared with a digest of ggml's output.
//! `GGUF_LENS_DIFFERENTIAL=FILE` checks another cases file (scripts/soak.sh) and prints the
//! failing case numbers on stdout, one a line.

use gguf_lens::{dequantize_with, GgmlType, Kernel};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const CANONICAL_NAN: u32 = 0x7FC0_0000;

/// The generator's twin: see `Draw` in fixtures/make_differential.py.
struct Draw(u64);

impl Draw {
    fn new(seed: u64, case: u64) -> Draw {
        Draw(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

struct Layout {
    /// Per type: (kind, byte offset) of each scale field in a block.
    scale_fields: Vec<(String, Vec<(String, usize)>)>,
    f16_specials: Vec<u64>,
    f32_specials: Vec<u64>,
}

impl Layout {
    fn fields(&self, ty: &str) -> &[(String, usize)] {
        self.scale_fields
            .iter()
            .find(|(name, _)| name == ty)
            .map_or(&[], |(_, f)| f.as_slice())
    }

    fn scale_bits(&self, d: &mut Draw, kind: &str) -> u64 {
        let r = d.next();
        let which = r % 4;
        match kind {
            "f16" | "iq1m" => {
                let sign = (r >> 8) & 1;
                let mantissa = (r >> 9) & 0x3FF;
                let exponent = match which {
                    0 => 7 + (r >> 19) % 10,
                    1 => 1 + (r >> 19) % 6,
                    2 => 0,
                    _ => {
                        let s = &self.f16_specials;
                        return s[((r >> 19) % s.len() as u64) as usize];
                    }
                };
                (sign << 15) | (exponent << 10) | mantissa
            }
            "f32" => {
                let sign = (r >> 8) & 1;
                let mantissa = (r >> 9) & 0x7F_FFFF;
                let exponent = match which {
                    0 => 119 + (r >> 32) % 10,
                    1 => 1 + (r >> 32) % 30,
                    2 => 0,
                    _ => {
                        let s = &self.f32_specials;
                        return s[((r >> 32) % s.len() as u64) as usize];
                    }
                };
                (sign << 31) | (exponent << 23) | mantissa
            }
            _ => (r >> 8) & 0xFF,
        }
    }
}

fn set_scale(block: &mut [u8], kind: &str, offset: usize, bits: u64) {
    match kind {
        "f16" => block[offset..offset + 2].copy_from_slice(&(bits as u16).to_le_bytes()),
        "f32" => block[offset..offset + 4].copy_from_slice(&(bits as u32).to_le_bytes()),
        "e8m0" | "ue4m3" => block[offset] = bits as u8,
        "iq1m" => {
            for i in 0..4 {
                let at = offset + 2 * i + 1;
                block[at] = (block[at] & 0x0F) | ((((bits >> (4 * i)) & 0xF) as u8) << 4);
            }
        }
        other => panic!("unknown scale kind {other}"),
    }
}

/// Rows, elements per row and bytes of one case, as make_differential.py's `case_input`.
fn case_input(layout: &Layout, seed: u64, case: u64, ty: GgmlType) -> (usize, usize, Vec<u8>) {
    let (block, size) = (ty.block_size() as usize, ty.type_size() as usize);
    let mut d = Draw::new(seed, case);
    let rows = 1 + d.below(3) as usize;
    let units = if block == 1 {
        1 + d.below(67)
    } else {
        1 + d.below(9)
    } as usize;
    let n_blocks = rows * units;
    let mut data = d.bytes(n_blocks * size);
    for b in data.chunks_exact_mut(size) {
        for (kind, offset) in layout.fields(ty.name()) {
            let bits = layout.scale_bits(&mut d, kind);
            set_scale(b, kind, *offset, bits);
        }
    }
    (rows, units * block, data)
}

fn digest(values: &[f32]) -> String {
    let mut hash = Sha256::new();
    for v in values {
        let bits = if v.is_nan() {
            CANONICAL_NAN
        } else {
            v.to_bits()
        };
        hash.update(bits.to_le_bytes());
    }
    hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn load(path: &Path) -> (u64, Layout, Vec<Value>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).expect("cases file is JSON");
    let seed = doc["seed"].as_u64().expect("seed");
    let scale_fields = doc["scale_fields"]
        .as_object()
        .expect("scale_fields")
        .iter()
        .map(|(ty, fields)| {
            let fields = fields
                .as_array()
                .expect("fields")
                .iter()
                .map(|f| {
                    (
                        f[0].as_str().expect("kind").to_string(),
                        f[1].as_u64().expect("offset") as usize,
                    )
                })
                .collect();
            (ty.clone(), fields)
        })
        .collect();
    let specials = |kind: &str| -> Vec<u64> {
        doc["special_bits"][kind]
            .as_array()
            .expect("special_bits")
            .iter()
            .map(|v| v.as_u64().expect("bits"))
            .collect()
    };
    let layout = Layout {
        scale_fields,
        f16_specials: specials("f16"),
        f32_specials: specials("f32"),
    };
    let cases = doc["cases"].as_array().expect("cases").clone();
    (seed, layout, cases)
}

/// The failures of one cases file: (case number, what differed).
fn check_file(path: &Path) -> (usize, Vec<(u64, String)>) {
    let (seed, layout, cases) = load(path);
    let mut failures = Vec::new();
    for case in &cases {
        let number = case[0].as_u64().expect("case number");
        let name = case[1].as_str().expect("type");
        let (rows, row_elements) = (
            case[2].as_u64().unwrap() as usize,
            case[3].as_u64().unwrap() as usize,
        );
        let expected = case[4].as_str().expect("digest");
        let ty = GgmlType::from_name(name).unwrap_or_else(|| panic!("unknown type {name}"));
        let (r, e, bytes) = case_input(&layout, seed, number, ty);
        assert_eq!(
            (r, e),
            (rows, row_elements),
            "case {number}: the generator drew another shape"
        );
        let row_bytes = bytes.len() / rows;
        for kernel in Kernel::available() {
            let mut whole = vec![f32::NAN; rows * row_elements];
            let mut by_rows = vec![f32::NAN; rows * row_elements];
            let mut problems = Vec::new();
            if let Err(err) = dequantize_with(kernel, ty, &bytes, &mut whole) {
                problems.push(format!("whole: {err}"));
            }
            for (row, out) in by_rows.chunks_exact_mut(row_elements).enumerate() {
                let input = &bytes[row * row_bytes..(row + 1) * row_bytes];
                if let Err(err) = dequantize_with(kernel, ty, input, out) {
                    problems.push(format!("row {row}: {err}"));
                }
            }
            for (how, out) in [("whole", &whole), ("row by row", &by_rows)] {
                let got = digest(out);
                if got != expected {
                    problems.push(format!("{how}: digest {got}, ggml {expected}"));
                }
            }
            if !problems.is_empty() {
                failures.push((
                    number,
                    format!(
                        "case {number} ({name}, {rows}×{row_elements}, {}): {}",
                        kernel.name(),
                        problems.join("; ")
                    ),
                ));
            }
        }
    }
    (cases.len(), failures)
}

fn fixture_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/differential");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("dequant") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn dequantize_matches_ggml_on_seeded_random_tensors() {
    let files = match std::env::var_os("GGUF_LENS_DIFFERENTIAL") {
        Some(path) => vec![PathBuf::from(path)],
        None => fixture_files(),
    };
    let mut total = 0;
    let mut all_failures = Vec::new();
    for file in &files {
        let (n, failures) = check_file(file);
        total += n;
        all_failures.extend(failures);
    }
    assert!(
        total >= 2000 || std::env::var_os("GGUF_LENS_DIFFERENTIAL").is_some(),
        "only {total} cases"
    );
    if std::env::var_os("GGUF_LENS_DIFFERENTIAL").is_some() {
        let mut numbers: Vec<u64> = all_failures.iter().map(|(n, _)| *n).collect();
        numbers.dedup();
        for n in numbers {
            println!("{n}");
        }
    }
    let shown: Vec<&str> = all_failures
        .iter()
        .take(20)
        .map(|(_, s)| s.as_str())
        .collect();
    assert!(
        all_failures.is_empty(),
        "{} (case, kernel) pairs of {total} cases differ from ggml:\n{}",
        all_failures.len(),
        shown.join("\n")
    );
}
