//! Sentence-encoder bench: tokens per second of each encoding lever against
//! today's `f32` encoder in the same run, and how close each lever's vectors
//! stay to the `f32` ones. Each lever also runs as it was before its last
//! change (attention by `sgemm`), and int8 on each slower kernel this CPU
//! can also run.
//!
//! The passages are the labs docs (`../shared/labs`) cut into 128-token
//! passages the way the index cuts a section's body, else `corpus/docs`.
//! Batches of 16 like-length passages run over the rayon pool, as
//! `fabdex index` runs them.
//!
//! Run: `FABDEX_EMBED_MODEL=DIR cargo bench --bench encoder [-- PASSAGES]`
//! (default 1,500 passages). Without a model it says so and skips.
//!
//! With `FABDEX_BENCH_INDEX_LABS=int8` (or `f32`, or `int8,f32`) it then
//! indexes the whole labs docs from scratch with the model in each
//! precision, as `fabdex index` does (an empty vector cache), and prints the
//! encoding time the index report gives: the three-minute target.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fabdex_embed::{Int8Kernel, Precision, SentenceEncoder, cosine};
use rayon::prelude::*;

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// Passages of at most 128 tokens, markers included, in file order.
fn passages(encoder: &SentenceEncoder, files: &[PathBuf], want: usize) -> Vec<Vec<u32>> {
    let room = 128 - encoder.frame_len();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let ids = encoder.piece_ids(&text).unwrap();
        for window in ids.chunks(room) {
            out.push(encoder.framed(&[window]));
            if out.len() == want {
                return out;
            }
        }
    }
    out
}

fn encode_all(encoder: &SentenceEncoder, passages: &[Vec<u32>]) -> (f64, Vec<Vec<f32>>) {
    let mut order: Vec<usize> = (0..passages.len()).collect();
    order.sort_by_key(|&i| (passages[i].len(), i));
    let t = Instant::now();
    let chunks: Vec<Vec<(usize, Vec<f32>)>> = order
        .par_chunks(16)
        .map(|chunk| {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| passages[i].as_slice()).collect();
            chunk.iter().copied().zip(encoder.encode_ids(&batch).unwrap()).collect()
        })
        .collect();
    let secs = t.elapsed().as_secs_f64();
    let mut vectors = vec![Vec::new(); passages.len()];
    for (i, v) in chunks.into_iter().flatten() {
        vectors[i] = v;
    }
    (secs, vectors)
}

fn main() {
    let Some(model) = std::env::var_os("FABDEX_EMBED_MODEL").map(PathBuf::from) else {
        println!("skipping: set FABDEX_EMBED_MODEL to a sentence-transformers model folder");
        return;
    };
    let want: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1_500);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let labs = root.join("../shared/labs");
    let source = if labs.is_dir() { labs } else { root.join("corpus/docs") };
    let mut files = Vec::new();
    markdown_files(&source, &mut files);
    let mut encoder = SentenceEncoder::load(&model).unwrap();
    let passages = passages(&encoder, &files, want);
    let tokens: usize = passages.iter().map(Vec::len).sum();
    println!(
        "{} passages, {tokens} tokens, from {} ({} threads; int8 on {})\n",
        passages.len(),
        source.display(),
        rayon::current_num_threads(),
        fabdex_embed::int8_kernel().as_str()
    );
    // A warm-up, so that neither lever pays for page faults of the weights.
    encode_all(&encoder, &passages[..passages.len().min(64)]);
    // FABDEX_BENCH_ONLY_INT8 (for a profiler): int8 alone, compared with itself.
    if std::env::var_os("FABDEX_BENCH_ONLY_INT8").is_some() {
        encoder.set_precision(Precision::Int8);
    }
    // The encoder before the per-head attention kernel, in the same run.
    fabdex_embed::use_sgemm_attention(true);
    let (sgemm_secs, sgemm) = encode_all(&encoder, &passages);
    fabdex_embed::use_sgemm_attention(false);
    let (base_secs, base) = encode_all(&encoder, &passages);
    println!("| encoder | tokens/s | × f32 | mean cosine to f32 | worst cosine to f32 |");
    println!("|---|---|---|---|---|");
    let row = |name: &str, secs: f64, vectors: &[Vec<f32>]| {
        let cos: Vec<f32> = vectors.iter().zip(&base).map(|(a, b)| cosine(a, b)).collect();
        let mean = cos.iter().sum::<f32>() / cos.len() as f32;
        let worst = cos.iter().copied().fold(1f32, f32::min);
        println!("| {name} | {:.0} | {:.2}× | {mean:.5} | {worst:.5} |", tokens as f64 / secs, base_secs / secs);
    };
    row("f32, attention by sgemm (before)", sgemm_secs, &sgemm);
    row("f32", base_secs, &base);
    if std::env::var_os("FABDEX_BENCH_SKIP_INT8").is_some() {
        return;
    }
    encoder.set_precision(Precision::Int8);
    encode_all(&encoder, &passages[..passages.len().min(64)]);
    fabdex_embed::use_sgemm_attention(true);
    let (secs, int8) = encode_all(&encoder, &passages);
    fabdex_embed::use_sgemm_attention(false);
    row(&format!("int8 on {}, attention by sgemm (before)", fabdex_embed::int8_kernel().as_str()), secs, &int8);
    let (secs, int8) = encode_all(&encoder, &passages);
    row(&format!("int8 on {}", fabdex_embed::int8_kernel().as_str()), secs, &int8);
    // The slower kernels this CPU can also run, for machines without VNNI.
    for slower in [Int8Kernel::Avx2, Int8Kernel::Portable] {
        fabdex_embed::cap_int8_kernel(Some(slower));
        if fabdex_embed::int8_kernel() == slower {
            let (secs, vectors) = encode_all(&encoder, &passages);
            row(&format!("int8 on {}", slower.as_str()), secs, &vectors);
        }
    }
    fabdex_embed::cap_int8_kernel(None);
    if let Ok(precisions) = std::env::var("FABDEX_BENCH_INDEX_LABS") {
        index_from_scratch(&source, &model, &precisions);
    }
}

/// `fabdex index SOURCE` with the model, from an empty folder, once per
/// precision named in `precisions` (comma-separated).
fn index_from_scratch(source: &Path, model: &Path, precisions: &str) {
    println!("\n| index of {} from scratch | passages | encoding | passages/s | whole build |", source.display());
    println!("|---|---|---|---|---|");
    for name in precisions.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let precision: Precision = name.parse().unwrap_or_else(|e| panic!("FABDEX_BENCH_INDEX_LABS: {e}"));
        let out = tempfile::tempdir().unwrap();
        let mut config = fabdex_index::Config::from_roots(&[source.to_path_buf()]).unwrap();
        config.index.embeddings = Some(model.to_path_buf());
        config.index.embedding_precision = Some(precision);
        let t = Instant::now();
        let report = fabdex_index::build(&config, &fabdex_index::BuildOptions::new(out.path().join("index"))).unwrap();
        let whole = t.elapsed().as_secs_f64();
        let e = report.embeddings.expect("an index with a model reports its embeddings");
        assert_eq!(e.reused, 0, "from scratch: nothing came from a cache");
        let kernel = e.int8_kernel.map(|k| format!(" on {k}")).unwrap_or_default();
        println!(
            "| {}{kernel} | {} | {:.1} s | {:.0} | {whole:.1} s |",
            name,
            e.passages,
            e.encode_ms as f64 / 1e3,
            e.encoded as f64 / (e.encode_ms.max(1) as f64 / 1e3)
        );
    }
}
