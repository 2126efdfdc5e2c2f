//! Making pattern search's term table at build time (its layout and
//! decoding are `fabdex_snapshot::pattern_terms`, re-exported here).

pub use fabdex_snapshot::pattern_terms::*;

use fabdex_model::ts::ProgramRow;
use fabdex_semantic::Model;
use fabdex_snapshot::rows::{count, put_blob, put_u32};
use fabdex_snapshot::search_schema::for_each_term;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    fabdex_snapshot::rows::put_pieces(&mut out, postings.keys().map(|t| t.as_bytes().to_vec()));
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
        let text: usize = (0..terms).map(|i| table.term_at(i).len()).sum();
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
