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
//!   models. The forward pass is written here on plain `f32` buffers, with
//!   `matrixmultiply`'s sgemm for the matrix products: only the one
//!   architecture is needed, and a question of a dozen tokens encodes
//!   without a tensor library's per-operation overhead.
//! - **Pooling.** Mean over the tokens (MiniLM, E5) or the `[CLS]` token's
//!   state (BGE), as `1_Pooling/config.json` says, then L2 normalisation. A
//!   pooling config that asks for anything else (max, mean-sqrt-len, or two
//!   at once) is refused rather than run wrongly.
//! - **Prompts.** A model trained to see which side of a search a text is on
//!   (E5's `query: ` and `passage: `, BGE's query instruction) says so in
//!   `config_sentence_transformers.json`'s `prompts` (`query`, and `passage`
//!   or `document`). [`SentenceEncoder::token_ids_as`] and
//!   [`SentenceEncoder::framed_as`] put the prompt before the text.
//! - **Identity.** [`ModelIdentity::digest`] is blake3 over the config, the
//!   tokenizer and the weights, and over the pooling and prompts when they
//!   are not mean pooling without prompts. An index records it, and a query
//!   refuses a model with another digest, because vectors of two models are
//!   not comparable.
//! - **Truncation.** Each text is cut to `max_tokens` tokens, counting the
//!   `[CLS]`/`[SEP]` markers; callers say how far they read.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use layers::{LayerNorm, Linear, Weights, gemm, softmax_rows};

mod attention;
pub mod cli;
mod error;
mod int8;
mod layers;
pub mod registry;
mod vector;

/// How an encoder's linear layers compute. Vectors of one model in two
/// precisions are close but not equal, so an index records which it used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// The weights as the model ships them, in `f32`.
    #[default]
    F32,
    /// Weights per output row and activations per token in 8-bit integers,
    /// summed exactly in `i32` (AVX-512 VNNI where the CPU has it; the same
    /// sums, slower, where not).
    Int8,
}

impl Precision {
    /// Every precision, as a flag or a config lists them.
    pub const ALL: [Precision; 2] = [Precision::Int8, Precision::F32];

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// The faster precision where int8 products run on `kernel`: int8 only
    /// on AVX-512 VNNI. The encoder bench measured int8 at 2.97 times f32's
    /// speed there, but at 0.74 times on AVX2 and 0.09 times on the
    /// portable loop, where f32 is the better choice.
    pub fn fastest_on(kernel: Int8Kernel) -> Precision {
        match kernel {
            Int8Kernel::Vnni => Precision::Int8,
            Int8Kernel::Avx2 | Int8Kernel::Portable => Precision::F32,
        }
    }

    /// [`Precision::fastest_on`] this CPU: what an index uses when no
    /// precision is set.
    pub fn fastest_here() -> Precision {
        Precision::fastest_on(int8_kernel())
    }
}

impl std::str::FromStr for Precision {
    type Err = String;

    /// A precision by its name (`int8`, `f32`); the error names the choices.
    fn from_str(name: &str) -> Result<Self, String> {
        Precision::ALL.into_iter().find(|p| p.as_str() == name).ok_or_else(|| {
            let names: Vec<&str> = Precision::ALL.iter().map(|p| p.as_str()).collect();
            format!("unknown precision `{name}`: use one of {}", names.join(", "))
        })
    }
}

/// How the token states of the last layer become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The mean of every token's state (MiniLM, E5).
    Mean,
    /// The first token's (`[CLS]`) state (BGE).
    Cls,
}

/// Which side of a search a text is on: a model with prompts marks each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Query,
    Passage,
}

pub use error::EmbedError;
pub use int8::Int8Kernel;
pub use vector::cosine;

/// Version of the encoder's arithmetic. A change that moves any vector's
/// bits (the order of a sum, a kernel's rounding) bumps it, so that vectors
/// cached or carried from an earlier encoder are not mixed with fresh ones:
/// an index keys its vector cache, its table and its snapshot id by it.
/// 2: attention per head and layer-norm sums over 16 partials (stop 38).
pub const ENCODER_VERSION: u32 = 2;

/// The kernel int8 encoding runs on, on this CPU: AVX-512 VNNI, else AVX2,
/// else the portable loop. They give the same vectors at different speeds.
pub fn int8_kernel() -> Int8Kernel {
    int8::kernel()
}

/// For benches: compute attention by `sgemm` over each head (`true`), as
/// before the per-head kernel, or by that kernel (`false`).
#[doc(hidden)]
pub fn use_sgemm_attention(on: bool) {
    attention::use_general_product(on)
}

/// For benches: use no int8 kernel faster than `cap` (`None`: the fastest
/// this CPU has), so that one machine can time each of them.
#[doc(hidden)]
pub fn cap_int8_kernel(cap: Option<Int8Kernel>) {
    int8::cap_kernel(cap)
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

/// `config_sentence_transformers.json`: only its prompts matter here.
#[derive(Debug, Deserialize)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::HashMap<String, String>,
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
    /// `vocab × hidden`.
    word: Vec<f32>,
    /// `max_positions × hidden`.
    position: Vec<f32>,
    /// Token type 0's row: every text is one segment.
    segment: Vec<f32>,
    embedding_norm: LayerNorm,
    hidden: usize,
    layers: Vec<Layer>,
    heads: usize,
    max_positions: usize,
    /// The markers `token_ids` puts around a text (`[CLS]`, `[SEP]`).
    open: u32,
    close: u32,
    precision: Precision,
    pooling: Pooling,
    /// The prompts' word pieces (empty: none), and the prompts as written.
    query_prefix: Vec<u32>,
    passage_prefix: Vec<u32>,
    prompts: (String, String),
}

impl std::fmt::Debug for SentenceEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEncoder").field("dir", &self.dir).field("identity", &self.identity).finish()
    }
}

/// Texts encoded per forward pass. Texts are not padded (each attends only
/// to itself), so a batch only makes the matrix products taller.
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
        check_config(&config, &config_path)?;
        let pooling = read_pooling(&dir.join("1_Pooling/config.json"))?;
        let prompts = read_prompts(&dir.join("config_sentence_transformers.json"))?;

        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = load_tokenizer(&tokenizer_bytes, &tokenizer_path)?;
        let identity = model_identity(
            dir,
            [&config_bytes, &tokenizer_bytes, &weights_bytes],
            pooling,
            &prompts,
            config.hidden_size,
        );

        let weights = Weights::parse(&weights_bytes, &weights_path)?;
        let h = config.hidden_size;
        let eps = config.layer_norm_eps as f32;
        let emb = "embeddings";
        let word = weights.matrix(&format!("{emb}.word_embeddings.weight"), config.vocab_size, h)?;
        let position =
            weights.matrix(&format!("{emb}.position_embeddings.weight"), config.max_position_embeddings, h)?;
        let token_type = weights.matrix(&format!("{emb}.token_type_embeddings.weight"), config.type_vocab_size, h)?;
        let embedding_norm = weights.layer_norm(&format!("{emb}.LayerNorm"), h, eps)?;
        let layers = load_layers(&weights, &config, eps)?;
        // The first row of the token-type table: every text is one segment.
        let segment = token_type[..h].to_vec();
        let (open, close) = frame_marks(&tokenizer, &tokenizer_path)?;
        let pieces = |prompt: &str| -> Result<Vec<u32>, EmbedError> {
            let enc = tokenizer
                .encode(prompt, false)
                .map_err(|e| fail(&tokenizer_path, format!("cannot encode the prompt {prompt:?}: {e}")))?;
            Ok(enc.get_ids().to_vec())
        };
        let (query_prefix, passage_prefix) = (pieces(&prompts.0)?, pieces(&prompts.1)?);
        Ok(SentenceEncoder {
            dir: dir.to_path_buf(),
            identity,
            tokenizer,
            word,
            position,
            segment,
            embedding_norm,
            hidden: h,
            layers,
            heads: config.num_attention_heads,
            max_positions: config.max_position_embeddings,
            open,
            close,
            precision: Precision::F32,
            pooling,
            query_prefix,
            passage_prefix,
            prompts,
        })
    }

    /// Compute in `precision` from now on (int8 quantizes the weights once, here).
    pub fn set_precision(&mut self, precision: Precision) {
        if precision == self.precision {
            return;
        }
        let on = precision == Precision::Int8;
        for l in &mut self.layers {
            for linear in
                [&mut l.query, &mut l.key, &mut l.value, &mut l.attention_out, &mut l.intermediate, &mut l.output]
            {
                linear.set_int8(on);
            }
        }
        self.precision = precision;
    }

    pub fn precision(&self) -> Precision {
        self.precision
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

    /// How this model pools token states.
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    /// The model's query and passage prompts as written (empty: none).
    pub fn prompts(&self) -> (&str, &str) {
        (&self.prompts.0, &self.prompts.1)
    }

    fn prefix(&self, role: Role) -> &[u32] {
        match role {
            Role::Query => &self.query_prefix,
            Role::Passage => &self.passage_prefix,
        }
    }

    /// [`Self::token_ids`] for a text on one side of a search: the model's
    /// prompt for that side goes first and is never cut; the text is cut to
    /// fit `max_tokens` in all.
    pub fn token_ids_as(&self, role: Role, text: &str, max_tokens: usize) -> Result<(Vec<u32>, bool), EmbedError> {
        let prefix = self.prefix(role);
        if prefix.is_empty() {
            return self.token_ids(text, max_tokens);
        }
        let pieces = self.piece_ids(text)?;
        let room = max_tokens.min(self.max_positions).saturating_sub(self.frame_len_as(role));
        let cut = pieces.len() > room;
        Ok((self.framed_as(role, &[&pieces[..pieces.len().min(room)]]), cut))
    }

    /// [`Self::framed`] for a text on one side of a search: the model's
    /// prompt for that side first.
    pub fn framed_as(&self, role: Role, parts: &[&[u32]]) -> Vec<u32> {
        let mut all = Vec::with_capacity(parts.len() + 1);
        all.push(self.prefix(role));
        all.extend_from_slice(parts);
        self.framed(&all)
    }

    /// Ids [`Self::framed_as`] adds around its parts.
    pub fn frame_len_as(&self, role: Role) -> usize {
        self.frame_len() + self.prefix(role).len()
    }

    /// Word-piece ids of `text` with no markers and no cut: the stuff
    /// [`Self::framed`] builds passages of.
    pub fn piece_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let enc = self.tokenizer.encode(text, false).map_err(|e| self.encode_error(e.to_string()))?;
        Ok(enc.get_ids().to_vec())
    }

    /// `parts` in order between the markers, as [`Self::token_ids`] frames a
    /// text; the caller keeps the total within the model's positions.
    pub fn framed(&self, parts: &[&[u32]]) -> Vec<u32> {
        let mut ids = vec![self.open];
        for p in parts {
            ids.extend_from_slice(p);
        }
        ids.push(self.close);
        ids
    }

    /// Ids [`Self::framed`] adds around its parts.
    pub fn frame_len(&self) -> usize {
        2
    }

    fn encode_error(&self, message: String) -> EmbedError {
        EmbedError::Encode { path: self.dir.clone(), message }
    }

    /// One unit vector per text, in order. Texts longer than `max_tokens`
    /// tokens are read only that far.
    pub fn encode(&self, texts: &[&str], max_tokens: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids: Vec<Vec<u32>> =
            texts.iter().map(|t| self.token_ids(t, max_tokens).map(|(ids, _)| ids)).collect::<Result<_, _>>()?;
        self.encode_ids(&ids.iter().map(Vec::as_slice).collect::<Vec<_>>())
    }

    /// One unit vector per token sequence from [`Self::token_ids`], in order.
    pub fn encode_ids(&self, ids: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let vocab = self.word.len() / self.hidden;
        for row in ids {
            if row.is_empty() {
                return Err(self.encode_error("an empty token sequence has no vector".into()));
            }
            if row.len() > self.max_positions {
                return Err(self.encode_error(format!(
                    "{} tokens is more than the model's {} positions",
                    row.len(),
                    self.max_positions
                )));
            }
            if let Some(bad) = row.iter().find(|&&id| id as usize >= vocab) {
                return Err(self.encode_error(format!("token id {bad} is outside the {vocab}-word vocabulary")));
            }
        }
        let mut out = Vec::with_capacity(ids.len());
        for batch in ids.chunks(BATCH) {
            out.extend(self.forward(batch));
        }
        Ok(out)
    }

    /// The encoder over a batch of token sequences. All tokens of the batch
    /// go through each linear layer as one matrix; attention stays within
    /// each sequence, so no padding or mask is needed.
    fn forward(&self, seqs: &[&[u32]]) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let (x, starts) = self.last_states(seqs);
        seqs.iter().zip(&starts).map(|(seq, &start)| self.pool(&x[start * h..(start + seq.len()) * h])).collect()
    }

    /// The last layer's state of every token of `ids` (from
    /// [`Self::token_ids`]), before pooling: what [`Self::encode_ids`] pools.
    pub fn token_states(&self, ids: &[u32]) -> Vec<Vec<f32>> {
        let (x, _) = self.last_states(&[ids]);
        x.chunks_exact(self.hidden).map(<[f32]>::to_vec).collect()
    }

    /// One sequence's token states pooled as the model says, L2-normalised.
    fn pool(&self, states: &[f32]) -> Vec<f32> {
        let h = self.hidden;
        let mut pooled = match self.pooling {
            Pooling::Cls => states[..h].to_vec(),
            Pooling::Mean => {
                let mut mean = vec![0f32; h];
                for row in states.chunks_exact(h) {
                    mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                mean
            }
        };
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
        pooled.iter_mut().for_each(|m| *m /= norm);
        pooled
    }

    /// The batch's last-layer token states, one row per token, and where
    /// each sequence starts.
    fn last_states(&self, seqs: &[&[u32]]) -> (Vec<f32>, Vec<usize>) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.last_states_avx2(seqs) };
        }
        self.last_states_body(seqs)
    }

    /// The same steps with the element-wise loops (embedding sums, layer
    /// norms, GELU, residual adds) compiled for AVX2: no multiply-add is
    /// fused and no sum reordered, so the bits are the plain build's.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn last_states_avx2(&self, seqs: &[&[u32]]) -> (Vec<f32>, Vec<usize>) {
        self.last_states_body(seqs)
    }

    #[inline(always)]
    fn last_states_body(&self, seqs: &[&[u32]]) -> (Vec<f32>, Vec<usize>) {
        let h = self.hidden;
        let starts: Vec<usize> = seqs
            .iter()
            .scan(0, |at, s| {
                let start = *at;
                *at += s.len();
                Some(start)
            })
            .collect();
        let tokens: usize = seqs.iter().map(|s| s.len()).sum();
        let mut x = Vec::with_capacity(tokens * h);
        for seq in seqs {
            for (p, &id) in seq.iter().enumerate() {
                let word = &self.word[id as usize * h..][..h];
                let position = &self.position[p * h..][..h];
                x.extend(word.iter().zip(position).zip(&self.segment).map(|((w, p), s)| w + p + s));
            }
        }
        self.embedding_norm.apply(&mut x);

        let head = h / self.heads;
        let scale = 1.0 / (head as f32).sqrt();
        let (mut q, mut k, mut v, mut t, mut inner) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut context = vec![0f32; tokens * h];
        let mut scores = Vec::new();
        let mut scratch = attention::Scratch::default();
        for l in &self.layers {
            l.query.forward(&x, tokens, &mut q);
            l.key.forward(&x, tokens, &mut k);
            l.value.forward(&x, tokens, &mut v);
            for (seq, &start) in seqs.iter().zip(&starts) {
                let n = seq.len();
                for hd in 0..self.heads {
                    let at = start * h + hd * head;
                    let heads = (&q[at..], &k[at..], &v[at..]);
                    if attention::attend(n, head, h, scale, heads, &mut context[at..], &mut scratch) {
                        continue;
                    }
                    // A head width with no kernel: scale · Q Kᵀ by sgemm, Kᵀ read through strides.
                    scores.clear();
                    scores.resize(n * n, 0.0);
                    gemm(n, head, n, scale, (&q[at..], h, 1), (&k[at..], 1, h), (&mut scores, n), 0.0);
                    softmax_rows(&mut scores, n);
                    gemm(n, n, head, 1.0, (&scores, n, 1), (&v[at..], h, 1), (&mut context[at..], h), 0.0);
                }
            }
            l.attention_out.forward(&context, tokens, &mut t);
            t.iter_mut().zip(&x).for_each(|(a, b)| *a += b);
            l.attention_norm.apply(&mut t);
            std::mem::swap(&mut x, &mut t);
            l.intermediate.forward(&x, tokens, &mut inner);
            layers::gelu(&mut inner);
            l.output.forward(&inner, tokens, &mut t);
            t.iter_mut().zip(&x).for_each(|(a, b)| *a += b);
            l.output_norm.apply(&mut t);
            std::mem::swap(&mut x, &mut t);
        }

        (x, starts)
    }
}

/// The parts of a BERT config this encoder can run, or the error naming the
/// config and what it has instead.
fn check_config(config: &BertConfig, config_path: &Path) -> Result<(), EmbedError> {
    let fail = |path: &Path, message: String| EmbedError::Model { path: path.to_path_buf(), message };
    if config.model_type != "bert" {
        return Err(fail(config_path, format!("model_type `{}` is not supported (only `bert`)", config.model_type)));
    }
    if config.hidden_act != "gelu" {
        return Err(fail(config_path, format!("hidden_act `{}` is not supported (only `gelu`)", config.hidden_act)));
    }
    if config.position_embedding_type != "absolute" {
        return Err(fail(
            config_path,
            format!("position_embedding_type `{}` is not supported (only `absolute`)", config.position_embedding_type),
        ));
    }
    if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
        return Err(fail(
            config_path,
            format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            ),
        ));
    }
    Ok(())
}

/// The model's tokenizer, without padding or truncation: batches are padded
/// here, and truncation is the caller's choice.
fn load_tokenizer(bytes: &[u8], tokenizer_path: &Path) -> Result<tokenizers::Tokenizer, EmbedError> {
    let fail = |path: &Path, message: String| EmbedError::Model { path: path.to_path_buf(), message };
    let mut tokenizer = tokenizers::Tokenizer::from_bytes(bytes)
        .map_err(|e| fail(tokenizer_path, format!("is not a tokenizer: {e}")))?;
    // Batches are padded here, and truncation is the caller's choice.
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(None)
        .map_err(|e| fail(tokenizer_path, format!("cannot turn its truncation off: {e}")))?;

    Ok(tokenizer)
}

/// The model's name and digest: of its config, tokenizer and weights, and
/// of its pooling and prompts when they are not the plain mean.
fn model_identity(
    dir: &Path,
    files: [&[u8]; 3],
    pooling: Pooling,
    prompts: &(String, String),
    dim: usize,
) -> ModelIdentity {
    let mut hasher = blake3::Hasher::new();
    for bytes in files {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    // Mean pooling without prompts keeps the digests models had before
    // either was read; anything else changes every vector, so the digest.
    if pooling != Pooling::Mean || !prompts.0.is_empty() || !prompts.1.is_empty() {
        hasher.update(format!("pooling {pooling:?} query {:?} passage {:?}", prompts.0, prompts.1).as_bytes());
    }
    ModelIdentity {
        name: dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
        digest: format!("blake3:{}", hasher.finalize().to_hex()),
        dim,
    }
}

/// The encoder layers' weights, each checked for its shape.
fn load_layers(weights: &Weights<'_>, config: &BertConfig, eps: f32) -> Result<Vec<Layer>, EmbedError> {
    let h = config.hidden_size;
    let mut layers = Vec::with_capacity(config.num_hidden_layers);
    for i in 0..config.num_hidden_layers {
        let l = format!("encoder.layer.{i}");
        let inter = config.intermediate_size;
        layers.push(Layer {
            query: weights.linear(&format!("{l}.attention.self.query"), h, h)?,
            key: weights.linear(&format!("{l}.attention.self.key"), h, h)?,
            value: weights.linear(&format!("{l}.attention.self.value"), h, h)?,
            attention_out: weights.linear(&format!("{l}.attention.output.dense"), h, h)?,
            attention_norm: weights.layer_norm(&format!("{l}.attention.output.LayerNorm"), h, eps)?,
            intermediate: weights.linear(&format!("{l}.intermediate.dense"), h, inter)?,
            output: weights.linear(&format!("{l}.output.dense"), inter, h)?,
            output_norm: weights.layer_norm(&format!("{l}.output.LayerNorm"), h, eps)?,
        });
    }
    Ok(layers)
}

/// The special tokens the tokenizer frames a text with, read off an empty
/// one: a BERT tokenizer adds exactly [CLS] and [SEP].
fn frame_marks(tokenizer: &tokenizers::Tokenizer, tokenizer_path: &Path) -> Result<(u32, u32), EmbedError> {
    let fail = |path: &Path, message: String| EmbedError::Model { path: path.to_path_buf(), message };
    let marks = tokenizer
        .encode("", true)
        .map_err(|e| fail(tokenizer_path, format!("cannot encode an empty text: {e}")))?
        .get_ids()
        .to_vec();
    let [open, close] = marks.as_slice() else {
        return Err(fail(
            tokenizer_path,
            format!("frames a text with {} special tokens; a BERT tokenizer adds [CLS] and [SEP]", marks.len()),
        ));
    };
    Ok((*open, *close))
}

/// A JSON file of the model folder that may be absent (`None`); a file that
/// cannot be read or is not a `what` is an error naming it.
fn read_optional_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<Option<T>, EmbedError> {
    let fail = |message: String| EmbedError::Model { path: path.to_path_buf(), message };
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| fail(format!("is not a {what}: {e}")))
}

/// The pooling `1_Pooling/config.json` asks for: mean without the file.
fn read_pooling(path: &Path) -> Result<Pooling, EmbedError> {
    let Some(c) = read_optional_json::<PoolingConfig>(path, "pooling config")? else { return Ok(Pooling::Mean) };
    match (
        c.pooling_mode_mean_tokens,
        c.pooling_mode_cls_token,
        c.pooling_mode_max_tokens || c.pooling_mode_mean_sqrt_len_tokens,
    ) {
        (true, false, false) => Ok(Pooling::Mean),
        (false, true, false) => Ok(Pooling::Cls),
        _ => Err(EmbedError::Model {
            path: path.to_path_buf(),
            message: "asks for a pooling other than the mean of tokens or the [CLS] token alone, which are the ones supported".into(),
        }),
    }
}

/// The query and passage prompts of `config_sentence_transformers.json`
/// (`passage`, else `document`); none without the file.
fn read_prompts(path: &Path) -> Result<(String, String), EmbedError> {
    let Some(c) = read_optional_json::<SentenceTransformersConfig>(path, "sentence-transformers config")? else {
        return Ok(Default::default());
    };
    let get = |k: &str| c.prompts.get(k).cloned();
    Ok((get("query").unwrap_or_default(), get("passage").or_else(|| get("document")).unwrap_or_default()))
}

pub mod tiny;

/// Deterministic pseudo-random values in `[-amplitude, amplitude)` (a linear
/// congruential generator), for the kernels' tests.
#[cfg(test)]
pub(crate) fn pseudo_values(len: usize, seed: u32, amplitude: f32) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((s >> 8) as f32 / (1u32 << 24) as f32) * (2.0 * amplitude) - amplitude
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_precision_parses_from_its_name_and_any_other_name_is_refused_with_the_choices() {
        for p in Precision::ALL {
            assert_eq!(p.as_str().parse::<Precision>(), Ok(p));
        }
        assert_eq!("f16".parse::<Precision>(), Err("unknown precision `f16`: use one of int8, f32".to_string()));
    }

    /// The element-wise loops compiled for AVX2 give the plain build's bits
    /// (layer norms over a width of 20: one vector of partial sums and a
    /// remainder; GELU; residual adds), in both precisions.
    #[test]
    fn the_avx2_forward_pass_gives_the_plain_bits() {
        let dir = tempfile::tempdir().unwrap();
        tiny::write_tiny_model(dir.path(), &["wish", "cell", "pattern", "handler"], 5).unwrap();
        let mut encoder = SentenceEncoder::load(dir.path()).unwrap();
        let ids: Vec<Vec<u32>> = ["a wish for a cell", "handler pattern wish wish cell", "cell"]
            .iter()
            .map(|t| encoder.token_ids(t, 64).unwrap().0)
            .collect();
        let seqs: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        for precision in [Precision::F32, Precision::Int8] {
            encoder.set_precision(precision);
            let (fast, starts) = encoder.last_states(&seqs);
            let (plain, plain_starts) = encoder.last_states_body(&seqs);
            assert_eq!(starts, plain_starts);
            assert!(fast.iter().all(|v| v.is_finite()) && fast.iter().any(|&v| v != 0.0));
            assert_eq!(fast, plain, "{precision:?}: dispatched and plain forward passes");
        }
    }

    #[test]
    fn int8_is_the_faster_precision_only_where_the_products_run_on_vnni() {
        assert_eq!(Precision::fastest_on(Int8Kernel::Vnni), Precision::Int8);
        assert_eq!(Precision::fastest_on(Int8Kernel::Avx2), Precision::F32);
        assert_eq!(Precision::fastest_on(Int8Kernel::Portable), Precision::F32);
    }
}
