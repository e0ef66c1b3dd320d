//! UTF-8 handling as llama.cpp's `unicode.cpp` does it: a lax decoder (no overlong or surrogate
//! checks; an invalid lead or truncated sequence becomes U+FFFD and skips one byte), the
//! GPT-2 byte-to-unicode table, and the inverse used when decoding BPE pieces.

/// Length of the UTF-8 sequence a lead byte announces (llama.cpp's `unicode_len_utf8`).
pub(crate) fn len_utf8(lead: u8) -> usize {
    const LOOKUP: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LOOKUP[(lead >> 4) as usize]
}

/// Decodes code points like `unicode_cpts_from_utf8` (values may be surrogates or > U+10FFFF).
pub(crate) fn cpts_from_utf8(bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match cpt_at(bytes, i) {
            Some((cpt, n)) => {
                out.push(cpt);
                i += n;
            }
            None => {
                out.push(0xFFFD);
                i += 1;
            }
        }
    }
    out
}

fn cont(bytes: &[u8], i: usize) -> Option<u32> {
    let b = *bytes.get(i)?;
    (b & 0xC0 == 0x80).then_some(u32::from(b & 0x3F))
}

fn cpt_at(bytes: &[u8], i: usize) -> Option<(u32, usize)> {
    let b0 = bytes[i];
    if b0 & 0x80 == 0 {
        return Some((u32::from(b0), 1));
    }
    if b0 & 0x40 == 0 {
        return None;
    }
    if b0 & 0x20 == 0 {
        return Some(((u32::from(b0 & 0x1F) << 6) | cont(bytes, i + 1)?, 2));
    }
    if b0 & 0x10 == 0 {
        let v = (u32::from(b0 & 0x0F) << 12) | (cont(bytes, i + 1)? << 6) | cont(bytes, i + 2)?;
        return Some((v, 3));
    }
    if b0 & 0x08 == 0 {
        let v = (u32::from(b0 & 0x07) << 18)
            | (cont(bytes, i + 1)? << 12)
            | (cont(bytes, i + 2)? << 6)
            | cont(bytes, i + 3)?;
        return Some((v, 4));
    }
    None
}

/// Encodes a code point like `unicode_cpt_to_utf8`, surrogates included. llama.cpp aborts on
/// values past U+10FFFF; they become U+FFFD here.
pub(crate) fn push_cpt(out: &mut Vec<u8>, cpt: u32) {
    match cpt {
        0..=0x7F => out.push(cpt as u8),
        0x80..=0x7FF => {
            out.extend_from_slice(&[0xC0 | (cpt >> 6) as u8, 0x80 | (cpt & 0x3F) as u8])
        }
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (cpt >> 12) as u8,
            0x80 | ((cpt >> 6) & 0x3F) as u8,
            0x80 | (cpt & 0x3F) as u8,
        ]),
        0x10000..=0x10FFFF => out.extend_from_slice(&[
            0xF0 | (cpt >> 18) as u8,
            0x80 | ((cpt >> 12) & 0x3F) as u8,
            0x80 | ((cpt >> 6) & 0x3F) as u8,
            0x80 | (cpt & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice("\u{FFFD}".as_bytes()),
    }
}

/// GPT-2's byte -> code point table (printable bytes map to themselves, the rest to 256+n).
pub(crate) fn byte_to_cpt_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut n = 0;
    for b in 0..256u32 {
        let printable =
            (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
        if printable {
            table[b as usize] = b;
        } else {
            table[b as usize] = 256 + n;
            n += 1;
        }
    }
    table
}

/// The inverse of [`byte_to_cpt_table`]: code point -> byte, for code points < 324.
pub(crate) fn cpt_to_byte(cpt: u32) -> Option<u8> {
    static INVERSE: std::sync::OnceLock<[Option<u8>; 324]> = std::sync::OnceLock::new();
    let inv = INVERSE.get_or_init(|| {
        let mut inv = [None; 324];
        for (b, &c) in byte_to_cpt_table().iter().enumerate() {
            inv[c as usize] = Some(b as u8);
        }
        inv
    });
    inv.get(cpt as usize).copied().flatten()
}
