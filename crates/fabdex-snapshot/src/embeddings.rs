//! Optional sentence embeddings of the search units, `tables/embeddings.bin`.
//!
//! Built only when the index is asked for them (`fabdex index --embeddings
//! DIR`, or `[index] embeddings` in the config): a local model
//! (`fabdex-embed`) encodes each unit's heading path, its file's lead
//! paragraph, and its prose and code ([`unit_source`]), in passages of up to
//! [`MAX_TOKENS`] tokens, at most [`MAX_PASSAGES`] per unit ([`passages`]);
//! then a docs unit's heading path alone, and each list item in another file
//! that opens with a link to it (`crate::referrers`), one passage each.
//! The table records which model made the vectors
//! (its digest) and where it was, so the query side can load the same model to
//! encode a question, and refuses any other.
//!
//! Encoding is the slow part of such a build, so each vector is cached in the
//! index's `cache/` folder under the model's digest, the precision, the
//! encoder version and the passage's token ids: a rebuild encodes only the
//! passages whose text changed.

use anyhow::{Context, Result, bail};
use fabdex_embed::{ModelIdentity, Precision};
use serde::{Deserialize, Serialize};

use crate::passages::PassageVectors;

pub const TABLE: &str = "tables/embeddings.bin";

/// Sentence embeddings of the programs, in the patterns table's order: the
/// same table format, one "unit" per program ([`program_source`]).
pub const PROGRAMS_TABLE: &str = "tables/program-embeddings.bin";

/// Tokens of one passage read by the model, `[CLS]` and `[SEP]` included.
/// MiniLM-class models are trained on passages this long; a longer read of
/// one vector measured no better on labs.
pub const MAX_TOKENS: usize = 128;

/// Passages of a unit's text given their own vector, the first included (the
/// heading alone and referring items come on top); a unit's similarity is
/// its best passage's. Past the first 128 tokens a long
/// section would otherwise be invisible to the model (labs: 7,082 of 9,095
/// units are longer): four passages read up to about 470 tokens. On labs,
/// with the dense weight raised to 8, they lift recall@10 0.60 → 0.67 and
/// MRR@10 0.373 → 0.440, for 2.7 times the vectors (see `docs/ranking.md`).
pub const MAX_PASSAGES: usize = 4;

/// Tokens of the heading path repeated at the start of each later passage,
/// so that a passage still says which section it is from.
pub const HEADING_TOKENS: usize = 40;

pub const MAGIC: &[u8; 8] = b"FDXEMB2\n";
/// The table of fabdex before passages: one vector per unit.
pub const EARLIER_MAGIC: &[u8; 8] = b"FDXEMB1\n";

/// A table of the format before passages (`FDXEMB1`, one vector per unit):
/// not corrupt, but not readable by this fabdex either.
#[derive(Debug)]
pub struct EarlierTable;

impl std::fmt::Display for EarlierTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "an embeddings table of an earlier fabdex (one vector per unit, `FDXEMB1`), which this one does not read",
        )
    }
}

impl std::error::Error for EarlierTable {}

/// Version of what the model is given of a unit ([`unit_source`] and the
/// passages cut from it); the snapshot id covers it. The vector cache is
/// keyed by the token ids themselves.
/// 4: a unit's prose before its code blocks (stop 40).
/// 5: one more passage, the heading path alone (stop 42).
/// 6: and one per list item elsewhere that opens with a link to it (stop 42).
pub const TEXT_VERSION: u32 = 6;

/// Version of what the model is given of a program ([`program_source`]).
pub const PROGRAM_TEXT_VERSION: u32 = 1;

/// How the rows of one table are read: the version of their text, how
/// many passages of it at most, whether each also gets a passage of its
/// heading path alone, and one per referring item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub text_version: u32,
    /// Passages of the unit's own text ([`MAX_PASSAGES`] by default).
    pub max_passages: usize,
    pub heading_alone: bool,
    pub referrers: bool,
}

impl Reading {
    /// What the snapshot id adds for this reading of docs units: nothing
    /// for the standard one, so that its ids stay what they were.
    pub fn id_suffix(&self) -> String {
        if *self == UNITS {
            return String::new();
        }
        format!(" reading {} {} {}", self.max_passages, self.heading_alone, self.referrers)
    }
}

/// Docs units get their heading path alone as one more passage. A
/// heading names what a section is about in a few words; in the first
/// passage the lead and the body outweigh it in the mean the model pools.
/// Measured with all-MiniLM-L6-v2: labs recall@10 0.67 → 0.73, the corpus
/// 0.80 → 0.87, MRR@10 up on both (see `docs/ranking.md`).
pub const UNITS: Reading =
    Reading { text_version: TEXT_VERSION, max_passages: MAX_PASSAGES, heading_alone: true, referrers: true };

/// Programs do not: their heading (entry path and `[NAME]`s) alone moved
/// labs' pattern tasks down (MRR 0.852 → 0.837) while the corpus's rose.
pub const PROGRAMS: Reading =
    Reading { text_version: PROGRAM_TEXT_VERSION, max_passages: MAX_PASSAGES, heading_alone: false, referrers: false };

/// What the table says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingsHeader {
    pub model: ModelIdentity,
    /// The model folder as the build found it (absolute): where queries load it from.
    pub model_dir: String,
    /// How the vectors were computed; a question is encoded the same way.
    /// (Tables before precisions were `f32`.)
    #[serde(default)]
    pub precision: Precision,
    /// [`fabdex_embed::ENCODER_VERSION`] of the encoder that computed the
    /// vectors (0: a table from before versions were recorded).
    #[serde(default)]
    pub encoder_version: u32,
    /// The version of the text the vectors were encoded from
    /// ([`TEXT_VERSION`] for units, [`PROGRAM_TEXT_VERSION`] for programs;
    /// 0: a table from before versions were recorded).
    #[serde(default)]
    pub text_version: u32,
    /// Tokens per passage.
    pub max_tokens: usize,
    /// Passages of a unit's text at most ([`MAX_PASSAGES`] unless
    /// `[index.embedding_passages] windows` says fewer); a docs unit's
    /// heading alone and its referring items come on top.
    pub max_passages: usize,
    /// Whether each unit has a passage of its heading path alone (tables
    /// before this field: docs units did).
    #[serde(default = "yes")]
    pub heading_alone: bool,
    /// Whether each referring list item is a passage of the unit it links to.
    #[serde(default = "yes")]
    pub referrers: bool,
    pub units: usize,
    /// Vectors in the table: every unit's passages.
    pub passages: usize,
    /// Units longer than their `max_passages` passages read, read only that far.
    pub truncated: usize,
}

/// serde's default for the fields that are on unless set.
pub fn yes() -> bool {
    true
}

/// The vectors of every unit's passages, in unit order, and how many each
/// unit has.
#[derive(Debug, Clone)]
pub struct UnitEmbeddings {
    pub header: EmbeddingsHeader,
    passages: PassageVectors,
}

/// How a build came by its vectors (in passages).
#[derive(Debug, Clone, Copy, Default)]
pub struct EncodeStats {
    pub encoded: usize,
    pub reused: usize,
    /// Passages of unchanged units, carried from the previous snapshot's table.
    pub carried: usize,
}

impl UnitEmbeddings {
    pub fn new(header: EmbeddingsHeader, counts: Vec<u32>, vectors: impl Into<fabdex_semantic::Floats>) -> Self {
        let passages = PassageVectors::from_counts(header.model.dim, &counts, vectors);
        UnitEmbeddings { header, passages }
    }

    pub fn dim(&self) -> usize {
        self.header.model.dim
    }

    pub fn len(&self) -> usize {
        self.header.units
    }

    pub fn is_empty(&self) -> bool {
        self.header.units == 0
    }

    /// Passages the model read of `unit`.
    pub fn passages(&self, unit: usize) -> usize {
        self.passages.passages(unit)
    }

    /// The vectors of `unit`'s passages, one after another.
    pub fn vectors(&self, unit: usize) -> std::borrow::Cow<'_, [f32]> {
        self.passages.vectors(unit)
    }

    /// Cosine of `query` (a unit vector of the same model) with every unit:
    /// its best passage's. Units are shared over the rayon pool.
    pub fn similarities(&self, query: &[f32]) -> Vec<f32> {
        self.passages.best_cosines(query)
    }

    /// [`Self::similarities`] of several queries, in one pass over the vectors.
    pub fn similarities_of(&self, queries: &[&[f32]]) -> Vec<Vec<f32>> {
        self.passages.best_cosines_of(queries)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut header = serde_json::to_vec(&self.header).expect("header serialises");
        // Spaces after the JSON, so that the counts and then the vectors
        // start at a multiple of 4 bytes and a mapped table's vectors are
        // used in place.
        while !(MAGIC.len() + 4 + header.len()).is_multiple_of(4) {
            header.push(b' ');
        }
        let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        self.passages.write_body(&mut out);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (header, counts, vectors_at) = Self::parse(bytes)?;
        Ok(UnitEmbeddings::new(header, counts, crate::passages::f32s(&bytes[vectors_at..])))
    }

    /// The table from a mapped (or read) file: its vectors used where the
    /// mapping holds them when they are aligned, copied otherwise.
    pub fn from_shared(bytes: fabdex_semantic::SharedBytes) -> Result<Self> {
        let (header, counts, vectors_at) = Self::parse((*bytes).as_ref())?;
        let vectors = fabdex_semantic::Floats::from_table(bytes, vectors_at).map_err(anyhow::Error::msg)?;
        Ok(UnitEmbeddings::new(header, counts, vectors))
    }

    /// The header, the passage counts and where the vectors start, checked
    /// against the table's length.
    pub fn parse(bytes: &[u8]) -> Result<(EmbeddingsHeader, Vec<u32>, usize)> {
        if bytes.starts_with(EARLIER_MAGIC) {
            return Err(EarlierTable.into());
        }
        if bytes.len() < MAGIC.len() + 4 || &bytes[..MAGIC.len()] != MAGIC {
            bail!("not a fabdex embeddings table");
        }
        let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let header_end = 12usize.checked_add(len).filter(|&e| e <= bytes.len()).context("header runs past the end")?;
        let header: EmbeddingsHeader = serde_json::from_slice(&bytes[12..header_end]).context("header is not valid")?;
        let counts_end = header
            .units
            .checked_mul(4)
            .and_then(|n| n.checked_add(header_end))
            .filter(|&e| e <= bytes.len())
            .context("passage counts run past the end")?;
        let counts: Vec<u32> = bytes[header_end..counts_end]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total != header.passages as u64 || counts.contains(&0) {
            bail!("passage counts add up to {total}, not the header's {} (or a unit has none)", header.passages);
        }
        let floats = &bytes[counts_end..];
        let expected = header.passages.checked_mul(header.model.dim).and_then(|n| n.checked_mul(4));
        if expected != Some(floats.len()) {
            bail!(
                "holds {} bytes of vectors; {} passages of {} dimensions need {}",
                floats.len(),
                header.passages,
                header.model.dim,
                header.passages * header.model.dim * 4
            );
        }
        Ok((header, counts, counts_end))
    }
}
