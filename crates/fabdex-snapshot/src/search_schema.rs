//! The tantivy schema and text analysis shared by the build (which writes the
//! search index) and the query layer (which searches it), so both tokenize alike.

use fabdex_model::records::{CodeBlock, RootKind};

use crate::docs_table::DocRows;
use tantivy::Index;

use crate::Unit;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};

/// Where [`SearchDeletions`] lives in a snapshot (absent: the search index
/// was written whole and has no deleted document).
pub const DELETIONS_TABLE: &str = "tables/search-deletions.json";

/// What the documents deleted from a search index by incremental builds
/// (and still in its segments) held, per segment: tantivy counts a deleted
/// document in its BM25 statistics until its segment is merged (or dropped,
/// once every document in it is deleted); the query layer subtracts these,
/// so that an updated index scores as one written whole.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchDeletions {
    /// Segment id (as tantivy names it) → what was deleted from it.
    pub segments: std::collections::BTreeMap<String, Deleted>,
}

/// The deleted documents of one segment: their number, and their tokens per text field.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Deleted {
    pub docs: u64,
    /// Field name → tokens the deleted documents had in it.
    pub tokens: std::collections::BTreeMap<String, u64>,
}

impl SearchDeletions {
    /// Deleted documents in every segment.
    pub fn docs(&self) -> u64 {
        self.segments.values().map(|d| d.docs).sum()
    }

    /// Tokens the deleted documents had in `field`, in every segment.
    pub fn tokens(&self, field: &str) -> u64 {
        self.segments.values().filter_map(|d| d.tokens.get(field)).sum()
    }
}

/// Whether a search index's deleted documents are those `deletions` records:
/// each segment's number, and no segment recorded that the index lacks. The
/// build checks an updated index before publishing it, the query layer on
/// first use; either way BM25's live statistics depend on it.
pub fn check_deletions(searcher: &tantivy::Searcher, deletions: Option<&SearchDeletions>) -> Result<(), String> {
    let segments = searcher.segment_readers();
    for segment in segments {
        let id = segment.segment_id().uuid_string();
        let deleted = u64::from(segment.num_deleted_docs());
        let recorded = deletions.and_then(|d| d.segments.get(&id)).map_or(0, |d| d.docs);
        if deleted != recorded {
            return Err(format!(
                "search segment {id} holds {deleted} deleted documents, the deletions table {recorded}"
            ));
        }
    }
    let unknown = deletions.into_iter().flat_map(|d| d.segments.keys());
    if let Some(id) = unknown.into_iter().find(|id| !segments.iter().any(|s| s.segment_id().uuid_string() == **id)) {
        return Err(format!("the deletions table names search segment {id}, which the index lacks"));
    }
    Ok(())
}

/// Name of the analyzer registered on every fabdex search index.
pub const ANALYZER: &str = "fabdex";

/// The fields of one search unit (a section, or a part of a split section).
#[derive(Clone, Copy)]
pub struct Fields {
    /// The unit's key ([`crate::docs_table::unit_key`] of its address);
    /// the docs table maps it to the unit's number.
    pub key: Field,
    pub address: Field,
    /// The section's own heading.
    pub heading: Field,
    /// Ancestor headings, the file's title, and skills' name and description.
    pub context: Field,
    pub path: Field,
    /// Prose (code blocks removed).
    pub body: Field,
    /// Code blocks.
    pub code: Field,
    /// Inline code spans.
    pub symbols: Field,
    /// The parent section's own prose.
    pub parent: Field,
    /// API symbols the section defines.
    pub defines: Field,
    /// `<root>/<path>` untokenized, for prefix filters and for deleting a
    /// file's units in an incremental build.
    pub path_raw: Field,
    /// 1 when the file is historical.
    pub history: Field,
}

pub const TEXT_FIELDS: [&str; 8] = ["defines", "parent", "heading", "context", "path", "body", "code", "symbols"];

pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        key: b.add_u64_field("key", FAST),
        address: b.add_text_field("address", STRING | STORED),
        heading: b.add_text_field("heading", text.clone()),
        context: b.add_text_field("context", text.clone()),
        path: b.add_text_field("path", text.clone()),
        body: b.add_text_field("body", text.clone()),
        code: b.add_text_field("code", text.clone()),
        symbols: b.add_text_field("symbols", text.clone()),
        parent: b.add_text_field("parent", text.clone()),
        defines: b.add_text_field("defines", text),
        path_raw: b.add_text_field("path_raw", STRING),
        history: b.add_u64_field("history", INDEXED | FAST),
    };
    (b.build(), fields)
}

/// A segment's unit keys, by document (`u64::MAX` for a document without one).
pub fn unit_keys(segment: &tantivy::SegmentReader) -> tantivy::Result<UnitKeys> {
    Ok(segment.fast_fields().u64("key")?.first_or_default_col(u64::MAX))
}

/// A segment's column of unit keys ([`unit_keys`]).
pub type UnitKeys = std::sync::Arc<dyn tantivy::columnar::ColumnValues<u64>>;

/// Look the fields up on an opened index.
pub fn fields_of(schema: &Schema) -> tantivy::Result<Fields> {
    let f = |name: &str| schema.get_field(name);
    Ok(Fields {
        key: f("key")?,
        address: f("address")?,
        heading: f("heading")?,
        context: f("context")?,
        path: f("path")?,
        body: f("body")?,
        code: f("code")?,
        symbols: f("symbols")?,
        parent: f("parent")?,
        defines: f("defines")?,
        path_raw: f("path_raw")?,
        history: f("history")?,
    })
}

/// The text of each search field of one unit, before identifier expansion.
/// The build indexes it; the query layer recomputes it to explain a hit.
pub struct UnitText {
    pub heading: String,
    pub context: String,
    pub path: String,
    pub body: String,
    pub code: String,
    pub symbols: String,
    /// The parent section's own prose, cut at [`PARENT_CHARS`].
    pub parent: String,
    /// API symbols the section defines.
    pub defines: String,
}

/// Chars of a parent section's prose indexed with each child.
pub const PARENT_CHARS: usize = 1_500;

/// Split the bytes `[start, end)` of a file into prose and code-block text.
pub fn prose_and_code(file_text: &str, code_blocks: &[CodeBlock], start: u64, end: u64) -> (String, String) {
    let (start, end) = (start as usize, end as usize);
    let mut body = String::with_capacity(end - start);
    let mut code = String::new();
    let mut pos = start;
    for cb in code_blocks {
        let (cs, ce) = (cb.byte_start as usize, cb.byte_end as usize);
        if ce <= start || cs >= end {
            continue;
        }
        let (cs, ce) = (cs.max(pos), ce.min(end));
        if cs > pos {
            body.push_str(&file_text[pos..cs]);
        }
        if ce > cs {
            code.push_str(&file_text[cs..ce]);
            code.push('\n');
        }
        pos = ce.max(pos);
    }
    if pos < end {
        body.push_str(&file_text[pos..end]);
    }
    (body, code)
}

impl UnitText {
    /// The fields of `unit`; `file_text` is the whole file its section is in.
    pub fn new(file_text: &str, docs: &impl DocRows, unit: &Unit) -> UnitText {
        let row = docs.section_row(unit.section);
        let file = docs.file_row(row.file);
        let (body, code) = prose_and_code(file_text, &row.section.code_blocks, unit.byte_start, unit.byte_end);
        let path = &row.section.heading_path;
        let mut context: Vec<&str> = path.iter().take(path.len().saturating_sub(1)).map(String::as_str).collect();
        let meta = |key: &str| file.metadata.get(key).and_then(|v| v.as_str());
        context.extend([file.title.as_deref(), meta("name"), meta("description")].into_iter().flatten());
        // The parent's own prose: an introduction often says in plain words
        // what its subsections then detail under terse headings.
        let parent = row.parent_row.map_or(String::new(), |p| {
            let p = &docs.section_row(p).section;
            let (prose, _) = prose_and_code(file_text, &p.code_blocks, p.byte_start, p.byte_end);
            prose.chars().take(PARENT_CHARS).collect()
        });
        // A skill's name is the symbol its opening section defines.
        let mut defines = row.section.defines.clone();
        if row.section.parent.is_none() && unit.section == file.first_section && file.kind == RootKind::Skills {
            defines.extend(meta("name").map(str::to_string));
        }
        UnitText {
            heading: row.section.heading.clone(),
            context: context.join("\n"),
            path: format!("{} {}", file.root, file.path),
            body,
            code,
            symbols: row.section.mentions.joined().to_string(),
            parent,
            defines: defines.join("\n"),
        }
    }

    /// (field name, text) pairs, in [`TEXT_FIELDS`] order.
    pub fn fields(&self) -> [(&'static str, &str); 8] {
        [
            ("defines", &self.defines),
            ("parent", &self.parent),
            ("heading", &self.heading),
            ("context", &self.context),
            ("path", &self.path),
            ("body", &self.body),
            ("code", &self.code),
            ("symbols", &self.symbols),
        ]
    }
}

/// The Snowball project's English stop-word list (function words only; no
/// domain words). Questions in users' own words are mostly function words
/// ("how do I …"), which would otherwise outweigh the one word that matters.
#[rustfmt::skip]
pub const STOP_WORDS: &[&str] = &[
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves",
    "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their",
    "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are",
    "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would",
    "should", "could", "ought", "i'm", "you're", "he's", "she's", "it's", "we're", "they're", "i've", "you've",
    "we've", "they've", "i'd", "you'd", "he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll", "she'll",
    "we'll", "they'll", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't",
    "didn't", "won't", "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "let's",
    "that's", "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's", "a", "an", "the",
    "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about",
    "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up",
    "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when",
    "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no",
    "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "now",
];

/// Lowercase, English stop words out, English stemming.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(STOP_WORDS.iter().map(|w| w.to_string())))
        .filter(Stemmer::new(Language::English))
        .build()
}

pub fn register(index: &Index) {
    index.tokenizers().register(ANALYZER, analyzer());
}

/// The analyzed terms of a text (after identifier expansion), in order.
pub fn terms(text: &str) -> Vec<String> {
    // Building an analyzer (stop-word set, stemmer) costs more than analysing
    // a short text, so each thread keeps one.
    thread_local! {
        static ANALYZER: std::cell::RefCell<TextAnalyzer> = std::cell::RefCell::new(analyzer());
    }
    let expanded = expand_identifiers(text);
    ANALYZER.with_borrow_mut(|analyzer| {
        let mut stream = analyzer.token_stream(&expanded);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    })
}

/// Calls `f` with every analysed term of `text`: the same terms as [`terms`],
/// in an order of their own. Every token is analysed on its own, so each
/// word's terms are remembered per thread; ranking and explaining hits
/// analyse the same few thousand words over and over, and stemming them
/// again was most of a search's time. `f` must not call back into this.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    /// Enough for a large corpus's vocabulary; past it the memory is started afresh.
    const MAX_WORDS: usize = 200_000;
    const MAX_WORD_BYTES: usize = 64;
    thread_local! {
        static WORD_TERMS: std::cell::RefCell<foldhash::HashMap<String, Box<[String]>>> = Default::default();
    }
    WORD_TERMS.with_borrow_mut(|known| {
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if word.is_empty() {
                continue;
            }
            // A very long word (a hash, base64) is rarely seen twice and would
            // make the memory grow with its length, not the word count.
            if word.len() > MAX_WORD_BYTES {
                terms(word).iter().for_each(|t| f(t));
                continue;
            }
            if !known.contains_key(word) {
                if known.len() >= MAX_WORDS {
                    known.clear();
                }
                known.insert(word.to_string(), terms(word).into_boxed_slice());
            }
            for t in &known[word] {
                f(t);
            }
        }
    })
}

/// Append the pieces of camelCase, PascalCase and snake_case identifiers so
/// `fetchJson` is also found as `fetch json` and `WishState` as `wish state`.
pub fn expand_identifiers(text: &str) -> String {
    let mut extra = String::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let pieces = split_identifier(word);
        if pieces.len() > 1 {
            for p in pieces {
                extra.push(' ');
                extra.push_str(&p);
            }
        }
    }
    if extra.is_empty() { text.to_string() } else { format!("{text}\n{extra}") }
}

/// `fetchJSONData` → fetch, JSON, Data; `snake_case` → snake, case.
pub fn split_identifier(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut pieces = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if c.is_uppercase() => {
                p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            }
            _ => false,
        };
        if boundary && !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers() {
        assert_eq!(split_identifier("fetchJson"), ["fetch", "Json"]);
        assert_eq!(split_identifier("WishState"), ["Wish", "State"]);
        assert_eq!(split_identifier("fetchJSONData"), ["fetch", "JSON", "Data"]);
        assert_eq!(split_identifier("snake_case"), ["snake", "case"]);
        assert_eq!(split_identifier("plain"), ["plain"]);
    }

    #[test]
    fn terms_are_stemmed_expanded_and_stopword_free() {
        let t = terms("How do the handlers use fetchJson?");
        assert!(t.contains(&"handler".to_string()), "{t:?}");
        assert!(t.contains(&"fetchjson".to_string()));
        assert!(t.contains(&"fetch".to_string()) && t.contains(&"json".to_string()));
        assert!(!t.contains(&"the".to_string()));
    }

    fn remembered(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_term(text, |t| out.push(t.to_string()));
        out.sort();
        out
    }

    fn sorted(mut terms: Vec<String>) -> Vec<String> {
        terms.sort();
        terms
    }

    #[test]
    fn remembered_terms_are_the_analysers_own() {
        let text = "How do the handlers use fetchJSONData? `snake_case`, Writable<T[]> and \
                    WishState — naïve café 42px {a_b_c} \u{1F600} emoji \
                    aVeryLongIdentifierThatNamesTheWholeConfigurationOfTheRemoteDataHandlers";
        // Twice: the second reading comes from memory.
        assert_eq!(remembered(text), sorted(terms(text)));
        assert_eq!(remembered(text), sorted(terms(text)));
        assert!(remembered(text).contains(&"handler".to_string()));
    }

    proptest::proptest! {
        #[test]
        fn remembered_terms_match_any_text(text in "([A-Za-z_]{1,12}|[a-z]+[A-Z][a-z]+|[0-9]{1,3}|[ .,`<>()_\n-]|é|ß|İ|\u{1F600}){0,40}") {
            proptest::prop_assert_eq!(remembered(&text), sorted(terms(&text)));
        }
    }
}
