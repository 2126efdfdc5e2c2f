//! Writing the tantivy index of a snapshot: whole ([`write`]), or from the
//! previous snapshot's index by deleting the units of edited and removed
//! files and adding those of edited and added ones ([`update`]).
//!
//! Every unit is a document keyed by [`fabdex_snapshot::docs_table::unit_key`] of its
//! address, so the documents of files that did not change stay as they are.
//! tantivy keeps a deleted document's terms in its statistics until its
//! segment is merged; [`SearchDeletions`] records what the deleted documents
//! held, so the query layer's BM25 statistics are those of the live
//! documents alone, as a whole rebuild's are.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use fabdex_model::digest::digest_bytes;
use fabdex_model::records::DocsTable;
use std::collections::BTreeMap;
use tantivy::{DocSet, Term, doc};

use fabdex_snapshot::Unit;
use fabdex_snapshot::docs_table::DocRows;
use fabdex_snapshot::search_schema::{self, Fields, SearchDeletions, UnitText, expand_identifiers};
use fabdex_snapshot::snapshot::Snapshot;

/// The search index is written whole again, not updated, once deleted
/// documents would pass this share of the live ones: each costs its
/// segment's space and a little time per search until a rewrite drops it.
pub const DELETED_LIMIT: f64 = 0.10;

/// The search index is written whole again, not updated, once it has this
/// many segments: each update adds one, and a search visits every one.
pub const SEGMENT_LIMIT: usize = 32;

/// What [`update`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchUpdate {
    /// Every deletion since the index was last written whole.
    pub deletions: SearchDeletions,
    pub units_deleted: u64,
    pub units_added: u64,
}

/// A unit's document.
fn document(f: &Fields, docs: &impl DocRows, unit: &Unit, u: &UnitText) -> tantivy::TantivyDocument {
    let file_row = docs.file_row(docs.section_row(unit.section).file);
    doc!(
        f.key => fabdex_snapshot::docs_table::unit_key(&unit.address),
        f.address => unit.address.clone(),
        f.heading => expand_identifiers(&u.heading),
        f.context => expand_identifiers(&u.context),
        f.path => expand_identifiers(&u.path),
        f.body => expand_identifiers(&u.body),
        f.code => expand_identifiers(&u.code),
        f.symbols => expand_identifiers(&u.symbols),
        f.parent => expand_identifiers(&u.parent),
        f.defines => expand_identifiers(&u.defines),
        f.path_raw => format!("{}/{}", file_row.root, file_row.path),
        f.history => u64::from(file_row.historical),
    )
}

/// Write the whole tantivy index into `dir` (an empty folder), as one
/// segment: `unit_texts[i]` holds unit `i`'s field texts
/// ([`UnitText::new`]), each dropped once its document is indexed.
///
/// tantivy's single-segment writer indexes each document in the calling
/// thread. Its `IndexWriter` queues up to 10,000 documents for an indexing
/// thread: the feeding thread outran it and held every document (all of
/// labs' units, copies of their texts) until the end, and the two threads
/// came to the same segment, byte for byte.
pub fn write(dir: &Path, docs: &DocsTable, units: &[Unit], unit_texts: Vec<UnitText>) -> Result<()> {
    let (schema, f) = search_schema::schema();
    let tokenizers = tantivy::tokenizer::TokenizerManager::default();
    tokenizers.register(search_schema::ANALYZER, search_schema::analyzer());
    let directory = tantivy::directory::MmapDirectory::open(dir)?;
    let mut writer: tantivy::SingleSegmentIndexWriter = tantivy::Index::builder()
        .schema(schema)
        .tokenizers(tokenizers)
        .single_segment_index_writer(directory, 64_000_000)?;
    for (unit, u) in units.iter().zip(unit_texts) {
        writer.add_document(document(&f, docs, unit, &u))?;
    }
    writer.finalize()?;
    Ok(())
}

/// Make `dir` the previous snapshot's index with the units of the
/// `gone` files (previous file numbers: edited or removed) deleted and the
/// units `texts` gives (edited and added files' units) added. The previous
/// index's files are hard-linked (tantivy never rewrites a file: a commit
/// writes new ones), so the previous snapshot is untouched; the caller has
/// checked them against its manifest.
pub fn update(
    dir: &Path,
    previous: &Snapshot,
    gone: &[u32],
    docs: &DocsTable,
    units: &[Unit],
    texts: &[Option<UnitText>],
) -> Result<SearchUpdate> {
    let from = previous.dir.join("search");
    for name in previous.manifest.search_files.keys() {
        fs::hard_link(from.join(name), dir.join(name))
            .or_else(|_| fs::copy(from.join(name), dir.join(name)).map(|_| ()))
            .with_context(|| format!("cannot reuse `{}`", from.join(name).display()))?;
    }
    let mut deletions = previous.search_deletions()?.cloned().unwrap_or_default();
    let units_added = texts.iter().filter(|t| t.is_some()).count() as u64;
    if gone.is_empty() && units_added == 0 {
        return Ok(SearchUpdate { deletions, units_deleted: 0, units_added });
    }
    let index = tantivy::Index::open_in_dir(dir)?;
    search_schema::register(&index);
    let f = search_schema::fields_of(&index.schema())?;
    let mut units_deleted = 0;
    {
        let reader: tantivy::IndexReader =
            index.reader_builder().reload_policy(tantivy::ReloadPolicy::Manual).try_into()?;
        let searcher = reader.searcher();
        for &file in gone {
            units_deleted += deleted_units(previous, &searcher, f, file, &mut deletions)?;
        }
    }
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 64_000_000)?;
    // Merging a segment with deletions would leave tantivy's token counts
    // estimated from field norms; segments are merged by a whole rewrite only.
    writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
    for &file in gone {
        let row = previous.docs.file_row(file);
        writer.delete_term(Term::from_field_text(f.path_raw, &format!("{}/{}", row.root, row.path)));
    }
    for (unit, text) in units.iter().zip(texts) {
        if let Some(u) = text {
            writer.add_document(document(&f, docs, unit, u))?;
        }
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    // A segment whose every document is deleted is dropped at the commit, and its deletions with it.
    let live: Vec<String> = index.searchable_segment_ids()?.iter().map(|id| id.uuid_string()).collect();
    deletions.segments.retain(|id, _| live.contains(id));
    // What the query layer checks on first use, checked before publishing.
    let reader: tantivy::IndexReader =
        index.reader_builder().reload_policy(tantivy::ReloadPolicy::Manual).try_into()?;
    search_schema::check_deletions(&reader.searcher(), Some(&deletions)).map_err(anyhow::Error::msg)?;
    Ok(SearchUpdate { deletions, units_deleted, units_added })
}

/// The digest of every file of the search index in `dir`. A file that is
/// still the previous snapshot's (the same inode, hard-linked) has the digest
/// that snapshot recorded; every other file (new segments, the rewritten
/// `meta.json`) is hashed.
pub fn digests(dir: &Path, previous: Option<&Snapshot>) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".lock") || !entry.file_type()?.is_file() {
            continue;
        }
        let carried = previous.and_then(|p| {
            let recorded = p.manifest.search_files.get(&name)?;
            same_file(&entry.path(), &p.dir.join("search").join(&name)).then(|| recorded.clone())
        });
        let digest = match carried {
            Some(d) => d,
            None => digest_bytes(&fs::read(entry.path())?),
        };
        out.insert(name, digest);
    }
    Ok(out)
}

/// Whether two paths are one file (hard links of it).
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &Path, _: &Path) -> bool {
    false
}

/// Add what previous file `file`'s units held to `deletions`, under the
/// segment each is in: their texts rebuilt from the previous snapshot's rows
/// and blob, analysed as the index analysed them. Returns how many.
fn deleted_units(
    previous: &Snapshot,
    searcher: &tantivy::Searcher,
    f: Fields,
    file: u32,
    deletions: &mut SearchDeletions,
) -> Result<u64> {
    let text = previous.file_text(file)?;
    let mut count = 0;
    for unit in previous.file_units(file) {
        let segment = live_segment_of(searcher, f, &unit.address)?
            .with_context(|| format!("the previous search index has no live document for `{}`", unit.address))?;
        let deleted = deletions.segments.entry(segment).or_default();
        deleted.docs += 1;
        let u = UnitText::new(&text, &previous.docs, unit);
        for (name, field) in u.fields() {
            // The tokens the index holds: the field's text expanded and analysed as indexed.
            *deleted.tokens.entry(name.to_string()).or_default() += search_schema::terms(field).len() as u64;
        }
        count += 1;
    }
    Ok(count)
}

/// The segment holding the live document of the unit at `address`.
fn live_segment_of(searcher: &tantivy::Searcher, f: Fields, address: &str) -> Result<Option<String>> {
    let term = Term::from_field_text(f.address, address);
    for segment in searcher.segment_readers() {
        let postings =
            segment.inverted_index(f.address)?.read_postings(&term, tantivy::schema::IndexRecordOption::Basic)?;
        let Some(mut postings) = postings else { continue };
        let mut doc = postings.doc();
        while doc != tantivy::TERMINATED {
            if segment.alive_bitset().is_none_or(|alive| alive.is_alive(doc)) {
                return Ok(Some(segment.segment_id().uuid_string()));
            }
            doc = postings.advance();
        }
    }
    Ok(None)
}
