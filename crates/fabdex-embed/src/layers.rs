//! The few pieces a BERT encoder is made of, on plain `f32` slices: weights
//! read out of a safetensors file, a linear layer (one `sgemm`), layer norm,
//! GELU and softmax. Activations are row-major `rows × width` matrices, one
//! row per token.

use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};

use crate::error::EmbedError;
use crate::int8::QuantLinear;

/// The tensors of a `model.safetensors` file, looked up by name.
pub(crate) struct Weights<'a> {
    tensors: SafeTensors<'a>,
    /// `bert.` for a full BertModel checkpoint; sentence-transformers saves bare names.
    prefix: &'static str,
    path: PathBuf,
}

impl<'a> Weights<'a> {
    pub(crate) fn parse(bytes: &'a [u8], path: &Path) -> Result<Self, EmbedError> {
        let tensors = SafeTensors::deserialize(bytes).map_err(|e| EmbedError::Model {
            path: path.to_path_buf(),
            message: format!("is not a safetensors file: {e}"),
        })?;
        let bare = tensors.names().contains(&"embeddings.word_embeddings.weight");
        Ok(Weights { tensors, prefix: if bare { "" } else { "bert." }, path: path.to_path_buf() })
    }

    fn mismatch(&self, message: String) -> EmbedError {
        EmbedError::Model {
            path: self.path.clone(),
            message: format!("does not hold the weights config.json describes: {message}"),
        }
    }

    /// The tensor `name` as `f32`s, which must have `shape`.
    fn tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let full = format!("{}{name}", self.prefix);
        let view = self.tensors.tensor(&full).map_err(|_| self.mismatch(format!("no tensor `{full}`")))?;
        if view.shape() != shape {
            return Err(self.mismatch(format!("tensor `{full}` has shape {:?}, expected {shape:?}", view.shape())));
        }
        let data = view.data();
        let values = match view.dtype() {
            Dtype::F32 => data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => data.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            Dtype::BF16 => data.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            other => {
                return Err(self.mismatch(format!("tensor `{full}` is {other:?}; only F32, F16 and BF16 are read")));
            }
        };
        Ok(values)
    }

    /// A `rows × width` table (embeddings).
    pub(crate) fn matrix(&self, name: &str, rows: usize, width: usize) -> Result<Vec<f32>, EmbedError> {
        self.tensor(name, &[rows, width])
    }

    pub(crate) fn linear(&self, name: &str, inputs: usize, outputs: usize) -> Result<Linear, EmbedError> {
        Ok(Linear {
            weight: self.tensor(&format!("{name}.weight"), &[outputs, inputs])?,
            bias: self.tensor(&format!("{name}.bias"), &[outputs])?,
            inputs,
            outputs,
            int8: None,
        })
    }

    pub(crate) fn layer_norm(&self, name: &str, width: usize, eps: f32) -> Result<LayerNorm, EmbedError> {
        Ok(LayerNorm {
            gain: self.tensor(&format!("{name}.weight"), &[width])?,
            bias: self.tensor(&format!("{name}.bias"), &[width])?,
            eps,
        })
    }
}

/// `y = x Wᵀ + b`, with `W` stored as PyTorch does, `outputs × inputs`.
pub(crate) struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
    /// The int8 copy that runs instead, once [`Linear::set_int8`] made one.
    int8: Option<QuantLinear>,
}

impl Linear {
    /// Run in int8 (`true`) or `f32` from now on.
    pub(crate) fn set_int8(&mut self, on: bool) {
        self.int8 = on.then(|| QuantLinear::new(&self.weight, &self.bias, self.inputs, self.outputs));
    }

    /// `x` is `rows × inputs`; `out` becomes `rows × outputs`.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, out: &mut Vec<f32>) {
        if let Some(q) = &self.int8 {
            return q.forward(x, rows, out);
        }
        assert_eq!(x.len(), rows * self.inputs, "input is rows × inputs");
        out.clear();
        for _ in 0..rows {
            out.extend_from_slice(&self.bias);
        }
        if rows <= STREAM_ROWS {
            return stream_product(x, rows, &self.weight, self.inputs, self.outputs, out);
        }
        // Wᵀ is read in place through its strides: element (i, j) of Wᵀ is W[j][i].
        gemm(
            rows,
            self.inputs,
            self.outputs,
            1.0,
            (x, self.inputs, 1),
            (&self.weight, 1, self.inputs),
            (out, self.outputs),
            1.0,
        );
    }
}

/// Up to this many rows (tokens), `x Wᵀ` streams over the weights, reading
/// each row of `W` once for all rows of `x`. A blocked sgemm would copy
/// ("pack") the whole weight matrix for a handful of rows, which is most of
/// the cost of encoding a short question.
const STREAM_ROWS: usize = 32;

/// Outputs (rows of `W`) per parallel task of [`stream_product`].
const STREAM_BLOCK: usize = 64;

/// `out += x Wᵀ` for a few rows of `x`. Blocks of `W`'s rows are shared out
/// over the rayon pool (a question is one short sequence, so this is the
/// only parallelism it has), each computed with AVX2 and FMA when the CPU
/// has them.
fn stream_product(x: &[f32], rows: usize, w: &[f32], inputs: usize, outputs: usize, out: &mut [f32]) {
    use rayon::prelude::*;
    assert!(x.len() >= rows * inputs && w.len() >= outputs * inputs && out.len() >= rows * outputs);
    #[cfg(target_arch = "x86_64")]
    let fast = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    // `W xᵀ`: output-major, so that each block writes one contiguous piece.
    let mut product = vec![0f32; outputs * rows];
    product.par_chunks_mut(STREAM_BLOCK * rows).enumerate().for_each(|(b, block)| {
        let n = block.len() / rows;
        let w = &w[b * STREAM_BLOCK * inputs..][..n * inputs];
        #[cfg(target_arch = "x86_64")]
        if fast {
            // SAFETY: the CPU was seen to support both features, and the
            // lengths hold by construction.
            return unsafe { avx2::weights_times_rows(x, rows, w, inputs, n, block) };
        }
        for (o, wr) in w.chunks_exact(inputs).enumerate() {
            for (m, xr) in x.chunks_exact(inputs).enumerate().take(rows) {
                block[o * rows + m] = crate::vector::dot(xr, wr);
            }
        }
    });
    for (m, row) in out.chunks_exact_mut(outputs).enumerate().take(rows) {
        for (o, v) in row.iter_mut().enumerate() {
            *v += product[o * rows + m];
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Sum of the eight lanes.
    #[target_feature(enable = "avx2,fma")]
    fn lanes_sum(v: __m256) -> f32 {
        let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
        _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)))
    }

    /// The dot products of `O` consecutive rows of `w` with `R` consecutive
    /// rows of `x` over their first `whole` (a multiple of 8) columns. Each
    /// of the `O × R` sums has its own register, so the fused multiply-adds
    /// do not wait on each other.
    ///
    /// # Safety
    /// AVX2 and FMA are supported, and `O` rows of `w` and `R` rows of `x`,
    /// `inputs` apart, each have at least `whole` values.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    // Indices, not iterators: `acc` is read across both of its dimensions.
    #[allow(clippy::needless_range_loop)]
    unsafe fn block<const O: usize, const R: usize>(
        w: *const f32,
        x: *const f32,
        inputs: usize,
        whole: usize,
    ) -> [[f32; R]; O] {
        let mut acc = [[_mm256_setzero_ps(); R]; O];
        let mut c = 0;
        while c < whole {
            // SAFETY: c + 8 <= whole for every row read (the caller's promise).
            unsafe {
                let mut wv = [_mm256_setzero_ps(); O];
                for (o, v) in wv.iter_mut().enumerate() {
                    *v = _mm256_loadu_ps(w.add(o * inputs + c));
                }
                for r in 0..R {
                    let xv = _mm256_loadu_ps(x.add(r * inputs + c));
                    for o in 0..O {
                        acc[o][r] = _mm256_fmadd_ps(xv, wv[o], acc[o][r]);
                    }
                }
            }
            c += 8;
        }
        let mut sums = [[0f32; R]; O];
        for o in 0..O {
            for r in 0..R {
                sums[o][r] = lanes_sum(acc[o][r]);
            }
        }
        sums
    }

    /// `out = W xᵀ` (`outputs × rows`), in blocks of two rows of `W` by
    /// four rows of `x` (six loads feed eight fused multiply-adds).
    ///
    /// # Safety
    /// The CPU supports AVX2 and FMA; `x` holds `rows × inputs`, `w`
    /// `outputs × inputs` and `out` `outputs × rows` values.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn weights_times_rows(
        x: &[f32],
        rows: usize,
        w: &[f32],
        inputs: usize,
        outputs: usize,
        out: &mut [f32],
    ) {
        let whole = inputs / 8 * 8;
        // The columns past the last whole eight, for one (output, row) pair.
        let tail = |o: usize, m: usize| -> f32 { (whole..inputs).map(|i| x[m * inputs + i] * w[o * inputs + i]).sum() };
        let mut put = |o: usize, m: usize, sums: &[f32]| {
            for (r, v) in sums.iter().enumerate() {
                out[o * rows + m + r] = v + tail(o, m + r);
            }
        };
        let (xp, wp) = (x.as_ptr(), w.as_ptr());
        let mut o = 0;
        while o < outputs {
            let pair = o + 2 <= outputs;
            let mut m = 0;
            while m < rows {
                let four = m + 4 <= rows;
                // SAFETY: rows o..o + 2 (or + 1) of w and m..m + 4 (or + 1)
                // of x exist, each `inputs >= whole` long.
                unsafe {
                    let (wr, xr) = (wp.add(o * inputs), xp.add(m * inputs));
                    match (pair, four) {
                        (true, true) => {
                            let s = block::<2, 4>(wr, xr, inputs, whole);
                            put(o, m, &s[0]);
                            put(o + 1, m, &s[1]);
                        }
                        (true, false) => {
                            let s = block::<2, 1>(wr, xr, inputs, whole);
                            put(o, m, &s[0]);
                            put(o + 1, m, &s[1]);
                        }
                        (false, true) => put(o, m, &block::<1, 4>(wr, xr, inputs, whole)[0]),
                        (false, false) => put(o, m, &block::<1, 1>(wr, xr, inputs, whole)[0]),
                    }
                }
                m += if four { 4 } else { 1 };
            }
            o += if pair { 2 } else { 1 };
        }
    }
}

/// Per-row normalisation to zero mean and unit variance, then gain and bias.
pub(crate) struct LayerNorm {
    gain: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    #[inline(always)]
    pub(crate) fn apply(&self, x: &mut [f32]) {
        let width = self.gain.len();
        for row in x.chunks_exact_mut(width) {
            let mean = lane_sum(row, |v| v) / width as f32;
            let var = lane_sum(row, |v| (v - mean) * (v - mean)) / width as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gain).zip(&self.bias) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

/// Lanes of [`lane_sum`]'s partial sums: a 512-bit vector's worth.
const SUM_LANES: usize = 16;

/// `Σ f(v)` over `row`, summed in [`SUM_LANES`] interleaved partials and
/// then in lane order: the loop vectorises (a plain sum is one chain of
/// dependent adds), and the order, so the result, is the same on every CPU.
#[inline(always)]
pub(crate) fn lane_sum(row: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut partial = [0f32; SUM_LANES];
    let mut chunks = row.chunks_exact(SUM_LANES);
    for chunk in &mut chunks {
        for (p, &v) in partial.iter_mut().zip(chunk) {
            *p += f(v);
        }
    }
    partial.iter().sum::<f32>() + chunks.remainder().iter().map(|&v| f(v)).sum::<f32>()
}

/// The exact (erf) GELU BERT was trained with, in place.
#[inline(always)]
pub(crate) fn gelu(x: &mut [f32]) {
    for v in x {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// erf in single precision, as a rational function of x² (the fit Eigen and
/// XLA use for GELU). It is within 5·10⁻⁷ of libm's `erff` (a few units in
/// the last place), and with no branch or call the loop over a layer's
/// activations vectorises: libm's `erff` was a sixth of encoding a question.
#[inline(always)]
fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_600_1e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [-1.456_607_2e-5, -2.133_740_6e-4, -1.682_827e-3, -7.373_329_3e-3, -1.426_474e-2];
    // Past ±4, erf is ±1 to single precision (and ±∞ must not make ∞/∞).
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ALPHA[1..].iter().fold(ALPHA[0], |p, a| p * x2 + a) * x;
    let q = BETA[1..].iter().fold(BETA[0], |q, b| q * x2 + b);
    p / q
}

/// Softmax of each `width`-long row, in place.
pub(crate) fn softmax_rows(x: &mut [f32], width: usize) {
    for row in x.chunks_exact_mut(width) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for v in row.iter_mut() {
            *v = exp(*v - max);
        }
        let inv = 1.0 / row.iter().sum::<f32>();
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

/// eˣ in single precision without a call, so the softmax loop vectorises
/// (libm's `expf` was a twelfth of encoding a passage): x = n·ln 2 + r with
/// |r| ≤ ln 2 / 2, eʳ by its degree-6 Taylor polynomial (within 4·10⁻⁷
/// relative), and 2ⁿ put straight into the exponent bits.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    // 1.5 · 2²³: adding it rounds to an integer, which lands in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0].iter().fold(1.0 / 720.0, |p, c| p * r + c);
    let whole = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    p * f32::from_bits(((whole + 127) << 23) as u32)
}

/// `C = alpha · A B + beta · C` for an `m × k` matrix `A` and a `k × n`
/// matrix `B`, each given as (slice, row stride, column stride), and `C` as
/// (slice, row stride) with unit column stride.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm(
    m: usize,
    k: usize,
    n: usize,
    alpha: f32,
    a: (&[f32], usize, usize),
    b: (&[f32], usize, usize),
    c: (&mut [f32], usize),
    beta: f32,
) {
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| {
        if rows == 0 || cols == 0 { 0 } else { (rows - 1) * rs + (cols - 1) * cs + 1 }
    };
    // The bounds sgemm relies on, checked once here rather than trusted.
    assert!(a.0.len() >= last(m, k, a.1, a.2), "A is inside its slice");
    assert!(b.0.len() >= last(k, n, b.1, b.2), "B is inside its slice");
    assert!(c.0.len() >= last(m, n, c.1, 1), "C is inside its slice");
    assert!(c.1 >= n || m <= 1, "rows of C do not overlap");
    // SAFETY: the assertions above keep every element sgemm reads or writes
    // inside the three slices, and C (borrowed mutably) cannot alias A or B.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            alpha,
            a.0.as_ptr(),
            a.1 as isize,
            a.2 as isize,
            b.0.as_ptr(),
            b.1 as isize,
            b.2 as isize,
            beta,
            c.0.as_mut_ptr(),
            c.1 as isize,
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn exp_is_within_a_few_ulps_of_libms() {
        let mut worst = 0f32;
        for i in -870_000..=880_000 {
            let x = i as f32 / 10_000.0;
            let want = x.exp();
            worst = worst.max((super::exp(x) - want).abs() / want);
        }
        assert!(worst < 1e-6, "exp strays {worst} (relative) from libm's");
        assert_eq!(super::exp(0.0), 1.0);
        assert!(super::exp(f32::NEG_INFINITY) < 1e-37);
    }

    #[test]
    fn erf_is_libms_to_single_precision() {
        let mut worst = 0f32;
        for i in -60_000..=60_000 {
            let x = i as f32 / 10_000.0;
            worst = worst.max((super::erf(x) - libm::erff(x)).abs());
        }
        assert!(worst < 6e-7, "erf strays {worst} from libm's");
        // Clamped, not a NaN from ∞/∞.
        assert!((super::erf(f32::INFINITY) - 1.0).abs() < 2e-7);
        assert!((super::erf(f32::NEG_INFINITY) + 1.0).abs() < 2e-7);
    }
}
