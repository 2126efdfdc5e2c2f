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

use fabdex_model::registry::{PatternKind, Quality};
use fabdex_model::ts::{DocRole, ProgramRow};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rows::{Reader, Strings};

/// Where the table lives in a snapshot.
pub const PATH: &str = "tables/pattern_terms.bin";

pub const MAGIC: &[u8; 8] = b"FDXPTRM1";

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
    pub fn of(p: &ProgramRow) -> ProgramFacets {
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
    /// The `i`th term of the vocabulary, in sorted order.
    pub fn term_at(&self, i: usize) -> &str {
        self.vocabulary.get(i)
    }

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
