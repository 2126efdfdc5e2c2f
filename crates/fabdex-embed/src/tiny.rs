//! A tiny BERT model with deterministic pseudo-random weights, written in the
//! sentence-transformers layout: for tests of everything that loads, stores or
//! ranks with a model, without shipping or downloading a real one.

use std::collections::HashMap;
use std::path::Path;

use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::processors::template::TemplateProcessing;

/// Hidden size of the tiny model: not a multiple of 8, so that the tail
/// of every vectorised loop runs in tests too.
pub const TINY_DIM: usize = 20;

/// Write a tiny model to `dir` (created if missing). `words` join the
/// vocabulary as whole tokens; other words split into letters. The same
/// `seed` gives byte-identical files.
pub fn write_tiny_model(dir: &Path, words: &[&str], seed: u64) -> std::io::Result<()> {
    let io = |e: String| std::io::Error::other(e);
    std::fs::create_dir_all(dir.join("1_Pooling"))?;
    let mut vocab: Vec<String> = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"].iter().map(|s| s.to_string()).collect();
    for c in 'a'..='z' {
        vocab.push(c.to_string());
        vocab.push(format!("##{c}"));
    }
    for w in words {
        let w = w.to_lowercase();
        if !vocab.contains(&w) {
            vocab.push(w);
        }
    }
    let (hidden, inter, layers, heads, positions) = (TINY_DIM, 32, 2, 2, 256);
    let config = serde_json::json!({
        "model_type": "bert", "vocab_size": vocab.len(), "hidden_size": hidden,
        "num_hidden_layers": layers, "num_attention_heads": heads, "intermediate_size": inter,
        "max_position_embeddings": positions, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "hidden_act": "gelu", "position_embedding_type": "absolute"
    });
    std::fs::write(dir.join("config.json"), serde_json::to_vec_pretty(&config)?)?;
    let pooling = serde_json::json!({"word_embedding_dimension": hidden, "pooling_mode_mean_tokens": true});
    std::fs::write(dir.join("1_Pooling/config.json"), serde_json::to_vec_pretty(&pooling)?)?;

    let vocab_path = dir.join("vocab.txt");
    std::fs::write(&vocab_path, vocab.join("\n") + "\n")?;
    let wordpiece = WordPiece::from_file(&vocab_path.to_string_lossy())
        .unk_token("[UNK]".into())
        .build()
        .map_err(|e| io(e.to_string()))?;
    let mut tokenizer = tokenizers::Tokenizer::new(wordpiece);
    tokenizer.with_normalizer(Some(BertNormalizer::default()));
    tokenizer.with_pre_tokenizer(Some(BertPreTokenizer));
    let template = TemplateProcessing::builder()
        .try_single("[CLS] $A [SEP]")
        .map_err(io)?
        .special_tokens(vec![("[CLS]", 1), ("[SEP]", 2)])
        .build()
        .map_err(|e| io(e.to_string()))?;
    tokenizer.with_post_processor(Some(template));
    tokenizer.save(dir.join("tokenizer.json"), false).map_err(|e| io(e.to_string()))?;

    // A fixed linear congruential sequence: reproducible without a random crate.
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.8
    };
    let mut tensors: HashMap<String, (Vec<usize>, Vec<u8>)> = HashMap::new();
    let mut put = |name: String, shape: &[usize], fill: Option<f32>| {
        let n: usize = shape.iter().product();
        let data: Vec<u8> = (0..n).flat_map(|_| fill.unwrap_or_else(&mut next).to_le_bytes()).collect();
        tensors.insert(name, (shape.to_vec(), data));
    };
    put("embeddings.word_embeddings.weight".into(), &[vocab.len(), hidden], None);
    put("embeddings.position_embeddings.weight".into(), &[positions, hidden], None);
    put("embeddings.token_type_embeddings.weight".into(), &[2, hidden], None);
    put("embeddings.LayerNorm.weight".into(), &[hidden], Some(1.0));
    put("embeddings.LayerNorm.bias".into(), &[hidden], Some(0.0));
    for l in 0..layers {
        let p = format!("encoder.layer.{l}");
        for (name, o, i) in [
            ("attention.self.query", hidden, hidden),
            ("attention.self.key", hidden, hidden),
            ("attention.self.value", hidden, hidden),
            ("attention.output.dense", hidden, hidden),
            ("intermediate.dense", inter, hidden),
            ("output.dense", hidden, inter),
        ] {
            put(format!("{p}.{name}.weight"), &[o, i], None);
            put(format!("{p}.{name}.bias"), &[o], None);
        }
        for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
            put(format!("{p}.{name}.weight"), &[hidden], Some(1.0));
            put(format!("{p}.{name}.bias"), &[hidden], Some(0.0));
        }
    }
    let views = tensors
        .iter()
        .map(|(name, (shape, data))| {
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                .map(|view| (name.clone(), view))
                .map_err(|e| io(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = safetensors::tensor::serialize(views, None).map_err(|e| io(e.to_string()))?;
    std::fs::write(dir.join("model.safetensors"), bytes)
}
