//! Questions of several clauses, ranked clause by clause and fused.
//!
//! A person often asks two things at once ("if a search matches several,
//! how does the user choose between them"), and the part that names the
//! answer's topic is not always the part a single query vector weighs most.
//! When the sentence model ranks, each clause is ranked on its own beside
//! the whole question, and the rankings are fused by reciprocal rank
//! (Cormack, Clarke and Büttcher, 2009). See docs/ranking.md for what this
//! measured, and why the lexical ranking does not use it.

/// Words a clause needs to be ranked on its own: a shorter one ("is that
/// still supported") carries too little to rank by.
pub const MIN_CLAUSE_WORDS: usize = 3;

/// Reciprocal-rank fusion's constant: a unit at rank `r` (from 1) of a list
/// adds `1 / (RRF_K + r)`.
pub const RRF_K: f32 = 60.0;

/// Units each clause's ranking contributes to the fusion (at least).
pub const FUSE_DEPTH: usize = 50;

/// Words that open a question: " and " before one of them starts a new clause.
const OPENERS: [&str; 14] =
    ["how", "what", "why", "when", "where", "whether", "which", "who", "is", "are", "does", "do", "can", "will"];

/// Words that may follow a clause-ending comma and belong to neither clause.
const JOINERS: [&str; 5] = ["and", "but", "so", "then", "or"];

/// The clauses of a question, when it has two or more of at least
/// [`MIN_CLAUSE_WORDS`] words; otherwise none. A clause ends at `?`, `.`, `!`
/// or `;` closing a word, at a comma closing a word (a joining "and", "but",
/// "so", "then" or "or" after it is dropped), and before " and " followed by
/// a question word. Each clause is the question's words in order, joined by
/// single spaces, without the punctuation that ended it.
pub fn split_clauses(query: &str) -> Vec<String> {
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut clauses: Vec<Vec<&str>> = vec![Vec::new()];
    let mut skip_joiner = false;
    for (i, &word) in words.iter().enumerate() {
        let lower = word.to_ascii_lowercase();
        if skip_joiner && JOINERS.contains(&lower.as_str()) {
            skip_joiner = false;
            continue;
        }
        skip_joiner = false;
        let next_opens = words.get(i + 1).is_some_and(|n| OPENERS.contains(&n.to_ascii_lowercase().as_str()));
        if lower == "and" && next_opens {
            clauses.push(Vec::new());
            continue;
        }
        let bare = word.trim_end_matches(['?', '.', '!', ';', ',']);
        let ending = &word[bare.len()..];
        if !bare.is_empty() {
            clauses.last_mut().expect("never empty").push(bare);
        }
        if !ending.is_empty() {
            skip_joiner = ending.contains(',') && !ending.contains(['?', '.', '!', ';']);
            clauses.push(Vec::new());
        }
    }
    let clauses: Vec<String> =
        clauses.into_iter().filter(|c| c.len() >= MIN_CLAUSE_WORDS).map(|c| c.join(" ")).collect();
    if clauses.len() >= 2 { clauses } else { Vec::new() }
}

/// Reciprocal-rank fusion of rankings (each best first, as `(score, unit,
/// parts)`): a unit's fused score is the sum over the lists it is in of
/// `1 / (RRF_K + rank)`. Its parts are those of the first list that has it
/// (the caller puts the whole question first). Best first, ties to the
/// lower unit; at most `depth`.
pub fn fuse<T: Copy>(lists: &[Vec<(f32, u32, T)>], depth: usize) -> Vec<(f32, u32, T)> {
    let mut fused: Vec<(f32, u32, T)> = Vec::new();
    let mut at: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for list in lists {
        for (rank, &(_, unit, parts)) in list.iter().enumerate() {
            let add = 1.0 / (RRF_K + rank as f32 + 1.0);
            match at.get(&unit) {
                Some(&i) => fused[i].0 += add,
                None => {
                    at.insert(unit, fused.len());
                    fused.push((add, unit, parts));
                }
            }
        }
    }
    fused.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    fused.truncate(depth);
    fused
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_question_splits_at_its_clause_boundaries() {
        assert_eq!(
            split_clauses("if a search for another piece matches several, how does the user choose between them"),
            ["if a search for another piece matches several", "how does the user choose between them"]
        );
        assert_eq!(
            split_clauses(
                "What fields are on the object I get back from looking up another piece by hashtag, and how do I tell whether the lookup found nothing?"
            ),
            [
                "What fields are on the object I get back from looking up another piece by hashtag",
                "how do I tell whether the lookup found nothing"
            ]
        );
        assert_eq!(
            split_clauses("my list is empty. why does the filter drop every item and how can I see what it kept"),
            ["my list is empty", "why does the filter drop every item", "how can I see what it kept"]
        );
    }

    #[test]
    fn one_clause_or_short_ones_give_none() {
        assert!(split_clauses("how do I make a field optional with a default value in a pattern input").is_empty());
        assert!(split_clauses("call a REST endpoint and show a spinner while the response loads").is_empty());
        // "is that supported" is too short to rank alone, so one clause is left.
        assert!(split_clauses("old code passes the fallback as a type parameter, is that supported").len() == 2);
        assert!(split_clauses("wish result, please").is_empty());
        assert!(split_clauses("fetchJson<T>.result").is_empty());
        assert!(split_clauses("").is_empty());
    }

    #[test]
    fn fusion_sums_reciprocal_ranks_and_keeps_the_first_lists_parts() {
        let whole = vec![(9.0, 1, 'a'), (8.0, 2, 'a'), (7.0, 3, 'a')];
        let clause = vec![(5.0, 3, 'b'), (4.0, 4, 'b')];
        let fused = fuse(&[whole, clause], 10);
        let order: Vec<u32> = fused.iter().map(|f| f.1).collect();
        // Unit 3: 1/63 + 1/61 beats unit 1's 1/61 alone.
        assert_eq!(order, [3, 1, 2, 4]);
        assert_eq!(fused[0].2, 'a', "parts come from the whole question's ranking");
        assert_eq!(fused[3].2, 'b');
        assert!((fused[0].0 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-6);
        assert_eq!(fuse(&[vec![(1.0, 5, ()), (0.5, 6, ())]], 1).len(), 1);
    }

    proptest! {
        #[test]
        fn clauses_are_the_questions_words_in_order(query in "[a-z ,.?;!]{0,120}") {
            let clauses = split_clauses(&query);
            prop_assert!(clauses.is_empty() || clauses.len() >= 2);
            let words: Vec<String> = query
                .split_whitespace()
                .map(|w| w.trim_end_matches(['?', '.', '!', ';', ',']).to_string())
                .filter(|w| !w.is_empty())
                .collect();
            let mut from = 0;
            for clause in &clauses {
                let clause_words: Vec<&str> = clause.split(' ').collect();
                prop_assert!(clause_words.len() >= MIN_CLAUSE_WORDS);
                prop_assert!(clause_words.iter().all(|w| !w.is_empty() && !w.ends_with([',', '?', '.', '!', ';'])));
                // Each clause is a run of the question's words, after the previous clause.
                let start = (from..words.len())
                    .find(|&s| words[s..].starts_with(&clause_words.iter().map(|w| w.to_string()).collect::<Vec<_>>()));
                prop_assert!(start.is_some(), "{clause:?} in {words:?}");
                from = start.unwrap() + clause_words.len();
            }
        }
    }
}
