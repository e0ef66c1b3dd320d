//! Test reference for `iq4.rs`: ggml's `best_index_int8` and the no-imatrix scale search of
//! `quantize_row_iq4_nl_impl` transcribed as ggml writes them (bisection, one block at a time),
//! and the tests holding the fast lanes (and through them the SIMD paths) to it bit for bit.
#![cfg(test)]

use super::iq4::block_scales;
use super::iq4_table::{best_index, mid, val, GROUP_MAX_EPS, NTRY};

/// ggml's `best_index_int8`: bisection; ties go up; NaN ends at 15.
pub(super) fn best_index_bisect(x: f32) -> u8 {
    if x <= val(0) {
        return 0;
    }
    if x >= val(15) {
        return 15;
    }
    let (mut ml, mut mu) = (0usize, 15usize);
    while mu - ml > 1 {
        let mav = (ml + mu) / 2;
        if x < val(mav) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    if x - val(mu - 1) < val(mu) - x {
        (mu - 1) as u8
    } else {
        mu as u8
    }
}

/// One block's scale as `quantize_row_iq4_nl_impl` computes it (weights x², ntry = 7).
pub(super) fn block_scale_ref(xb: &[f32; 32]) -> f32 {
    let v = |x: f32| val(usize::from(best_index_bisect(x)));
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &x in xb {
        if x.abs() > amax {
            amax = x.abs();
            max = x;
        }
    }
    if amax < GROUP_MAX_EPS {
        return 0.0;
    }
    let mut d = -max / val(0);
    let mut id = 1.0 / d;
    let (mut sumqx, mut sumq2) = (0.0f32, 0.0f32);
    for &x in xb {
        let q = v(id * x);
        let w = x * x;
        sumqx += w * q * x;
        sumq2 += w * q * q;
    }
    d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        id = (itry + val(0) as i32) as f32 / max;
        sumqx = 0.0;
        sumq2 = 0.0;
        for &x in xb {
            let q = v(id * x);
            let w = x * x;
            sumqx += w * q * x;
            sumq2 += w * q * q;
        }
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    d
}

/// A small deterministic generator (tests only).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }
    /// Uniform in [-1, 1).
    pub(super) fn unit(&mut self) -> f32 {
        (self.next() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
}

/// 32 values of a varied kind: Gaussian-like at many magnitudes, outliers, constants, zeros,
/// subnormals, values on the table's grid and midpoints (ties in the first pass), sparse rows.
pub(super) fn block(rng: &mut Rng, kind: u32) -> [f32; 32] {
    let mut b = [0.0f32; 32];
    let scale = [1.0, 0.02, 1e-3, 3e4, 1e-14, 2e-15, 1e-30, 1e18][(rng.next() % 8) as usize];
    for x in b.iter_mut() {
        let g = rng.unit() + rng.unit() + rng.unit();
        *x = match kind % 9 {
            0 | 1 => g * scale,
            2 => {
                if rng.next() % 11 == 0 {
                    g * scale * 40.0
                } else {
                    g * scale
                }
            }
            3 => scale,
            4 => f32::from_bits(rng.next() % 0x0080_0000) * if g < 0.0 { -1.0 } else { 1.0 },
            5 => (rng.next() % 255) as f32 - 127.0,
            6 => ((rng.next() % 509) as f32 - 254.0) * 0.5,
            7 => {
                if rng.next() % 7 == 0 {
                    g * scale
                } else {
                    0.0
                }
            }
            _ => f32::from_bits(rng.next() & 0x7fff_ffff) * if g < 0.0 { -1.0 } else { 1.0 },
        };
        if !x.is_finite() {
            *x = 0.0;
        }
    }
    if kind % 9 == 5 || kind % 9 == 6 {
        b[(rng.next() % 32) as usize] = 127.0;
    }
    b
}

#[test]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // ggml's comparison, negated as its `else` takes it
fn midpoints_decide_as_ggml_last_step() {
    for k in 0..15 {
        let step = |x: f32| !(x - val(k) < val(k + 1) - x);
        let m = mid(k);
        let below = f32::from_bits(if m > 0.0 {
            m.to_bits() - 1
        } else {
            m.to_bits() + 1
        });
        assert!(step(m) && !step(below), "midpoint {k}");
    }
}

#[test]
fn best_index_equals_the_bisection() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut xs = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1e-45];
    for k in 0..15 {
        let m = mid(k);
        for d in -3i32..=3 {
            xs.push(f32::from_bits(m.to_bits().wrapping_add_signed(d)));
        }
    }
    for v in -600..600 {
        xs.push(v as f32 * 0.25);
    }
    for _ in 0..1_000_000 {
        xs.push(f32::from_bits(rng.next()));
        // Near the table: the neighbour comparisons decide.
        xs.push(f32::from_bits((rng.next() >> 8) | 0x4200_0000) - 64.0);
    }
    for x in xs {
        let i = best_index_bisect(x);
        assert_eq!(best_index(x), i, "{x:e}");
        let mut l = [0u8; 32];
        super::iq4::indices_lanes(1.0, &[x; 32], &mut l);
        assert_eq!(l, [i; 32], "{x:e}");
    }
}

#[test]
fn block_scales_equal_ggml_search() {
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    for round in 0..6000u32 {
        let mut xt = [[0.0f32; 8]; 32];
        let mut blocks = [[0.0f32; 32]; 8];
        for (b, blk) in blocks.iter_mut().enumerate() {
            *blk = block(&mut rng, round * 8 + b as u32);
            for j in 0..32 {
                xt[j][b] = blk[j];
            }
        }
        let d8 = block_scales(&xt);
        for (b, blk) in blocks.iter().enumerate() {
            let want = block_scale_ref(blk);
            assert_eq!(
                d8[b].to_bits(),
                want.to_bits(),
                "round {round} lane {b}: {blk:?}"
            );
            let one: [[f32; 1]; 32] = std::array::from_fn(|j| [blk[j]]);
            assert_eq!(block_scales(&one)[0].to_bits(), want.to_bits());
        }
    }
}
