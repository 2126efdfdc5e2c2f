//! Vectors of units read in passages: each unit has zero or more vectors of
//! one model, stored one after another in unit order. The sentence
//! embeddings (`embeddings.rs`) and the latent model's passages of long units
//! (`semantic.rs`) are both tables of this shape; their files differ in
//! header and checks, and share the counts-then-vectors body written here.

use fabdex_semantic::Floats;
use rayon::prelude::*;

/// Every unit's passage vectors, in unit order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassageVectors {
    dim: usize,
    /// Unit `u`'s passages are `starts[u]..starts[u + 1]`; `units + 1` entries.
    starts: Vec<usize>,
    vectors: Floats,
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
        PassageVectors { dim, starts, vectors: vectors.into() }
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

    /// The vectors of `unit`'s passages, one after another.
    pub fn vectors(&self, unit: usize) -> &[f32] {
        &self.vectors[self.starts[unit] * self.dim..self.starts[unit + 1] * self.dim]
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
        let vectors: &[f32] = &self.vectors;
        let mut best = vec![f32::NEG_INFINITY; self.units() * k];
        best.par_chunks_mut(k).with_min_len(256).enumerate().for_each(|(u, best)| {
            for v in vectors[self.starts[u] * self.dim..self.starts[u + 1] * self.dim].chunks_exact(self.dim.max(1)) {
                for (b, q) in best.iter_mut().zip(queries) {
                    *b = b.max(fabdex_embed::cosine(v, q));
                }
            }
        });
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

    /// Appends the vectors as LE f32.
    pub fn write_vectors(&self, out: &mut Vec<u8>) {
        out.reserve(self.vectors.len() * 4);
        for x in self.vectors.iter() {
            out.extend_from_slice(&x.to_le_bytes());
        }
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
