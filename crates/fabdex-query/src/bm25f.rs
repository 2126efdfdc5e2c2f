//! BM25F over a unit's fields (Robertson, Zaragoza and Taylor, 2004): a
//! query term's frequency in each field, weighted by the field and
//! normalised by the field's length, is summed over the fields before it
//! saturates once.
//!
//! A sum of per-field BM25 scores (what a disjunction of boosted term
//! queries gives) saturates each field apart, so a word found in a unit's
//! heading, path, context, body and symbols counts five times over, and a
//! unit repeating one question word everywhere outranks one that holds
//! more of the question's words. Here a word counts once, at its weighted
//! frequency, and its rarity is its rarity in units, whichever field holds it.

use tantivy::postings::Postings;
use tantivy::query::{Bm25StatisticsProvider, Query};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, SegmentOrdinal, SegmentReader, TERMINATED, Term};

/// BM25F's two constants, the same for every field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25fParams {
    /// How fast a term's weighted frequency saturates (lower: sooner).
    pub k1: f32,
    /// How much a field's length discounts its frequencies (0: not at all; 1: fully).
    pub b: f32,
}

/// Docs search's constants: the Anserini toolkit's defaults for BM25
/// (k1 0.9, b 0.4), set for collections of short passages, rather than
/// Lucene's and tantivy's 1.2 and 0.75. docs/ranking.md measures both.
pub const DOCS_BM25F: Bm25fParams = Bm25fParams { k1: 0.9, b: 0.4 };

/// A matched document: its segment, its id there and its unit key.
type MatchedDoc = (SegmentOrdinal, DocId, u64);

/// Collects the documents a query matches, without scoring them.
struct Matched;

/// [`Matched`] within one segment.
struct SegmentMatched {
    segment: SegmentOrdinal,
    key: fabdex_snapshot::search_schema::UnitKeys,
    found: Vec<MatchedDoc>,
}

impl tantivy::collector::Collector for Matched {
    type Fruit = Vec<MatchedDoc>;
    type Child = SegmentMatched;

    fn for_segment(&self, segment: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<SegmentMatched> {
        Ok(SegmentMatched { segment, key: fabdex_snapshot::search_schema::unit_keys(reader)?, found: Vec::new() })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, segments: Vec<Vec<MatchedDoc>>) -> tantivy::Result<Vec<MatchedDoc>> {
        Ok(segments.into_iter().flatten().collect())
    }
}

impl tantivy::collector::SegmentCollector for SegmentMatched {
    type Fruit = Vec<MatchedDoc>;

    fn collect(&mut self, doc: DocId, _: Score) {
        self.found.push((self.segment, doc, self.key.get_val(doc)));
    }

    fn harvest(self) -> Vec<MatchedDoc> {
        self.found
    }
}

/// The BM25F score of every document `query` matches (it decides what
/// matches: the terms and the filters), with the document's unit key.
/// `fields` are the searched fields with their weights, `terms` the
/// analysed query terms; the statistics are `stats`' (live documents only).
pub(crate) fn scores(
    searcher: &tantivy::Searcher,
    stats: &dyn Bm25StatisticsProvider,
    query: &dyn Query,
    fields: &[(Field, f32)],
    terms: &[String],
    params: Bm25fParams,
) -> tantivy::Result<Vec<(f32, u64)>> {
    let matched = searcher.search(query, &Matched)?;
    let units = stats.total_num_docs()?.max(1) as f32;
    let mut average_length = Vec::with_capacity(fields.len());
    for (field, _) in fields {
        // A field no unit has text in has no postings either: its average
        // is never divided by.
        average_length.push((stats.total_num_tokens(*field)? as f32 / units).max(f32::MIN_POSITIVE));
    }
    let mut per_segment = Vec::new();
    let mut units_with = vec![0u64; terms.len()];
    for reader in searcher.segment_readers() {
        let (frequencies, live) = weighted_frequencies(reader, fields, &average_length, terms, params.b)?;
        for (count, live) in units_with.iter_mut().zip(live) {
            *count += live;
        }
        per_segment.push(frequencies);
    }
    let idf: Vec<f32> = units_with.iter().map(|&n| (1.0 + (units - n as f32 + 0.5) / (n as f32 + 0.5)).ln()).collect();
    Ok(matched
        .into_iter()
        .map(|(segment, doc, key)| {
            let score = per_segment[segment as usize]
                .iter()
                .zip(&idf)
                .map(|(frequency, idf)| {
                    let tf = frequency[doc as usize];
                    idf * tf * (params.k1 + 1.0) / (params.k1 + tf)
                })
                .sum();
            (score, key)
        })
        .collect())
}

/// For each term, each document's frequency summed over the fields, each
/// field's weighted and divided by `1 − b + b × length / average length`;
/// and how many live documents have the term in some field, counted as
/// each first gains a frequency.
fn weighted_frequencies(
    reader: &SegmentReader,
    fields: &[(Field, f32)],
    average_length: &[f32],
    terms: &[String],
    b: f32,
) -> tantivy::Result<(Vec<Vec<f32>>, Vec<u64>)> {
    let alive = reader.alive_bitset();
    let mut out = Vec::with_capacity(terms.len());
    let mut live = Vec::with_capacity(terms.len());
    for text in terms {
        let mut frequency = vec![0f32; reader.max_doc() as usize];
        let mut units = 0u64;
        for ((field, weight), average) in fields.iter().zip(average_length) {
            let term = Term::from_field_text(*field, text);
            let Some(mut postings) =
                reader.inverted_index(*field)?.read_postings(&term, IndexRecordOption::WithFreqs)?
            else {
                continue;
            };
            let lengths = reader.get_fieldnorms_reader(*field)?;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                let length = lengths.fieldnorm(doc) as f32;
                let f = &mut frequency[doc as usize];
                let first = *f == 0.0;
                *f += weight * postings.term_freq() as f32 / (1.0 - b + b * length / average);
                if first && *f > 0.0 && alive.is_none_or(|a| a.is_alive(doc)) {
                    units += 1;
                }
                doc = postings.advance();
            }
        }
        out.push(frequency);
        live.push(units);
    }
    Ok((out, live))
}
