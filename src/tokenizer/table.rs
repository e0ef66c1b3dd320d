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

    fn slot(&self, hash: u64) -> usize {
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
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
