//! Oracle test: every ggml type's dequantization, bit for bit against llama.cpp's ggml.
//!
//! `fixtures/dequant/manifest.json` lists, per type, two tensors ("random" and "special") in a
//! GGUF file, where their bytes are, and a raw little-endian f32 file with what ggml's
//! `to_float` (or the independent oracle named in the entry) produced for them. The fixtures are
//! made by `fixtures/generate.py`; see `fixtures/README.md`. This test never parses GGUF: it
//! slices the bytes at the manifest's `data_offset`, so it checks the kernels alone.
//!
//! Set `ORACLE_TYPES=Q4_K,IQ2_S` to check only some types.

mod common;

use common::{is_arch_default_nan, ARM_DEFAULT_NAN, X86_DEFAULT_NAN};

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use gguf_lens::{dequantize_with, GgmlType, Kernel};
use serde_json::Value;

/// Live ggml types; the manifest must cover at least this many.
const MIN_TYPES: usize = 35;

/// What the output buffer holds before the kernel runs: a NaN no fixture expects, so a kernel
/// that leaves values unwritten cannot pass.
const SENTINEL: u32 = 0x7FBA_DBAD;

/// One manifest entry.
struct Case {
    file: String,
    tensor: String,
    ty: String,
    data_offset: usize,
    n_bytes: usize,
    n_elements: usize,
    expected: String,
    oracle: String,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("dequant")
}

fn field<'a>(entry: &'a Value, key: &str) -> &'a Value {
    entry
        .get(key)
        .unwrap_or_else(|| panic!("manifest entry without {key:?}: {entry}"))
}

fn string(entry: &Value, key: &str) -> String {
    field(entry, key)
        .as_str()
        .unwrap_or_else(|| panic!("manifest {key:?} is not a string: {entry}"))
        .to_string()
}

fn number(entry: &Value, key: &str) -> usize {
    let n = field(entry, key)
        .as_u64()
        .unwrap_or_else(|| panic!("manifest {key:?} is not an unsigned integer: {entry}"));
    usize::try_from(n).expect("manifest number fits usize")
}

fn load_manifest() -> Vec<Case> {
    let path = fixture_dir().join("manifest.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (regenerate with fixtures/generate.py)",
            path.display()
        )
    });
    let json: Value = serde_json::from_str(&text).expect("manifest.json is valid JSON");
    let entries = json.as_array().expect("manifest.json is a JSON array");
    entries
        .iter()
        .map(|e| Case {
            file: string(e, "file"),
            tensor: string(e, "tensor"),
            ty: string(e, "type"),
            data_offset: number(e, "data_offset"),
            n_bytes: number(e, "n_bytes"),
            n_elements: number(e, "n_elements"),
            expected: string(e, "expected"),
            oracle: string(e, "oracle"),
        })
        .collect()
}

/// Fails loudly unless the manifest covers every live type (at least `MIN_TYPES`).
fn assert_all_types_present(cases: &[Case]) {
    let types: BTreeSet<&str> = cases.iter().map(|c| c.ty.as_str()).collect();
    assert!(
        types.len() >= MIN_TYPES,
        "fixtures/dequant/manifest.json covers only {} ggml types, expected at least {MIN_TYPES}: \
         {types:?}",
        types.len()
    );
    let missing: Vec<&str> = GgmlType::ALL
        .iter()
        .map(|t| t.name())
        .filter(|n| !types.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "manifest has no fixture for {missing:?}"
    );
}

fn read_expected_bits(case: &Case) -> Result<Vec<u32>, String> {
    let path = fixture_dir().join(&case.expected);
    let raw = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if raw.len() != case.n_elements * 4 {
        return Err(format!(
            "{} holds {} bytes, manifest says {} elements",
            case.expected,
            raw.len(),
            case.n_elements
        ));
    }
    Ok(raw
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn tensor_bytes(case: &Case) -> Result<Vec<u8>, String> {
    let path = fixture_dir().join(&case.file);
    let file = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let end = case.data_offset + case.n_bytes;
    file.get(case.data_offset..end)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| {
            format!(
                "{}: bytes {}..{end} are past its end ({})",
                case.file,
                case.data_offset,
                file.len()
            )
        })
}

/// Dequantizes one fixture tensor with `kernel` and compares bit for bit. Returns how many
/// values differ only by the architecture's default NaN (always 0 off aarch64).
fn check(case: &Case, kernel: Kernel) -> Result<usize, String> {
    let ty = GgmlType::from_name(&case.ty)
        .ok_or_else(|| format!("GgmlType::from_name({:?}) is None", case.ty))?;
    let bytes = tensor_bytes(case)?;
    let expected = read_expected_bits(case)?;
    let mut out = vec![f32::from_bits(SENTINEL); expected.len()];
    dequantize_with(kernel, ty, &bytes, &mut out)
        .map_err(|e| format!("dequantize returned an error: {e}"))?;
    let differ = |i: &usize| out[*i].to_bits() != expected[*i];
    let arch_nans = (0..expected.len())
        .filter(differ)
        .filter(|&i| is_arch_default_nan(out[i].to_bits(), expected[i]))
        .count();
    let bad: Vec<usize> = (0..expected.len())
        .filter(differ)
        .filter(|&i| !is_arch_default_nan(out[i].to_bits(), expected[i]))
        .collect();
    match bad.first() {
        None => Ok(arch_nans),
        Some(&i) => Err(format!(
            "{} of {} values differ; first at index {i}: got 0x{:08X} ({:e}), expected 0x{:08X} \
             ({:e})",
            bad.len(),
            expected.len(),
            out[i].to_bits(),
            out[i],
            expected[i],
            f32::from_bits(expected[i]),
        )),
    }
}

fn selected_types() -> Option<BTreeSet<String>> {
    let list = std::env::var("ORACLE_TYPES").ok()?;
    Some(
        list.split(',')
            .map(|s| s.trim().to_ascii_uppercase())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

#[test]
fn dequantize_matches_ggml_bit_for_bit() {
    let cases = load_manifest();
    assert_all_types_present(&cases);
    let only = selected_types();
    let mut failures = Vec::new();
    let mut arch_nan_notes = Vec::new();
    let mut checked = 0;
    for case in &cases {
        if only
            .as_ref()
            .is_some_and(|o| !o.contains(&case.ty.to_ascii_uppercase()))
        {
            continue;
        }
        // Every kernel this machine can run: scalar and each SIMD one.
        for kernel in Kernel::available() {
            checked += 1;
            let result = std::panic::catch_unwind(|| check(case, kernel))
                .unwrap_or_else(|_| Err("the kernel panicked".to_string()));
            match result {
                Ok(0) => {}
                Ok(n) => arch_nan_notes.push(format!(
                    "{:8} {:8} {:8} {n} values",
                    case.ty,
                    case.tensor,
                    kernel.name()
                )),
                Err(msg) => failures.push(format!(
                    "{:8} {:8} {:8} {msg} [oracle: {}]",
                    case.ty,
                    case.tensor,
                    kernel.name(),
                    case.oracle
                )),
            }
        }
    }
    assert!(checked > 0, "ORACLE_TYPES selected no fixture");
    if !arch_nan_notes.is_empty() {
        // Reported, not failed: ggml on this architecture would give the same values.
        eprintln!(
            "{} fixture tensors hold x86's default NaN {X86_DEFAULT_NAN:#010x} where this \
             architecture makes {ARM_DEFAULT_NAN:#010x} (invalid operations such as 0*inf):\n{}",
            arch_nan_notes.len(),
            arch_nan_notes.join("\n")
        );
    }
    if !failures.is_empty() {
        let types: BTreeSet<&str> = failures
            .iter()
            .map(|f| f.split(' ').next().unwrap())
            .collect();
        panic!(
            "{} of {checked} fixture tensors ({} types) differ from ggml:\n{}",
            failures.len(),
            types.len(),
            failures.join("\n")
        );
    }
}
