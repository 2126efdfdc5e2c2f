//! One attention head over one sequence, without a general matrix product.
//!
//! Why: a head's products are small (`n × 32` by `32 × n` for a passage of
//! `n` tokens), and `sgemm` spent more time packing them than multiplying:
//! a third of an int8 encoding was the attention's two products. Here `Kᵀ`
//! is laid out once per head and every row's scores and context are summed
//! in registers, the loops compiled for AVX2 and FMA where the CPU has them.
//! Each sum runs in the same order on every CPU, and every multiply-add is
//! fused (`mul_add`: one rounding, in hardware or in libm), so the vectors do
//! not depend on the machine.

use crate::layers::{exp, lane_sum};

/// Set by benches to time the general product this module replaced.
static GENERAL_PRODUCT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Compute every head by the caller's general product (`true`) or here (`false`).
pub(crate) fn use_general_product(on: bool) {
    GENERAL_PRODUCT.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Buffers reused from head to head.
#[derive(Default)]
pub(crate) struct Scratch {
    /// `Kᵀ`: the head's `W` columns of `k`, each `n` long.
    keys: Vec<f32>,
    /// [`ROWS`] rows of scores, then of weights.
    row: Vec<f32>,
}

/// One head of width `width` over one sequence of `n` tokens: for each
/// token `i`, `context[i] = softmax_j(scale · q[i]·k[j]) · v`. Rows of `q`,
/// `k`, `v` and `context` are `stride` apart; the head's columns start at
/// each slice's first element. Returns `false` (nothing written) for a
/// width it has no kernel for, so the caller uses its general product.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attend(
    n: usize,
    width: usize,
    stride: usize,
    scale: f32,
    (q, k, v): (&[f32], &[f32], &[f32]),
    context: &mut [f32],
    scratch: &mut Scratch,
) -> bool {
    if GENERAL_PRODUCT.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    if n == 0 {
        return true;
    }
    let last = (n - 1) * stride + width;
    assert!(q.len() >= last && k.len() >= last && v.len() >= last && context.len() >= last, "rows inside slices");
    let head = Head { n, stride, scale };
    match width {
        32 => run::<32>(head, (q, k, v), context, scratch),
        64 => run::<64>(head, (q, k, v), context, scratch),
        _ => return false,
    }
    true
}

#[derive(Clone, Copy)]
struct Head {
    n: usize,
    stride: usize,
    scale: f32,
}

fn run<const W: usize>(head: Head, qkv: (&[f32], &[f32], &[f32]), context: &mut [f32], scratch: &mut Scratch) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA; the body checks nothing else of it.
        return unsafe { run_avx2::<W>(head, qkv, context, scratch) };
    }
    body::<W>(head, qkv, context, scratch)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<const W: usize>(head: Head, qkv: (&[f32], &[f32], &[f32]), context: &mut [f32], s: &mut Scratch) {
    body::<W>(head, qkv, context, s)
}

/// Query rows whose scores are computed together: each key vector loaded
/// serves all of them.
const ROWS: usize = 4;
/// Keys per step of the scores: one 256-bit vector.
const KEYS: usize = 8;

#[inline(always)]
fn body<const W: usize>(head: Head, (q, k, v): (&[f32], &[f32], &[f32]), context: &mut [f32], s: &mut Scratch) {
    let Head { n, stride, scale } = head;
    // Kᵀ, its rows padded to whole vectors of keys (the padding scores are never read).
    let padded = n.div_ceil(KEYS) * KEYS;
    // Not cleared: the padding columns' scores are never read.
    s.keys.resize(W * padded, 0.0);
    for j in 0..n {
        let key: &[f32; W] = k[j * stride..][..W].try_into().unwrap();
        for (d, &value) in key.iter().enumerate() {
            s.keys[d * padded + j] = value;
        }
    }
    s.row.resize(ROWS * padded, 0.0);
    for first in (0..n).step_by(ROWS) {
        // A last block short of rows repeats its last row, and writes only its own.
        let rows: [usize; ROWS] = std::array::from_fn(|r| (first + r).min(n - 1));
        let queries: [[f32; W]; ROWS] = std::array::from_fn(|r| {
            let row: &[f32; W] = q[rows[r] * stride..][..W].try_into().unwrap();
            row.map(|x| x * scale)
        });
        scores::<W>(&queries, &s.keys, padded, &mut s.row);
        for r in 0..ROWS {
            softmax(&mut s.row[r * padded..][..n]);
        }
        for pair in [0, 2] {
            let weights = (&s.row[pair * padded..][..n], &s.row[(pair + 1) * padded..][..n]);
            let sums = weighted_values::<W>(weights, v, stride);
            for (r, sum) in sums.iter().enumerate() {
                if first + pair + r < n {
                    context[(first + pair + r) * stride..][..W].copy_from_slice(sum);
                }
            }
        }
    }
}

/// `out[r][j] = queries[r] · Kᵀ[·][j]` for [`ROWS`] rows, [`KEYS`] keys at
/// a time, the sums in registers and each over `d` in order.
#[inline(always)]
fn scores<const W: usize>(queries: &[[f32; W]; ROWS], keys: &[f32], padded: usize, out: &mut [f32]) {
    for j in (0..padded).step_by(KEYS) {
        let mut sums = [[0f32; KEYS]; ROWS];
        for d in 0..W {
            let key: &[f32; KEYS] = keys[d * padded + j..][..KEYS].try_into().unwrap();
            for (sum, query) in sums.iter_mut().zip(queries) {
                for (s, &x) in sum.iter_mut().zip(key) {
                    *s = query[d].mul_add(x, *s);
                }
            }
        }
        for (r, sum) in sums.iter().enumerate() {
            out[r * padded + j..][..KEYS].copy_from_slice(sum);
        }
    }
}

/// Two rows' weighted sums of the value rows, each value row loaded once
/// for both, the sums in registers and each over `j` in order.
#[inline(always)]
fn weighted_values<const W: usize>(weights: (&[f32], &[f32]), v: &[f32], stride: usize) -> [[f32; W]; 2] {
    let mut sums = [[0f32; W]; 2];
    for (j, (&a, &b)) in weights.0.iter().zip(weights.1).enumerate() {
        let value: &[f32; W] = v[j * stride..][..W].try_into().unwrap();
        for d in 0..W {
            sums[0][d] = a.mul_add(value[d], sums[0][d]);
            sums[1][d] = b.mul_add(value[d], sums[1][d]);
        }
    }
    sums
}

/// Lanes of the partial maxima: wide enough to fill a vector.
const LANES: usize = 16;

/// Softmax in place. The maximum is taken over [`LANES`] interleaved
/// partials and the sum by [`lane_sum`], each then combined in lane order,
/// so they vectorise and are the same on every CPU.
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let mut max = [f32::NEG_INFINITY; LANES];
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (m, &x) in max.iter_mut().zip(chunk) {
            *m = m.max(x);
        }
    }
    let mut top = chunks.remainder().iter().copied().fold(f32::NEG_INFINITY, f32::max);
    top = max.iter().copied().fold(top, f32::max);
    for x in row.iter_mut() {
        *x = exp(*x - top);
    }
    let inv = 1.0 / lane_sum(row, |x| x);
    for x in row.iter_mut() {
        *x *= inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same head computed the plain way, in `f64`.
    fn reference(n: usize, width: usize, stride: usize, scale: f32, q: &[f32], k: &[f32], v: &[f32]) -> Vec<f64> {
        let mut out = vec![0f64; n * width];
        for i in 0..n {
            let scores: Vec<f64> = (0..n)
                .map(|j| (0..width).map(|d| q[i * stride + d] as f64 * k[j * stride + d] as f64).sum::<f64>())
                .map(|s| s * scale as f64)
                .collect();
            let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - top).exp()).collect();
            let total: f64 = e.iter().sum();
            for d in 0..width {
                out[i * width + d] = (0..n).map(|j| e[j] / total * v[j * stride + d] as f64).sum();
            }
        }
        out
    }

    #[test]
    fn a_head_matches_the_plain_computation_and_the_kernels_agree() {
        // Lengths below, at and past the lanes, and widths with a kernel; a
        // stride wider than the head, as in a layer's 12 heads side by side.
        for (n, width, stride) in [(1, 32, 32), (7, 32, 96), (16, 32, 384), (45, 64, 128), (128, 32, 384)] {
            let len = (n - 1) * stride + width;
            let (q, k, v) = (
                crate::pseudo_values(len, 1, 2.0),
                crate::pseudo_values(len, 2, 2.0),
                crate::pseudo_values(len, 3, 2.0),
            );
            let scale = 1.0 / (width as f32).sqrt();
            let mut context = vec![7f32; len];
            assert!(attend(n, width, stride, scale, (&q, &k, &v), &mut context, &mut Scratch::default()));
            let want = reference(n, width, stride, scale, &q, &k, &v);
            for i in 0..n {
                for d in 0..width {
                    let (got, want) = (context[i * stride + d] as f64, want[i * width + d]);
                    assert!((got - want).abs() < 1e-5, "n {n} width {width} at ({i},{d}): {got} against {want}");
                }
                if stride > width && i + 1 < n {
                    assert_eq!(context[i * stride + width], 7.0, "a column past the head is left alone");
                }
            }
            let mut plain = vec![7f32; len];
            match width {
                32 => body::<32>(Head { n, stride, scale }, (&q, &k, &v), &mut plain, &mut Scratch::default()),
                _ => body::<64>(Head { n, stride, scale }, (&q, &k, &v), &mut plain, &mut Scratch::default()),
            }
            assert_eq!(context, plain, "n {n} width {width}: the AVX2 build and the plain one give the same bits");
        }
        let mut out = vec![0f32; 48];
        assert!(!attend(2, 24, 24, 1.0, (&out.clone(), &out.clone(), &out.clone()), &mut out, &mut Scratch::default()));
    }
}
