//! The quantizer oracle's input rows (fixtures/make_quantize.py's `generate`), reproduced bit for
//! bit: a counter-based splitmix64 turned into f32 with exact integer and power-of-two steps, so
//! numpy and Rust agree without sharing data.

pub const N_PER_ROW: usize = 256;
pub const SEED: u64 = 0x243F_6A88_85A3_08D3;
pub const KINDS: u64 = 16;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The t-th draw of element j of a row (j = 256 for the row's own draws).
fn draw(row: u64, j: u64, t: u64) -> u64 {
    mix(row
        .wrapping_mul(2048)
        .wrapping_add(j * 4)
        .wrapping_add(t)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(SEED))
}

fn u24(x: u64) -> i64 {
    (x >> 40) as i64
}

fn normal(row: u64, j: u64) -> f32 {
    let s =
        u24(draw(row, j, 0)) + u24(draw(row, j, 1)) + u24(draw(row, j, 2)) + u24(draw(row, j, 3));
    (s - (1 << 25)) as f32 * f32::from_bits(0x3380_0000) // 2^-24
}

fn sym(row: u64, j: u64) -> f32 {
    (u24(draw(row, j, 0)) - (1 << 23)) as f32 * f32::from_bits(0x3400_0000) // 2^-23
}

/// 2^e for the normal-range exponents used here.
fn pow2(e: i64) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// Row `row` of the oracle's input.
pub fn row(row: u64, out: &mut [f32; N_PER_ROW]) {
    let kind = row % KINDS;
    let row0 = draw(row, N_PER_ROW as u64, 0);
    for (jj, v) in out.iter_mut().enumerate() {
        let j = jj as u64;
        let nrm = normal(row, j);
        let d0 = draw(row, j, 0);
        *v = match kind {
            0 => nrm,
            1 => nrm * pow2((row0 % 31) as i64 - 20),
            2 => sym(row, j),
            // Zeros; every other such row −0.
            3 => {
                if (row / KINDS) % 2 == 1 {
                    -0.0
                } else {
                    0.0
                }
            }
            4 => normal(row, 0),
            5 => nrm * 30000.0,
            6 => nrm * 1e-30,
            7 => f32::from_bits((((d0 >> 63) << 31) | (d0 & 0x7F_FFFF)) as u32),
            8 => {
                nrm * if u24(draw(row, j, 1)) % 37 == 0 {
                    1000.0
                } else {
                    0.01
                }
            }
            9 => {
                let a = sym(row, j).abs();
                if j % 2 == 0 {
                    a
                } else {
                    -a
                }
            }
            10 => {
                if j == row0 % N_PER_ROW as u64 {
                    nrm
                } else {
                    0.0
                }
            }
            11 => {
                if u24(draw(row, j, 1)) % 10 == 0 {
                    nrm
                } else {
                    0.0
                }
            }
            12 => {
                let k = u24(d0) % 33 - 20;
                let m = u24(draw(row, j, 1)) % 4;
                let sign = if u24(draw(row, j, 2)) & 1 == 1 {
                    -1.0
                } else {
                    1.0
                };
                ((1 << 24) - m) as f32 * f32::from_bits(0x3380_0000) * pow2(k) * sign
            }
            13 => (u24(d0) % 33 - 16) as f32 * 0.5,
            14 => {
                let j0 = (j / 32) * 32;
                nrm * pow2(u24(draw(row, j0, 1)) % 44 - 30)
            }
            _ => {
                let bits = d0 & 0xFFFF_FFFF;
                let e = ((bits >> 23) & 0xFF) % 141;
                f32::from_bits(((bits & 0x807F_FFFF) | (e << 23)) as u32)
            }
        };
    }
}
