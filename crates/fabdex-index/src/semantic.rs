//! Fitting the semantic models of a build, whole or folded (the models'
//! stored form and reading are `fabdex_snapshot::semantic`, re-exported here).

pub use fabdex_snapshot::semantic::*;

use fabdex_semantic::{FitOptions, Model};
use fabdex_snapshot::passages::{Halves, PassageVectors};
use fabdex_snapshot::search_schema::{self, UnitText};
use rayon::prelude::*;

/// Units analysed once for the semantic models: every distinct term
/// numbered, and per unit its weighted bag and the terms its passages are cut
/// from. Numbering each term once, instead of a `String` per term in every
/// bag, keeps the fit's memory and time for the matrices themselves.
pub struct Analysed {
    /// Each distinct term, at its number.
    terms: Vec<Box<str>>,
    units: Vec<AnalysedUnit>,
}

#[derive(Debug, Default)]
struct AnalysedUnit {
    /// Each term once with its weighted count ([`SEMANTIC_FIELD_WEIGHTS`]), in number order.
    bag: Vec<(u32, f32)>,
    /// The heading's, defined names' and context's terms, weighted as in the bag, in text order.
    head: Vec<(u32, f32)>,
    /// The body's and code's terms in text order.
    body: Vec<u32>,
}

impl AsRef<[(u32, f32)]> for AnalysedUnit {
    /// The bag.
    fn as_ref(&self) -> &[(u32, f32)] {
        &self.bag
    }
}

impl Analysed {
    /// Analyse units over the pool: each chunk numbers its own terms, then
    /// one pass gives every term its number (in order of first use).
    fn of(texts: &[&UnitText]) -> Analysed {
        let chunks: Vec<(Vec<Box<str>>, Vec<AnalysedUnit>)> = texts
            .par_chunks(64)
            .map(|chunk| {
                let mut numbering = Numbering::default();
                let units = chunk.iter().map(|text| analyse_unit(text, &mut numbering)).collect();
                (numbering.into_terms(), units)
            })
            .collect();
        let mut numbering = Numbering::default();
        let mut units = Vec::with_capacity(texts.len());
        for (terms, chunk_units) in chunks {
            let global: Vec<u32> = terms.iter().map(|t| numbering.number(t)).collect();
            for mut unit in chunk_units {
                unit.bag.iter_mut().for_each(|(t, _)| *t = global[*t as usize]);
                unit.bag.sort_unstable_by_key(|(t, _)| *t);
                unit.head.iter_mut().for_each(|(t, _)| *t = global[*t as usize]);
                unit.body.iter_mut().for_each(|t| *t = global[*t as usize]);
                units.push(unit);
            }
        }
        Analysed { terms: numbering.into_terms(), units }
    }

    /// Per term number: its number in `model`'s vocabulary, or `u32::MAX`.
    fn numbers_in(&self, model: &Model) -> Vec<u32> {
        self.terms.par_iter().map(|t| model.term_number(t).unwrap_or(u32::MAX)).collect()
    }

    /// Each file's bag: the sum of its units' bags (in unit order), in
    /// number order. `unit_file[i]` is the file of unit `i`; a unit
    /// `include` refuses adds nothing.
    fn file_bags(&self, unit_file: &[u32], files: usize, include: impl Fn(usize) -> bool) -> Vec<Vec<(u32, f32)>> {
        let mut per_file: Vec<Vec<(u32, f32)>> = vec![Vec::new(); files];
        for (u, unit) in self.units.iter().enumerate() {
            if include(u) {
                per_file[unit_file[u] as usize].extend_from_slice(&unit.bag);
            }
        }
        per_file.into_par_iter().map(summed).collect()
    }
}

/// Terms numbered in order of first use.
#[derive(Default)]
struct Numbering(foldhash::HashMap<Box<str>, u32>);

impl Numbering {
    fn number(&mut self, term: &str) -> u32 {
        if let Some(&n) = self.0.get(term) {
            return n;
        }
        let n = self.0.len() as u32;
        self.0.insert(term.into(), n);
        n
    }

    fn into_terms(self) -> Vec<Box<str>> {
        let mut terms: Vec<Box<str>> = vec![Box::from(""); self.0.len()];
        for (term, n) in self.0 {
            terms[n as usize] = term;
        }
        terms
    }
}

/// One unit's terms, numbered by `numbering`.
fn analyse_unit(text: &UnitText, numbering: &mut Numbering) -> AnalysedUnit {
    let mut unit = AnalysedUnit::default();
    let mut weighted: Vec<(u32, f32)> = Vec::new();
    for (name, field) in text.fields() {
        let weight = SEMANTIC_FIELD_WEIGHTS.iter().find(|(n, _)| *n == name).map(|(_, w)| *w);
        let in_head = matches!(name, "heading" | "defines" | "context");
        let in_body = matches!(name, "body" | "code");
        if weight.is_none() && !in_body {
            continue;
        }
        search_schema::for_each_term(field, |t| {
            let n = numbering.number(t);
            if let Some(w) = weight {
                weighted.push((n, w));
                if in_head {
                    unit.head.push((n, w));
                }
            }
            if in_body {
                unit.body.push(n);
            }
        });
    }
    unit.bag = summed(weighted);
    // Held for the whole fit, for every unit: no room to spare.
    unit.bag.shrink_to_fit();
    unit.head.shrink_to_fit();
    unit.body.shrink_to_fit();
    unit
}

/// Equal terms' counts summed in order (as `f32`), in number order.
fn summed(mut entries: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    entries.sort_by_key(|(t, _)| *t); // stable: equal terms keep their order
    let mut out: Vec<(u32, f32)> = Vec::with_capacity(entries.len());
    for (t, c) in entries {
        match out.last_mut() {
            Some((last, sum)) if *last == t => *sum += c,
            _ => out.push((t, c)),
        }
    }
    out
}

/// The passage vectors of one unit (none when it is short). `numbers` maps
/// the unit's term numbers to `model`'s ([`Analysed::numbers_in`]).
fn unit_passages(model: &Model, numbers: &[u32], unit: &AnalysedUnit) -> Vec<Vec<f32>> {
    let body = &unit.body;
    if body.len() <= PASSAGE_TERMS {
        return Vec::new();
    }
    let known = |t: u32| Some(numbers[t as usize]).filter(|&n| n != u32::MAX);
    let head: Vec<(u32, f32)> = unit.head.iter().filter_map(|&(t, w)| Some((known(t)?, w))).collect();
    // Every window is full: the last one ends at the body's end and overlaps
    // the one before, so no passage is its heading and a few stray words
    // (which would make it all heading, and lift it for the heading's words).
    let last = body.len() - PASSAGE_TERMS;
    (0..body.len().div_ceil(PASSAGE_TERMS))
        .map(|i| &body[(i * PASSAGE_TERMS).min(last)..][..PASSAGE_TERMS])
        .filter_map(|window| {
            let mut bag = head.clone();
            bag.extend(window.iter().filter_map(|&t| Some((known(t)?, 1.0))));
            model.embed_numbered(&bag)
        })
        .collect()
}

/// A bag's terms that `numbers` ([`Analysed::numbers_in`]) finds in a model, by their numbers there.
fn in_model(bag: &[(u32, f32)], numbers: &[u32]) -> Vec<(u32, f32)> {
    bag.iter().filter_map(|&(t, c)| Some((numbers[t as usize], c)).filter(|(n, _)| *n != u32::MAX)).collect()
}

/// Fit both models. `unit_file[i]` is the file of unit `i`; `files` the number of files.
pub fn fit(unit_texts: &[UnitText], unit_file: &[u32], files: usize) -> SemanticModels {
    fit_analysed(&analyse(unit_texts), unit_file, files)
}

/// The units analysed for [`fit_analysed`]: after this, the fit needs
/// no unit's text.
pub fn analyse(unit_texts: &[UnitText]) -> Analysed {
    Analysed::of(&unit_texts.iter().collect::<Vec<_>>())
}

/// [`fit`] of units analysed by [`analyse`].
pub fn fit_analysed(analysed: &Analysed, unit_file: &[u32], files: usize) -> SemanticModels {
    let file_bags = analysed.file_bags(unit_file, files, |_| true);
    let opts = FitOptions::default();
    // One after the other: each fit runs over the pool, and its peak memory is its own.
    let units = Model::fit_numbered(&analysed.terms, &analysed.units, &opts);
    let files = Model::fit_numbered(&analysed.terms, &file_bags, &opts);
    drop(file_bags);
    let passages = build_passages(&units, analysed);
    SemanticModels { units, files, passages }
}

/// Where each unit and file of a new snapshot comes from in an incremental
/// build: a unit or file of the previous snapshot that is unchanged (its
/// file's root, path and digest are), or none (edited or added).
pub struct Carried<'a> {
    /// Per unit: the previous snapshot's unit it is.
    pub units: &'a [Option<u32>],
    /// Per file: the previous snapshot's file it is.
    pub files: &'a [Option<u32>],
    /// Per unit: the file it is in.
    pub unit_file: &'a [u32],
}

/// A unit's vector and its passages' vectors.
type UnitVectors = (Vec<f32>, Vec<Vec<f32>>);

/// Fold edited and added units into `previous`'s spaces without refitting:
/// an unchanged unit or file keeps its vectors and passages; a new unit is
/// embedded by the units model ([`Model::embed`] of its bag: the direction
/// the fit would give it, in the fitted space), a new file by the files
/// model from the sum of its units' bags. `texts[u]` is given for every
/// unit `carried.units` does not carry. The vocabulary and idf stay the
/// fit's, so a term no fitted document had counts for nothing until the
/// next fit: the drift the build reports (`SemanticFit`) bounds that.
pub fn fold(previous: &SemanticModels, carried: &Carried<'_>, texts: &[Option<UnitText>]) -> SemanticModels {
    let (units_model, files_model) = (&previous.units, &previous.files);
    let given: Vec<usize> = (0..texts.len()).filter(|&u| texts[u].is_some()).collect();
    let given_texts: Vec<&UnitText> = given.iter().filter_map(|&u| texts[u].as_ref()).collect();
    let analysed = Analysed::of(&given_texts);
    let (unit_numbers, file_numbers) = (analysed.numbers_in(units_model), analysed.numbers_in(files_model));
    // New units' vectors and passages over the pool; carried ones are copied below.
    let new_vectors: Vec<UnitVectors> = analysed
        .units
        .par_iter()
        .map(|unit| {
            let bag = in_model(&unit.bag, &unit_numbers);
            let vector = units_model.embed_numbered(&bag).unwrap_or_else(|| vec![0.0; units_model.dim()]);
            (vector, unit_passages(units_model, &unit_numbers, unit))
        })
        .collect();
    let mut new_rows: Vec<Option<UnitVectors>> = (0..texts.len()).map(|_| None).collect();
    for (&u, vectors) in given.iter().zip(new_vectors) {
        new_rows[u] = Some(vectors);
    }
    // A file that is not carried: the sum of its given units' bags.
    let given_file: Vec<u32> = given.iter().map(|&u| carried.unit_file[u]).collect();
    let file_bags =
        analysed.file_bags(&given_file, carried.files.len(), |i| carried.files[given_file[i] as usize].is_none());
    let file_vectors: Vec<f32> = carried
        .files
        .iter()
        .zip(&file_bags)
        .flat_map(|(carried, bag)| match carried {
            Some(p) => files_model.vector(*p as usize).to_vec(),
            None => files_model
                .embed_numbered(&in_model(bag, &file_numbers))
                .unwrap_or_else(|| vec![0.0; files_model.dim()]),
        })
        .collect();
    let dim = units_model.dim();
    let mut counts = Vec::with_capacity(carried.units.len());
    let mut unit_vectors = Vec::with_capacity(carried.units.len() * dim);
    let mut passage_vectors = Vec::with_capacity(previous.passages.len() * dim);
    for (u, new) in new_rows.into_iter().enumerate() {
        match (carried.units[u], new) {
            (Some(p), _) => {
                unit_vectors.extend_from_slice(units_model.vector(p as usize));
                counts.push(previous.passages.0.passages(p as usize) as u32);
                passage_vectors.extend_from_slice(&previous.passages.0.vectors(p as usize));
            }
            (None, Some((vector, passages))) => {
                unit_vectors.extend(vector);
                counts.push(passages.len() as u32);
                passage_vectors.extend(passages.into_iter().flatten());
            }
            (None, None) => panic!("unit {u} is neither carried nor given"),
        }
    }
    SemanticModels {
        units: units_model.with_documents(carried.units.len(), unit_vectors),
        files: files_model.with_documents(carried.files.len(), file_vectors),
        passages: UnitPassages::rounded(dim, &counts, &passage_vectors),
    }
}

/// Embed the passages of every analysed unit with `model`.
fn build_passages(model: &Model, analysed: &Analysed) -> UnitPassages {
    let numbers = analysed.numbers_in(model);
    // Each unit's vectors are rounded as soon as they are made: the
    // `f32` vectors of every passage at once would be twice the table.
    let per_unit: Vec<(u32, Vec<half::f16>)> = analysed
        .units
        .par_iter()
        .map(|unit| {
            let passages = unit_passages(model, &numbers, unit);
            let mut halves = vec![half::f16::ZERO; passages.len() * model.dim()];
            for (to, from) in halves.chunks_mut(model.dim().max(1)).zip(&passages) {
                half::slice::HalfFloatSliceExt::convert_from_f32_slice(to, from);
            }
            (passages.len() as u32, halves)
        })
        .collect();
    let counts: Vec<u32> = per_unit.iter().map(|(n, _)| *n).collect();
    let mut vectors = Vec::with_capacity(per_unit.iter().map(|(_, v)| v.len()).sum());
    for (_, halves) in per_unit {
        vectors.extend_from_slice(&halves);
    }
    UnitPassages(PassageVectors::from_counts_f16(model.dim(), &counts, Halves::Owned(vectors)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(heading: &str, body: &str) -> UnitText {
        UnitText {
            heading: heading.into(),
            context: "Guide".into(),
            path: String::new(),
            body: body.into(),
            code: String::new(),
            symbols: String::new(),
            parent: String::new(),
            defines: String::new(),
        }
    }

    /// A long section whose last paragraph is about one thing, among short
    /// sections that each are about one thing.
    fn corpus() -> Vec<UnitText> {
        let filler = ["storage", "ledger", "commit", "snapshot", "digest", "manifest", "staging", "publish"];
        let long_body: Vec<&str> = (0..150).map(|i| filler[i % filler.len()]).collect();
        let deep = "Finally, a zebra grazes beside a giraffe on the savanna. ".repeat(6);
        let long = format!("{} {deep}", long_body.join(" "));
        let mut units = vec![unit("Writing an index", &long)];
        for (h, b) in [
            ("Zebras", "A zebra grazes on the savanna; zebra herds roam the savanna."),
            ("Giraffes", "A giraffe browses trees on the savanna; giraffe necks are long."),
            ("Ledgers", "The ledger records each commit and its digest."),
            ("Snapshots", "A snapshot holds the manifest; staging comes before publish."),
            ("Savanna", "The savanna is home to the zebra and the giraffe."),
            ("Digests", "A digest names the bytes of a snapshot and of a manifest."),
        ] {
            units.push(unit(h, b));
        }
        units
    }

    fn analysed(units: &[UnitText]) -> Analysed {
        Analysed::of(&units.iter().collect::<Vec<_>>())
    }

    fn fitted(units: &[UnitText]) -> Model {
        let analysed = analysed(units);
        Model::fit_numbered(&analysed.terms, &analysed.units, &FitOptions { dim: 4, ..FitOptions::default() })
    }

    #[test]
    fn a_long_units_passage_can_outscore_the_unit() {
        let units = corpus();
        let model = fitted(&units);
        let passages = build_passages(&model, &analysed(&units));
        // Only the long unit has passages: 150 filler terms and the zebra
        // paragraph's 36 make four windows of 48, the last ending at the end.
        assert_eq!(passages.units(), units.len());
        assert_eq!(passages.len(), 4);
        let query = model.embed(&query_bag(&search_schema::terms("zebra giraffe savanna"))).unwrap();
        let unit_sims = model.similarities(&query);
        let mut raised = unit_sims.clone();
        passages.raise(&query, &mut raised);
        assert!(
            raised[0] > unit_sims[0] + 0.2,
            "the zebra passage ({}) should lift the long unit ({})",
            raised[0],
            unit_sims[0]
        );
        assert_eq!(raised[1..], unit_sims[1..], "short units keep their own cosine");
    }

    #[test]
    fn passages_round_trip_and_refuse_damage() {
        let units = corpus();
        let passages = build_passages(&fitted(&units), &analysed(&units));
        let bytes = passages.to_bytes();
        assert_eq!(UnitPassages::from_bytes(&bytes).unwrap(), passages);
        let head = UnitPassages::head_len(&bytes).unwrap();
        assert!(head.is_multiple_of(4) && head >= PASSAGES_MAGIC.len() + 8 + 4 * passages.units(), "{head}");
        // Two bytes per value: the vectors are kept in half precision.
        assert!(!passages.is_empty());
        assert_eq!(bytes.len(), head + passages.len() * passages.dim() * 2);
        let cut = UnitPassages::from_bytes(&bytes[..bytes.len() - 4]).unwrap_err();
        assert!(cut.contains("bytes of vectors"), "{cut}");
        assert!(UnitPassages::from_bytes(b"not a table").unwrap_err().contains("magic"));
        let short = UnitPassages::from_bytes(&bytes[..PASSAGES_MAGIC.len() + 10]).unwrap_err();
        assert!(short.contains("passage counts of its 7 units"), "{short}");
        // Counts from a damaged file are not trusted with memory or arithmetic.
        let table = |words: &[u32]| {
            let mut b = PASSAGES_MAGIC.to_vec();
            words.iter().for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
            b.resize(b.len().next_multiple_of(4), 0); // the padding before the vectors
            b
        };
        let huge = UnitPassages::from_bytes(&table(&[0, u32::MAX])).unwrap_err();
        assert!(huge.contains("passage counts of its 4294967295 units"), "{huge}");
        let overflow = UnitPassages::from_bytes(&table(&[u32::MAX, 1, u32::MAX])).unwrap_err();
        assert!(overflow.contains("call for more than memory holds"), "{overflow}");
    }
}
