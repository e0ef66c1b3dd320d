//! An open-addressing (linear probing) hash table of ids whose byte-string keys live elsewhere (the vocabulary's
//! one text buffer, the merges' one buffer): building it allocates one array, not a box per key,
//! which is most of the first-token time on a 262k-token vocabulary.

/// FxHash-style mixing over a byte string, 8 bytes at a time.
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ v).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    }
    h
}

/// Ids (u32) by key; the caller hashes keys and says whether a stored id's key is the one asked.
#[derive(Debug, Default)]
pub(crate) struct IdTable {
    /// Per slot: the hash's high 32 bits, then id + 1 (0 for an empty slot). Keys are only
    /// compared when the stored hash bits agree.
    slots: Vec<u64>,
    mask: usize,
    /// 64 - log2(slots): the slot is the top bits of the hash times the golden ratio.
    shift: u32,
}

impl IdTable {
    pub(crate) fn with_capacity(n: usize) -> IdTable {
        let size = (n.saturating_mul(2)).next_power_of_two().max(16);
        IdTable {
            slots: vec![0; size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// From the hash's high 32 bits only (the tag), so `build` can sort packed tag|id entries.
    fn slot(&self, hash: u64) -> usize {
        ((hash >> 32).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    pub(crate) fn find(&self, hash: u64, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        let mut i = self.slot(hash);
        let tag = hash >> 32;
        loop {
            let s = *self.slots.get(i)?;
            let id = s as u32;
            if id == 0 {
                return None;
            }
            if s >> 32 == tag && is_key(id - 1) {
                return Some(id - 1);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts `id`; when the key is there already, `replace` says whether `id` takes its place.
    /// Returns whether the key was already there. The table never fills: capacity is 2n.
    pub(crate) fn insert(
        &mut self,
        hash: u64,
        id: u32,
        replace: bool,
        is_key: impl Fn(u32) -> bool,
    ) -> bool {
        let mut i = self.slot(hash);
        let tag = hash >> 32 << 32;
        loop {
            let s = self.slots[i];
            let old = s as u32;
            if old == 0 {
                self.slots[i] = tag | u64::from(id + 1);
                return false;
            }
            if s >> 32 << 32 == tag && is_key(old - 1) {
                if replace {
                    self.slots[i] = tag | u64::from(id + 1);
                }
                return true;
            }
            i = (i + 1) & self.mask;
        }
    }
}

impl IdTable {
    /// A `build` entry: the hash's high 32 bits (all that `slot` and the tag use), then the id.
    pub(crate) fn entry(hash: u64, id: u32) -> u64 {
        hash >> 32 << 32 | u64::from(id)
    }

    /// The table of `entries` (see `entry`), inserted as if one by one in order, where
    /// `same_key(new, old)` says whether two ids share a key. Returns whether any key was there
    /// twice. Entries go in by slot order (a stable counting sort on the slot's top bits), so
    /// each insert lands next to the last one: inserting 514k merges in file order is one cache
    /// miss per entry, most of the first-token time on a big vocabulary. Equal keys keep their
    /// relative order, so `replace` means what it means for `insert`.
    pub(crate) fn build(
        entries: &[u64],
        replace: bool,
        same_key: impl Fn(u32, u32) -> bool,
    ) -> (IdTable, bool) {
        let mut table = IdTable::with_capacity(entries.len());
        let slot_bits = 64 - table.shift;
        let bucket_bits = slot_bits.min(11);
        let bucket_shift = slot_bits - bucket_bits;
        let mut starts = vec![0usize; (1 << bucket_bits) + 1];
        for &h in entries {
            starts[(table.slot(h) >> bucket_shift) + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut sorted = vec![0u64; entries.len()];
        for &h in entries {
            let b = table.slot(h) >> bucket_shift;
            sorted[starts[b]] = h;
            starts[b] += 1;
        }
        let mut duplicates = false;
        for &h in &sorted {
            let id = h as u32;
            duplicates |= table.insert(h, id, replace, |old| same_key(id, old));
        }
        (table, duplicates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `build` agrees with one-by-one inserts, duplicates included (later or first wins).
    #[test]
    fn build_matches_inserts() {
        let keys: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| format!("k{}", i % 3001).into_bytes())
            .collect();
        let entries: Vec<u64> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| IdTable::entry(hash_bytes(k), i as u32))
            .collect();
        for replace in [true, false] {
            let (built, dup) = IdTable::build(&entries, replace, |a, b| {
                keys[a as usize] == keys[b as usize]
            });
            assert!(dup);
            let mut one = IdTable::with_capacity(keys.len());
            for (i, k) in keys.iter().enumerate() {
                one.insert(hash_bytes(k), i as u32, replace, |j| &keys[j as usize] == k);
            }
            for k in &keys {
                let is = |j: u32| &keys[j as usize] == k;
                assert_eq!(built.find(hash_bytes(k), is), one.find(hash_bytes(k), is));
            }
            let absent = |j: u32| keys[j as usize] == b"absent";
            assert_eq!(built.find(hash_bytes(b"absent"), absent), None);
        }
    }
}
