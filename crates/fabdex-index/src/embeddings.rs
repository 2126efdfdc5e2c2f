//! Optional sentence embeddings of the search units, `tables/embeddings.bin`.
//!
//! Built only when the index is asked for them (`fabdex index --embeddings
//! DIR`, or `[index] embeddings` in the config): a local model
//! (`fabdex-embed`) encodes each unit's heading path, its file's lead
//! paragraph, and its prose and code, read up to [`MAX_TOKENS`] tokens
//! (see [`unit_text`]). The table records which model made the vectors
//! (its digest) and where it was, so the query side can load the same model to
//! encode a question, and refuses any other.
//!
//! Encoding is the slow part of such a build, so each vector is cached in the
//! index's `cache/` folder under the model's digest and the text's digest: a
//! rebuild encodes only the units whose text changed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fabdex_embed::{ModelIdentity, SentenceEncoder};
use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use fabdex_model::records::DocsTable;

use crate::Unit;

pub const TABLE: &str = "tables/embeddings.bin";

/// Tokens of a unit read by the model, `[CLS]` and `[SEP]` included. The
/// heading path and the opening of a section say most of what it is about;
/// longer reads cost index time linearly and measured no better on labs.
pub const MAX_TOKENS: usize = 128;

/// Units encoded per forward pass; batches run in parallel.
const BATCH: usize = 16;

const MAGIC: &[u8; 8] = b"FDXEMB1\n";

/// Version of what [`unit_text`] gives the model; the snapshot id covers it,
/// so a change re-encodes (the vector cache is keyed by the text itself).
pub const TEXT_VERSION: u32 = 2;

/// What the table says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingsHeader {
    pub model: ModelIdentity,
    /// The model folder as the build found it (absolute): where queries load it from.
    pub model_dir: String,
    pub max_tokens: usize,
    pub units: usize,
    /// Units longer than `max_tokens`, read only that far.
    pub truncated: usize,
}

/// One unit vector per search unit, in unit order.
#[derive(Debug, Clone)]
pub struct UnitEmbeddings {
    pub header: EmbeddingsHeader,
    vectors: Vec<f32>,
}

/// How a build came by its vectors.
#[derive(Debug, Clone, Copy, Default)]
pub struct EncodeStats {
    pub encoded: usize,
    pub reused: usize,
}

impl UnitEmbeddings {
    pub fn dim(&self) -> usize {
        self.header.model.dim
    }

    pub fn len(&self) -> usize {
        self.header.units
    }

    pub fn is_empty(&self) -> bool {
        self.header.units == 0
    }

    pub fn vector(&self, unit: usize) -> &[f32] {
        &self.vectors[unit * self.dim()..(unit + 1) * self.dim()]
    }

    /// Cosine of `query` (a unit vector of the same model) with every unit.
    pub fn similarities(&self, query: &[f32]) -> Vec<f32> {
        self.vectors.chunks_exact(self.dim()).map(|v| fabdex_embed::cosine(v, query)).collect()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_vec(&self.header).expect("header serialises");
        let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + self.vectors.len() * 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        for x in &self.vectors {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() < MAGIC.len() + 4 || &bytes[..MAGIC.len()] != MAGIC {
            bail!("not a fabdex embeddings table");
        }
        let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let header_end = 12usize.checked_add(len).filter(|&e| e <= bytes.len()).context("header runs past the end")?;
        let header: EmbeddingsHeader = serde_json::from_slice(&bytes[12..header_end]).context("header is not valid")?;
        let floats = &bytes[header_end..];
        let expected = header.units.checked_mul(header.model.dim).and_then(|n| n.checked_mul(4));
        if expected != Some(floats.len()) {
            bail!(
                "holds {} bytes of vectors; {} units of {} dimensions need {}",
                floats.len(),
                header.units,
                header.model.dim,
                header.units * header.model.dim * 4
            );
        }
        let vectors = floats.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
        Ok(UnitEmbeddings { header, vectors })
    }
}

/// What the model reads of a unit: the file's title and the section's
/// heading path (`wish() > Result Shape`); for a section past the file's
/// first, the file's lead paragraph (about 40 tokens: what the document is
/// for, in its own words, which a deep section rarely repeats; measured on
/// labs, MRR@10 0.353 → 0.373); then the unit's own Markdown as written.
/// Front matter descriptions are left out: they would crowd the section out
/// of the model's token window too, and the lead says the same in prose.
pub fn unit_text(file_text: &str, docs: &DocsTable, unit: &Unit) -> String {
    let row = &docs.sections[unit.section as usize];
    let file = &docs.files[row.file as usize];
    let mut out: Vec<&str> = file.title.as_deref().into_iter().collect();
    for h in &row.section.heading_path {
        if out.last() != Some(&h.as_str()) {
            out.push(h);
        }
    }
    let mut text = out.join(" > ");
    text.push('\n');
    let first = &docs.sections[file.first_section as usize].section;
    if unit.section != file.first_section
        && let Some(lead) = file_text.get(first.byte_start as usize..first.byte_end as usize).and_then(lead_paragraph)
    {
        text.push_str(&lead);
        text.push('\n');
    }
    text.push_str(file_text.get(unit.byte_start as usize..unit.byte_end as usize).unwrap_or(""));
    text
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
pub fn load_model(dir: &Path) -> Result<SentenceEncoder> {
    SentenceEncoder::load(dir).with_context(|| format!("[index] embeddings: cannot use `{}`", dir.display()))
}

/// Encode every unit, reusing cached vectors. `progress` is told how many
/// units are done after each chunk.
pub fn compute(
    encoder: &SentenceEncoder,
    texts: Vec<String>,
    cache_root: &Path,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(UnitEmbeddings, EncodeStats)> {
    let model = encoder.identity().clone();
    let dim = model.dim;
    let cache = cache_root.join(format!("embed-{}-{MAX_TOKENS}", &model.digest["blake3:".len()..][..16]));
    std::fs::create_dir_all(&cache).with_context(|| format!("cannot create `{}`", cache.display()))?;
    let keys: Vec<PathBuf> = texts.iter().map(|t| cache.join(blake3::hash(t.as_bytes()).to_hex().as_str())).collect();
    let mut vectors = vec![0f32; texts.len() * dim];
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
    // Every text is tokenized, cached or not, to count the truncated ones.
    let tokens: Vec<(Vec<u32>, bool)> =
        texts.par_iter().map(|t| encoder.token_ids(t, MAX_TOKENS)).collect::<Result<_, _>>()?;
    let truncated = tokens.iter().filter(|(_, cut)| *cut).count();
    let stats = EncodeStats { encoded: missing.len(), reused: texts.len() - missing.len() };
    // Chunks of like length take like time on each thread.
    missing.sort_by_key(|&i| (tokens[i].0.len(), i));
    let done = std::sync::atomic::AtomicUsize::new(stats.reused);
    progress(stats.reused);
    let encoded: Vec<(usize, Vec<f32>)> = missing
        .par_chunks(BATCH)
        .map(|chunk| {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| tokens[i].0.as_slice()).collect();
            let vectors = encoder.encode_ids(&batch)?;
            let n = done.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed) + chunk.len();
            progress(n);
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
    let header = EmbeddingsHeader {
        model,
        model_dir: encoder.dir().canonicalize().unwrap_or_else(|_| encoder.dir().to_path_buf()).display().to_string(),
        max_tokens: MAX_TOKENS,
        units: texts.len(),
        truncated,
    };
    Ok((UnitEmbeddings { header, vectors }, stats))
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
}
