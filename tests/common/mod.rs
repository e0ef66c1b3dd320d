//! A tiny GGUF writer for malformed-input tests: it writes exactly the fields it is told to, so
//! tests can put a wrong count, type or offset anywhere. Valid files come from gguf-py
//! (fixtures/); this only builds the broken ones.
#![allow(dead_code)]

pub mod cli_fixture;
pub mod corpus;
pub mod model_rows;
pub mod plan_cases;
pub mod quant_rows;

pub struct Builder {
    pub bytes: Vec<u8>,
    pub version: u32,
    pub big_endian: bool,
}

impl Builder {
    pub fn new(version: u32) -> Builder {
        Builder {
            bytes: Vec::new(),
            version,
            big_endian: false,
        }
    }

    pub fn big_endian(mut self) -> Builder {
        self.big_endian = true;
        self
    }

    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(bytes);
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        let b = if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.raw(&b)
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        let b = if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.raw(&b)
    }

    /// A count or length: u32 in v1, u64 after.
    pub fn len(&mut self, v: u64) -> &mut Self {
        if self.version == 1 {
            self.u32(v as u32)
        } else {
            self.u64(v)
        }
    }

    pub fn string(&mut self, s: &[u8]) -> &mut Self {
        self.len(s.len() as u64).raw(s)
    }

    /// Magic, version, tensor count, kv count.
    pub fn header(&mut self, tensors: u64, kvs: u64) -> &mut Self {
        let version = self.version;
        self.raw(b"GGUF").u32(version).len(tensors).len(kvs)
    }

    /// A key with a uint32 value.
    pub fn kv_u32(&mut self, key: &str, v: u32) -> &mut Self {
        self.string(key.as_bytes()).u32(4).u32(v)
    }

    /// A key with a string value.
    pub fn kv_str(&mut self, key: &str, v: &[u8]) -> &mut Self {
        self.string(key.as_bytes()).u32(8).string(v)
    }

    /// A tensor info: name, dims, type id, offset.
    pub fn tensor(&mut self, name: &str, dims: &[u64], type_id: u32, offset: u64) -> &mut Self {
        self.string(name.as_bytes()).u32(dims.len() as u32);
        for &d in dims {
            self.len(d);
        }
        self.u32(type_id).u64(offset)
    }

    /// Pads with zeros to a multiple of `alignment`, then appends `data_len` zero bytes.
    pub fn data(&mut self, alignment: usize, data_len: usize) -> &mut Self {
        while self.bytes.len() % alignment != 0 {
            self.bytes.push(0);
        }
        self.bytes.resize(self.bytes.len() + data_len, 0);
        self
    }

    pub fn build(&self) -> Vec<u8> {
        self.bytes.clone()
    }
}

/// A valid v3 file: two keys (one a string array), two F32 tensors of 4 x 2 elements.
pub fn valid_file() -> Vec<u8> {
    let mut b = Builder::new(3);
    b.header(2, 2).kv_u32("general.alignment", 32);
    b.string(b"tokens").u32(9).u32(8).u64(3);
    b.string(b"a").string(b"bc").string(b"");
    b.tensor("x", &[4, 2], 0, 0).tensor("y", &[4, 2], 0, 32);
    b.data(32, 64);
    b.build()
}

/// The `gguf-lens` binary. When cross testing under an emulator (see .cargo/config.toml), the
/// runner hands its own command line down in GGUF_LENS_TEST_RUNNER, so the binary, built for
/// the emulated target, runs under it too (there may be no binfmt_misc to do that implicitly).
pub fn gguf_lens_command() -> std::process::Command {
    let exe = env!("CARGO_BIN_EXE_gguf-lens");
    let runner = std::env::var("GGUF_LENS_TEST_RUNNER").unwrap_or_default();
    let mut parts = runner.split_whitespace();
    match parts.next() {
        Some(program) => {
            let mut command = std::process::Command::new(program);
            command.args(parts).arg(exe);
            command
        }
        None => std::process::Command::new(exe),
    }
}

/// The NaN x86 (SSE/AVX) produces for an invalid operation with no NaN operand, such as 0·∞ or
/// ∞ − ∞ (a scale of ±∞ times a zero quant, or an ∞ min subtracted from an ∞ product): the
/// sign bit is set. The fixtures were made by ggml running on x86_64, so they hold this one.
pub const X86_DEFAULT_NAN: u32 = 0xFFC0_0000;

/// The NaN AArch64 produces for the same operations (FPCR.DN aside, its "default NaN"): the
/// sign bit is clear. ggml itself gives this one when it runs on aarch64.
pub const ARM_DEFAULT_NAN: u32 = 0x7FC0_0000;

/// True when `got` differs from `expected` only because the hardware made a fresh NaN for an
/// invalid operation and the fixture comes from the other architecture. Only this exact pair,
/// and only on aarch64: every propagated NaN (payload and sign) must still match, and the
/// SIMD kernels must still equal the scalar ones bit for bit (tests/simd_equivalence.rs).
pub fn is_arch_default_nan(got: u32, expected: u32) -> bool {
    cfg!(target_arch = "aarch64") && got == ARM_DEFAULT_NAN && expected == X86_DEFAULT_NAN
}

/// The repository root (fixtures/ is under it).
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Runs `gguf-lens ARGS` from the repository root.
pub fn run_in_root(args: &[&str]) -> std::process::Output {
    gguf_lens_command()
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

/// llama.cpp as llama-cpp-python 0.3.36 vendors it (`$LLAMA_CPP_SDIST`, else the cache
/// `scripts/llama-sdist.sh` fills), when it is there: its `models/` holds the vocabularies,
/// their test vectors and the chat templates the oracle tests read.
pub fn llama_cpp_sdist() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    match std::env::var_os("LLAMA_CPP_SDIST") {
        Some(d) => Some(PathBuf::from(d).join("vendor/llama.cpp")),
        None => {
            let cache = std::env::var_os("GGUF_LENS_CACHE")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gguf-lens"))
                })?;
            let root = cache.join("llama_cpp_python-0.3.36");
            root.join(".complete")
                .exists()
                .then(|| root.join("vendor/llama.cpp"))
        }
    }
}
