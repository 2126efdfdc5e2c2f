//! # fabdex-semantic
//!
//! A latent semantic model learned from the indexed corpus itself: latent
//! semantic analysis (tf-idf, then a truncated SVD). Users ask in their own
//! words ("hide part of the page until a checkbox is ticked") while the
//! defining section uses the corpus's words ("conditional rendering",
//! "ternary"). Terms that occur in the same sections end up near each other in
//! the latent space, so a question can reach a section it shares few words
//! with, without a hand-written synonym list and without any downloaded model.
//!
//! - **Fit** (index time, [`Model::fit`]): each document is a bag of analysed
//!   terms; weights are sublinear tf × smoothed idf, each row L2-normalised; a
//!   randomized range finder with power iterations (Halko, Martinsson & Tropp,
//!   2011) and an eigen-decomposition of the small projected matrix give the
//!   top right singular vectors. Deterministic: a fixed seed, and every sum
//!   runs in a fixed order (rows are computed in parallel, each on its own).
//! - **Query** ([`Model::embed`], [`Model::similarities`]): a query's bag is
//!   weighted the same way, projected, and compared by cosine with every
//!   document's unit vector.
//! - **Storage** ([`Model::to_bytes`], [`Model::from_bytes`]): a small JSON
//!   header, the vocabulary as one sorted column of strings (looked up by
//!   binary search, so opening builds no map), the idf and the little-endian
//!   `f32` arrays, length-checked.

use std::collections::HashMap;

mod dense;
mod floats;
pub use floats::{Floats, SharedBytes};

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Dimensions of the latent space unless a fit asks for fewer.
pub const DEFAULT_DIM: usize = 100;

const MAGIC: &[u8] = b"fabdex-semantic 2\n";

/// How a model is fitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// Latent dimensions (capped by the number of documents and terms).
    pub dim: usize,
    /// A term must occur in at least this many documents to be in the vocabulary.
    pub min_df: u32,
    /// Extra random directions for the range finder.
    pub oversample: usize,
    /// Power iterations: more sharpen the leading subspace of a flat spectrum.
    pub power_iterations: usize,
    pub seed: u64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { dim: DEFAULT_DIM, min_df: 2, oversample: 10, power_iterations: 4, seed: 0x5eed_fab0_de50_0001 }
    }
}

/// A stored model that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("semantic model is not valid: {0}")]
pub struct DecodeError(pub String);

#[derive(Serialize, Deserialize)]
struct Header {
    dim: usize,
    docs: usize,
    /// Terms in the vocabulary.
    terms: usize,
}

/// The vocabulary: sorted, unique terms in one text, each ending where
/// `ends` says; a term's number is its place in that order.
#[derive(Debug, Clone, Default, PartialEq)]
struct Terms {
    text: String,
    ends: Vec<u32>,
}

impl Terms {
    fn of<'a>(sorted: impl IntoIterator<Item = &'a str>) -> Terms {
        let mut terms = Terms::default();
        for t in sorted {
            terms.text.push_str(t);
            terms.ends.push(u32::try_from(terms.text.len()).expect("a vocabulary under 4 GB"));
        }
        terms
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// The term's number, by binary search.
    fn find(&self, term: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }
}

/// A fitted model: the vocabulary, its idf, the term → latent projection and
/// one unit vector per document (all zeros for a document with no known term).
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    dim: usize,
    docs: usize,
    terms: Terms,
    idf: Vec<f32>,
    /// The projection (terms × dim, row-major), then the document vectors
    /// (docs × dim, row-major): one run, as stored, so that a reader uses
    /// it where the mapped table holds it.
    values: Floats,
    /// The stored table, when the values are mapped from it: a question's
    /// few projection rows are read from it ([`RowFile`]).
    row_file: RowFile,
}

/// The file a mapped model was read from, and where its values start in it.
///
/// Embedding a question reads the projection rows of its few terms. Through
/// the mapping, each such read makes the kernel map the whole large folio of
/// the page cache around it (Linux 6.18 maps folios of up to 2 MB whole), so
/// a search held most of both models' projections resident (9 of labs'
/// 14 MB) for a few kilobytes it used. Read with `pread`, they are copied
/// and nothing else is mapped. The bytes are the same file's, already
/// checked against its digest; a read that fails falls back to the mapping.
#[derive(Debug, Clone, Default)]
pub struct RowFile(Option<std::sync::Arc<(std::fs::File, u64)>>);

impl PartialEq for RowFile {
    /// Where the values are read from is not part of what a model is.
    fn eq(&self, _: &RowFile) -> bool {
        true
    }
}

impl RowFile {
    /// Projection row `row` of `dim` values into `out`, or false when it
    /// cannot be read (or there is no file).
    #[cfg(unix)]
    fn read(&self, row: usize, dim: usize, out: &mut [f32]) -> bool {
        use std::os::unix::fs::FileExt;
        let Some(source) = &self.0 else {
            return false;
        };
        let (file, start) = &**source;
        let mut bytes = vec![0u8; dim * 4];
        let at = start + (row * dim * 4) as u64;
        if file.read_exact_at(&mut bytes, at).is_err() {
            return false;
        }
        for (x, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = f32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        true
    }

    #[cfg(not(unix))]
    fn read(&self, _row: usize, _dim: usize, _out: &mut [f32]) -> bool {
        false
    }
}

/// Sparse rows of a weighted matrix (compressed sparse rows).
///
/// The fit's matrices are `f32`: half the memory and memory traffic of
/// `f64`, for a model that is stored in `f32`. Sums that decide the basis
/// (Gram matrices, products with the small matrices) are taken in `f64`.
struct Rows {
    starts: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f32>,
}

impl Rows {
    fn len(&self) -> usize {
        self.starts.len() - 1
    }
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let (a, b) = (self.starts[r], self.starts[r + 1]);
        self.cols[a..b].iter().zip(&self.vals[a..b]).map(|(&c, &v)| (c as usize, v))
    }
    /// X · M, with M (cols × l) row-major; the result is rows × l. Rows are
    /// independent, so they are computed in parallel; each sums in a fixed order.
    fn times(&self, m: &[f32], l: usize) -> Vec<f32> {
        dense::with_avx2! {
            /// `o += Σ vals[i] · m's row cols[i]`, in order.
            fn sparse_row(o: &mut [f32], cols: &[u32], vals: &[f32], m: &[f32], l: usize) {
                for (&c, &v) in cols.iter().zip(vals) {
                    let c = c as usize;
                    for (x, y) in o.iter_mut().zip(&m[c * l..(c + 1) * l]) {
                        *x += v * y;
                    }
                }
            }
        }
        let mut out = vec![0.0; self.len() * l];
        out.par_chunks_mut(l).enumerate().for_each(|(r, o)| {
            let (a, b) = (self.starts[r], self.starts[r + 1]);
            sparse_row(o, &self.cols[a..b], &self.vals[a..b], m, l);
        });
        out
    }
    /// The transpose, also as rows (so Xᵀ · Y is [`Rows::times`] too).
    fn transpose(&self, cols: usize) -> Rows {
        let mut counts = vec![0usize; cols + 1];
        for &c in &self.cols {
            counts[c as usize + 1] += 1;
        }
        for i in 0..cols {
            counts[i + 1] += counts[i];
        }
        let starts = counts.clone();
        let mut next = counts;
        let mut t_cols = vec![0u32; self.cols.len()];
        let mut t_vals = vec![0f32; self.vals.len()];
        for r in 0..self.len() {
            for (c, v) in self.row(r) {
                t_cols[next[c]] = r as u32;
                t_vals[next[c]] = v;
                next[c] += 1;
            }
        }
        Rows { starts, cols: t_cols, vals: t_vals }
    }
}

/// The header after its length: the JSON, the term ends, the idf and the
/// terms' text, each checked (ends in order and on character boundaries,
/// terms sorted and unique, padding zeros), so a lookup cannot go wrong.
fn read_header(bytes: &[u8]) -> Result<(Header, Terms, Vec<f32>), DecodeError> {
    let mut rest = bytes;
    let mut take = |n: usize, what: &str| -> Result<&[u8], DecodeError> {
        if n > rest.len() {
            return Err(DecodeError(format!("the header ends inside {what}")));
        }
        let (part, after) = rest.split_at(n);
        rest = after;
        Ok(part)
    };
    let json_len = u32::from_le_bytes(take(4, "the JSON's length")?.try_into().expect("4 bytes")) as usize;
    let header: Header =
        serde_json::from_slice(take(json_len, "the JSON")?).map_err(|e| DecodeError(format!("the header: {e}")))?;
    let n = header.terms;
    let u32s = |b: &[u8]| b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
    let ends: Vec<u32> =
        u32s(take(n.checked_mul(4).ok_or_else(|| DecodeError("too many terms".into()))?, "the term ends")?);
    let idf: Vec<f32> =
        take(n * 4, "the idf")?.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
    let text_len = ends.last().map_or(0, |&e| e as usize);
    let text = std::str::from_utf8(take(text_len, "the terms")?)
        .map_err(|e| DecodeError(format!("the terms are not UTF-8: {e}")))?
        .to_string();
    let padding = take(bytes.len() - (4 + json_len + 8 * n + text_len), "the padding")?;
    if padding.len() > 3 || padding.iter().any(|&b| b != 0) {
        return Err(DecodeError(format!("{} bytes follow the terms", padding.len())));
    }
    let mut previous = 0;
    for (i, &end) in ends.iter().enumerate() {
        if end < previous || !text.is_char_boundary(end as usize) {
            return Err(DecodeError(format!("term {i} ends at byte {end}, out of order or inside a character")));
        }
        previous = end;
    }
    let terms = Terms { text, ends };
    if let Some(i) = (1..terms.len()).find(|&i| terms.get(i - 1) >= terms.get(i)) {
        return Err(DecodeError(format!("term {i} is out of order")));
    }
    Ok((header, terms, idf))
}

/// splitmix64: a tiny deterministic generator for the random test directions.
struct SplitMix(u64);

impl SplitMix {
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// A bag's distinct terms in number order, each with its counts summed
/// (in bag order, as `f64`).
fn merged(bag: &[(u32, f32)]) -> Vec<(u32, f64)> {
    summed(bag.iter().copied().filter(|(_, c)| *c > 0.0).collect())
}

/// [`merged`], keeping every count.
fn summed(mut entries: Vec<(u32, f32)>) -> Vec<(u32, f64)> {
    entries.sort_by_key(|(t, _)| *t); // stable: equal terms keep bag order
    let mut out: Vec<(u32, f64)> = Vec::with_capacity(entries.len());
    for (t, c) in entries {
        match out.last_mut() {
            Some((last, sum)) if *last == t => *sum += f64::from(c),
            _ => out.push((t, f64::from(c))),
        }
    }
    out
}

/// The terms a fit keeps (in at least `min_df` documents) and their idf.
struct Vocabulary {
    /// Kept terms' numbers (into the caller's terms), in the terms' sorted order.
    sorted: Vec<u32>,
    /// Per caller's term number: its column in the model, or `u32::MAX` when not kept.
    column: Vec<u32>,
    /// Per column: smoothed idf.
    idf: Vec<f32>,
}

impl Vocabulary {
    fn of<T: AsRef<str>, B: AsRef<[(u32, f32)]> + Sync>(terms: &[T], bags: &[B], min_df: u32) -> Vocabulary {
        let mut df = vec![0u32; terms.len()];
        for bag in bags {
            for (t, _) in merged(bag.as_ref()) {
                df[t as usize] += 1;
            }
        }
        let mut sorted: Vec<u32> = (0..terms.len() as u32).filter(|&t| df[t as usize] >= min_df.max(1)).collect();
        sorted.sort_unstable_by(|&a, &b| terms[a as usize].as_ref().cmp(terms[b as usize].as_ref()));
        let mut column = vec![u32::MAX; terms.len()];
        for (c, &t) in sorted.iter().enumerate() {
            column[t as usize] = c as u32;
        }
        let n = bags.len() as f64;
        let idf = sorted.iter().map(|&t| (((1.0 + n) / (1.0 + f64::from(df[t as usize]))).ln() + 1.0) as f32).collect();
        Vocabulary { sorted, column, idf }
    }

    /// Each bag's kept terms, weighted (sublinear tf × idf) and L2-normalised, as sparse rows.
    fn weighted_rows<B: AsRef<[(u32, f32)]> + Sync>(&self, bags: &[B]) -> Rows {
        let weighted = |bag: &B| -> Vec<(u32, f64)> {
            let mut entries: Vec<(u32, f64)> = merged(bag.as_ref())
                .into_iter()
                .filter_map(|(t, tf)| {
                    let c = self.column[t as usize];
                    (c != u32::MAX).then(|| (c, sublinear(tf) * f64::from(self.idf[c as usize])))
                })
                .collect();
            entries.sort_by_key(|(c, _)| *c);
            let norm = entries.iter().map(|(_, v)| v * v).sum::<f64>().sqrt();
            entries.iter_mut().for_each(|(_, v)| *v = if norm > 0.0 { *v / norm } else { 0.0 });
            entries
        };
        // Row lengths first, then each row written in place over the pool.
        let lens: Vec<usize> = bags
            .par_iter()
            .map(|bag| merged(bag.as_ref()).iter().filter(|(t, _)| self.column[*t as usize] != u32::MAX).count())
            .collect();
        let mut starts = Vec::with_capacity(bags.len() + 1);
        starts.push(0);
        for len in &lens {
            starts.push(starts.last().copied().unwrap_or(0) + len);
        }
        let nnz = *starts.last().expect("a start");
        let (mut cols, mut vals) = (vec![0u32; nnz], vec![0f32; nnz]);
        let mut slices = Vec::with_capacity(bags.len());
        let (mut cols_rest, mut vals_rest) = (&mut cols[..], &mut vals[..]);
        for &len in &lens {
            let (c, cr) = cols_rest.split_at_mut(len);
            let (v, vr) = vals_rest.split_at_mut(len);
            slices.push((c, v));
            (cols_rest, vals_rest) = (cr, vr);
        }
        slices.into_par_iter().zip(bags).for_each(|((c, v), bag)| {
            for ((col, val), (tc, tv)) in c.iter_mut().zip(v.iter_mut()).zip(weighted(bag)) {
                (*col, *val) = (tc, tv as f32);
            }
        });
        Rows { starts, cols, vals }
    }
}

fn sublinear(tf: f64) -> f64 {
    if tf > 0.0 { 1.0 + tf.ln() } else { 0.0 }
}

fn normalize(v: &mut [f32]) -> bool {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 && n.is_finite() {
        v.iter_mut().for_each(|x| *x /= n);
        true
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
        false
    }
}

impl Model {
    /// Fit a model to documents given as bags of (term, count); a term may repeat
    /// within a bag (its counts add up).
    pub fn fit(docs: &[Vec<(String, f32)>], opts: &FitOptions) -> Model {
        let mut numbers: HashMap<&str, u32> = HashMap::new();
        let mut terms: Vec<&str> = Vec::new();
        let numbered: Vec<Vec<(u32, f32)>> = docs
            .iter()
            .map(|doc| {
                doc.iter()
                    .map(|(t, c)| {
                        let n = *numbers.entry(t.as_str()).or_insert_with(|| {
                            terms.push(t.as_str());
                            terms.len() as u32 - 1
                        });
                        (n, *c)
                    })
                    .collect()
            })
            .collect();
        Model::fit_numbered(&terms, &numbered, opts)
    }

    /// [`Model::fit`] of documents whose terms are numbers into `terms`
    /// (each term once in `terms`, in any order). A number may repeat
    /// within a bag (its counts add up, in bag order). The model is the
    /// same as [`Model::fit`] of the same bags spelled out.
    pub fn fit_numbered<T, B>(terms: &[T], docs: &[B], opts: &FitOptions) -> Model
    where
        T: AsRef<str> + Sync,
        B: AsRef<[(u32, f32)]> + Sync,
    {
        // Each bag is merged where it is used, twice, rather than held
        // merged: the fit's memory is its matrices.
        let vocabulary = Vocabulary::of(terms, docs, opts.min_df);
        let rows = vocabulary.weighted_rows(docs);
        let model = Model {
            dim: 0,
            docs: docs.len(),
            terms: Terms::of(vocabulary.sorted.iter().map(|&i| terms[i as usize].as_ref())),
            idf: vocabulary.idf,
            values: Floats::default(),
            row_file: RowFile::default(),
        };
        model.with_latent_space(rows, opts)
    }

    /// The model with its latent space fitted to the weighted rows (one per document).
    fn with_latent_space(mut self, rows: Rows, opts: &FitOptions) -> Model {
        let n_docs = self.docs;
        let n_terms = self.terms.len();
        let dim = opts.dim.min(n_docs.saturating_sub(1)).min(n_terms.saturating_sub(1));
        if dim == 0 {
            return self;
        }
        let l = (dim + opts.oversample).min(n_docs).min(n_terms);

        // Randomized range finder with power iterations.
        let mut rng = SplitMix(opts.seed);
        let omega: Vec<f32> = (0..n_terms * l).map(|_| rng.next_unit() as f32).collect();
        let columns = rows.transpose(n_terms);
        let mut y = rows.times(&omega, l);
        drop(omega);
        for _ in 0..opts.power_iterations {
            dense::orthonormalize(&mut y, l);
            let mut z = columns.times(&y, l);
            dense::orthonormalize(&mut z, l);
            y = rows.times(&z, l);
        }
        let q = &mut y;
        dense::orthonormalize(q, l);
        // Bᵀ = Xᵀ Q (terms × l); B Bᵀ = (Bᵀ)ᵀ Bᵀ is small (l × l).
        let bt = columns.times(q, l);
        drop(columns);
        let small = DMatrix::from_row_slice(l, l, &dense::gram(&bt, l));
        let eig = small.symmetric_eigen();
        let mut order: Vec<usize> = (0..l).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
        let order: Vec<usize> = order.into_iter().filter(|&i| eig.eigenvalues[i] > 1e-12).take(dim).collect();
        let dim = order.len();
        if dim == 0 {
            return self;
        }
        // V's column j = Bᵀ uᵢ / σᵢ, for the j-th largest σᵢ: Bᵀ times the
        // small matrix of those uᵢ / σᵢ (l × dim).
        let mut scaled = vec![0.0; l * dim];
        for (j, &i) in order.iter().enumerate() {
            let sigma = eig.eigenvalues[i].sqrt();
            for k in 0..l {
                scaled[k * dim + j] = eig.eigenvectors[(k, i)] / sigma;
            }
        }
        let projection = dense::times_small(&bt, &scaled, l, dim);
        drop(bt);
        let mut vectors = rows.times(&projection, dim);
        for d in vectors.chunks_mut(dim) {
            normalize(d);
        }
        self.dim = dim;
        let mut values = projection;
        values.extend_from_slice(&vectors);
        self.values = Floats::Owned(values);
        self
    }

    /// Latent dimensions (0: the corpus was too small or too uniform to fit).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Documents the model was fitted to, in order.
    pub fn docs(&self) -> usize {
        self.docs
    }

    /// Terms in the vocabulary.
    pub fn vocabulary(&self) -> usize {
        self.terms.len()
    }

    /// Whether a term is in the vocabulary.
    pub fn knows(&self, term: &str) -> bool {
        self.terms.find(term).is_some()
    }

    /// The unit vector of a bag of (term, count), or None when no term is known
    /// (or the model has no dimensions).
    pub fn embed(&self, bag: &[(String, f32)]) -> Option<Vec<f32>> {
        if self.dim == 0 {
            return None;
        }
        let numbered: Vec<(u32, f32)> = bag.iter().filter_map(|(t, c)| Some((self.terms.find(t)?, *c))).collect();
        self.embed_numbered(&numbered)
    }

    /// A term's number in the vocabulary (for [`Model::embed_numbered`]).
    pub fn term_number(&self, term: &str) -> Option<u32> {
        self.terms.find(term)
    }

    /// [`Model::embed`] of a bag whose terms are given by their numbers in
    /// the vocabulary ([`Model::term_number`]); the same vector as the bag
    /// spelled out.
    pub fn embed_numbered(&self, bag: &[(u32, f32)]) -> Option<Vec<f32>> {
        if self.dim == 0 {
            return None;
        }
        let known = bag.iter().copied().filter(|(t, _)| (*t as usize) < self.terms.len()).collect();
        let entries = summed(known);
        let mut v = vec![0f32; self.dim];
        let mut read = vec![0f32; self.dim];
        for (i, tf) in entries {
            let i = i as usize;
            let w = (sublinear(tf) * f64::from(self.idf[i])) as f32;
            let row = match self.row_file.read(i, self.dim, &mut read) {
                true => &read[..],
                false => &self.projection()[i * self.dim..(i + 1) * self.dim],
            };
            for (x, p) in v.iter_mut().zip(row) {
                *x += w * p;
            }
        }
        normalize(&mut v).then_some(v)
    }

    /// Cosine similarity of a unit vector from [`Model::embed`] with every document, in order.
    pub fn similarities(&self, query: &[f32]) -> Vec<f32> {
        if self.dim == 0 || query.len() != self.dim {
            return vec![0.0; self.docs];
        }
        self.vectors().chunks(self.dim).map(|d| d.iter().zip(query).map(|(a, b)| a * b).sum()).collect()
    }

    /// The stored form: magic; the header's length (u64); the header: the
    /// JSON's length (u32), the JSON (dimensions, documents, terms), each
    /// term's end (u32), the idf (f32), the terms' text, and zeros so that
    /// the values start at a multiple of 4 bytes, where a mapped table's
    /// values are used in place; then the projection and vectors as LE f32.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(&Header { dim: self.dim, docs: self.docs, terms: self.terms.len() })
            .expect("a header always serializes");
        let mut header = Vec::with_capacity(4 + json.len() + 8 * self.terms.len() + self.terms.text.len() + 3);
        header.extend_from_slice(&(json.len() as u32).to_le_bytes());
        header.extend_from_slice(&json);
        self.terms.ends.iter().for_each(|e| header.extend_from_slice(&e.to_le_bytes()));
        self.idf.iter().for_each(|x| header.extend_from_slice(&x.to_le_bytes()));
        header.extend_from_slice(self.terms.text.as_bytes());
        while !(MAGIC.len() + 8 + header.len()).is_multiple_of(4) {
            header.push(0);
        }
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + header.len() + 4 * self.values.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u64).to_le_bytes());
        out.extend_from_slice(&header);
        for x in self.values.iter() {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Model, DecodeError> {
        let head = Model::head_len(bytes)?;
        if bytes.len() < head {
            return Err(DecodeError(format!(
                "the header is {} bytes but only {} follow",
                head - MAGIC.len() - 8,
                bytes.len() - MAGIC.len() - 8
            )));
        }
        let floats = &bytes[head..];
        if !floats.len().is_multiple_of(4) {
            return Err(DecodeError(format!("{} bytes of vectors, not a whole number of values", floats.len())));
        }
        let values: Vec<f32> =
            floats.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
        Model::from_head_and_values(&bytes[..head], values.into())
    }

    /// How many bytes of the stored form come before its values, read from
    /// its first [`Model::HEAD_PREFIX`] bytes (or all of it, when shorter).
    pub fn head_len(prefix: &[u8]) -> Result<usize, DecodeError> {
        let rest = prefix
            .strip_prefix(MAGIC)
            .ok_or_else(|| DecodeError("it does not start with the model's magic line".into()))?;
        if rest.len() < 8 {
            return Err(DecodeError("it ends before the header length".into()));
        }
        let header_len = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        usize::try_from(header_len)
            .ok()
            .and_then(|n| n.checked_add(MAGIC.len() + 8))
            .ok_or_else(|| DecodeError(format!("its header length {header_len} is past what memory holds")))
    }

    /// Bytes that [`Model::head_len`] needs.
    pub const HEAD_PREFIX: usize = MAGIC.len() + 8;

    /// The model from the stored form's head (its first [`Model::head_len`]
    /// bytes) and its values, already read as `f32`s.
    pub fn from_head_and_values(head: &[u8], values: Floats) -> Result<Model, DecodeError> {
        if Model::head_len(head)? != head.len() {
            return Err(DecodeError("the header is not where its length says".into()));
        }
        let (header, terms, idf) = read_header(&head[MAGIC.len() + 8..])?;
        let want = header.dim.checked_mul(terms.len() + header.docs).filter(|n| n.checked_mul(4).is_some());
        if want != Some(values.len()) {
            return Err(DecodeError(format!(
                "{} bytes of vectors, expected {} for {} terms and {} documents in {} dimensions",
                values.len() * 4,
                want.map_or("an overflowing count".to_string(), |w| (w * 4).to_string()),
                terms.len(),
                header.docs,
                header.dim
            )));
        }
        Ok(Model { dim: header.dim, docs: header.docs, terms, idf, values, row_file: RowFile::default() })
    }

    /// Document `doc`'s vector (`dim` values; all zeros when it had no known term).
    pub fn vector(&self, doc: usize) -> &[f32] {
        &self.vectors()[doc * self.dim..(doc + 1) * self.dim]
    }

    /// This model's vocabulary, idf and projection with other documents:
    /// `vectors` holds `docs × dim` values, each document's from
    /// [`Model::vector`] of a document it keeps or [`Model::embed`] of a new
    /// one (zeros when that is None). This is how an incremental build folds
    /// edited documents into a space fitted before, without refitting.
    pub fn with_documents(&self, docs: usize, vectors: Vec<f32>) -> Model {
        assert_eq!(vectors.len(), docs * self.dim, "{docs} documents of {} dimensions", self.dim);
        let mut values = self.projection().to_vec();
        values.extend_from_slice(&vectors);
        Model {
            dim: self.dim,
            docs,
            terms: self.terms.clone(),
            idf: self.idf.clone(),
            values: Floats::Owned(values),
            row_file: RowFile::default(),
        }
    }

    /// This model, reading a question's projection rows from `file` (the
    /// table its values are mapped from, the values starting at byte
    /// `values_at`) instead of through the mapping; see [`RowFile`].
    pub fn with_row_file(mut self, file: std::fs::File, values_at: u64) -> Model {
        self.row_file = RowFile(Some(std::sync::Arc::new((file, values_at))));
        self
    }

    /// terms × dim, row-major.
    fn projection(&self) -> &[f32] {
        &self.values[..self.terms.len() * self.dim]
    }

    /// docs × dim, row-major.
    fn vectors(&self) -> &[f32] {
        &self.values[self.terms.len() * self.dim..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bag(words: &str) -> Vec<(String, f32)> {
        words.split_whitespace().map(|w| (w.to_string(), 1.0)).collect()
    }

    /// Two topics; "toggle" and "checkbox" never share a document with the
    /// query word "hide", but both co-occur with "show" and "visible".
    fn corpus() -> Vec<Vec<(String, f32)>> {
        [
            "show hide visible ternary render",
            "show hide visible ternary render condition",
            "checkbox toggle show visible",
            "checkbox toggle visible render",
            "fetch request response json endpoint",
            "fetch request spinner pending endpoint",
            "response json pending error endpoint",
            "request error retry fetch",
        ]
        .iter()
        .map(|d| bag(d))
        .collect()
    }

    #[test]
    fn related_words_meet_in_the_latent_space() {
        let model = Model::fit(&corpus(), &FitOptions { dim: 2, ..FitOptions::default() });
        assert_eq!(model.dim(), 2);
        let q = model.embed(&bag("hide")).unwrap();
        let sims = model.similarities(&q);
        // The checkbox documents share no word with "hide" but sit with the rendering topic.
        let best_fetch = sims[4..].iter().cloned().fold(f32::MIN, f32::max);
        assert!(sims[2] > best_fetch && sims[3] > best_fetch, "{sims:?}");
        assert!(model.embed(&bag("unknown words")).is_none());
    }

    /// A model that reads a question's projection rows from its stored file
    /// embeds exactly as one that reads them from memory; a file it cannot
    /// read them from (here, one cut short) leaves it reading from memory.
    #[test]
    fn projection_rows_read_from_the_file_embed_the_same() {
        let model = Model::fit(&corpus(), &FitOptions { dim: 3, ..FitOptions::default() });
        let bytes = model.to_bytes();
        let head = Model::head_len(&bytes).unwrap();
        let dir = std::env::temp_dir().join(format!("fabdex-semantic-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (whole, cut) = (dir.join("whole.bin"), dir.join("cut.bin"));
        std::fs::write(&whole, &bytes).unwrap();
        std::fs::write(&cut, &bytes[..head]).unwrap();
        let loaded = |file: &std::path::Path| {
            let values = Floats::from_table(std::sync::Arc::new(bytes.clone()), head).unwrap();
            let model = Model::from_head_and_values(&bytes[..head], values).unwrap();
            model.with_row_file(std::fs::File::open(file).unwrap(), head as u64)
        };
        let (from_file, from_cut) = (loaded(&whole), loaded(&cut));
        let mut read = vec![0f32; 3];
        assert!(from_file.row_file.read(1, 3, &mut read), "the rows are read from the file");
        assert_eq!(read, model.projection()[3..6]);
        assert!(!from_cut.row_file.read(1, 3, &mut read), "a cut file has no rows to read");
        for query in ["hide show", "toggle checkbox visible", "fetch json url"] {
            assert_eq!(from_file.embed(&bag(query)), model.embed(&bag(query)), "{query}");
            assert_eq!(from_cut.embed(&bag(query)), model.embed(&bag(query)), "{query}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fits_are_deterministic_and_round_trip() {
        let a = Model::fit(&corpus(), &FitOptions { dim: 3, ..FitOptions::default() });
        let b = Model::fit(&corpus(), &FitOptions { dim: 3, ..FitOptions::default() });
        assert_eq!(a.to_bytes(), b.to_bytes());
        let back = Model::from_bytes(&a.to_bytes()).unwrap();
        assert_eq!(back, a);
        // The values start at a multiple of 4 bytes, so a mapped table's are used in place.
        for dim in 1..=4 {
            let bytes = Model::fit(&corpus(), &FitOptions { dim, ..FitOptions::default() }).to_bytes();
            assert!(Model::head_len(&bytes).unwrap().is_multiple_of(4), "dim {dim}");
            let shared: SharedBytes = std::sync::Arc::new(bytes.clone());
            let head = Model::head_len(&bytes).unwrap();
            let values = Floats::from_table(shared, head).unwrap();
            let model = Model::from_head_and_values(&bytes[..head], values).unwrap();
            assert_eq!(model.to_bytes(), bytes);
        }
    }

    #[test]
    fn tiny_corpora_give_an_empty_model_not_a_panic() {
        let m = Model::fit(&[bag("one two")], &FitOptions::default());
        assert_eq!(m.dim(), 0);
        assert!(m.embed(&bag("one")).is_none());
        assert_eq!(m.similarities(&[]), vec![0.0]);
        let back = Model::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(back.docs(), 1);
        let none = Model::fit(&[], &FitOptions::default());
        assert_eq!(none.similarities(&[]), Vec::<f32>::new());
    }

    #[test]
    fn damaged_bytes_are_refused_with_the_reason() {
        let bytes = Model::fit(&corpus(), &FitOptions { dim: 2, ..FitOptions::default() }).to_bytes();
        assert!(Model::from_bytes(b"nope").unwrap_err().0.contains("magic"));
        let cut = Model::from_bytes(&bytes[..bytes.len() - 3]).unwrap_err();
        assert!(cut.0.contains("bytes of vectors"), "{cut}");
        // Terms out of order would break the binary search: refused.
        let model = Model::from_bytes(&bytes).unwrap();
        let (first, second) = (model.terms.get(0).to_string(), model.terms.get(1).to_string());
        let at = bytes.windows(first.len() + second.len()).position(|w| w == format!("{first}{second}").as_bytes());
        let mut damaged = bytes.clone();
        // The second term now starts with `!`, before any letter.
        damaged[at.unwrap() + first.len()] = b'!';
        let err = Model::from_bytes(&damaged).unwrap_err();
        assert!(err.0.contains("term 1 is out of order"), "{err}");
    }

    #[test]
    fn every_term_is_found_by_its_number_and_no_other_word_is() {
        let model = Model::fit(&corpus(), &FitOptions { dim: 2, ..FitOptions::default() });
        assert!(model.vocabulary() > 5);
        for i in 0..model.vocabulary() {
            let term = model.terms.get(i).to_string();
            assert_eq!(model.terms.find(&term), Some(i as u32), "{term}");
            assert!(model.knows(&term));
        }
        for word in ["", "a", "zzz", "showx", "hid"] {
            assert!(!model.knows(word), "{word}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let mut bytes = MAGIC.to_vec();
            bytes.extend(data);
            let _ = Model::from_bytes(&bytes);
        }
    }
}
