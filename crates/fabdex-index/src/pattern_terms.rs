//! The term table of pattern search (`tables/pattern_terms.bin`): each
//! program's analysed words per field, as postings, with the few facts the
//! search filters on and each program's vector in the corpus-learned
//! semantic space, all made at build time.
//!
//! Pattern search used to analyse every program's text on its first query
//! (stemming was most of the 20 ms this took on labs' 357 programs) and to
//! decode every program row to filter and rank (8–13 ms). With this table a
//! search decodes the rows of its shown hits only.
//!
//! Layout (integers little-endian; "strings" and "pieces" as in [`crate::rows`]):
//!
//! ```text
//! "FDXPTRM1"
//! u32 P, u32 F   programs, fields (F = N_FIELDS)
//! P×F u32        each program's length (in terms) in each field
//! u32 T; T strings   the vocabulary, sorted and unique
//! T u32          each term's document frequency (programs holding it in any field)
//! T u32          where each term's postings end, in postings
//! E×3 u32        postings (E = the last end): program, field, frequency;
//!                a term's are in program order, then field order
//! blob           the programs' facets: one JSON array of P ProgramFacets
//! u32 D          vector dimensions (0: no semantic model)
//! P u32          1 when the program has a vector, else 0
//! V×D f32        the vectors of those that have one, in program order
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use fabdex_model::registry::{PatternKind, Quality};
use fabdex_model::ts::{DocRole, ProgramRow};
use fabdex_semantic::Model;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rows::{Reader, Strings, count, put_blob, put_u32};
use crate::search_schema::for_each_term;

/// Where the table lives in a snapshot.
pub const PATH: &str = "tables/pattern_terms.bin";

const MAGIC: &[u8; 8] = b"FDXPTRM1";

/// The searchable fields of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The entry's file and folder names, split into words.
    Name,
    /// JSDoc of the pattern or its result type (a record's own description).
    Description,
    Tags,
    Result,
    Argument,
    /// Catalog sections that name the entry: heading and prose.
    Catalog,
    /// Keywords listed by the catalog or README.
    Keywords,
    /// A README beside the entry.
    Readme,
    /// Lines of other docs that link to the entry.
    Links,
    /// The entry's module comment.
    ModuleDoc,
    /// `[NAME]` and the text a user sees in the JSX.
    Ui,
    /// Handler and action names.
    Actions,
}

/// The fields in table order.
pub const FIELDS: [Field; 12] = [
    Field::Name,
    Field::Description,
    Field::Tags,
    Field::Result,
    Field::Argument,
    Field::Catalog,
    Field::Keywords,
    Field::Readme,
    Field::Links,
    Field::ModuleDoc,
    Field::Ui,
    Field::Actions,
];
pub const N_FIELDS: usize = FIELDS.len();

impl Field {
    /// How much a match in the field counts, in BM25F and in the program's
    /// semantic vector (which is why it is defined here, beside the build).
    pub fn weight(self) -> f64 {
        match self {
            Field::Name => 1.5,
            Field::Description => 1.0,
            Field::Tags => 1.5,
            Field::Result => 2.0,
            Field::Argument => 1.0,
            Field::Catalog => 1.5,
            Field::Keywords => 2.0,
            Field::Readme => 0.8,
            Field::Links => 0.6,
            Field::ModuleDoc => 1.0,
            Field::Ui => 1.0,
            Field::Actions => 0.8,
        }
    }

    /// The field's place in [`FIELDS`] (and in the table's field lengths).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The field's name in `why`.
    pub fn label(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Description => "description",
            Field::Tags => "tags",
            Field::Result => "result contract",
            Field::Argument => "argument contract",
            Field::Catalog => "catalog",
            Field::Keywords => "keywords",
            Field::Readme => "readme",
            Field::Links => "linked from",
            Field::ModuleDoc => "module doc",
            Field::Ui => "ui text",
            Field::Actions => "actions",
        }
    }
}

/// The text of each field of a program, in [`FIELDS`] order.
pub fn field_texts(p: &ProgramRow) -> [String; N_FIELDS] {
    let (arg, res, _) = effective_schemas(p);
    let name = p.entry.rsplit('/').next().unwrap_or(&p.entry).split('.').next().unwrap_or("");
    let prof = &p.profile;
    let notes = |role: DocRole| {
        prof.docs.iter().filter(|n| n.role == role).map(|n| format!("{} {}", n.heading, n.text)).collect::<Vec<_>>()
    };
    let keywords: Vec<&str> = prof
        .docs
        .iter()
        .filter(|n| matches!(n.role, DocRole::Catalog | DocRole::Readme))
        .flat_map(|n| n.keywords.iter().map(String::as_str))
        .collect();
    let ui: Vec<&str> = prof.own.names.iter().chain(&prof.own.ui).map(String::as_str).collect();
    [
        format!("{name} {}", p.aliases.join(" ").replace(['/', '.', '-', '_'], " ")),
        p.description.clone().unwrap_or_default(),
        p.hashtags.join(" ").replace('#', " "),
        contract_text(res),
        contract_text(arg),
        notes(DocRole::Catalog).join(" "),
        keywords.join(" ").replace(['-', '_'], " "),
        notes(DocRole::Readme).join(" "),
        notes(DocRole::Link).join(" "),
        prof.own.module_doc.clone().unwrap_or_default(),
        ui.join(" . "),
        prof.own.actions.join(" "),
    ]
}

/// The schemas search and fit use: extracted from source when there is
/// source, else the record's declared ones; and which of the two they are.
pub fn effective_schemas(p: &ProgramRow) -> (Option<&Value>, Option<&Value>, &'static str) {
    let declared = p.published.as_ref();
    let arg = p.contract.argument_schema.as_ref().or(declared.and_then(|d| d.argument_schema.as_ref()));
    let res = p.contract.result_schema.as_ref().or(declared.and_then(|d| d.result_schema.as_ref()));
    let which = if p.contract.argument_schema.is_some() || p.contract.result_schema.is_some() {
        "extracted"
    } else if arg.is_some() || res.is_some() {
        "declared"
    } else {
        "none"
    };
    (arg, res, which)
}

/// Property names, their descriptions and the names of referenced
/// definitions, to two levels, as text.
fn contract_text(schema: Option<&Value>) -> String {
    fn walk(s: &Value, defs: Option<&Value>, depth: usize, out: &mut String) {
        if depth > 2 {
            return;
        }
        if let Some(r) = s.get("$ref").and_then(|r| r.as_str())
            && let Some(name) = r.strip_prefix("#/$defs/")
        {
            out.push_str(name);
            out.push(' ');
            if let Some(def) = defs.and_then(|d| d.get(name)) {
                walk(def, defs, depth + 1, out);
            }
        }
        if let Some(items) = s.get("items") {
            walk(items, defs, depth, out);
        }
        if let Some(props) = s.get("properties").and_then(|p| p.as_object()) {
            for (k, v) in props {
                if k.starts_with('$') {
                    continue;
                }
                out.push_str(k);
                out.push(' ');
                if let Some(d) = v.get("description").and_then(|d| d.as_str()) {
                    out.push_str(d);
                    out.push(' ');
                }
                walk(v, defs, depth + 1, out);
            }
        }
        for key in ["anyOf", "oneOf"] {
            for alt in s.get(key).and_then(|a| a.as_array()).into_iter().flatten() {
                walk(alt, defs, depth, out);
            }
        }
    }
    let mut out = String::new();
    if let Some(s) = schema {
        walk(s, s.get("$defs"), 0, &mut out);
    }
    out
}

/// What pattern search filters and breaks ties on, per program, so that it
/// decodes no program row it does not show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProgramFacets {
    pub entry: String,
    pub kind: Option<PatternKind>,
    pub quality: Option<Quality>,
    /// The program's tier (`fixture`, `legacy`, …), when it has one.
    pub tier: Option<String>,
    pub hashtags: Vec<String>,
    pub dependencies: Vec<String>,
}

impl ProgramFacets {
    fn of(p: &ProgramRow) -> ProgramFacets {
        let meta = p.published.as_ref();
        ProgramFacets {
            entry: p.entry.clone(),
            kind: meta.and_then(|m| m.kind),
            quality: meta.and_then(|m| m.quality),
            tier: p.profile.tier.as_ref().map(|t| t.tier.clone()),
            hashtags: p.hashtags.clone(),
            dependencies: p.dependencies.clone(),
        }
    }
}

/// One program's use of one term in one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    pub program: u32,
    pub field: Field,
    pub frequency: u32,
}

/// The term table as a snapshot opens it.
pub struct PatternTerms {
    programs: usize,
    lens: Vec<u32>,
    avg_len: [f64; N_FIELDS],
    vocabulary: Strings,
    df: Vec<u32>,
    posting_ends: Vec<u32>,
    postings: Vec<Posting>,
    facets: Vec<ProgramFacets>,
    dim: usize,
    vectors: Vec<Option<Vec<f32>>>,
}

impl std::fmt::Debug for PatternTerms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternTerms")
            .field("programs", &self.programs)
            .field("terms", &self.df.len())
            .field("postings", &self.postings.len())
            .finish()
    }
}

impl PatternTerms {
    pub fn programs(&self) -> usize {
        self.programs
    }

    pub fn facets(&self, program: usize) -> &ProgramFacets {
        &self.facets[program]
    }

    /// A program's length in terms in one field.
    pub fn len_of(&self, program: usize, field: usize) -> u32 {
        self.lens[program * N_FIELDS + field]
    }

    /// The mean length of a field over all programs (at least 1).
    pub fn avg_len(&self, field: usize) -> f64 {
        self.avg_len[field]
    }

    /// A term's document frequency and postings, if any program holds it.
    pub fn term(&self, term: &str) -> Option<(u32, &[Posting])> {
        let (mut lo, mut hi) = (0, self.df.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.vocabulary.get(mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let start = if mid == 0 { 0 } else { self.posting_ends[mid - 1] as usize };
                    return Some((self.df[mid], &self.postings[start..self.posting_ends[mid] as usize]));
                }
            }
        }
        None
    }

    /// Distinct terms in the table.
    pub fn vocabulary(&self) -> usize {
        self.df.len()
    }

    /// The program's vector in the corpus-learned semantic space, if it has one.
    pub fn vector(&self, program: usize) -> Option<&[f32]> {
        self.vectors.get(program).and_then(|v| v.as_deref())
    }

    /// Dimensions of the vectors (0 when the snapshot has no semantic model).
    pub fn dim(&self) -> usize {
        self.dim
    }
}

/// One program's term frequencies per field, in term order.
type Analysed = [BTreeMap<String, u32>; N_FIELDS];

fn analyse(texts: &[String; N_FIELDS]) -> Analysed {
    let mut fields: Analysed = Default::default();
    for (i, text) in texts.iter().enumerate() {
        for_each_term(text, |t| *fields[i].entry(t.to_string()).or_default() += 1);
    }
    fields
}

/// The program's vector in `model`'s space: its terms, weighted by field.
fn program_vector(fields: &Analysed, model: &Model) -> Option<Vec<f32>> {
    let mut bag: HashMap<&str, f32> = HashMap::new();
    for (fi, field) in FIELDS.iter().enumerate() {
        for (t, tf) in &fields[fi] {
            *bag.entry(t.as_str()).or_default() += field.weight() as f32 * *tf as f32;
        }
    }
    let mut bag: Vec<(String, f32)> = bag.into_iter().map(|(t, c)| (t.to_string(), c)).collect();
    bag.sort_by(|a, b| a.0.cmp(&b.0));
    model.embed(&bag)
}

/// The table's bytes for `programs`, their vectors made with `model`
/// (programs are analysed in parallel: this runs at build time).
pub fn encode(programs: &[ProgramRow], model: &Model) -> Vec<u8> {
    let texts: Vec<[String; N_FIELDS]> = programs.par_iter().map(field_texts).collect();
    encode_texts(&texts, programs.iter().map(ProgramFacets::of).collect(), Some(model))
}

/// [`encode`] from each program's field texts and facets.
fn encode_texts(texts: &[[String; N_FIELDS]], facets: Vec<ProgramFacets>, model: Option<&Model>) -> Vec<u8> {
    let analysed: Vec<Analysed> = texts.par_iter().map(analyse).collect();
    let vectors: Vec<Option<Vec<f32>>> =
        analysed.par_iter().map(|a| model.and_then(|m| program_vector(a, m))).collect();
    let mut postings: BTreeMap<&str, Vec<[u32; 3]>> = BTreeMap::new();
    for (program, fields) in analysed.iter().enumerate() {
        for (field, terms) in fields.iter().enumerate() {
            for (t, &tf) in terms {
                postings.entry(t.as_str()).or_default().push([count(program), field as u32, tf]);
            }
        }
    }
    let mut out = MAGIC.to_vec();
    put_u32(&mut out, count(texts.len()));
    put_u32(&mut out, N_FIELDS as u32);
    for fields in &analysed {
        for terms in fields {
            put_u32(&mut out, terms.values().sum());
        }
    }
    put_u32(&mut out, count(postings.len()));
    crate::rows::put_pieces(&mut out, postings.keys().map(|t| t.as_bytes().to_vec()));
    for list in postings.values() {
        let programs: BTreeSet<u32> = list.iter().map(|p| p[0]).collect();
        put_u32(&mut out, count(programs.len()));
    }
    let mut end = 0;
    for list in postings.values() {
        end += list.len();
        put_u32(&mut out, count(end));
    }
    for entry in postings.values().flatten() {
        entry.iter().for_each(|&v| put_u32(&mut out, v));
    }
    put_blob(&mut out, &serde_json::to_vec(&facets).expect("facets serialize"));
    let dim = vectors.iter().flatten().map(Vec::len).next().unwrap_or(0);
    put_u32(&mut out, count(dim));
    for v in &vectors {
        put_u32(&mut out, u32::from(v.is_some()));
    }
    for v in vectors.iter().flatten() {
        v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    }
    out
}

/// The table from [`encode`]'s bytes (already checked against their
/// digest), every part checked so that no lookup can go out of range.
pub fn decode(bytes: &[u8]) -> Result<PatternTerms, String> {
    let mut r = Reader::after_magic(bytes, MAGIC, "pattern term table")?;
    let programs = r.u32("the program count")? as usize;
    let fields = r.u32("the field count")? as usize;
    if fields != N_FIELDS {
        return Err(format!("it has {fields} fields per program; this fabdex searches {N_FIELDS}"));
    }
    let lens = r.u32s(programs.checked_mul(N_FIELDS).ok_or("too many programs")?, "the field lengths")?;
    let terms = r.u32("the term count")? as usize;
    let vocabulary = r.strings(terms, "term")?;
    if let Some(i) = (1..terms).find(|&i| vocabulary.get(i - 1) >= vocabulary.get(i)) {
        return Err(format!("term {i} is out of order"));
    }
    let df = r.u32s(terms, "the document frequencies")?;
    let posting_ends = r.u32s(terms, "the posting ends")?;
    let total = posting_ends.last().map_or(0, |&e| e as usize);
    crate::rows::check_ends(&posting_ends, total, "term")?;
    let raw = r.u32s(total.checked_mul(3).ok_or("too many postings")?, "the postings")?;
    let postings = raw
        .chunks_exact(3)
        .enumerate()
        .map(|(i, p)| match (p[0] as usize, FIELDS.get(p[1] as usize)) {
            (program, Some(&field)) if program < programs => Ok(Posting { program: p[0], field, frequency: p[2] }),
            _ => Err(format!("posting {i} names program {} and field {}, outside the table", p[0], p[1])),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let facets: Vec<ProgramFacets> =
        serde_json::from_slice(r.blob("the facets")?).map_err(|e| format!("the facets do not decode: {e}"))?;
    if facets.len() != programs {
        return Err(format!("it has facets of {} programs, and {programs} programs", facets.len()));
    }
    let dim = r.u32("the vector dimensions")? as usize;
    let has = r.u32s(programs, "which programs have vectors")?;
    let mut vectors = Vec::with_capacity(programs);
    for &h in &has {
        vectors.push(match h {
            0 => None,
            _ => Some(r.u32s(dim, "the vectors")?.into_iter().map(f32::from_bits).collect::<Vec<f32>>()),
        });
    }
    r.finish("the vectors")?;
    let mut avg_len = [0.0; N_FIELDS];
    for (f, avg) in avg_len.iter_mut().enumerate() {
        let total: u64 = (0..programs).map(|p| u64::from(lens[p * N_FIELDS + f])).sum();
        *avg = (total as f64 / programs.max(1) as f64).max(1.0);
    }
    Ok(PatternTerms { programs, lens, avg_len, vocabulary, df, posting_ends, postings, facets, dim, vectors })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of programs with these entries and descriptions.
    fn table_bytes(programs: &[(&str, &str)]) -> Vec<u8> {
        let texts: Vec<[String; N_FIELDS]> = programs
            .iter()
            .map(|(entry, description)| {
                let mut t: [String; N_FIELDS] = Default::default();
                t[0] = entry.split('.').next().unwrap().replace('/', " ");
                t[1] = description.to_string();
                t
            })
            .collect();
        let facets =
            programs.iter().map(|(e, _)| ProgramFacets { entry: e.to_string(), ..Default::default() }).collect();
        encode_texts(&texts, facets, None)
    }

    #[test]
    fn terms_round_trip_with_postings_in_program_and_field_order() {
        let table =
            decode(&table_bytes(&[("todo/list.tsx", "A todo list"), ("chat.tsx", "Chat about todos")])).unwrap();
        assert_eq!(table.programs(), 2);
        let (df, postings) = table.term("todo").unwrap();
        assert_eq!(df, 2);
        let got: Vec<(u32, Field, u32)> = postings.iter().map(|p| (p.program, p.field, p.frequency)).collect();
        assert_eq!(got, [(0, Field::Name, 1), (0, Field::Description, 1), (1, Field::Description, 1)]);
        assert_eq!(table.term("chat").unwrap().0, 1);
        assert!(table.term("missing").is_none());
        assert_eq!(table.len_of(0, 0), 2, "todo, list");
        assert_eq!(table.facets(1).entry, "chat.tsx");
        assert_eq!(table.avg_len(0), 1.5);
        assert_eq!(table.dim(), 0);
        assert!(table.vector(0).is_none());
    }

    #[test]
    fn a_field_index_is_its_place_in_fields() {
        for (i, field) in FIELDS.iter().enumerate() {
            assert_eq!(field.index(), i, "{field:?}");
        }
    }

    #[test]
    fn every_cut_and_trailing_bytes_are_refused() {
        let bytes = table_bytes(&[("a.tsx", "one two"), ("b.tsx", "two three")]);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "a table cut at {cut} bytes decoded");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).unwrap_err().contains("follow"));
    }

    #[test]
    fn a_posting_outside_the_table_is_refused() {
        let bytes = table_bytes(&[("a.tsx", "one")]);
        let table = decode(&bytes).unwrap();
        // The postings start after the magic, the counts, the lengths, the
        // vocabulary (ends, blob length, text) and two columns per term.
        let terms = table.vocabulary();
        let text: usize = (0..terms).map(|i| table.vocabulary.get(i).len()).sum();
        let at = 8 + 8 + N_FIELDS * 4 + 4 + terms * 4 + 8 + text + terms * 8;
        assert_eq!(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()), 0, "the first posting's program");
        let mut damaged = bytes.clone();
        damaged[at..at + 4].copy_from_slice(&7u32.to_le_bytes());
        let err = decode(&damaged).unwrap_err();
        assert!(err.contains("posting 0 names program 7"), "{err}");
    }

    proptest::proptest! {
        /// Any bytes decode to a table or to an error, never a panic; a
        /// flipped byte of a real table is caught, or every lookup of the
        /// table it decodes to stays in range.
        #[test]
        fn arbitrary_bytes_never_panic(body in proptest::collection::vec(proptest::num::u8::ANY, 0..512), flip in 0usize..4000) {
            let _ = decode(&body);
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend_from_slice(&body);
            let _ = decode(&with_magic);
            let mut real = table_bytes(&[("todo/list.tsx", "A todo list"), ("chat.tsx", "Chat about todos")]);
            let at = flip % real.len();
            real[at] ^= 0x5a;
            if let Ok(table) = decode(&real) {
                for term in ["todo", "list", "chat", "about"] {
                    for p in table.term(term).map(|(_, p)| p).unwrap_or_default() {
                        proptest::prop_assert!((p.program as usize) < table.programs());
                        let _ = table.len_of(p.program as usize, p.field.index());
                    }
                }
                for program in 0..table.programs() {
                    let _ = (table.facets(program), table.vector(program));
                }
            }
        }
    }

    #[test]
    fn terms_out_of_order_are_refused() {
        let bytes = table_bytes(&[("a.tsx", "alpha beta")]);
        let at = bytes.windows(5).position(|w| w == b"alpha").unwrap();
        let mut damaged = bytes.clone();
        damaged[at] = b'z';
        assert!(decode(&damaged).unwrap_err().contains("out of order"));
    }
}
