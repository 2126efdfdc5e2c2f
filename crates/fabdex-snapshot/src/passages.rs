//! Vectors of units read in passages: each unit has zero or more vectors of
//! one model, stored one after another in unit order. The sentence
//! embeddings (`embeddings.rs`) and the latent model's passages of long units
//! (`semantic.rs`) are both tables of this shape; their files differ in
//! header and checks, and share the counts-then-vectors body written here.
//!
//! The sentence embeddings keep `f32` values. The latent passages keep
//! `f16` ([`Halves`]): a search reads every passage vector, and on labs
//! those were 12 MB of a `search docs` process's 42 MB; in half precision
//! every dev and corpus question ranks exactly as before
//! (docs/performance.md).

use std::borrow::Cow;

use fabdex_semantic::{Floats, SharedBytes};
use half::f16;
use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

/// Every unit's passage vectors, in unit order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassageVectors {
    dim: usize,
    /// Unit `u`'s passages are `starts[u]..starts[u + 1]`; `units + 1` entries.
    starts: Vec<usize>,
    vectors: Values,
}

/// The vectors' values, in the precision their table stores.
#[derive(Debug, Clone, PartialEq)]
enum Values {
    F32(Floats),
    F16(Halves),
}

impl Default for Values {
    fn default() -> Values {
        Values::F32(Floats::default())
    }
}

/// A run of `f16` values: owned, or used where a mapped table holds them
/// (aligned, on a little-endian machine), as [`Floats`] are.
#[derive(Clone)]
pub enum Halves {
    Owned(Vec<f16>),
    Shared { bytes: SharedBytes, start: usize, len: usize },
}

impl Halves {
    /// `f32` values rounded to the nearest `f16`.
    pub fn rounded(values: &[f32]) -> Halves {
        let mut halves = vec![f16::ZERO; values.len()];
        halves.convert_from_f32_slice(values);
        Halves::Owned(halves)
    }

    /// The little-endian values of `bytes[start..]`: borrowed in place when
    /// they can be, copied otherwise. Their byte length must be even.
    pub fn from_table(bytes: SharedBytes, start: usize) -> Result<Halves, String> {
        let all = (*bytes).as_ref();
        let tail = all.get(start..).ok_or_else(|| format!("its values would start at byte {start}, past its end"))?;
        if !tail.len().is_multiple_of(2) {
            return Err(format!("it holds {} bytes of values, not a whole number of them", tail.len()));
        }
        let len = tail.len() / 2;
        if cfg!(target_endian = "little") && (tail.as_ptr() as usize).is_multiple_of(std::mem::align_of::<f16>()) {
            return Ok(Halves::Shared { bytes, start, len });
        }
        Ok(Halves::Owned(tail.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]])).collect()))
    }
}

impl std::ops::Deref for Halves {
    type Target = [f16];
    fn deref(&self) -> &[f16] {
        match self {
            Halves::Owned(values) => values,
            Halves::Shared { bytes, start, len } => {
                let tail = &(**bytes).as_ref()[*start..start + len * 2];
                // SAFETY: `f16` is a `u16` (`repr(transparent)`), every bit
                // pattern is a value, and `from_table` checked that these
                // bytes are aligned for it and that the machine is
                // little-endian, as the table is; the bytes outlive `self`.
                unsafe { std::slice::from_raw_parts(tail.as_ptr().cast::<f16>(), *len) }
            }
        }
    }
}

impl PartialEq for Halves {
    fn eq(&self, other: &Halves) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Halves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Halves({} values)", self.len())
    }
}

impl PassageVectors {
    /// From each unit's passage count and the vectors of all passages, in order.
    /// A reader checks that the counts add up to the vectors before it builds one.
    pub fn from_counts(dim: usize, counts: &[u32], vectors: impl Into<Floats>) -> PassageVectors {
        let mut starts = Vec::with_capacity(counts.len() + 1);
        starts.push(0);
        for &c in counts {
            starts.push(starts.last().expect("not empty") + c as usize);
        }
        PassageVectors { dim, starts, vectors: Values::F32(vectors.into()) }
    }

    /// Likewise, with the values in half precision.
    pub fn from_counts_f16(dim: usize, counts: &[u32], vectors: Halves) -> PassageVectors {
        let PassageVectors { starts, .. } = PassageVectors::from_counts(dim, counts, Vec::new());
        PassageVectors { dim, starts, vectors: Values::F16(vectors) }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Units covered, with or without passages.
    pub fn units(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Passages of all units.
    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Passages of `unit`.
    pub fn passages(&self, unit: usize) -> usize {
        self.starts[unit + 1] - self.starts[unit]
    }

    /// The vectors of `unit`'s passages, one after another (widened to
    /// `f32` when the table keeps halves).
    pub fn vectors(&self, unit: usize) -> Cow<'_, [f32]> {
        let range = self.starts[unit] * self.dim..self.starts[unit + 1] * self.dim;
        match &self.vectors {
            Values::F32(values) => Cow::Borrowed(&values[range]),
            Values::F16(values) => Cow::Owned(values[range].to_f32_vec()),
        }
    }

    /// Each unit's best cosine of `query` (a unit vector of the same model)
    /// with its passages, or −∞ for a unit without any. Units are shared over
    /// the rayon pool.
    pub fn best_cosines(&self, query: &[f32]) -> Vec<f32> {
        self.best_cosines_of(&[query]).swap_remove(0)
    }

    /// [`Self::best_cosines`] of several queries in one pass over the
    /// vectors: each passage is read from memory once for all of them (a
    /// question of several clauses ranks each; labs' 38 MB of sentence
    /// vectors read once per clause were most of such a search). Each
    /// cosine is [`fabdex_embed::cosine`]'s sum, as for one query alone.
    pub fn best_cosines_of(&self, queries: &[&[f32]]) -> Vec<Vec<f32>> {
        let k = queries.len();
        if k == 0 {
            return Vec::new();
        }
        let mut best = vec![f32::NEG_INFINITY; self.units() * k];
        let dim = self.dim.max(1);
        let chunks = best.par_chunks_mut(k).with_min_len(256).enumerate();
        match &self.vectors {
            Values::F32(values) => chunks.for_each(|(u, best)| {
                for v in values[self.starts[u] * self.dim..self.starts[u + 1] * self.dim].chunks_exact(dim) {
                    raise_to_cosines(best, v, queries);
                }
            }),
            // Each half-precision vector is widened once (F16C where the CPU
            // has it) into a buffer of the worker's, then scored as above.
            Values::F16(values) => chunks.for_each_init(
                || vec![0f32; self.dim],
                |wide, (u, best)| {
                    for v in values[self.starts[u] * self.dim..self.starts[u + 1] * self.dim].chunks_exact(dim) {
                        v.convert_to_f32_slice(wide);
                        raise_to_cosines(best, wide, queries);
                    }
                },
            ),
        }
        (0..k).map(|q| best.iter().skip(q).step_by(k).copied().collect()).collect()
    }

    /// Appends each unit's passage count as LE u32, then the vectors as LE f32.
    pub fn write_body(&self, out: &mut Vec<u8>) {
        self.write_counts(out);
        self.write_vectors(out);
    }

    /// Appends each unit's passage count as LE u32.
    pub fn write_counts(&self, out: &mut Vec<u8>) {
        out.reserve(self.units() * 4);
        for unit in 0..self.units() {
            out.extend_from_slice(&(self.passages(unit) as u32).to_le_bytes());
        }
    }

    /// Appends the vectors as LE f32, or LE f16 when the table keeps halves.
    pub fn write_vectors(&self, out: &mut Vec<u8>) {
        match &self.vectors {
            Values::F32(values) => {
                out.reserve(values.len() * 4);
                for x in values.iter() {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            Values::F16(values) => {
                out.reserve(values.len() * 2);
                for x in values.iter() {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
    }
}

/// Each query's best cosine so far, raised by passage vector `v`'s.
fn raise_to_cosines(best: &mut [f32], v: &[f32], queries: &[&[f32]]) {
    for (b, q) in best.iter_mut().zip(queries) {
        *b = b.max(fabdex_embed::cosine(v, q));
    }
}

/// LE f32 values of `bytes`, whose length is a multiple of 4.
pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One pass for several queries gives each query's own best cosines,
    /// bit for bit, including units without passages (−∞).
    #[test]
    fn several_queries_in_one_pass_match_one_at_a_time() {
        let dim = 12;
        let counts = [2u32, 0, 1, 3, 0, 1];
        let total: u32 = counts.iter().sum();
        let vectors: Vec<f32> = (0..total as usize * dim).map(|i| ((i * 37 % 23) as f32 - 11.0) / 13.0).collect();
        let table = PassageVectors::from_counts(dim, &counts, vectors);
        let queries: Vec<Vec<f32>> =
            (0..3).map(|k| (0..dim).map(|i| ((i * 5 + k * 7) % 11) as f32 / 10.0 - 0.5).collect()).collect();
        let refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
        let together = table.best_cosines_of(&refs);
        assert_eq!(together.len(), 3);
        for (q, got) in refs.iter().zip(&together) {
            assert_eq!(got, &table.best_cosines(q));
            // And each is the plain loop over the unit's passages.
            let plain: Vec<f32> = (0..table.units())
                .map(|u| {
                    table
                        .vectors(u)
                        .chunks_exact(dim)
                        .map(|v| fabdex_embed::cosine(v, q))
                        .fold(f32::NEG_INFINITY, f32::max)
                })
                .collect();
            assert_eq!(got, &plain);
        }
        assert_eq!(together[0][1], f32::NEG_INFINITY);
        assert_ne!(together[0], together[1], "the queries differ, so must their cosines");
        assert!(table.best_cosines_of(&[]).is_empty());
    }
}
