//! Compact serde forms of a job's big fields, as byte strings: a job's state crosses to workers
//! and back twice per call, and a byte string is one `Uint8Array` in JS where a map of structs
//! is thousands of objects with named properties (most of a call's overhead on workers).
//! Little-endian, fixed-size records; lengths and indices checked on the way in (the bytes come
//! from another worker: untrusted).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

use super::moments::Moments;

/// The longest count array a job holds (`percentiles::BUCKETS`, not imported: percentiles.rs
/// uses this module).
const MAX_COUNTS: usize = 1 << 16;

/// Bytes of one cell: its index (u64), then six u64 counts, min and max (f32 bits), mean and
/// m2 (f64 bits).
const CELL: usize = 8 + 6 * 8 + 2 * 4 + 2 * 8;

/// Serde for the grid cells' moments (`BTreeMap<u64, Moments>`) as one byte string.
pub(crate) mod cells {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        cells: &BTreeMap<u64, Moments>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(cells.len() * CELL);
        for (&i, m) in cells {
            for x in [i, m.count, m.nan, m.pos_inf, m.neg_inf, m.zeros, m.finite] {
                out.extend_from_slice(&x.to_le_bytes());
            }
            out.extend_from_slice(&m.min.to_bits().to_le_bytes());
            out.extend_from_slice(&m.max.to_bits().to_le_bytes());
            out.extend_from_slice(&m.mean.to_bits().to_le_bytes());
            out.extend_from_slice(&m.m2.to_bits().to_le_bytes());
        }
        s.serialize_bytes(&out)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<u64, Moments>, D::Error> {
        let bytes = d.deserialize_byte_buf(Bytes)?;
        if bytes.len() % CELL != 0 {
            return Err(de::Error::custom("cells: not whole records"));
        }
        Ok(bytes
            .chunks_exact(CELL)
            .map(|r| {
                let u = |k: usize| u64::from_le_bytes(r[8 * k..8 * k + 8].try_into().unwrap());
                let f = |at: usize| u32::from_le_bytes(r[at..at + 4].try_into().unwrap());
                let m = Moments {
                    count: u(1),
                    nan: u(2),
                    pos_inf: u(3),
                    neg_inf: u(4),
                    zeros: u(5),
                    finite: u(6),
                    min: f32::from_bits(f(56)),
                    max: f32::from_bits(f(60)),
                    mean: f64::from_bits(u(8)),
                    m2: f64::from_bits(u(9)),
                };
                (u(0), m)
            })
            .collect())
    }
}

/// Serde for a long, mostly zero count array (a job's 65,536 coarse buckets, a target's low
/// bits) as a byte string: its length (u32), then its nonzero `(index u32, count u64)` pairs.
pub(crate) mod sparse {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(4 + 12 * 64);
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        for (i, &c) in v.iter().enumerate().filter(|(_, &c)| c != 0) {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            out.extend_from_slice(&c.to_le_bytes());
        }
        s.serialize_bytes(&out)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let bytes = d.deserialize_byte_buf(Bytes)?;
        if bytes.len() < 4 {
            return Err(de::Error::custom("count array: no length"));
        }
        let (len, pairs) = bytes.split_at(4);
        let len = u32::from_le_bytes(len.try_into().unwrap()) as usize;
        if len > MAX_COUNTS {
            return Err(de::Error::custom("count array longer than 65536"));
        }
        if pairs.len() % 12 != 0 {
            return Err(de::Error::custom("count array: not whole pairs"));
        }
        let mut v = vec![0; len];
        for p in pairs.chunks_exact(12) {
            let i = u32::from_le_bytes(p[..4].try_into().unwrap()) as usize;
            let slot = v
                .get_mut(i)
                .ok_or_else(|| de::Error::custom("count index out of range"))?;
            *slot = u64::from_le_bytes(p[4..].try_into().unwrap());
        }
        Ok(v)
    }
}

/// A byte string, from formats that have them (a `Uint8Array` in JS) or a sequence of bytes.
struct Bytes;

impl<'de> Visitor<'de> for Bytes {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a byte string")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        let mut out = Vec::new();
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Both {
        #[serde(with = "cells")]
        cells: BTreeMap<u64, Moments>,
        #[serde(with = "sparse")]
        counts: Vec<u64>,
    }

    #[test]
    fn round_trips_and_refuses_bad_bytes() {
        let m = Moments::of(&[1.5, -2.0, f32::NAN, 0.0, f32::INFINITY]);
        let mut counts = vec![0u64; 100];
        counts[7] = 3;
        counts[99] = u64::MAX;
        let both = Both {
            cells: BTreeMap::from([(3, m), (u64::MAX, Moments::default())]),
            counts,
        };
        let text = serde_json::to_string(&both).unwrap();
        let back: Both = serde_json::from_str(&text).unwrap();
        assert_eq!(back.cells.len(), 2);
        assert_eq!(back.cells[&3].mean.to_bits(), m.mean.to_bits());
        assert_eq!(back.cells[&3].m2.to_bits(), m.m2.to_bits());
        assert_eq!(back.cells[&u64::MAX], Moments::default());
        assert_eq!(back.counts, both.counts);
        for bad in [
            r#"{"cells":[1,2,3],"counts":[0,0,0,0]}"#,
            r#"{"cells":[],"counts":[1,0,1,0]}"#,
            r#"{"cells":[],"counts":[1,0,0,0,5,0,0,0,1,0,0,0,0,0,0,0]}"#,
            r#"{"cells":[],"counts":[1,0]}"#,
        ] {
            assert!(serde_json::from_str::<Both>(bad).is_err(), "{bad}");
        }
    }
}
