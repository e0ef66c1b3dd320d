//! What the CLI tests of the quantized safetensors formats share: their fixtures' paths, the
//! binary's runs, and a tensor's stored bytes in a fixture's expected.safetensors (the header
//! parsed here, not by gguf-lens).

use std::path::{Path, PathBuf};
use std::process::Output;

/// `fixtures/<dir>/<name>`.
pub fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir)
        .join(name)
}

pub fn run(args: &[&str]) -> Output {
    super::gguf_lens_command().args(args).output().unwrap()
}

/// The standard output of a run that must have succeeded (its standard error otherwise).
pub fn ok_bytes(output: &Output) -> Vec<u8> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout.clone()
}

pub fn ok(output: &Output) -> String {
    String::from_utf8(ok_bytes(output)).unwrap()
}

/// Little-endian f32s as their bits (compared bit for bit).
pub fn f32_bits(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// `name`'s stored bytes in the safetensors file at `path`.
pub fn stored_bytes(path: &Path, name: &str) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let offsets = header[name]["data_offsets"].as_array().unwrap();
    let (a, b) = (
        offsets[0].as_u64().unwrap() as usize,
        offsets[1].as_u64().unwrap() as usize,
    );
    bytes[8 + n + a..8 + n + b].to_vec()
}
