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

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fabdex_embed::{ModelIdentity, Precision, Role, SentenceEncoder};
use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::docs_table::DocRows;
use crate::search_schema::prose_and_code;

use crate::Unit;
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

/// Passages encoded per forward pass; batches run in parallel.
const BATCH: usize = 16;

const MAGIC: &[u8; 8] = b"FDXEMB2\n";
/// The table of fabdex before passages: one vector per unit.
const EARLIER_MAGIC: &[u8; 8] = b"FDXEMB1\n";

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
pub(crate) fn yes() -> bool {
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
    fn new(header: EmbeddingsHeader, counts: Vec<u32>, vectors: impl Into<fabdex_semantic::Floats>) -> Self {
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
    fn parse(bytes: &[u8]) -> Result<(EmbeddingsHeader, Vec<u32>, usize)> {
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

/// What the model reads of a unit: the file's title and the section's
/// heading path (`wish() > Result Shape`); for a section past the file's
/// first, the file's lead paragraph (about 40 tokens: what the document is
/// for, in its own words, which a deep section rarely repeats; measured on
/// labs, MRR@10 0.353 → 0.373); then the unit's own Markdown: its prose as
/// written, and after it its code blocks. A sentence model reads words
/// better than code, and its window is short: read in place, a section's
/// code took the tokens of the prose after it (measured on labs, the model
/// part alone: MRR@10 0.483 → 0.556). Front matter descriptions are left
/// out: they would crowd the section out of the model's token window too,
/// and the lead says the same in prose.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitSource {
    pub heading: String,
    pub lead: Option<String>,
    pub body: String,
    /// The list items in other files that open with a link to the unit
    /// (`crate::referrers::link_items`); none for a program.
    pub referrers: Vec<String>,
}

impl UnitSource {
    /// Heading line and lead: what comes before the body in the first passage.
    pub fn preamble(&self) -> String {
        let mut text = self.heading.clone();
        text.push('\n');
        if let Some(lead) = &self.lead {
            text.push_str(lead);
            text.push('\n');
        }
        text
    }

    /// The first passage's text, cut by the tokenizer at [`MAX_TOKENS`].
    pub fn first_text(&self) -> String {
        self.preamble() + &self.body
    }
}

pub fn unit_source(file_text: &str, docs: &impl DocRows, unit: &Unit) -> UnitSource {
    let row = docs.section_row(unit.section);
    let file = docs.file_row(row.file);
    let mut out: Vec<&str> = file.title.as_deref().into_iter().collect();
    for h in &row.section.heading_path {
        if out.last() != Some(&h.as_str()) {
            out.push(h);
        }
    }
    let first = &docs.section_row(file.first_section).section;
    let lead = if unit.section != file.first_section {
        file_text.get(first.byte_start as usize..first.byte_end as usize).and_then(lead_paragraph)
    } else {
        None
    };
    let (prose, code) = prose_and_code(file_text, &row.section.code_blocks, unit.byte_start, unit.byte_end);
    UnitSource { heading: out.join(" > "), lead, body: prose + &code, referrers: Vec::new() }
}

/// What the model reads of a program: its entry path in words and its
/// `[NAME]`s as the heading; the description (JSDoc, or the first catalog
/// or README prose) as the lead; then what describes it in the library's
/// words first (catalog and README prose, keywords, the module comment),
/// what a user sees (UI text), its action names and the sections linking
/// to it. Contract field names are left to BM25F: they are code, not prose.
pub fn program_source(p: &fabdex_model::ts::ProgramRow) -> UnitSource {
    use fabdex_model::ts::DocRole;
    let prof = &p.profile;
    let words = |s: &str| s.replace(['/', '.', '-', '_'], " ");
    let path = p.entry.strip_suffix(".tsx").or_else(|| p.entry.strip_suffix(".ts")).unwrap_or(&p.entry);
    let mut heading = words(path).split_whitespace().collect::<Vec<_>>().join(" ");
    for name in prof.own.names.iter().take(2) {
        heading.push_str(" > ");
        heading.push_str(name);
    }
    let notes = |role: DocRole| prof.docs.iter().filter(move |n| n.role == role);
    let lead = p.description.clone().filter(|d| !d.trim().is_empty());
    let mut body = Vec::new();
    for role in [DocRole::Catalog, DocRole::Readme] {
        for n in notes(role) {
            body.push(n.text.clone());
            if !n.keywords.is_empty() {
                body.push(format!("Keywords: {}", n.keywords.join(", ")));
            }
        }
    }
    body.extend(prof.own.module_doc.clone());
    if !p.hashtags.is_empty() {
        body.push(p.hashtags.join(" "));
    }
    if !prof.own.ui.is_empty() {
        body.push(prof.own.ui.join(". "));
    }
    if !prof.own.actions.is_empty() {
        body.push(prof.own.actions.iter().map(|a| words(a)).collect::<Vec<_>>().join(", "));
    }
    body.extend(notes(DocRole::Link).map(|n| format!("{}: {}", n.heading, n.text)));
    UnitSource { heading, lead, body: body.join("\n"), referrers: Vec::new() }
}

/// The body token ranges of a unit's later passages. The first passage read
/// the body up to `first_covers`; each later one reads `window` more, until
/// the body ends or `max_later` passages are cut. Also whether the body
/// runs past the last of them.
pub fn later_windows(
    body_len: usize,
    first_covers: usize,
    window: usize,
    max_later: usize,
) -> (Vec<std::ops::Range<usize>>, bool) {
    let mut out = Vec::new();
    let mut at = first_covers.min(body_len);
    while at < body_len && out.len() < max_later && window > 0 {
        let end = (at + window).min(body_len);
        out.push(at..end);
        at = end;
    }
    (out, at < body_len)
}

/// The first prose paragraph of a file's opening section (`body`),
/// whitespace collapsed, cut at a word near [`LEAD_CHARS`]: what the
/// document is about, which a section deep inside it does not repeat.
fn lead_paragraph(body: &str) -> Option<String> {
    let para = body
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !["#", "<!--", "```", "|", "---", "<"].iter().any(|m| p.starts_with(m)))?;
    let flat: Vec<&str> = para.split_whitespace().collect();
    let mut lead = String::new();
    for w in flat {
        if lead.len() + w.len() > LEAD_CHARS {
            break;
        }
        if !lead.is_empty() {
            lead.push(' ');
        }
        lead.push_str(w);
    }
    (!lead.is_empty()).then_some(lead)
}

/// About 40 tokens of a file's lead paragraph go before each of its sections.
const LEAD_CHARS: usize = 200;

/// Load the model a build was asked to use; the error names the folder.
pub fn load_model(dir: &Path, precision: Precision) -> Result<SentenceEncoder> {
    let mut encoder =
        SentenceEncoder::load(dir).with_context(|| format!("[index] embeddings: cannot use `{}`", dir.display()))?;
    encoder.set_precision(precision);
    Ok(encoder)
}

/// The token ids of a unit's passages (each with the model's passage prompt,
/// if it has one), and whether the unit is longer than they read. The first is [`UnitSource::first_text`] cut at [`MAX_TOKENS`];
/// a longer unit's later passages are its heading path (cut at
/// [`HEADING_TOKENS`]) and the next window of its body, up to
/// `reading.max_passages` in all. With `reading.heading_alone`, the heading
/// path by itself follows them; then, with `reading.referrers`, each of
/// `source.referrers`, cut at [`HEADING_TOKENS`] too.
pub fn passages(encoder: &SentenceEncoder, source: &UnitSource, reading: Reading) -> Result<(Vec<Vec<u32>>, bool)> {
    let mut heading = encoder.piece_ids(&source.heading)?;
    heading.truncate(HEADING_TOKENS);
    let (mut out, cut) = body_passages(encoder, source, &heading, reading.max_passages)?;
    if reading.heading_alone && !heading.is_empty() {
        out.push(encoder.framed_as(Role::Passage, &[&heading]));
    }
    let referrers = if reading.referrers { source.referrers.as_slice() } else { &[] };
    for item in referrers {
        let mut ids = encoder.piece_ids(item)?;
        ids.truncate(HEADING_TOKENS);
        out.push(encoder.framed_as(Role::Passage, &[&ids]));
    }
    Ok((out, cut))
}

/// The first passage and a longer unit's later windows, `max_passages` in
/// all at most; `heading` is the unit's heading path, already cut at
/// [`HEADING_TOKENS`].
fn body_passages(
    encoder: &SentenceEncoder,
    source: &UnitSource,
    heading: &[u32],
    max_passages: usize,
) -> Result<(Vec<Vec<u32>>, bool)> {
    let (first, cut) = encoder.token_ids_as(Role::Passage, &source.first_text(), MAX_TOKENS)?;
    if !cut {
        return Ok((vec![first], false));
    }
    let preamble = encoder.piece_ids(&source.preamble())?.len();
    let body = encoder.piece_ids(&source.body)?;
    let room = MAX_TOKENS.saturating_sub(encoder.frame_len_as(Role::Passage));
    let (windows, cut) = later_windows(
        body.len(),
        room.saturating_sub(preamble),
        room.saturating_sub(heading.len()),
        max_passages.saturating_sub(1),
    );
    let mut out = vec![first];
    out.extend(windows.into_iter().map(|w| encoder.framed_as(Role::Passage, &[heading, &body[w]])));
    Ok((out, cut))
}

/// What an incremental build carries into [`compute`]: the published
/// snapshot's table (same model, precision, encoder version and bounds) and,
/// per unit, the unit of it that is unchanged and that no changed file links
/// to (its referring items may have moved); `gone_truncated` is how many of
/// the previous table's truncated units are not carried (edited, removed, or
/// read again for such a link).
pub struct CarriedVectors<'a> {
    pub previous: &'a UnitEmbeddings,
    pub units: Vec<Option<u32>>,
    pub gone_truncated: usize,
}

impl CarriedVectors<'_> {
    /// Whether `previous` was made by this encoder, from units' text of
    /// this version, with these bounds and this reading.
    pub fn fits(previous: &UnitEmbeddings, encoder: &SentenceEncoder, reading: Reading) -> bool {
        let h = &previous.header;
        h.model.digest == encoder.identity().digest
            && h.precision == encoder.precision()
            && h.encoder_version == fabdex_embed::ENCODER_VERSION
            && h.text_version == reading.text_version
            && h.max_tokens == MAX_TOKENS
            && h.max_passages == reading.max_passages
            && h.heading_alone == reading.heading_alone
            && h.referrers == reading.referrers
    }
}

/// Whether the model reads `source` only up to its last passage (a unit
/// past `reading.max_passages` passages).
pub fn truncated(encoder: &SentenceEncoder, source: &UnitSource, reading: Reading) -> Result<bool> {
    let mut heading = encoder.piece_ids(&source.heading)?;
    heading.truncate(HEADING_TOKENS);
    Ok(body_passages(encoder, source, &heading, reading.max_passages)?.1)
}

/// Encode every unit's passages, reusing cached vectors; `reading` says
/// how `sources` are read, and its text version is recorded in the table. `progress`
/// is told how many passages are done after each batch, out of the total it
/// is first given.
pub fn compute(
    encoder: &SentenceEncoder,
    sources: &[UnitSource],
    reading: Reading,
    carried: Option<&CarriedVectors<'_>>,
    cache_root: &Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(UnitEmbeddings, EncodeStats)> {
    let model = encoder.identity().clone();
    let dim = model.dim;
    let cache = cache_root.join(cache_folder(&model, encoder.precision()));
    std::fs::create_dir_all(&cache).with_context(|| format!("cannot create `{}`", cache.display()))?;
    let carried_of = |u: usize| carried.and_then(|c| c.units[u]);
    // Units carried from the previous table are neither tokenized nor looked up.
    let per_unit: Vec<Option<(Vec<Vec<u32>>, bool)>> = sources
        .par_iter()
        .enumerate()
        .map(|(u, s)| if carried_of(u).is_some() { Ok(None) } else { passages(encoder, s, reading).map(Some) })
        .collect::<Result<_>>()?;
    let new_truncated = per_unit.iter().flatten().filter(|(_, cut)| *cut).count();
    let new_counts: Vec<u32> = per_unit.iter().flatten().map(|(p, _)| p.len() as u32).collect();
    let tokens: Vec<Vec<u32>> = per_unit.iter().flatten().flat_map(|(p, _)| p.iter().cloned()).collect();
    let (new_vectors, mut stats) = encode_cached(encoder, &tokens, &cache, progress)?;
    // Every unit's passages in unit order: carried ones from the previous table.
    let (mut counts, mut vectors) = (Vec::with_capacity(sources.len()), Vec::new());
    let (mut next_new, mut next_vector) = (0, 0);
    for (u, new) in per_unit.iter().enumerate() {
        match (carried_of(u), new) {
            (Some(p), _) => {
                let previous = carried.expect("a carried unit has a previous table").previous;
                counts.push(previous.passages(p as usize) as u32);
                vectors.extend_from_slice(&previous.vectors(p as usize));
            }
            (None, _) => {
                let n = new_counts[next_new] as usize;
                counts.push(n as u32);
                vectors.extend_from_slice(&new_vectors[next_vector * dim..(next_vector + n) * dim]);
                next_new += 1;
                next_vector += n;
            }
        }
    }
    stats.carried = counts.iter().map(|&c| c as usize).sum::<usize>() - tokens.len();
    let truncated = carried.map_or(0, |c| c.previous.header.truncated.saturating_sub(c.gone_truncated)) + new_truncated;
    let header = EmbeddingsHeader {
        model,
        model_dir: encoder.dir().canonicalize().unwrap_or_else(|_| encoder.dir().to_path_buf()).display().to_string(),
        precision: encoder.precision(),
        encoder_version: fabdex_embed::ENCODER_VERSION,
        text_version: reading.text_version,
        max_tokens: MAX_TOKENS,
        max_passages: reading.max_passages,
        heading_alone: reading.heading_alone,
        referrers: reading.referrers,
        units: sources.len(),
        passages: counts.iter().map(|&c| c as usize).sum(),
        truncated,
    };
    Ok((UnitEmbeddings::new(header, counts, vectors), stats))
}

/// The cache folder of one model, precision and encoder version
/// (`embed-<digest>[-int8]-e<version>-ids`): vectors of any two differ.
fn cache_folder(model: &ModelIdentity, precision: Precision) -> String {
    let digest = &model.digest["blake3:".len()..][..16];
    let precision = match precision {
        Precision::F32 => String::new(),
        p => format!("-{}", p.as_str()),
    };
    format!("embed-{digest}{precision}-e{}-ids", fabdex_embed::ENCODER_VERSION)
}

/// The vector of each passage's token ids: from the cache (keyed by the
/// ids) when it holds it, else encoded in batches of like length (and cached).
fn encode_cached(
    encoder: &SentenceEncoder,
    tokens: &[Vec<u32>],
    cache: &Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<f32>, EncodeStats)> {
    let dim = encoder.identity().dim;
    let key = |ids: &[u32]| {
        let bytes: Vec<u8> = ids.iter().flat_map(|x| x.to_le_bytes()).collect();
        cache.join(blake3::hash(&bytes).to_hex().as_str())
    };
    let keys: Vec<PathBuf> = tokens.par_iter().map(|t| key(t)).collect();
    let mut vectors = vec![0f32; tokens.len() * dim];
    let mut missing = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        match std::fs::read(key) {
            Ok(bytes) if bytes.len() == dim * 4 => {
                for (j, c) in bytes.chunks_exact(4).enumerate() {
                    vectors[i * dim + j] = f32::from_le_bytes(c.try_into().expect("4 bytes"));
                }
            }
            _ => missing.push(i),
        }
    }
    let stats = EncodeStats { encoded: missing.len(), reused: tokens.len() - missing.len(), carried: 0 };
    // Batches of like length take like time on each thread.
    missing.sort_by_key(|&i| (tokens[i].len(), i));
    let done = std::sync::atomic::AtomicUsize::new(stats.reused);
    progress(stats.reused, tokens.len());
    let encoded: Vec<(usize, Vec<f32>)> = missing
        .par_chunks(BATCH)
        .map(|chunk| {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| tokens[i].as_slice()).collect();
            let vectors = encoder.encode_ids(&batch)?;
            let n = done.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed) + chunk.len();
            progress(n, tokens.len());
            Ok(chunk.iter().copied().zip(vectors).collect::<Vec<_>>())
        })
        .collect::<Result<Vec<_>, fabdex_embed::EmbedError>>()?
        .into_iter()
        .flatten()
        .collect();
    for (i, v) in encoded {
        vectors[i * dim..(i + 1) * dim].copy_from_slice(&v);
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        // A cache write that fails costs a re-encode next time, nothing more.
        let _ = std::fs::write(&keys[i], bytes);
    }
    Ok((vectors, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_is_the_first_prose_paragraph_cut_at_a_word() {
        let body = "<!-- @reviewed -->\n\n# wish()\n\n`wish()` discovers and connects\nto other pieces by tag.\n\n```tsx\nwish()\n```\n";
        assert_eq!(lead_paragraph(body).as_deref(), Some("`wish()` discovers and connects to other pieces by tag."));
        let only_code = "# Title\n\n```ts\nconst x = 1;\n```\n\n| a | b |\n";
        assert_eq!(lead_paragraph(only_code), None, "no prose, no lead");
        let long = format!("# T\n\n{}", "word ".repeat(100));
        let lead = lead_paragraph(&long).unwrap();
        assert!(lead.len() <= LEAD_CHARS && lead.len() > LEAD_CHARS - 6 && lead.ends_with("word"), "{lead}");
    }

    #[test]
    fn a_table_round_trips_and_an_earlier_one_is_named() {
        let header = EmbeddingsHeader {
            model: ModelIdentity { name: "m".into(), digest: "blake3:00".into(), dim: 2 },
            model_dir: "/m".into(),
            precision: Precision::Int8,
            encoder_version: fabdex_embed::ENCODER_VERSION,
            text_version: TEXT_VERSION,
            max_tokens: MAX_TOKENS,
            max_passages: MAX_PASSAGES,
            heading_alone: true,
            referrers: true,
            units: 2,
            passages: 3,
            truncated: 0,
        };
        let table = UnitEmbeddings::new(header, vec![1, 2], vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8]);
        let back = UnitEmbeddings::from_bytes(&table.to_bytes()).unwrap();
        assert_eq!(back.header, table.header);
        assert_eq!((back.passages(0), back.passages(1)), (1, 2));
        assert_eq!(&*back.vectors(1), &[0.0, 1.0, 0.6, 0.8]);
        assert_eq!(back.similarities(&[0.0, 1.0]), vec![0.0, 1.0], "a unit scores its best passage");
        // The vectors start at a multiple of 4 bytes, and a shared table reads the same.
        let bytes = table.to_bytes();
        let (_, _, vectors_at) = UnitEmbeddings::parse(&bytes).unwrap();
        assert!(vectors_at.is_multiple_of(4), "vectors at byte {vectors_at}");
        let shared = UnitEmbeddings::from_shared(std::sync::Arc::new(bytes)).unwrap();
        assert_eq!(shared.vectors(1), back.vectors(1));
        assert_eq!(shared.similarities(&[0.0, 1.0]), back.similarities(&[0.0, 1.0]));

        let mut bytes = table.to_bytes();
        bytes[..8].copy_from_slice(EARLIER_MAGIC);
        let err = UnitEmbeddings::from_bytes(&bytes).unwrap_err();
        assert!(err.is::<EarlierTable>() && err.to_string().contains("earlier fabdex"), "{err}");
        // Counts that do not add up to the header's passages are refused.
        let bad = UnitEmbeddings::new(table.header.clone(), vec![1, 1], vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8]);
        let err = UnitEmbeddings::from_bytes(&bad.to_bytes()).unwrap_err().to_string();
        assert!(err.contains("add up to 2"), "{err}");
    }

    /// Vectors of another encoder version are neither carried nor read from
    /// the cache: their bits differ from a fresh encoding's. Vectors of
    /// another text version are not carried (the cache, keyed by token ids,
    /// still serves the passages whose text did not move).
    #[test]
    fn vectors_of_another_encoder_or_text_version_are_not_carried_or_reused() {
        let dir = tempfile::tempdir().unwrap();
        fabdex_embed::tiny::write_tiny_model(dir.path(), &["wish", "cell"], 3).unwrap();
        let encoder = load_model(dir.path(), Precision::Int8).unwrap();
        let sources = [UnitSource {
            heading: "wish".into(),
            lead: None,
            body: "a wish for a cell".into(),
            referrers: Vec::new(),
        }];
        let cache = dir.path().join("cache");
        let (table, stats) = compute(&encoder, &sources, UNITS, None, &cache, &|_, _| {}).unwrap();
        // The unit's one passage of heading and body, and its heading alone.
        assert_eq!((stats.encoded, table.header.encoder_version), (2, fabdex_embed::ENCODER_VERSION));
        assert_eq!(table.header.text_version, TEXT_VERSION);
        let folder = format!("-int8-e{}-ids", fabdex_embed::ENCODER_VERSION);
        let made: Vec<String> =
            std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(made.len() == 1 && made[0].starts_with("embed-") && made[0].ends_with(&folder), "{made:?}");
        assert!(CarriedVectors::fits(&table, &encoder, UNITS));
        for other in [0, fabdex_embed::ENCODER_VERSION + 1] {
            let mut old = table.clone();
            old.header.encoder_version = other;
            assert!(!CarriedVectors::fits(&old, &encoder, UNITS), "version {other} is carried");
        }
        // Vectors of another text of the same units are stale: not carried.
        for other in [0, TEXT_VERSION - 1, TEXT_VERSION + 1] {
            let mut old = table.clone();
            old.header.text_version = other;
            assert!(!CarriedVectors::fits(&old, &encoder, UNITS), "text version {other} is carried");
        }
        // Nor are vectors of another reading, whichever part of it differs.
        for other in [
            Reading { max_passages: 1, ..UNITS },
            Reading { heading_alone: false, ..UNITS },
            Reading { referrers: false, ..UNITS },
        ] {
            assert!(!CarriedVectors::fits(&table, &encoder, other), "{other:?} carries a table read as {UNITS:?}");
        }
    }

    /// A docs unit's last passage is its heading path by itself, encoded
    /// as the model encodes that text alone; a program gets no such passage,
    /// and neither does a unit without a heading.
    #[test]
    fn a_unit_also_reads_its_heading_alone_and_a_program_does_not() {
        let dir = tempfile::tempdir().unwrap();
        fabdex_embed::tiny::write_tiny_model(dir.path(), &["wish", "cell", "result", "shape"], 3).unwrap();
        let encoder = load_model(dir.path(), Precision::F32).unwrap();
        let source = |heading: &str| UnitSource {
            heading: heading.into(),
            lead: None,
            body: "a wish for a cell".into(),
            referrers: Vec::new(),
        };
        let sources = [source("wish > result shape"), source("")];
        let cache = dir.path().join("cache");
        let (units, _) = compute(&encoder, &sources, UNITS, None, &cache, &|_, _| {}).unwrap();
        assert_eq!((units.passages(0), units.passages(1)), (2, 1));
        let alone = encoder.encode(&["wish > result shape"], MAX_TOKENS).unwrap().remove(0);
        let dim = units.dim();
        assert_eq!(&units.vectors(0)[dim..], alone.as_slice(), "the last passage is the heading alone");
        let whole = encoder.encode(&[&sources[0].first_text()], MAX_TOKENS).unwrap().remove(0);
        assert_eq!(&units.vectors(0)[..dim], whole.as_slice(), "the first passage is unchanged");
        let (programs, _) = compute(&encoder, &sources, PROGRAMS, None, &cache, &|_, _| {}).unwrap();
        assert_eq!((programs.passages(0), programs.passages(1)), (1, 1));
        assert_eq!((units.header.text_version, programs.header.text_version), (TEXT_VERSION, PROGRAM_TEXT_VERSION));
    }

    #[test]
    fn later_windows_continue_where_the_first_passage_stopped() {
        assert_eq!(later_windows(300, 100, 90, 3), (vec![100..190, 190..280, 280..300], false));
        assert_eq!(later_windows(500, 100, 90, 3), (vec![100..190, 190..280, 280..370], true));
        assert_eq!(later_windows(80, 100, 90, 3), (vec![], false), "the first passage read it all");
        // Every small case: contiguous windows from where the first stopped,
        // none wider than the window, and `cut` exactly when text is left.
        for body in 0..40 {
            for covers in 0..12 {
                for window in 0..6 {
                    for max in 0..4 {
                        let (w, cut) = later_windows(body, covers, window, max);
                        let mut at = covers.min(body);
                        for r in &w {
                            assert!(r.start == at && r.end > r.start && r.end - r.start <= window && r.end <= body);
                            at = r.end;
                        }
                        assert!(w.len() <= max);
                        assert_eq!(cut, at < body, "{body} {covers} {window} {max}");
                    }
                }
            }
        }
    }
}
