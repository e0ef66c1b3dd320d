//! Every SIMD kernel equals the scalar reference bit for bit: random blocks (random bytes, so
//! scales are often NaN, Inf or subnormal), all-zero and all-ones blocks, 0, 1 and odd block
//! counts, and input and output that are not aligned.

use gguf_lens::{dequantize_with, GgmlType, Kernel};

/// xorshift64*: deterministic random bytes without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn fill(&mut self, bytes: &mut [u8]) {
        for b in bytes {
            *b = (self.next() >> 56) as u8;
        }
    }
}

/// Block counts tried: empty, one, small odd, and a few hundred.
const COUNTS: [usize; 6] = [0, 1, 2, 3, 17, 301];

fn compare(kernel: Kernel, ty: GgmlType, blocks: &[u8], what: &str) {
    let n = blocks.len() / ty.type_size() as usize * ty.block_size() as usize;
    let mut want = vec![0f32; n];
    dequantize_with(Kernel::Scalar, ty, blocks, &mut want).unwrap();
    // Output one f32 past an aligned start, so stores cannot assume alignment.
    let mut got_storage = vec![f32::from_bits(0x7FBA_DBAD); n + 1];
    let got = &mut got_storage[1..];
    dequantize_with(kernel, ty, blocks, got).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{} {ty} {what}: element {i} of {n}: got {g:e} ({:#010x}), scalar {w:e} ({:#010x})",
            kernel.name(),
            g.to_bits(),
            w.to_bits()
        );
    }
}

#[test]
fn simd_kernels_equal_scalar_bit_for_bit() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut compared = 0;
    for kernel in Kernel::available() {
        for ty in GgmlType::ALL {
            if kernel.own_kernel(ty).is_none() {
                continue;
            }
            compared += 1;
            let size = ty.type_size() as usize;
            for count in COUNTS {
                // One spare byte in front: the kernel reads from an odd address.
                let mut storage = vec![0u8; count * size + 1];
                rng.fill(&mut storage);
                compare(kernel, ty, &storage[1..], &format!("{count} random blocks"));
            }
            for fill in [0x00u8, 0xFF, 0x7C, 0x80] {
                let blocks = vec![fill; 5 * size];
                compare(kernel, ty, &blocks, &format!("blocks of {fill:#04x}"));
            }
        }
    }
    eprintln!("compared {compared} (kernel, type) pairs against scalar");
    if std::env::var("REQUIRE_SIMD").is_ok_and(|v| v == "1") {
        assert!(
            compared > 0,
            "REQUIRE_SIMD=1 but no SIMD kernel was available"
        );
    }
}
