//! A piece of a tensor whose blocks hold 4-bit codes, as groups: 32 values sharing one scale
//! (and min), so at most 16 distinct values, each computed once exactly as the dequant kernel
//! does. Both passes then work per distinct value and its count (code counts by byte compares)
//! instead of per value: half the bucket look-ups and increments or fewer.

use super::counted::moments_counted;
use super::histogram::Histogram;
use super::moments::Moments;
use super::percentiles::{key, Target, BUCKETS};

/// Codes per group.
pub(crate) const CODES: usize = 16;
/// Values per group.
pub(crate) const GROUP: usize = 32;

/// The groups of one piece: group `g`'s code `c` stands for `values[16g + c]`, its 32 values are
/// the codes `codes[g]` (each `0..16`).
#[derive(Default)]
pub struct Groups {
    pub(crate) values: Vec<f32>,
    pub(crate) codes: Vec<[u8; GROUP]>,
    counts: Vec<u32>,
    tops: Vec<u16>,
    flagged: Vec<u32>,
}

impl Groups {
    pub(crate) fn clear(&mut self) {
        self.values.clear();
        self.codes.clear();
    }

    /// Values in the piece.
    pub(crate) fn len(&self) -> usize {
        self.codes.len() * GROUP
    }

    /// Pass 1: the piece's moments, and its values counted per coarse bucket (`coarse` empty:
    /// not counted).
    pub(crate) fn pass1(&mut self, coarse: &mut [u64]) -> Moments {
        self.counts.resize(self.values.len(), 0);
        count_codes(&self.codes, &mut self.counts);
        if !coarse.is_empty() {
            count_coarse_counted(coarse, &self.values, &self.counts);
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
            let count = count_code(&self.codes[i / CODES], (i % CODES) as u8);
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

super::isa::dispatch! {
    /// Writes the positions of the values whose bucket `table` flags into `flagged`, returns
    /// how many (`tops` is scratch, as long as `values`).
    fn flag_pairs(table: &[u8], values: &[f32], tops: &mut [u16], flagged: &mut [u32]) -> usize => flag_body
}

#[inline(always)]
fn flag_body(table: &[u8], values: &[f32], tops: &mut [u16], flagged: &mut [u32]) -> usize {
    let table = &table[..BUCKETS];
    let n = values.len().min(tops.len()).min(flagged.len());
    for (t, &v) in tops[..n].iter_mut().zip(values) {
        *t = (key(v) >> 16) as u16;
    }
    let mut found = 0;
    for (i, &t) in tops[..n].iter().enumerate() {
        flagged[found] = i as u32;
        found += usize::from(table[t as usize] != 0);
    }
    found
}

/// True where counting codes is fast (byte compares and a population count): elsewhere the
/// per-value path is quicker.
pub(crate) fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        true
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        false
    }
}

/// `counts[16g + c]` = how many of `codes[g]` are `c`.
fn count_codes(codes: &[[u8; GROUP]], counts: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if fast() {
            // SAFETY: the CPU has AVX2 and POPCNT (checked by `fast`), all `x86` needs.
            return unsafe { x86::count_codes(codes, counts) };
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        return wasm::count_codes(codes, counts);
    }
    #[allow(unreachable_code)]
    count_codes_portable(codes, counts)
}

/// [`count_codes`] without vectors.
fn count_codes_portable(codes: &[[u8; GROUP]], counts: &mut [u32]) {
    for (q, out) in codes.iter().zip(counts.chunks_exact_mut(CODES)) {
        let mut planes = [0u32; 4];
        for (i, &x) in q.iter().enumerate() {
            for (k, p) in planes.iter_mut().enumerate() {
                *p |= u32::from(x >> k & 1) << i;
            }
        }
        counts_from_planes(planes, out);
    }
}

/// The 16 code counts of a group from its bit planes (bit `i` of `planes[k]`: bit `k` of code
/// `i`): code `c` is where the planes match `c`'s bits, two bits at a time (8 masks, then one
/// AND and a population count per code, instead of 16 compares of the 32 codes).
#[inline(always)]
fn counts_from_planes(planes: [u32; 4], out: &mut [u32]) {
    let [p0, p1, p2, p3] = planes;
    let low = [!p0 & !p1, p0 & !p1, !p0 & p1, p0 & p1];
    let high = [!p2 & !p3, p2 & !p3, !p2 & p3, p2 & p3];
    for (c, o) in out.iter_mut().take(CODES).enumerate() {
        *o = (low[c & 3] & high[c >> 2]).count_ones();
    }
}

/// How many of `codes` are `c`.
#[inline]
fn count_code(codes: &[u8; GROUP], c: u8) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if fast() {
            // SAFETY: as in `count_codes`.
            return unsafe { x86::count_code(codes, c) };
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        return wasm::count_code(codes, c);
    }
    #[allow(unreachable_code)]
    {
        codes.iter().filter(|&&x| x == c).count() as u32
    }
}

super::isa::dispatch! {
    /// Adds `counts[i]` to the coarse bucket of `values[i]`.
    fn count_coarse_counted(coarse: &mut [u64], values: &[f32], counts: &[u32]) -> () => coarse_body
}

#[inline(always)]
fn coarse_body(coarse: &mut [u64], values: &[f32], counts: &[u32]) {
    let coarse = &mut coarse[..BUCKETS];
    let mut tops = [0u16; 256];
    for (block, cs) in values.chunks(256).zip(counts.chunks(256)) {
        for (t, &v) in tops.iter_mut().zip(block) {
            *t = (key(v) >> 16) as u16;
        }
        for (&t, &c) in tops.iter().zip(cs) {
            coarse[t as usize] += u64::from(c);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{CODES, GROUP};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn count_codes(codes: &[[u8; GROUP]], counts: &mut [u32]) {
        for (q, out) in codes.iter().zip(counts.chunks_exact_mut(CODES)) {
            let q = _mm256_loadu_si256(q.as_ptr().cast());
            // Bit k of every code to its byte's top bit (16-bit shifts: a low byte's bits never
            // reach its high byte's top bit), then the top bits as a mask.
            let planes = [
                _mm256_movemask_epi8(_mm256_slli_epi16::<7>(q)) as u32,
                _mm256_movemask_epi8(_mm256_slli_epi16::<6>(q)) as u32,
                _mm256_movemask_epi8(_mm256_slli_epi16::<5>(q)) as u32,
                _mm256_movemask_epi8(_mm256_slli_epi16::<4>(q)) as u32,
            ];
            super::counts_from_planes(planes, out);
        }
    }

    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn count_code(codes: &[u8; GROUP], c: u8) -> u32 {
        let q = _mm256_loadu_si256(codes.as_ptr().cast());
        let eq = _mm256_cmpeq_epi8(q, _mm256_set1_epi8(c as i8));
        (_mm256_movemask_epi8(eq) as u32).count_ones()
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use super::{CODES, GROUP};
    use std::arch::wasm32::*;

    #[inline(always)]
    fn halves(codes: &[u8; GROUP]) -> (v128, v128) {
        // SAFETY: 32 bytes; v128_load takes unaligned pointers.
        unsafe {
            (
                v128_load(codes.as_ptr().cast()),
                v128_load(codes.as_ptr().add(16).cast()),
            )
        }
    }

    #[inline(always)]
    fn count(a: v128, b: v128, c: u8) -> u32 {
        let k = u8x16_splat(c);
        let m = u32::from(i8x16_bitmask(i8x16_eq(a, k)))
            | u32::from(i8x16_bitmask(i8x16_eq(b, k))) << 16;
        m.count_ones()
    }

    pub(super) fn count_codes(codes: &[[u8; GROUP]], counts: &mut [u32]) {
        for (q, out) in codes.iter().zip(counts.chunks_exact_mut(CODES)) {
            let (a, b) = halves(q);
            // Bit k of every code to its byte's top bit, then the top bits as a mask.
            let plane = |k: u32| {
                u32::from(i8x16_bitmask(i8x16_shl(a, 7 - k)))
                    | u32::from(i8x16_bitmask(i8x16_shl(b, 7 - k))) << 16
            };
            super::counts_from_planes([plane(0), plane(1), plane(2), plane(3)], out);
        }
    }

    pub(super) fn count_code(codes: &[u8; GROUP], c: u8) -> u32 {
        let (a, b) = halves(codes);
        count(a, b, c)
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
        let want: Vec<u32> = codes
            .iter()
            .flat_map(|q| (0..16u8).map(move |c| q.iter().filter(|&&x| x == c).count() as u32))
            .collect();
        let mut got = vec![0; want.len()];
        count_codes(&codes, &mut got);
        assert_eq!(got, want);
        let mut got = vec![0; want.len()];
        count_codes_portable(&codes, &mut got);
        assert_eq!(got, want);
    }
}
