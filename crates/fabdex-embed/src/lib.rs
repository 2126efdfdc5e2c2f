//! # fabdex-embed
//!
//! An optional, fully local sentence-embedding model for docs search. The
//! user points fabdex at a folder on disk laid out the way
//! sentence-transformers saves a model (`config.json`, `tokenizer.json`,
//! `model.safetensors`, and optionally `1_Pooling/config.json`). This crate
//! loads it, checks that it is a model it can run, and encodes text to
//! L2-normalised vectors. It never downloads anything: a missing or unusable
//! file is an error that names the file.
//!
//! - **Architecture.** BERT-family encoders (`model_type` `bert`, absolute
//!   positions, `gelu` activation), the shape of MiniLM, BGE and E5 small
//!   models. The forward pass is written here on `candle-nn` layers so that
//!   only the one architecture is compiled.
//! - **Pooling.** Mean over the real tokens (the attention mask), then L2
//!   normalisation. A model whose pooling config asks for another pooling is
//!   refused rather than run wrongly.
//! - **Identity.** [`ModelIdentity::digest`] is blake3 over the config, the
//!   tokenizer and the weights. An index records it, and a query refuses a
//!   model with another digest, because vectors of two models are not
//!   comparable.
//! - **Truncation.** Each text is cut to `max_tokens` tokens, counting the
//!   `[CLS]`/`[SEP]` markers; callers say how far they read.

use std::path::{Path, PathBuf};

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::{Deserialize, Serialize};

/// What went wrong loading or running a model; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model {path}: {message}")]
    Model { path: PathBuf, message: String },
    #[error("embedding model {path}: encoding failed: {message}")]
    Encode { path: PathBuf, message: String },
}

/// Who a model is: recorded in an index, checked at query time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// The model folder's name (`all-MiniLM-L6-v2`), for people.
    pub name: String,
    /// `blake3:` over `config.json`, `tokenizer.json` and `model.safetensors`.
    pub digest: String,
    /// Length of every vector.
    pub dim: usize,
}

#[derive(Debug, Deserialize)]
struct BertConfig {
    #[serde(default = "bert")]
    model_type: String,
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "two")]
    type_vocab_size: usize,
    #[serde(default = "eps")]
    layer_norm_eps: f64,
    #[serde(default = "gelu")]
    hidden_act: String,
    #[serde(default = "absolute")]
    position_embedding_type: String,
}

fn bert() -> String {
    "bert".into()
}
fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn gelu() -> String {
    "gelu".into()
}
fn absolute() -> String {
    "absolute".into()
}

#[derive(Debug, Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded sentence encoder.
pub struct SentenceEncoder {
    dir: PathBuf,
    identity: ModelIdentity,
    tokenizer: tokenizers::Tokenizer,
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    max_positions: usize,
}

impl std::fmt::Debug for SentenceEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEncoder").field("dir", &self.dir).field("identity", &self.identity).finish()
    }
}

/// Texts encoded per forward pass: long enough to keep the matrix products
/// busy, short enough that padding to the batch's longest text costs little
/// (texts are sorted by length first).
const BATCH: usize = 16;

impl SentenceEncoder {
    /// Load the model in `dir`. Reads the files once; the weights are mapped, not copied.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let fail = |path: &Path, message: String| EmbedError::Model { path: path.to_path_buf(), message };
        if !dir.is_dir() {
            return Err(fail(dir, "is not a folder (expected a sentence-transformers model folder)".into()));
        }
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| fail(&path, format!("cannot read it: {e}")))
        };
        let config_bytes = read("config.json")?;
        let tokenizer_bytes = read("tokenizer.json")?;
        let weights_path = dir.join("model.safetensors");
        let weights_bytes = read("model.safetensors")?;

        let config_path = dir.join("config.json");
        let config: BertConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| fail(&config_path, format!("is not a BERT config: {e}")))?;
        if config.model_type != "bert" {
            return Err(fail(
                &config_path,
                format!("model_type `{}` is not supported (only `bert`)", config.model_type),
            ));
        }
        if config.hidden_act != "gelu" {
            return Err(fail(
                &config_path,
                format!("hidden_act `{}` is not supported (only `gelu`)", config.hidden_act),
            ));
        }
        if config.position_embedding_type != "absolute" {
            return Err(fail(
                &config_path,
                format!(
                    "position_embedding_type `{}` is not supported (only `absolute`)",
                    config.position_embedding_type
                ),
            ));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(fail(
                &config_path,
                format!(
                    "hidden_size {} is not a multiple of num_attention_heads {}",
                    config.hidden_size, config.num_attention_heads
                ),
            ));
        }
        let pooling_path = dir.join("1_Pooling/config.json");
        if pooling_path.exists() {
            let bytes =
                std::fs::read(&pooling_path).map_err(|e| fail(&pooling_path, format!("cannot read it: {e}")))?;
            let pooling: PoolingConfig = serde_json::from_slice(&bytes)
                .map_err(|e| fail(&pooling_path, format!("is not a pooling config: {e}")))?;
            if !pooling.pooling_mode_mean_tokens
                || pooling.pooling_mode_cls_token
                || pooling.pooling_mode_max_tokens
                || pooling.pooling_mode_mean_sqrt_len_tokens
            {
                return Err(fail(
                    &pooling_path,
                    "asks for a pooling other than the mean of tokens, which is the only one supported".into(),
                ));
            }
        }

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| fail(&tokenizer_path, format!("is not a tokenizer: {e}")))?;
        // Batches are padded here, and truncation is the caller's choice.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| fail(&tokenizer_path, format!("cannot turn its truncation off: {e}")))?;

        let mut hasher = blake3::Hasher::new();
        for bytes in [&config_bytes, &tokenizer_bytes, &weights_bytes] {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        let identity = ModelIdentity {
            name: dir
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| dir.display().to_string()),
            digest: format!("blake3:{}", hasher.finalize().to_hex()),
            dim: config.hidden_size,
        };

        let vb = VarBuilder::from_buffered_safetensors(weights_bytes, DType::F32, &Device::Cpu)
            .map_err(|e| fail(&weights_path, format!("is not a safetensors file: {e}")))?;
        // sentence-transformers saves bare names; a full BertModel checkpoint prefixes `bert.`.
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") { vb } else { vb.pp("bert") };
        let weight = |e: candle_core::Error| {
            fail(&weights_path, format!("does not hold the weights config.json describes: {e}"))
        };
        let h = config.hidden_size;
        let norm = |vb: VarBuilder| candle_nn::layer_norm(h, config.layer_norm_eps, vb);
        let emb = vb.pp("embeddings");
        let word = candle_nn::embedding(config.vocab_size, h, emb.pp("word_embeddings")).map_err(weight)?;
        let position =
            candle_nn::embedding(config.max_position_embeddings, h, emb.pp("position_embeddings")).map_err(weight)?;
        let token_type =
            candle_nn::embedding(config.type_vocab_size, h, emb.pp("token_type_embeddings")).map_err(weight)?;
        let embedding_norm = norm(emb.pp("LayerNorm")).map_err(weight)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let linear = |i: usize, o: usize, vb: VarBuilder| candle_nn::linear(i, o, vb);
            layers.push(Layer {
                query: linear(h, h, l.pp("attention.self.query")).map_err(weight)?,
                key: linear(h, h, l.pp("attention.self.key")).map_err(weight)?,
                value: linear(h, h, l.pp("attention.self.value")).map_err(weight)?,
                attention_out: linear(h, h, l.pp("attention.output.dense")).map_err(weight)?,
                attention_norm: norm(l.pp("attention.output.LayerNorm")).map_err(weight)?,
                intermediate: linear(h, config.intermediate_size, l.pp("intermediate.dense")).map_err(weight)?,
                output: linear(config.intermediate_size, h, l.pp("output.dense")).map_err(weight)?,
                output_norm: norm(l.pp("output.LayerNorm")).map_err(weight)?,
            });
        }
        Ok(SentenceEncoder {
            dir: dir.to_path_buf(),
            identity,
            tokenizer,
            word,
            position,
            token_type,
            embedding_norm,
            layers,
            heads: config.num_attention_heads,
            max_positions: config.max_position_embeddings,
        })
    }

    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Token ids of `text`, markers included, cut to `max_tokens` (the final
    /// `[SEP]` is kept), and whether it was cut.
    pub fn token_ids(&self, text: &str, max_tokens: usize) -> Result<(Vec<u32>, bool), EmbedError> {
        let enc = self.tokenizer.encode(text, true).map_err(|e| self.encode_error(e.to_string()))?;
        let mut ids = enc.get_ids().to_vec();
        let limit = max_tokens.clamp(2, self.max_positions);
        let cut = ids.len() > limit;
        if cut {
            let last = *ids.last().expect("longer than the limit, so not empty");
            ids.truncate(limit - 1);
            ids.push(last);
        }
        Ok((ids, cut))
    }

    fn encode_error(&self, message: String) -> EmbedError {
        EmbedError::Encode { path: self.dir.clone(), message }
    }

    /// One unit vector per text, in order. Texts longer than `max_tokens`
    /// tokens are read only that far.
    pub fn encode(&self, texts: &[&str], max_tokens: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids: Vec<Vec<u32>> =
            texts.iter().map(|t| self.token_ids(t, max_tokens).map(|(ids, _)| ids)).collect::<Result<_, _>>()?;
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| (ids[i].len(), i));
        let mut out = vec![Vec::new(); ids.len()];
        for batch in order.chunks(BATCH) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            let vectors = self.forward(&rows).map_err(|e| self.encode_error(e.to_string()))?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn forward(&self, rows: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let dev = Device::Cpu;
        let (b, len) = (rows.len(), rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1));
        let mut ids = vec![0u32; b * len];
        let mut mask = vec![0f32; b * len];
        for (r, row) in rows.iter().enumerate() {
            ids[r * len..r * len + row.len()].copy_from_slice(row);
            mask[r * len..r * len + row.len()].fill(1.0);
        }
        let ids = Tensor::from_vec(ids, (b, len), &dev)?;
        let mask = Tensor::from_vec(mask, (b, len), &dev)?;
        let positions = Tensor::arange(0u32, len as u32, &dev)?;
        let mut x = self
            .word
            .forward(&ids)?
            .broadcast_add(&self.position.forward(&positions)?)?
            .broadcast_add(&self.token_type.forward(&Tensor::zeros(1, DType::U32, &dev)?)?)?;
        x = self.embedding_norm.forward(&x)?;
        let hidden = x.dim(2)?;
        let head_dim = hidden / self.heads;
        // Padding gets a large negative score, so softmax gives it no weight.
        let additive = ((mask.ones_like()? - &mask)? * -1e9f64)?.reshape((b, 1, 1, len))?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        for l in &self.layers {
            let split = |t: Tensor| t.reshape((b, len, self.heads, head_dim))?.transpose(1, 2)?.contiguous();
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&additive)?;
            let weights = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = weights.matmul(&v)?.transpose(1, 2)?.reshape((b, len, hidden))?;
            x = l.attention_norm.forward(&(l.attention_out.forward(&context)? + &x)?)?;
            let inner = l.intermediate.forward(&x)?.gelu_erf()?;
            x = l.output_norm.forward(&(l.output.forward(&inner)? + &x)?)?;
        }
        let m = mask.unsqueeze(2)?;
        let mean = x.broadcast_mul(&m)?.sum(1)?.broadcast_div(&m.sum(1)?)?;
        let norm = mean.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?;
        mean.broadcast_div(&norm)?.to_vec2::<f32>()
    }
}

/// Dot product of two unit vectors (their cosine).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub mod tiny;
