//! Retrieval evaluation with judged questions (qrels): recall@5, recall@10,
//! MRR@10, nDCG@10 and the rank of the best expected section per question.
//! A hit is the same path and anchor (and root, when the qrel names one); a
//! part of a split section counts as its section.

use serde::{Deserialize, Serialize};

use crate::{Engine, QueryError, RetrievalMode};

/// How deep to rank when looking for an expected section that is not in the top k.
pub const EVAL_DEPTH: usize = 2_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Qrel {
    pub q: String,
    pub expect: Vec<ExpectedSection>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExpectedSection {
    #[serde(default)]
    pub root: Option<String>,
    pub path: String,
    pub anchor: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuestionResult {
    pub q: String,
    /// 1-based rank of the best expected section, if it was ranked within the depth.
    pub best_rank: Option<usize>,
    pub best_address: Option<String>,
    /// The top 3 addresses returned.
    pub top: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalReport {
    pub questions: usize,
    pub k: usize,
    pub mode: String,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub recall_at_k: f64,
    pub mrr_at_10: f64,
    pub ndcg_at_10: f64,
    pub per_question: Vec<QuestionResult>,
}

/// Parse `doc:<root>/<path>#<anchor>[~n]` into (root, path, anchor).
fn split(address: &str) -> Option<(&str, &str, &str)> {
    let rest = address.strip_prefix("doc:")?;
    let (loc, frag) = rest.split_once('#')?;
    let anchor = frag.split('~').next().unwrap_or(frag);
    let (root, path) = loc.split_once('/')?;
    Some((root, path, anchor))
}

fn matches(address: &str, e: &ExpectedSection) -> bool {
    split(address).is_some_and(|(root, path, anchor)| {
        path == e.path && anchor == e.anchor && e.root.as_deref().is_none_or(|r| r == root)
    })
}

impl Engine {
    pub fn eval_docs(
        &self,
        qrels: &[Qrel],
        k: usize,
        include_history: bool,
        mode: RetrievalMode,
    ) -> Result<EvalReport, QueryError> {
        if k == 0 {
            return Err(QueryError::InvalidArgument("k must be at least 1".into()));
        }
        let n = qrels.len().max(1) as f64;
        let (mut r5, mut r10, mut rk, mut mrr, mut ndcg) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let mut per_question = Vec::with_capacity(qrels.len());
        for q in qrels {
            let ranked = self.rank_addresses(&q.q, include_history, EVAL_DEPTH, mode)?;
            // Distinct sections, in rank order, each marked relevant or not.
            let mut sections: Vec<(&str, bool)> = Vec::new();
            for a in &ranked {
                let base = a.split('~').next().unwrap_or(a);
                if !sections.iter().any(|(s, _)| *s == base) {
                    sections.push((base, q.expect.iter().any(|e| matches(a, e))));
                }
            }
            let best = sections.iter().position(|(_, rel)| *rel);
            let rank = best.map(|i| i + 1);
            r5 += f64::from(u8::from(rank.is_some_and(|r| r <= 5)));
            r10 += f64::from(u8::from(rank.is_some_and(|r| r <= 10)));
            rk += f64::from(u8::from(rank.is_some_and(|r| r <= k)));
            mrr += rank.filter(|r| *r <= 10).map_or(0.0, |r| 1.0 / r as f64);
            let dcg: f64 = sections
                .iter()
                .take(10)
                .enumerate()
                .filter(|(_, (_, rel))| *rel)
                .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
                .sum();
            let ideal: f64 = (0..q.expect.len().min(10)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
            ndcg += if ideal > 0.0 { dcg / ideal } else { 0.0 };
            per_question.push(QuestionResult {
                q: q.q.clone(),
                best_rank: rank,
                best_address: best.map(|i| sections[i].0.to_string()),
                top: sections.iter().take(3).map(|(s, _)| s.to_string()).collect(),
            });
        }
        Ok(EvalReport {
            questions: qrels.len(),
            k,
            mode: self.mode_label(mode).into(),
            recall_at_5: r5 / n,
            recall_at_10: r10 / n,
            recall_at_k: rk / n,
            mrr_at_10: mrr / n,
            ndcg_at_10: ndcg / n,
            per_question,
        })
    }
}

/// A pattern-search task: words a user would type, and the patterns that answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatternTask {
    pub task: String,
    /// Expected patterns, each an alias (`<root>/<entry>` or the entry path), an entry, or a patternId.
    pub expect: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskResult {
    pub task: String,
    /// 1-based rank of the first expected pattern, within the depth searched.
    pub best_rank: Option<usize>,
    pub best: Option<String>,
    /// The entries of the top 3 hits.
    pub top: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatternEvalReport {
    pub tasks: usize,
    /// How deep each search looked.
    pub depth: usize,
    pub success_at_1: f64,
    pub success_at_5: f64,
    /// Mean reciprocal rank over the whole depth, and counting only ranks 1 to 5.
    pub mrr: f64,
    #[serde(default)]
    pub mrr_at_5: f64,
    pub per_task: Vec<TaskResult>,
}

impl Engine {
    /// Pattern search against tasks: success@1, success@5 and MRR (over the top [`fabdex_model::Limits::SEARCH_MAX_LIMIT`]).
    pub fn eval_patterns(&self, tasks: &[PatternTask]) -> Result<PatternEvalReport, QueryError> {
        self.eval_patterns_with(tasks, &crate::PatternLevers::default())
    }

    /// [`Engine::eval_patterns`] with some ranking levers off (for ablation).
    pub fn eval_patterns_with(
        &self,
        tasks: &[PatternTask],
        levers: &crate::PatternLevers,
    ) -> Result<PatternEvalReport, QueryError> {
        let depth = fabdex_model::Limits::SEARCH_MAX_LIMIT;
        let n = tasks.len().max(1) as f64;
        let (mut s1, mut s5, mut mrr, mut mrr5) = (0.0, 0.0, 0.0, 0.0);
        let mut per_task = Vec::with_capacity(tasks.len());
        for t in tasks {
            if t.expect.is_empty() {
                return Err(QueryError::InvalidArgument(format!("task `{}` expects no pattern", t.task)));
            }
            let query = crate::PatternQuery { text: t.task.clone(), limit: Some(depth), ..Default::default() };
            let result = self.search_patterns_with(&query, levers)?;
            let names = |pattern_id: &str| -> Vec<String> {
                let patterns = &self.snap.patterns;
                let program = patterns.program_index(pattern_id).map(|i| &patterns.programs[i]);
                let mut names = vec![pattern_id.to_string()];
                if let Some(p) = program {
                    names.extend(p.aliases.iter().cloned());
                    names.push(p.entry.clone());
                }
                names
            };
            let best = result.hits.iter().position(|h| names(&h.pattern_id).iter().any(|n| t.expect.contains(n)));
            let rank = best.map(|i| i + 1);
            s1 += f64::from(u8::from(rank == Some(1)));
            s5 += f64::from(u8::from(rank.is_some_and(|r| r <= 5)));
            mrr += rank.map_or(0.0, |r| 1.0 / r as f64);
            mrr5 += rank.filter(|r| *r <= 5).map_or(0.0, |r| 1.0 / r as f64);
            per_task.push(TaskResult {
                task: t.task.clone(),
                best_rank: rank,
                best: best.map(|i| result.hits[i].entry.clone()),
                top: result.hits.iter().take(3).map(|h| h.entry.clone()).collect(),
            });
        }
        Ok(PatternEvalReport {
            tasks: tasks.len(),
            depth,
            success_at_1: s1 / n,
            success_at_5: s5 / n,
            mrr: mrr / n,
            mrr_at_5: mrr5 / n,
            per_task,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_ignores_parts_and_respects_roots() {
        let e = ExpectedSection { root: Some("docs".into()), path: "a/b.md".into(), anchor: "x".into() };
        assert!(matches("doc:docs/a/b.md#x", &e));
        assert!(matches("doc:docs/a/b.md#x~3", &e));
        assert!(!matches("doc:skills/a/b.md#x", &e));
        assert!(!matches("doc:docs/a/b.md#xy", &e));
        let any_root = ExpectedSection { root: None, ..e };
        assert!(matches("doc:labs/a/b.md#x", &any_root));
    }
}
