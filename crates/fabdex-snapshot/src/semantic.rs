//! The corpus-learned semantic models of a snapshot: one over search units and
//! one over whole files, fitted by `fabdex-semantic` from the same analysed
//! terms the search index holds, and the units model's vectors of the
//! passages of long units. Stored as `tables/semantic-units.bin`,
//! `tables/semantic-files.bin` and `tables/semantic-passages.bin`.

use fabdex_semantic::Model;

use crate::passages::{Halves, PassageVectors};

/// How many times each field's terms count in a unit's bag: a heading and the
/// symbols a section defines say most about what it is about.
pub const SEMANTIC_FIELD_WEIGHTS: [(&str, f32); 7] = [
    ("heading", 3.0),
    ("defines", 2.0),
    ("context", 1.0),
    ("body", 1.0),
    ("code", 1.0),
    ("symbols", 1.0),
    ("parent", 1.0),
];

pub const UNITS_TABLE: &str = "tables/semantic-units.bin";
pub const FILES_TABLE: &str = "tables/semantic-files.bin";
pub const PASSAGES_TABLE: &str = "tables/semantic-passages.bin";

/// Body and code terms per passage of a long unit. A unit's vector is the
/// sum of all its terms, so in a long section the few sentences that answer a
/// question are outweighed by the rest; a passage this short is mostly about
/// one thing. Measured on both question sets: 48 helped on both, 32 lost a
/// corpus question from the top 10, 96 and 192 gained nothing (docs/ranking.md).
pub const PASSAGE_TERMS: usize = 48;

/// Both models of a snapshot.
#[derive(Debug, Clone)]
pub struct SemanticModels {
    /// One document per search unit, in unit order.
    pub units: Model,
    /// One document per docs file, in file order.
    pub files: Model,
    /// The passages of long units, embedded by `units`.
    pub passages: UnitPassages,
}

/// The vectors of each long unit's passages, folded into the units model's
/// space. A passage is the unit's heading, defined names and context (as
/// weighted in its bag) and [`PASSAGE_TERMS`] terms of its body and code,
/// window after window; a unit with no more terms than that has no passages
/// (its own vector says the same).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitPassages(pub PassageVectors);

pub const PASSAGES_MAGIC: &[u8] = b"FDXLSAP2\n";

impl UnitPassages {
    /// From each unit's passage count and the `f32` vectors of all
    /// passages, kept in half precision (as the table stores them, so that
    /// a built table and a read one are the same values).
    pub fn rounded(dim: usize, counts: &[u32], vectors: &[f32]) -> UnitPassages {
        UnitPassages(PassageVectors::from_counts_f16(dim, counts, Halves::rounded(vectors)))
    }

    /// Units covered (with or without passages).
    pub fn units(&self) -> usize {
        self.0.units()
    }

    /// Passages of all units.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn dim(&self) -> usize {
        self.0.dim()
    }

    /// Raise each unit's cosine with `query` to its best passage's, where that is higher.
    pub fn raise(&self, query: &[f32], sims: &mut [f32]) {
        if self.dim() == 0 || query.len() != self.dim() {
            return;
        }
        for (sim, best) in sims.iter_mut().zip(self.0.best_cosines(query)) {
            *sim = sim.max(best);
        }
    }

    /// Magic, then dimensions and units as LE u32, each unit's passage count
    /// as LE u32, zeros to a multiple of 4 bytes, then the vectors as LE f16.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = PASSAGES_MAGIC.to_vec();
        out.extend_from_slice(&(self.dim() as u32).to_le_bytes());
        out.extend_from_slice(&(self.units() as u32).to_le_bytes());
        self.0.write_counts(&mut out);
        // Zeros up to a multiple of 4 bytes, so that a mapped table's vectors are aligned and used in place.
        out.resize(out.len().next_multiple_of(4), 0);
        self.0.write_vectors(&mut out);
        out
    }

    /// Read [`UnitPassages::to_bytes`]; the error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<UnitPassages, String> {
        let head = UnitPassages::head_len(bytes)?;
        if bytes.len() < head {
            let units = (head - PASSAGES_MAGIC.len() - 8) / 4; // the padding is under 4 bytes
            return Err(format!("it ends before the passage counts of its {units} units"));
        }
        let values = Halves::from_table(std::sync::Arc::new(bytes.to_vec()) as fabdex_semantic::SharedBytes, head)?;
        UnitPassages::from_head_and_values(&bytes[..head], values)
    }

    /// Bytes that [`UnitPassages::head_len`] needs.
    pub const HEAD_PREFIX: usize = PASSAGES_MAGIC.len() + 8;

    /// How many bytes of the stored form come before its vectors (the magic,
    /// dimensions, unit count and counts), read from its first
    /// [`UnitPassages::HEAD_PREFIX`] bytes.
    pub fn head_len(prefix: &[u8]) -> Result<usize, String> {
        let rest = prefix.strip_prefix(PASSAGES_MAGIC).ok_or("it does not start with the passages' magic line")?;
        let units = rest
            .get(4..8)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
            .ok_or("it ends before its dimensions and unit count")?;
        Ok((PASSAGES_MAGIC.len() + 8 + units * 4).next_multiple_of(4))
    }

    /// The passages from the stored form's head (its first
    /// [`UnitPassages::head_len`] bytes) and its vectors' half-precision values.
    pub fn from_head_and_values(head: &[u8], values: Halves) -> Result<UnitPassages, String> {
        if UnitPassages::head_len(head)? != head.len() {
            return Err("its passage counts are not where its unit count says".into());
        }
        let rest = &head[PASSAGES_MAGIC.len()..];
        let word = |i: usize| u32::from_le_bytes(rest[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        let (dim, units) = (word(0) as usize, word(1) as usize);
        let counts: Vec<u32> = (0..units).map(|u| word(2 + u)).collect();
        let total = counts.iter().try_fold(0u32, |sum, &c| sum.checked_add(c)).ok_or("its passage counts overflow")?;
        let expected = (total as usize).checked_mul(dim).filter(|n| n.checked_mul(2).is_some());
        if expected != Some(values.len()) {
            let wanted = expected.map_or_else(|| "more than memory holds".to_string(), |n| n.to_string());
            return Err(format!(
                "it holds {} bytes of vectors, but its counts call for {wanted} values",
                values.len() * 2
            ));
        }
        Ok(UnitPassages(PassageVectors::from_counts_f16(dim, &counts, values)))
    }
}

/// A query's bag: every analysed term once.
pub fn query_bag(terms: &[String]) -> Vec<(String, f32)> {
    terms.iter().map(|t| (t.clone(), 1.0)).collect()
}
