//! BM25 statistics of the live documents of a search index.
//!
//! An incremental build deletes the documents of edited and removed files
//! and adds new ones; tantivy counts a deleted document in its statistics
//! (documents, tokens per field, documents per term) until its segment is
//! merged, so the same query would score differently from a whole rebuild.
//! [`LiveStatistics`] subtracts them: the deleted documents' tokens per
//! field from the snapshot's [`SearchDeletions`], and a term's deleted
//! documents counted in its postings against each segment's deletions.

use fabdex_snapshot::search_schema::SearchDeletions;
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
        fabdex_snapshot::search_schema::check_deletions(self.searcher, self.deletions)
            .map_err(|e| format!("{e}; re-run `fabdex index --full`"))
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
