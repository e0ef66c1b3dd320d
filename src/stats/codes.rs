//! A piece of a tensor of [`Form::Coded`](super::layout::Form) blocks, as groups: 32 values
//! sharing one scale (and min), so at most 16 distinct values, each computed once exactly as the
//! dequant kernel does. Both passes then work per distinct value and its count (code counts by
//! byte compares) instead of per value: half the bucket look-ups and increments or fewer.

use super::affine::{exact_block, moments_affine};
use super::counted::moments_counted;
use super::histogram::Histogram;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::kernels::{isa, Isa};
use super::layout::{half, Coded, Codes, Layout, Min, Subs};
use super::moments::Moments;
use super::percentiles::{key, Target, BUCKETS};

use super::planes;
pub(crate) use super::planes::{CODES, GROUP};

/// The groups of one piece: group `g`'s code `c` stands for `values[16g + c]`, its 32 values'
/// codes are given by their bit planes `planes[g]` (bit `i` of `planes[g][k]`: bit `k` of value
/// `i`'s code; `planes.rs` takes them straight from the nibbles).
#[derive(Default)]
pub(crate) struct Groups {
    pub(crate) values: Vec<f32>,
    pub(crate) planes: Vec<[u32; 4]>,
    /// Per group `[a, b]` when its values are `a·q - b` for code `q` (none for other types)
    /// and, unless `inexact`, f32 computes them exactly: the moments then come from code sums
    /// (`affine.rs`).
    pub(crate) lines: Vec<[f32; 2]>,
    pub(crate) inexact: bool,
    counts: Vec<u32>,
    tops: Vec<u32>,
    sums: Vec<f64>,
    flagged: Vec<u32>,
}

impl Groups {
    /// Decodes whole blocks `bytes` of `layout` (of form `coded`), replacing the groups held.
    pub(crate) fn decode(&mut self, layout: &Layout, coded: &Coded, bytes: &[u8]) {
        let blocks = bytes.len() / layout.block_bytes;
        let groups = blocks * (layout.block / GROUP);
        self.planes.resize(groups, [0; 4]);
        self.values.resize(groups * CODES, 0.0);
        self.lines
            .resize(if coded.lines { groups } else { 0 }, [0.0; 2]);
        let exact = decode_blocks(
            layout.block_bytes,
            coded,
            &bytes[..blocks * layout.block_bytes],
            &mut self.planes,
            &mut self.values,
            &mut self.lines,
        );
        self.inexact = !exact;
    }

    /// Values in the piece.
    pub(crate) fn len(&self) -> usize {
        self.planes.len() * GROUP
    }

    /// Pass 1: the piece's moments, and its values counted per coarse bucket (`coarse` empty:
    /// not counted).
    pub(crate) fn pass1(&mut self, coarse: &mut [u64]) -> Moments {
        self.counts.resize(self.values.len(), 0);
        count_codes(&self.planes, &mut self.counts);
        if !coarse.is_empty() {
            count_coarse_counted(coarse, &self.values, &self.counts);
        }
        if !self.inexact && self.lines.len() == self.planes.len() {
            return moments_affine(&self.lines, &self.values, &self.counts, &mut self.sums);
        }
        moments_counted(&self.values, &self.counts, self.len() as u64)
    }

    /// Pass 2: the values of flagged buckets (`table`: 1 an edge cuts it, 2 a target) binned
    /// or counted by low key bits, with their counts; the flagged distinct values are picked
    /// out first without branches, the codes of only those counted.
    pub(crate) fn pass2(
        &mut self,
        table: &[u8],
        mut histogram: Option<&mut Histogram>,
        targets: &mut [Target],
    ) {
        let n = self.values.len();
        self.tops.resize(n, 0);
        self.flagged.resize(n, 0);
        let found = flag_pairs(table, &self.values, &mut self.tops, &mut self.flagged);
        for &i in &self.flagged[..found] {
            let i = i as usize;
            let count = count_code(self.planes[i / CODES], i % CODES);
            if count == 0 {
                continue;
            }
            let v = self.values[i];
            let k = key(v);
            let flag = table[(k >> 16) as usize];
            if flag & 1 != 0 {
                if let Some(h) = histogram.as_deref_mut() {
                    if let Some(b) = h.bin_of(f64::from(v)) {
                        h.add_count(b, u64::from(count));
                    }
                }
            }
            if flag & 2 != 0 {
                for t in targets.iter_mut() {
                    if t.bucket == k >> 16 {
                        t.low[(k & 0xffff) as usize] += u64::from(count);
                    }
                }
            }
        }
    }
}

super::kernels::dispatch! {
    /// Writes the blocks' planes, values and (where `coded.lines`) lines; whether every value
    /// is exact on its line.
    fn decode_blocks(size: usize, coded: &Coded, bytes: &[u8], planes: &mut [[u32; 4]], values: &mut [f32], lines: &mut [[f32; 2]]) -> bool => decode_body
}

/// The one decode loop of every coded type (`layout.rs` says where each block's parts are),
/// compiled once per shape of the table's rows (how codes, min and group scales are stored:
/// const parameters, so each shape's loop has no branch on them; the offsets stay the row's).
#[inline(always)]
fn decode_body(
    size: usize,
    coded: &Coded,
    bytes: &[u8],
    planes: &mut [[u32; 4]],
    values: &mut [f32],
    lines: &mut [[f32; 2]],
) -> bool {
    let args = (size, coded, bytes, planes, values, lines);
    match (coded.codes, coded.min, coded.subs) {
        (Codes::Nibbles { .. }, Min::None, Subs::None) => shape::<0, 0, 0>(args),
        (Codes::Nibbles { .. }, Min::Added { .. }, Subs::None) => shape::<0, 1, 0>(args),
        (Codes::Nibbles { .. }, Min::None, Subs::Iq4Xs { .. }) => shape::<0, 0, 2>(args),
        (Codes::Pairs { .. }, Min::Subtracted { .. }, Subs::ScaleMinK4 { .. }) => {
            shape::<1, 2, 1>(args)
        }
        // Any other combination the table might gain: the same loop without the constants.
        _ => blocks(args),
    }
}

type DecodeArgs<'a> = (
    usize,
    &'a Coded,
    &'a [u8],
    &'a mut [[u32; 4]],
    &'a mut [f32],
    &'a mut [[f32; 2]],
);

/// [`blocks`] with the row's kinds of codes `P`, min `M` and group scales `S` (their order in
/// the enums) fixed.
#[inline(always)]
fn shape<const P: u8, const M: u8, const S: u8>(args: DecodeArgs<'_>) -> bool {
    let coded = args.1;
    let at = |c: Codes| match c {
        Codes::Nibbles { at } | Codes::Pairs { at } => at,
    };
    let min_at = match coded.min {
        Min::None => 0,
        Min::Added { at } | Min::Subtracted { at } => at,
    };
    let subs_at = match coded.subs {
        Subs::None => 0,
        Subs::ScaleMinK4 { at } | Subs::Iq4Xs { at } => at,
    };
    let codes_at = at(coded.codes);
    let fixed = Coded {
        codes: match P {
            0 => Codes::Nibbles { at: codes_at },
            _ => Codes::Pairs { at: codes_at },
        },
        levels: coded.levels,
        min: match M {
            0 => Min::None,
            1 => Min::Added { at: min_at },
            _ => Min::Subtracted { at: min_at },
        },
        subs: match S {
            0 => Subs::None,
            1 => Subs::ScaleMinK4 { at: subs_at },
            _ => Subs::Iq4Xs { at: subs_at },
        },
        lines: coded.lines,
    };
    blocks((args.0, &fixed, args.2, args.3, args.4, args.5))
}

#[inline(always)]
fn blocks((size, coded, bytes, planes, values, lines): DecodeArgs<'_>) -> bool {
    let per_block = planes.len() / (bytes.len() / size).max(1);
    let mut exact = true;
    let mut scales = [[0f32; 2]; 8];
    let blocks = bytes
        .chunks_exact(size)
        .zip(planes.chunks_exact_mut(per_block))
        .zip(values.chunks_exact_mut(per_block * CODES));
    for (i, ((b, planes), values)) in blocks.enumerate() {
        let d = half(b, 0);
        let groups = coded.group_scales(b, d, &mut scales);
        match coded.codes {
            Codes::Nibbles { at } => {
                for (g, p) in planes.iter_mut().enumerate() {
                    let qs: &[u8; 16] = b[at + 16 * g..at + 16 * g + 16].try_into().unwrap();
                    *p = planes::of_nibbles(qs);
                }
            }
            Codes::Pairs { at } => {
                for (j, pair) in planes.chunks_exact_mut(2).enumerate() {
                    let qs: &[u8; 32] = b[at + 32 * j..at + 32 * j + 32].try_into().unwrap();
                    (pair[0], pair[1]) = planes::of_pair(qs);
                }
            }
        }
        for (v, &s) in values.chunks_exact_mut(CODES).zip(&scales[..groups]) {
            v.copy_from_slice(&coded.group_values(s));
        }
        if let (true, Min::Subtracted { at }) = (coded.lines, coded.min) {
            exact &= exact_block(d, half(b, at));
            lines[i * groups..(i + 1) * groups].copy_from_slice(&scales[..groups]);
        }
    }
    exact
}

super::kernels::dispatch! {
    /// Writes the positions of the values whose bucket `table` flags into `flagged`, returns
    /// how many (`tops` is scratch, as long as `values`).
    fn flag_pairs(table: &[u8], values: &[f32], tops: &mut [u32], flagged: &mut [u32]) -> usize => flag_body
}

#[inline(always)]
fn flag_body(table: &[u8], values: &[f32], tops: &mut [u32], flagged: &mut [u32]) -> usize {
    let table = &table[..BUCKETS];
    let n = values.len().min(tops.len()).min(flagged.len());
    // u32 tops: no narrowing in the vector loop (wasm has no unsigned 32→16 narrow).
    for (t, &v) in tops[..n].iter_mut().zip(values) {
        *t = key(v) >> 16;
    }
    let (tops, flagged) = (&tops[..n], &mut flagged[..n]);
    let mut found = 0;
    for (i, &t) in tops.iter().enumerate() {
        // SAFETY: `found <= i < n == flagged.len()`; `t < BUCKETS == table.len()`.
        unsafe {
            *flagged.get_unchecked_mut(found) = i as u32;
            found += usize::from(*table.get_unchecked(t as usize) != 0);
        }
    }
    found
}

/// True where counting codes is fast (byte compares and a population count): elsewhere the
/// per-value path is quicker.
pub(crate) fn fast() -> bool {
    isa() != Isa::Scalar
}

/// `counts[16g + c]` = how many of group `g`'s codes are `c`.
fn count_codes(planes: &[[u32; 4]], counts: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "popcnt")]
        unsafe fn with_popcnt(planes: &[[u32; 4]], counts: &mut [u32]) {
            count_codes_portable(planes, counts)
        }
        if isa() == Isa::Avx2 {
            // SAFETY: `isa` chose AVX2 only on a CPU with POPCNT, all `with_popcnt` needs.
            return unsafe { with_popcnt(planes, counts) };
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if isa() == Isa::Simd128 {
        return simd128::codes::count_codes(planes, counts);
    }
    count_codes_portable(planes, counts)
}

/// [`count_codes`] with scalar population counts (the reference; x86 uses it too).
#[inline(always)]
fn count_codes_portable(planes: &[[u32; 4]], counts: &mut [u32]) {
    for (&p, out) in planes.iter().zip(counts.chunks_exact_mut(CODES)) {
        counts_from_planes(p, out);
    }
}

/// The 16 code counts of a group from its bit planes: code `c` is where the planes match `c`'s
/// bits, two bits at a time (8 masks, then one AND and a population count per code).
#[inline(always)]
fn counts_from_planes(planes: [u32; 4], out: &mut [u32]) {
    let [p0, p1, p2, p3] = planes;
    let low = [!p0 & !p1, p0 & !p1, !p0 & p1, p0 & p1];
    let high = [!p2 & !p3, p2 & !p3, !p2 & p3, p2 & p3];
    for (c, o) in out.iter_mut().take(CODES).enumerate() {
        *o = (low[c & 3] & high[c >> 2]).count_ones();
    }
}

/// How many of a group's codes are `c`: where every plane matches `c`'s bit.
#[inline(always)]
fn count_code(planes: [u32; 4], c: usize) -> u32 {
    let bit = |k: usize| {
        if c >> k & 1 != 0 {
            planes[k]
        } else {
            !planes[k]
        }
    };
    (bit(0) & bit(1) & bit(2) & bit(3)).count_ones()
}

super::kernels::dispatch! {
    /// Adds `counts[i]` to the coarse bucket of `values[i]`.
    fn count_coarse_counted(coarse: &mut [u64], values: &[f32], counts: &[u32]) -> () => coarse_body
}

#[inline(always)]
fn coarse_body(coarse: &mut [u64], values: &[f32], counts: &[u32]) {
    let coarse = &mut coarse[..BUCKETS];
    let mut tops = [0u32; 256];
    for (block, cs) in values.chunks(256).zip(counts.chunks(256)) {
        for (t, &v) in tops.iter_mut().zip(block) {
            *t = key(v) >> 16;
        }
        for (&t, &c) in tops.iter().zip(cs) {
            coarse[t as usize] += u64::from(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_counts_equal_a_plain_count() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut codes: Vec<[u8; GROUP]> = (0..300)
            .map(|_| {
                std::array::from_fn(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 16) as u8
                })
            })
            .collect();
        codes.push([15; GROUP]);
        codes.push([0; GROUP]);
        let planes: Vec<[u32; 4]> = codes
            .iter()
            .map(|q| {
                std::array::from_fn(|k| {
                    q.iter()
                        .enumerate()
                        .fold(0, |p, (i, &c)| p | u32::from(c >> k & 1) << i)
                })
            })
            .collect();
        let want: Vec<u32> = codes
            .iter()
            .flat_map(|q| (0..16u8).map(move |c| q.iter().filter(|&&x| x == c).count() as u32))
            .collect();
        let mut got = vec![0; want.len()];
        count_codes(&planes, &mut got);
        assert_eq!(got, want);
        let mut got = vec![0; want.len()];
        count_codes_portable(&planes, &mut got);
        assert_eq!(got, want);
    }
}
