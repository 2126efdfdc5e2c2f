//! BM25 statistics of the live documents of a search index.
//!
//! An incremental build deletes the documents of edited and removed files
//! and adds new ones; tantivy counts a deleted document in its statistics
//! (documents, tokens per field, documents per term) until its segment is
//! merged, so the same query would score differently from a whole rebuild.
//! [`LiveStatistics`] subtracts them: the deleted documents' tokens per
//! field from the snapshot's [`SearchDeletions`], and a term's deleted
//! documents counted in its postings against each segment's deletions.

use fabdex_index::search_schema::SearchDeletions;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, TERMINATED, Term};

/// A searcher's statistics less what its deleted documents hold.
pub(crate) struct LiveStatistics<'a> {
    pub(crate) searcher: &'a Searcher,
    /// None: the index was written whole and has no deleted document.
    pub(crate) deletions: Option<&'a SearchDeletions>,
}

impl LiveStatistics<'_> {
    /// Whether the deletions agree with the index: the documents it holds
    /// but does not count live are exactly those the table says were deleted.
    pub(crate) fn check(&self) -> Result<(), String> {
        let segments = self.searcher.segment_readers();
        for segment in segments {
            let id = segment.segment_id().uuid_string();
            let deleted = u64::from(segment.num_deleted_docs());
            let recorded = self.deletions.and_then(|d| d.segments.get(&id)).map_or(0, |d| d.docs);
            if deleted != recorded {
                return Err(format!(
                    "search segment {id} holds {deleted} deleted documents, the deletions table {recorded}; re-run `fabdex index --full`"
                ));
            }
        }
        let listed = self.deletions.map_or(0, |d| d.segments.len());
        let known = self.deletions.map_or(0, |d| {
            d.segments.keys().filter(|id| segments.iter().any(|s| s.segment_id().uuid_string() == **id)).count()
        });
        if known != listed {
            return Err(
                "the deletions table names a search segment the index lacks; re-run `fabdex index --full`".into()
            );
        }
        Ok(())
    }
}

impl Bm25StatisticsProvider for LiveStatistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let all = self.searcher.total_num_tokens(field)?;
        let name = self.searcher.schema().get_field_name(field);
        let deleted = self.deletions.map_or(0, |d| d.tokens(name));
        Ok(all.saturating_sub(deleted))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let all = self.searcher.doc_freq(term)?;
        if self.deletions.is_none() {
            return Ok(all);
        }
        let mut deleted = 0u64;
        for segment in self.searcher.segment_readers() {
            let Some(alive) = segment.alive_bitset() else { continue };
            let Some(mut postings) =
                segment.inverted_index(term.field())?.read_postings(term, IndexRecordOption::Basic)?
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if !alive.is_alive(doc) {
                    deleted += 1;
                }
                doc = postings.advance();
            }
        }
        Ok(all.saturating_sub(deleted))
    }
}
