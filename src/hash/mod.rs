//! Hashes of a GGUF's tensor data as llama.cpp's `llama-gguf-hash` (and gguf-py's
//! `gguf_hash.py`) define them: every tensor's bytes (`ggml_nbytes`, no padding) in tensor-info
//! order; per tensor and over the concatenation; xxh64 (seed 0), sha1, sha256, and a UUIDv5 whose
//! sha1 starts with llama.cpp's namespace. [`HashReport::to_lines`] prints them as
//! `llama-gguf-hash` does, line for line.
//!
//! Each digest is one [`Lane`]; natively the lanes are spread over threads
//! ([`threads::hash_file`]), in wasm one [`Hasher`] is fed chunk by chunk.

mod lane;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub mod threads;

pub use lane::{Algorithm, Lane};

use serde::Serialize;

/// llama.cpp's UUID namespace: `uuid5(NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp')`.
pub const UUID_NAMESPACE: [u8; 16] = [
    0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d, 0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5,
];

/// Which digests to compute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Algorithms {
    pub xxh64: bool,
    pub sha1: bool,
    pub sha256: bool,
    pub uuid: bool,
}

impl Algorithms {
    /// What `llama-gguf-hash` computes with no algorithm flag: xxh64.
    pub fn or_default(self) -> Algorithms {
        if self == Algorithms::default() {
            Algorithms {
                xxh64: true,
                ..self
            }
        } else {
            self
        }
    }

    fn enabled(self, algorithm: Algorithm) -> bool {
        match algorithm {
            Algorithm::Xxh64 => self.xxh64,
            Algorithm::Sha1 => self.sha1,
            Algorithm::Sha256 => self.sha256,
            Algorithm::Uuid => self.uuid,
        }
    }
}

/// The digests of one stream, lowercase hex (the UUID in its 8-4-4-4-12 form).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Digests {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xxh64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha1: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

impl Digests {
    fn set(&mut self, algorithm: Algorithm, hex: String) {
        let slot = match algorithm {
            Algorithm::Xxh64 => &mut self.xxh64,
            Algorithm::Sha1 => &mut self.sha1,
            Algorithm::Sha256 => &mut self.sha256,
            Algorithm::Uuid => &mut self.uuid,
        };
        *slot = Some(hex);
    }

    fn get(&self, algorithm: Algorithm) -> Option<&str> {
        match algorithm {
            Algorithm::Xxh64 => self.xxh64.as_deref(),
            Algorithm::Sha1 => self.sha1.as_deref(),
            Algorithm::Sha256 => self.sha256.as_deref(),
            Algorithm::Uuid => self.uuid.as_deref(),
        }
    }
}

/// One tensor's digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorDigests {
    pub name: String,
    #[serde(flatten)]
    pub digests: Digests,
}

/// Every digest of a file: per tensor (empty with `--no-layer`) and over all tensor data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HashReport {
    pub tensors: Vec<TensorDigests>,
    pub model: Digests,
}

impl HashReport {
    /// The report as `llama-gguf-hash` prints it for `file_name`: per tensor its xxh64, sha1 and
    /// sha256 lines (`%-8s  %s  FILE:TENSOR`), then the whole-model xxh64, sha1, sha256 and uuid.
    pub fn to_lines(&self, file_name: &str) -> String {
        let mut out = String::new();
        for tensor in &self.tensors {
            for algorithm in Algorithm::ALL {
                if let Some(hex) = tensor.digests.get(algorithm) {
                    out.push_str(&format!(
                        "{:<8}  {hex}  {file_name}:{}\n",
                        algorithm.name(),
                        tensor.name
                    ));
                }
            }
        }
        for algorithm in Algorithm::ALL {
            if let Some(hex) = self.model.get(algorithm) {
                out.push_str(&format!("{:<8}  {hex}  {file_name}\n", algorithm.name()));
            }
        }
        out
    }
}

/// The lanes for `algorithms`: one per tensor and one over the model for each of xxh64, sha1
/// and sha256 (no per-tensor lanes when `per_tensor` is false), plus the UUID's.
pub fn lanes(algorithms: Algorithms, per_tensor: bool) -> Vec<Lane> {
    let mut lanes = Vec::new();
    for algorithm in Algorithm::ALL {
        if !algorithms.enabled(algorithm) {
            continue;
        }
        if per_tensor && algorithm != Algorithm::Uuid {
            lanes.push(Lane::new(algorithm, true));
        }
        lanes.push(Lane::new(algorithm, false));
    }
    lanes
}

/// Puts finished lanes together into a report; `names` are the tensors in the order they ended.
pub fn report(lanes: Vec<Lane>, names: Vec<String>) -> HashReport {
    let mut tensors: Vec<TensorDigests> = Vec::new();
    let mut model = Digests::default();
    for lane in lanes {
        let algorithm = lane.algorithm();
        let (per_tensor, whole) = lane.finish();
        if let Some(whole) = whole {
            model.set(algorithm, whole);
        }
        for (i, hex) in per_tensor.into_iter().enumerate() {
            if tensors.len() <= i {
                tensors.push(TensorDigests {
                    name: names.get(i).cloned().unwrap_or_default(),
                    digests: Digests::default(),
                });
            }
            tensors[i].digests.set(algorithm, hex);
        }
    }
    HashReport { tensors, model }
}

/// A hasher fed in order, tensor by tensor, on one thread (the wasm side uses this).
pub struct Hasher {
    lanes: Vec<Lane>,
    names: Vec<String>,
}

impl Hasher {
    pub fn new(algorithms: Algorithms, per_tensor: bool) -> Hasher {
        Hasher {
            lanes: lanes(algorithms, per_tensor),
            names: Vec::new(),
        }
    }

    /// Adds the next bytes of the current tensor.
    pub fn update(&mut self, bytes: &[u8]) {
        for lane in &mut self.lanes {
            lane.update(bytes);
        }
    }

    /// Ends the current tensor, named `name`.
    pub fn end_tensor(&mut self, name: &str) {
        for lane in &mut self.lanes {
            lane.end_tensor();
        }
        self.names.push(name.to_string());
    }

    pub fn finish(self) -> HashReport {
        report(self.lanes, self.names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_namespace_is_the_url_uuid_llama_cpp_names() {
        // uuid5(NAMESPACE_URL, name) = sha1(NAMESPACE_URL bytes + name), version and variant set.
        use sha1::{Digest, Sha1};
        let namespace_url: [u8; 16] = [
            0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4,
            0x30, 0xc8,
        ];
        let mut sha = Sha1::new();
        sha.update(namespace_url);
        sha.update(b"en.wikipedia.org/wiki/Llama.cpp");
        let mut id: [u8; 16] = sha.finalize()[..16].try_into().unwrap();
        id[6] = (id[6] & 0x0f) | 0x50;
        id[8] = (id[8] & 0x3f) | 0x80;
        assert_eq!(id, UUID_NAMESPACE);
    }
}
