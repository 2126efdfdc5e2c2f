//! The encoder on a tiny generated model (always), and on a real model when
//! `FABDEX_EMBED_MODEL` names one (checked against a reference implementation).

use fabdex_embed::tiny::{TINY_DIM, write_tiny_model};
use fabdex_embed::{EmbedError, Pooling, Role, SentenceEncoder, cosine};

const WORDS: &[&str] = &["alpha", "beta", "gamma", "delta", "cell", "pattern", "wish"];

fn tiny(seed: u64) -> (tempfile::TempDir, SentenceEncoder) {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_model(dir.path(), WORDS, seed).unwrap();
    let enc = SentenceEncoder::load(dir.path()).unwrap();
    (dir, enc)
}

#[test]
fn vectors_are_unit_length_and_deterministic() {
    let (_d, enc) = tiny(7);
    assert_eq!(enc.identity().dim, TINY_DIM);
    let v = enc.encode(&["alpha beta", "a pattern with a wish"], 64).unwrap();
    for x in &v {
        assert_eq!(x.len(), TINY_DIM);
        assert!((cosine(x, x) - 1.0).abs() < 1e-5);
    }
    assert!(cosine(&v[0], &v[1]) < 0.999, "different texts give different vectors");
    let again = enc.encode(&["alpha beta", "a pattern with a wish"], 64).unwrap();
    assert_eq!(again, v);
}

#[test]
fn batch_mates_do_not_change_a_vector() {
    let (_d, enc) = tiny(3);
    let alone = enc.encode(&["gamma"], 64).unwrap();
    // Few tokens in all: the streamed product. Over 32 tokens: the blocked sgemm.
    let short_mate = "alpha beta gamma delta cell pattern wish alpha beta";
    let long_mate = "alpha beta gamma delta cell pattern wish ".repeat(6);
    for mate in [short_mate, long_mate.as_str()] {
        let batched = enc.encode(&[mate, "gamma", mate], 64).unwrap();
        for (a, b) in alone[0].iter().zip(&batched[1]) {
            assert!((a - b).abs() < 1e-5, "a text must encode beside others as it does alone ({a} vs {b})");
        }
        let mate_alone = enc.encode(&[mate], 64).unwrap();
        for (a, b) in mate_alone[0].iter().zip(&batched[2]) {
            assert!((a - b).abs() < 1e-5, "the longer text too, whichever product ran ({a} vs {b})");
        }
    }
}

#[test]
fn long_texts_are_read_only_to_max_tokens() {
    let (_d, enc) = tiny(5);
    let (ids, cut) = enc.token_ids("alpha beta gamma delta", 4).unwrap();
    assert!(cut);
    assert_eq!(ids.len(), 4);
    assert_eq!((ids[0], ids[3]), (1, 2), "[CLS] first and [SEP] kept last");
    let (_, cut) = enc.token_ids("alpha beta", 4).unwrap();
    assert!(!cut);
    let truncated = enc.encode(&["alpha beta gamma delta"], 4).unwrap();
    let prefix = enc.encode(&["alpha beta"], 64).unwrap();
    assert_eq!(truncated, prefix);
}

#[test]
fn identity_follows_the_files() {
    let (_a, one) = tiny(1);
    let (_b, same) = tiny(1);
    let (_c, other) = tiny(2);
    assert_eq!(one.identity().digest, same.identity().digest);
    assert_ne!(one.identity().digest, other.identity().digest);
    assert!(one.identity().digest.starts_with("blake3:"));
}

fn normalised(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-5, "{a:?} vs {b:?}");
    }
}

/// BGE-shaped folders pool the `[CLS]` state; MiniLM- and E5-shaped ones the
/// mean. Same weights, so the token states agree and only pooling differs.
#[test]
fn pooling_follows_the_pooling_config() {
    let (mean_dir, mean) = tiny(11);
    let cls_dir = tempfile::tempdir().unwrap();
    write_tiny_model(cls_dir.path(), WORDS, 11).unwrap();
    std::fs::write(
        cls_dir.path().join("1_Pooling/config.json"),
        r#"{"word_embedding_dimension": 20, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    )
    .unwrap();
    let cls = SentenceEncoder::load(cls_dir.path()).unwrap();
    assert_eq!((mean.pooling(), cls.pooling()), (Pooling::Mean, Pooling::Cls));
    assert_ne!(mean.identity().digest, cls.identity().digest, "another pooling is another model");

    let (ids, _) = mean.token_ids("alpha wish gamma", 64).unwrap();
    let states = mean.token_states(&ids);
    assert_eq!(states, cls.token_states(&ids));
    let summed: Vec<f32> = (0..TINY_DIM).map(|j| states.iter().map(|s| s[j]).sum()).collect();
    assert_close(&mean.encode_ids(&[&ids]).unwrap()[0], &normalised(&summed));
    assert_close(&cls.encode_ids(&[&ids]).unwrap()[0], &normalised(&states[0]));
    drop(mean_dir);
}

/// E5-shaped folders mark each side of a search with a prompt.
#[test]
fn prompts_go_before_each_side_and_are_never_cut() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_model(dir.path(), WORDS, 4).unwrap();
    let plain = SentenceEncoder::load(dir.path()).unwrap();
    std::fs::write(
        dir.path().join("config_sentence_transformers.json"),
        r#"{"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}"#,
    )
    .unwrap();
    let e5 = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(e5.prompts(), ("query: ", "passage: "));
    assert_ne!(plain.identity().digest, e5.identity().digest);

    let (q, cut) = e5.token_ids_as(Role::Query, "alpha wish", 64).unwrap();
    assert!(!cut);
    assert_eq!(q, plain.token_ids("query: alpha wish", 64).unwrap().0);
    let (p, _) = e5.token_ids_as(Role::Passage, "alpha wish", 64).unwrap();
    assert_eq!(p, plain.token_ids("passage: alpha wish", 64).unwrap().0);
    assert_eq!(e5.framed_as(Role::Passage, &[&e5.piece_ids("alpha wish").unwrap()]), p);
    // A cut text keeps its prompt and the closing marker.
    let prompt = e5.frame_len_as(Role::Query);
    let (cut_ids, cut) = e5.token_ids_as(Role::Query, "alpha beta gamma delta cell", prompt + 2).unwrap();
    assert!(cut);
    assert_eq!(cut_ids.len(), prompt + 2);
    assert_eq!(cut_ids, plain.token_ids("query: alpha beta", 64).unwrap().0);
    // `document` stands for `passage` (BGE's and newer E5 configs).
    std::fs::write(dir.path().join("config_sentence_transformers.json"), r#"{"prompts": {"document": "doc: "}}"#)
        .unwrap();
    let bge = SentenceEncoder::load(dir.path()).unwrap();
    assert_eq!(bge.prompts(), ("", "doc: "));
    assert_eq!(bge.token_ids_as(Role::Query, "wish", 64).unwrap().0, plain.token_ids("wish", 64).unwrap().0);
}

fn load_err(dir: &std::path::Path) -> String {
    match SentenceEncoder::load(dir) {
        Err(e @ EmbedError::Model { .. }) => e.to_string(),
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[test]
fn unusable_models_are_refused_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    assert!(load_err(&missing).contains("is not a folder"));

    write_tiny_model(dir.path(), WORDS, 1).unwrap();
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    let e = load_err(dir.path());
    assert!(e.contains("tokenizer.json") && e.contains("cannot read"), "{e}");

    write_tiny_model(dir.path(), WORDS, 1).unwrap();
    let cfg = std::fs::read_to_string(dir.path().join("config.json")).unwrap();
    std::fs::write(dir.path().join("config.json"), cfg.replace("\"bert\"", "\"roberta\"")).unwrap();
    let e = load_err(dir.path());
    assert!(e.contains("config.json") && e.contains("`roberta` is not supported"), "{e}");

    write_tiny_model(dir.path(), WORDS, 1).unwrap();
    std::fs::write(dir.path().join("1_Pooling/config.json"), r#"{"pooling_mode_max_tokens": true}"#).unwrap();
    let e = load_err(dir.path());
    assert!(e.contains("1_Pooling") && e.contains("mean of tokens or the [CLS] token"), "{e}");
    std::fs::write(
        dir.path().join("1_Pooling/config.json"),
        r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}"#,
    )
    .unwrap();
    assert!(load_err(dir.path()).contains("1_Pooling"), "two poolings at once are refused");

    write_tiny_model(dir.path(), WORDS, 1).unwrap();
    std::fs::write(dir.path().join("config_sentence_transformers.json"), r#"{"prompts": ["query: "]}"#).unwrap();
    let e = load_err(dir.path());
    assert!(e.contains("config_sentence_transformers.json") && e.contains("not a sentence-transformers config"), "{e}");
    std::fs::remove_file(dir.path().join("config_sentence_transformers.json")).unwrap();

    write_tiny_model(dir.path(), WORDS, 1).unwrap();
    let cfg = std::fs::read_to_string(dir.path().join("config.json")).unwrap();
    std::fs::write(dir.path().join("config.json"), cfg.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"))
        .unwrap();
    let e = load_err(dir.path());
    assert!(e.contains("model.safetensors") && e.contains("does not hold the weights"), "{e}");
}

/// A real sentence-transformers model (`FABDEX_EMBED_MODEL` must name
/// all-MiniLM-L6-v2), compared with an independent NumPy
/// implementation of the same forward pass (all-MiniLM-L6-v2: 0.6776 and 0.0508).
#[test]
fn a_real_model_matches_the_reference_when_one_is_given() {
    let Some(dir) = std::env::var_os("FABDEX_EMBED_MODEL") else {
        eprintln!("skipped: set FABDEX_EMBED_MODEL to a sentence-transformers folder to run");
        return;
    };
    let enc = SentenceEncoder::load(std::path::Path::new(&dir)).unwrap();
    let v = enc.encode(&["how do I log in", "sign in to the site", "a banana is yellow"], 256).unwrap();
    let (near, far) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!((near - 0.6776).abs() < 0.005, "log in ~ sign in: {near}");
    assert!((far - 0.0508).abs() < 0.005, "log in ~ banana: {far}");
}
