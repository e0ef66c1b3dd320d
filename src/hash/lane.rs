//! One running digest: over each tensor in turn (reset at every tensor end) or over them all.

use sha1::{Digest, Sha1};
use sha2::Sha256;
use xxhash_rust::xxh64::Xxh64;

use super::UUID_NAMESPACE;

/// The digests `llama-gguf-hash` knows, in the order it prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Xxh64,
    Sha1,
    Sha256,
    Uuid,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Xxh64,
        Algorithm::Sha1,
        Algorithm::Sha256,
        Algorithm::Uuid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Xxh64 => "xxh64",
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha256 => "sha256",
            Algorithm::Uuid => "uuid",
        }
    }

    /// Rough relative cost per byte, for spreading lanes over threads (sha1 and sha256 run at
    /// about the same speed with the SHA extensions; xxh64 is several times faster).
    pub fn cost(self) -> u32 {
        match self {
            Algorithm::Xxh64 => 1,
            _ => 4,
        }
    }
}

enum State {
    Xxh64(Box<Xxh64>),
    Sha1(Sha1),
    Sha256(Sha256),
}

impl State {
    fn new(algorithm: Algorithm) -> State {
        match algorithm {
            Algorithm::Xxh64 => State::Xxh64(Box::new(Xxh64::new(0))),
            Algorithm::Sha1 => State::Sha1(Sha1::new()),
            Algorithm::Sha256 => State::Sha256(Sha256::new()),
            Algorithm::Uuid => {
                let mut sha = Sha1::new();
                sha.update(UUID_NAMESPACE);
                State::Sha1(sha)
            }
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            State::Xxh64(h) => h.update(bytes),
            State::Sha1(h) => h.update(bytes),
            State::Sha256(h) => h.update(bytes),
        }
    }

    fn finish(self, algorithm: Algorithm) -> String {
        match self {
            State::Xxh64(h) => format!("{:016x}", h.digest()),
            State::Sha1(h) if algorithm == Algorithm::Uuid => uuid_v5(&h.finalize()),
            State::Sha1(h) => hex(&h.finalize()),
            State::Sha256(h) => hex(&h.finalize()),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// RFC 9562 UUIDv5 from a sha1 digest: its first 16 bytes, version 5, variant 0b10.
fn uuid_v5(sha1: &[u8]) -> String {
    let mut id = [0u8; 16];
    id.copy_from_slice(&sha1[..16]);
    id[6] = (id[6] & 0x0f) | 0x50;
    id[8] = (id[8] & 0x3f) | 0x80;
    let h = hex(&id);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A digest over each tensor (`per_tensor`) or over all of them.
pub struct Lane {
    algorithm: Algorithm,
    per_tensor: bool,
    state: State,
    done: Vec<String>,
}

impl Lane {
    pub fn new(algorithm: Algorithm, per_tensor: bool) -> Lane {
        Lane {
            algorithm,
            per_tensor,
            state: State::new(algorithm),
            done: Vec::new(),
        }
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.state.update(bytes);
    }

    /// A per-tensor lane files the tensor's digest and starts afresh; a model lane goes on.
    pub fn end_tensor(&mut self) {
        if self.per_tensor {
            let state = std::mem::replace(&mut self.state, State::new(self.algorithm));
            self.done.push(state.finish(self.algorithm));
        }
    }

    /// (per-tensor digests, the whole-model digest for a model lane).
    pub fn finish(self) -> (Vec<String>, Option<String>) {
        if self.per_tensor {
            (self.done, None)
        } else {
            (Vec::new(), Some(self.state.finish(self.algorithm)))
        }
    }
}
