//! The sentence-embeddings step: each unit and program encoded (unchanged
//! units' vectors carried from the published snapshot when they fit), and
//! their tables written.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use anyhow::Result;
use fabdex_model::digest::digest_bytes;
use fabdex_model::records::DocsTable;

use super::extract::ReadFile;
use super::files::{Staged, write_file};
use super::plan::units_reading;
use super::report::{EmbeddingsReport, progress_bar};
use crate::config::Config;
use crate::incremental::Carry;
use fabdex_snapshot::snapshot::Counts;

/// What the sentence embeddings are computed from.
pub(crate) struct EmbeddingsStep<'a> {
    pub(crate) files: &'a [ReadFile],
    pub(crate) docs: &'a DocsTable,
    pub(crate) units: &'a [fabdex_snapshot::Unit],
    pub(crate) programs: &'a [fabdex_model::ts::ProgramRow],
    pub(crate) carry: Option<&'a Carry>,
    /// How docs units are read (`[index.embedding_passages]`).
    pub(crate) reading: crate::embeddings::Reading,
}

impl<'a> EmbeddingsStep<'a> {
    pub(crate) fn new(
        files: &'a [ReadFile],
        docs: &'a DocsTable,
        units: &'a [fabdex_snapshot::Unit],
        programs: &'a [fabdex_model::ts::ProgramRow],
        carry: Option<&'a Carry>,
        config: &Config,
    ) -> Self {
        let reading = units_reading(&config.index.embedding_passages);
        EmbeddingsStep { files, docs, units, programs, carry, reading }
    }
}

/// Encode every unit (the unchanged ones' vectors carried from the
/// published snapshot when it can be) and every program with `encoder`,
/// write `tables/embeddings.bin` and `tables/program-embeddings.bin`, and
/// say what was done.
pub(crate) fn write_embeddings(
    encoder: &fabdex_embed::SentenceEncoder,
    chosen: crate::config::PrecisionChoice,
    staged: &Staged<'_>,
    step: &EmbeddingsStep<'_>,
    tables: &mut BTreeMap<String, String>,
    counts: &mut Counts,
) -> Result<EmbeddingsReport> {
    let clock = Instant::now();
    let (files, docs, units) = (step.files, step.docs, step.units);
    let bar = progress_bar(staged.progress, units.len() as u64);
    // `docs.files[i]` was assembled from `files[i]`.
    let referrers = crate::referrers::link_items(docs, |f| files[f as usize].text.as_str(), units);
    let sources: Vec<_> = units
        .iter()
        .zip(referrers)
        .map(|(u, referrers)| crate::embeddings::UnitSource {
            referrers,
            ..crate::embeddings::unit_source(&files[docs.sections[u.section as usize].file as usize].text, docs, u)
        })
        .collect();
    // A previous table that cannot be carried (a gone file's blob damaged) is not: every unit is then looked up.
    let carried = carried_vectors(step, &sources, encoder).ok().flatten();
    let cache = staged.layout.cache();
    let (table, stats) =
        crate::embeddings::compute(encoder, &sources, step.reading, carried.as_ref(), &cache, &|done, total| {
            if let Some(bar) = &bar {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
        })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let bytes = table.to_bytes();
    write_file(staged.dir.join(crate::embeddings::TABLE), &bytes)?;
    tables.insert(crate::embeddings::TABLE.to_string(), digest_bytes(&bytes));
    // Programs are few (labs: 357); they share the model and its cache.
    let program_sources: Vec<_> = step.programs.iter().map(crate::embeddings::program_source).collect();
    let mut program_stats = crate::embeddings::EncodeStats::default();
    if !program_sources.is_empty() {
        let (programs, s) = crate::embeddings::compute(
            encoder,
            &program_sources,
            crate::embeddings::PROGRAMS,
            None,
            &cache,
            &|_, _| {},
        )?;
        let bytes = programs.to_bytes();
        write_file(staged.dir.join(crate::embeddings::PROGRAMS_TABLE), &bytes)?;
        tables.insert(crate::embeddings::PROGRAMS_TABLE.to_string(), digest_bytes(&bytes));
        counts.embedded_programs = programs.len() as u64;
        program_stats = s;
    }
    counts.embedded_units = table.len() as u64;
    counts.embeddings_truncated = table.header.truncated as u64;
    Ok(EmbeddingsReport {
        model: table.header.model.clone(),
        model_dir: table.header.model_dir.clone(),
        precision: table.header.precision,
        precision_chosen: Some(chosen),
        int8_kernel: (table.header.precision == fabdex_embed::Precision::Int8)
            .then(|| fabdex_embed::int8_kernel().as_str().to_string()),
        encode_ms: clock.elapsed().as_millis() as u64,
        max_tokens: table.header.max_tokens,
        max_passages: table.header.max_passages,
        passages: table.header.passages as u64,
        encoded: (stats.encoded + program_stats.encoded) as u64,
        reused: (stats.reused + program_stats.reused) as u64,
        carried: stats.carried as u64,
        programs: counts.embedded_programs,
        truncated: table.header.truncated as u64,
    })
}

/// The published snapshot's sentence embeddings, when an incremental build
/// can carry its unchanged units' vectors: the same model, precision,
/// encoder version, text version and bounds. Counts how many of its truncated units are
/// gone (their previous sources tokenized again: a few units).
pub(crate) fn carried_vectors<'a>(
    step: &EmbeddingsStep<'a>,
    sources: &[crate::embeddings::UnitSource],
    encoder: &fabdex_embed::SentenceEncoder,
) -> Result<Option<crate::embeddings::CarriedVectors<'a>>> {
    let Some(carry) = step.carry else { return Ok(None) };
    let Ok(Some(previous)) = carry.previous.embeddings() else { return Ok(None) };
    if !crate::embeddings::CarriedVectors::fits(previous, encoder, step.reading)
        || previous.len() != carry.previous.units().len()
    {
        return Ok(None);
    }
    let mut gone_truncated = 0;
    for &file in &carry.gone {
        let text = carry.previous.file_text(file)?;
        for unit in carry.previous.file_units(file) {
            let source = crate::embeddings::unit_source(&text, &carry.previous.docs, unit);
            gone_truncated += usize::from(crate::embeddings::truncated(encoder, &source, step.reading)?);
        }
    }
    // An unchanged unit that a changed file links to (now or before) may
    // have other referring items: it is read again, its passages looked up
    // in the cache, and its previous truncation no longer counted.
    let mut landed = crate::referrers::landed_from(step.docs, |f| carry.files[f as usize].is_none());
    let gone: HashSet<u32> = carry.gone.iter().copied().collect();
    landed.extend(crate::referrers::landed_from_published(&carry.previous.docs, |f| gone.contains(&f))?);
    let mut units = carry.units.clone();
    for (u, unit) in step.units.iter().enumerate() {
        if units[u].is_some() && landed.contains(&step.docs.sections[unit.section as usize].address) {
            units[u] = None;
            gone_truncated += usize::from(crate::embeddings::truncated(encoder, &sources[u], step.reading)?);
        }
    }
    Ok(Some(crate::embeddings::CarriedVectors { previous, units, gone_truncated }))
}
