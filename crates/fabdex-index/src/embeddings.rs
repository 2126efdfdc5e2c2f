//! Encoding the sentence embeddings of a build (the table's format and
//! reading are `fabdex_snapshot::embeddings`, re-exported here): what the
//! model reads of each unit, its passages, and the vector cache.

pub use fabdex_snapshot::embeddings::*;

use anyhow::{Context, Result};
use fabdex_embed::{ModelIdentity, Precision, Role, SentenceEncoder};
use fabdex_snapshot::Unit;
use fabdex_snapshot::docs_table::DocRows;
use fabdex_snapshot::search_schema::prose_and_code;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Passages encoded per forward pass; batches run in parallel.
const BATCH: usize = 16;
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
