//! A measured lever that was not built (docs/ranking.md, "What was tried"):
//! rerank the top sections of the model's ranking by each one's best
//! sentence's cosine with the question, alone or fused by reciprocal rank,
//! and print recall@10, MRR@10 and the best expected rank per question.
//!
//! ```text
//! cargo run --release -p fabdex-query --example sentence_rerank -- INDEX_WITH_MODEL QRELS.json MODEL_DIR
//! ```
//!
//! `DEPTH` (default 50) sets how many hits are reranked.
use fabdex_query::{Engine, Qrel, RetrievalMode};

/// Prose sentences of a section: lines outside code blocks, split after
/// `.`, `?` or `!`; shorter than 3 words left out.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || t.is_empty() {
            continue;
        }
        let t = t.trim_start_matches(['#', '-', '*', '>', ' ']);
        let mut start = 0;
        let b = t.as_bytes();
        for i in 0..b.len() {
            if matches!(b[i], b'.' | b'?' | b'!') && (i + 1 == b.len() || b[i + 1] == b' ') {
                out.push(t[start..=i].trim().to_string());
                start = i + 1;
            }
        }
        if start < t.len() {
            out.push(t[start..].trim().to_string());
        }
    }
    out.retain(|s| s.split_whitespace().count() >= 3);
    out
}

/// Per question: each ranked section's relevance, its best sentence's
/// cosine, and its best "heading: sentence" cosine.
type Judged = (Vec<bool>, Vec<f32>, Vec<f32>);
/// A section's score from its rank and its two sentence cosines.
type Score<'a> = &'a dyn Fn(usize, &[f32], &[f32]) -> f64;

fn judge(engine: &Engine, encoder: &fabdex_embed::SentenceEncoder, q: &Qrel, depth: usize) -> Judged {
    let ranked = engine.rank_addresses(&q.q, false, depth, RetrievalMode::Hybrid).unwrap();
    let mut sections: Vec<String> = Vec::new();
    for a in &ranked {
        let base = a.split('~').next().unwrap().to_string();
        if !sections.contains(&base) {
            sections.push(base);
        }
    }
    let qv = encoder.encode(&[q.q.as_str()], 128).unwrap().remove(0);
    let best_of = |texts: Vec<String>| {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = if texts.is_empty() { vec![] } else { encoder.encode(&texts, 64).unwrap() };
        vectors.iter().map(|x| fabdex_embed::cosine(x, &qv)).fold(0f32, f32::max)
    };
    let (mut rel, mut best, mut best_heading) = (Vec::new(), Vec::new(), Vec::new());
    for s in &sections {
        let text = engine.read(s, None, Some(20_000)).unwrap().text;
        let heading = s.rsplit('#').next().unwrap().replace('-', " ");
        let sents = sentences(&text);
        best_heading.push(best_of(sents.iter().map(|x| format!("{heading}: {x}")).collect()));
        best.push(best_of(sents));
        let (root_path, anchor) = s.strip_prefix("doc:").unwrap().split_once('#').unwrap();
        let path = root_path.split_once('/').unwrap().1;
        rel.push(q.expect.iter().any(|e| e.path == path && e.anchor == anchor));
    }
    eprintln!("{:?} {}", rel.iter().position(|r| *r).map(|p| p + 1), q.q);
    (rel, best, best_heading)
}

fn report(judged: &[Judged], name: &str, score: Score<'_>) {
    let (mut r10, mut mrr) = (0.0, 0.0);
    let mut ranks = Vec::new();
    for (rel, b, bh) in judged {
        let mut order: Vec<usize> = (0..rel.len()).collect();
        order.sort_by(|&x, &y| score(y, b, bh).total_cmp(&score(x, b, bh)).then(x.cmp(&y)));
        let rank = order.iter().position(|&i| rel[i]).map(|p| p + 1);
        ranks.push(rank.map_or("-".to_string(), |r| r.to_string()));
        if let Some(r) = rank.filter(|r| *r <= 10) {
            r10 += 1.0;
            mrr += 1.0 / r as f64;
        }
    }
    let n = judged.len() as f64;
    println!("{name:<40} R@10 {:.2} MRR@10 {:.3}  ranks {}", r10 / n, mrr / n, ranks.join(","));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index, qrels, model] = &args[..] else {
        eprintln!("usage: sentence_rerank INDEX_WITH_MODEL QRELS.json MODEL_DIR");
        std::process::exit(2);
    };
    let qrels: Vec<Qrel> = serde_json::from_slice(&std::fs::read(qrels).unwrap()).unwrap();
    let engine = Engine::open_index(std::path::Path::new(index)).unwrap();
    let encoder = fabdex_embed::SentenceEncoder::load(std::path::Path::new(model)).unwrap();
    let depth: usize = std::env::var("DEPTH").ok().and_then(|d| d.parse().ok()).unwrap_or(50);
    let judged: Vec<Judged> = qrels.iter().map(|q| judge(&engine, &encoder, q, depth)).collect();
    report(&judged, "original", &|i, _, _| -(i as f64));
    report(&judged, "best sentence", &|i, b, _| f64::from(b[i]));
    report(&judged, "best heading+sentence", &|i, _, bh| f64::from(bh[i]));
    let rank_of = |i: usize, s: &[f32]| s.iter().filter(|&&x| x > s[i]).count();
    for k in [10.0, 30.0, 60.0] {
        for w in [0.5, 1.0, 2.0] {
            let fused = |i: usize, s: &[f32]| 1.0 / (k + i as f64) + w / (k + rank_of(i, s) as f64);
            report(&judged, &format!("rrf k{k} w{w} sentence"), &|i, b, _| fused(i, b));
            report(&judged, &format!("rrf k{k} w{w} heading+sentence"), &|i, _, bh| fused(i, bh));
        }
    }
}
