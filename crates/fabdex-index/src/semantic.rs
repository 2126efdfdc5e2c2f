//! The corpus-learned semantic models of a snapshot: one over search units and
//! one over whole files, fitted by `fabdex-semantic` from the same analysed
//! terms the search index holds. Stored as `tables/semantic-units.bin` and
//! `tables/semantic-files.bin`.

use std::collections::HashMap;

use fabdex_semantic::{FitOptions, Model};
use rayon::prelude::*;

use crate::search_schema::{self, UnitText};

/// How many times each field's terms count in a unit's bag: a heading and the
/// symbols a section defines say most about what it is about.
pub const SEMANTIC_FIELD_WEIGHTS: [(&str, f32); 7] = [
    ("heading", 3.0),
    ("defines", 2.0),
    ("context", 1.0),
    ("body", 1.0),
    ("code", 1.0),
    ("symbols", 1.0),
    ("parent", 1.0),
];

pub const UNITS_TABLE: &str = "tables/semantic-units.bin";
pub const FILES_TABLE: &str = "tables/semantic-files.bin";

/// Both models of a snapshot.
#[derive(Debug, Clone)]
pub struct SemanticModels {
    /// One document per search unit, in unit order.
    pub units: Model,
    /// One document per docs file, in file order.
    pub files: Model,
}

/// The weighted term bag of one unit: each distinct term once, with its weighted count.
pub fn unit_bag(text: &UnitText) -> Vec<(String, f32)> {
    let mut bag: HashMap<String, f32> = HashMap::new();
    for (name, field) in text.fields() {
        let Some((_, w)) = SEMANTIC_FIELD_WEIGHTS.iter().find(|(n, _)| *n == name) else { continue };
        search_schema::for_each_term(field, |t| match bag.get_mut(t) {
            Some(count) => *count += *w,
            None => {
                bag.insert(t.to_string(), *w);
            }
        });
    }
    let mut bag: Vec<(String, f32)> = bag.into_iter().collect();
    bag.sort_by(|a, b| a.0.cmp(&b.0));
    bag
}

/// A query's bag: every analysed term once.
pub fn query_bag(terms: &[String]) -> Vec<(String, f32)> {
    terms.iter().map(|t| (t.clone(), 1.0)).collect()
}

/// Fit both models. `unit_file[i]` is the file of unit `i`; `files` the number of files.
pub fn fit(unit_texts: &[UnitText], unit_file: &[u32], files: usize) -> SemanticModels {
    let bags: Vec<Vec<(String, f32)>> = unit_texts.par_iter().map(unit_bag).collect();
    let mut file_counts: Vec<HashMap<&str, f32>> = vec![HashMap::new(); files];
    for (bag, &f) in bags.iter().zip(unit_file) {
        for (t, c) in bag {
            *file_counts[f as usize].entry(t.as_str()).or_default() += *c;
        }
    }
    let file_bags: Vec<Vec<(String, f32)>> = file_counts
        .into_iter()
        .map(|counts| {
            let mut bag: Vec<(String, f32)> = counts.into_iter().map(|(t, c)| (t.to_string(), c)).collect();
            bag.sort_by(|a, b| a.0.cmp(&b.0));
            bag
        })
        .collect();
    let opts = FitOptions::default();
    let (units, files) = rayon::join(|| Model::fit(&bags, &opts), || Model::fit(&file_bags, &opts));
    SemanticModels { units, files }
}
