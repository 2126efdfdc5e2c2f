//! The dense steps of the fit, on tall row-major `f32` matrices (many rows
//! of about a hundred values): Gram matrices, orthonormal bases and products
//! with a small `f64` matrix. Sums are taken in `f64`.
//!
//! Each runs over the pool in fixed chunks of rows and adds the chunks' sums
//! in chunk order, so a result does not depend on how many threads ran it.
//! Each works in place or with one extra row per thread: the fit's memory is
//! its tall matrices, not copies of them.

use nalgebra::DMatrix;
use rayon::prelude::*;

/// A kernel compiled twice: as is, and with AVX2 for a CPU that has it
/// (chosen at run time). Each output value is still summed in the same
/// order, one multiply and one add at a time (Rust never fuses them), so
/// the two give the same bits: only the number of lanes differs.
macro_rules! with_avx2 {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn portable($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) {
                    portable($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2.
                    return unsafe { avx2($($arg),*) };
                }
            }
            portable($($arg),*)
        }
    };
}
pub(crate) use with_avx2;

with_avx2! {
    /// Add the upper triangle of `rowᵀ row` of each row of `chunk` to `g`.
    fn add_gram(g: &mut [f64], chunk: &[f32], cols: usize) {
        for row in chunk.chunks_exact(cols) {
            for (i, &ri) in row.iter().enumerate() {
                let ri = f64::from(ri);
                for (gij, &rj) in g[i * cols + i..(i + 1) * cols].iter_mut().zip(&row[i..]) {
                    *gij += ri * f64::from(rj);
                }
            }
        }
    }
}

with_avx2! {
    /// `row ← row · s` through `out` (a row of `cols` sums), skipping the
    /// zeros below the diagonal of an `upper` triangular `s`.
    fn times_small_row(out: &mut [f64], row: &mut [f32], s: &[f64], cols: usize, upper: bool) {
        out.iter_mut().for_each(|x| *x = 0.0);
        for (k, &rk) in row.iter().enumerate() {
            let (rk, from) = (f64::from(rk), if upper { k } else { 0 });
            for (o, &skj) in out[from..].iter_mut().zip(&s[k * cols + from..(k + 1) * cols]) {
                *o += rk * skj;
            }
        }
        row.iter_mut().zip(out.iter()).for_each(|(r, &o)| *r = o as f32);
    }
}

with_avx2! {
    /// `o = row · s` through `sum` (a row of `out_cols` sums).
    fn product_row(sum: &mut [f64], o: &mut [f32], row: &[f32], s: &[f64], out_cols: usize) {
        sum.iter_mut().for_each(|x| *x = 0.0);
        for (k, &rk) in row.iter().enumerate() {
            let rk = f64::from(rk);
            for (x, &skj) in sum.iter_mut().zip(&s[k * out_cols..(k + 1) * out_cols]) {
                *x += rk * skj;
            }
        }
        o.iter_mut().zip(sum.iter()).for_each(|(x, &s)| *x = s as f32);
    }
}

/// Rows per chunk of a Gram matrix's partial sums.
const CHUNK_ROWS: usize = 512;

/// `mᵀ m` (cols × cols, row-major) of `m` (rows of `cols` values).
pub(crate) fn gram(m: &[f32], cols: usize) -> Vec<f64> {
    let partials: Vec<Vec<f64>> = m
        .par_chunks(CHUNK_ROWS * cols)
        .map(|chunk| {
            // The upper triangle only; mirrored below.
            let mut g = vec![0.0; cols * cols];
            add_gram(&mut g, chunk, cols);
            g
        })
        .collect();
    let mut g = vec![0.0; cols * cols];
    for partial in partials {
        g.iter_mut().zip(&partial).for_each(|(a, b)| *a += b);
    }
    for i in 0..cols {
        for j in 0..i {
            g[i * cols + j] = g[j * cols + i];
        }
    }
    g
}

/// `m ← m · s` in place, `s` small (cols × cols, row-major) and upper
/// triangular when `upper` (its zeros below the diagonal are skipped).
pub(crate) fn times_small_in_place(m: &mut [f32], s: &[f64], cols: usize, upper: bool) {
    m.par_chunks_mut(cols).for_each_init(|| vec![0f64; cols], |out, row| times_small_row(out, row, s, cols, upper));
}

/// `m · s` with `s` small (cols × out_cols, row-major): a new tall matrix.
pub(crate) fn times_small(m: &[f32], s: &[f64], cols: usize, out_cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; m.len() / cols * out_cols];
    out.par_chunks_mut(out_cols)
        .zip(m.par_chunks(cols))
        .for_each_init(|| vec![0f64; out_cols], |sum, (o, row)| product_row(sum, o, row, s, out_cols));
    out
}

/// Make the columns of `m` (rows × cols, row-major; needs rows ≥ cols) an
/// orthonormal basis of the space they span, in place. Cholesky QR, twice
/// (CholeskyQR2): two small Gram matrices instead of a Householder sweep
/// over the tall matrix. A rank-deficient input falls back to Householder.
pub(crate) fn orthonormalize(m: &mut [f32], cols: usize) {
    let rows = m.len() / cols;
    for _ in 0..2 {
        let g = DMatrix::from_row_slice(cols, cols, &gram(m, cols));
        // gram = L Lᵀ, so m (Lᵀ)⁻¹ has orthonormal columns.
        let Some(inverse) = g.cholesky().and_then(|c| c.l().transpose().try_inverse()) else {
            let wide: Vec<f64> = m.iter().map(|&x| f64::from(x)).collect();
            let q = DMatrix::from_row_slice(rows, cols, &wide).qr().q();
            m.iter_mut().zip(q.transpose().as_slice()).for_each(|(x, &q)| *x = q as f32);
            return;
        };
        let inverse: Vec<f64> = inverse.transpose().as_slice().to_vec(); // row-major
        times_small_in_place(m, &inverse, cols, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tall(rows: usize, cols: usize) -> Vec<f32> {
        let value =
            |i: usize| ((i * 7919 % 1013) as f32 / 1013.0) - 0.5 + if i.is_multiple_of(cols + 1) { 1.0 } else { 0.0 };
        (0..rows * cols).map(value).collect()
    }

    fn matrix(rows: usize, cols: usize, m: &[f32]) -> DMatrix<f64> {
        DMatrix::from_row_slice(rows, cols, &m.iter().map(|&x| f64::from(x)).collect::<Vec<_>>())
    }

    #[test]
    fn gram_and_products_match_nalgebra() {
        let (rows, cols) = (1_300, 9); // more rows than one chunk
        let m = tall(rows, cols);
        let nm = matrix(rows, cols, &m);
        let g = gram(&m, cols);
        let expected = nm.transpose() * &nm;
        for i in 0..cols {
            for j in 0..cols {
                assert!((g[i * cols + j] - expected[(i, j)]).abs() < 1e-9, "gram ({i}, {j})");
            }
        }
        let s: Vec<f64> = (0..cols * 4).map(|i| i as f64 * 0.25 - 3.0).collect();
        let product = times_small(&m, &s, cols, 4);
        let expected = &nm * DMatrix::from_row_slice(cols, 4, &s);
        for r in 0..rows {
            for j in 0..4 {
                let want = expected[(r, j)];
                assert!(
                    (f64::from(product[r * 4 + j]) - want).abs() < 1e-6 * want.abs().max(1.0),
                    "product ({r}, {j})"
                );
            }
        }
    }

    /// The kernels (AVX2 on a CPU that has it) give the bits of plain loops
    /// summing in the same order: a fit does not depend on the CPU it ran on.
    #[test]
    fn kernels_give_the_bits_of_plain_loops() {
        let (rows, cols, out_cols) = (600, 11, 5);
        let m = tall(rows, cols);
        let s: Vec<f64> = (0..cols * cols).map(|i| (i as f64 * 0.37).sin()).collect();
        let g = gram(&m, cols);
        for i in 0..cols {
            for j in i..cols {
                let mut want = 0.0f64;
                for chunk in m.chunks(CHUNK_ROWS * cols) {
                    let mut part = 0.0f64;
                    for row in chunk.chunks_exact(cols) {
                        part += f64::from(row[i]) * f64::from(row[j]);
                    }
                    want += part;
                }
                assert_eq!(g[i * cols + j].to_bits(), want.to_bits(), "gram ({i}, {j})");
            }
        }
        let product = times_small(&m, &s[..cols * out_cols], cols, out_cols);
        let mut in_place = m.clone();
        times_small_in_place(&mut in_place, &s, cols, false);
        for (r, row) in m.chunks_exact(cols).enumerate() {
            for j in 0..out_cols {
                let mut want = 0.0f64;
                for k in 0..cols {
                    want += f64::from(row[k]) * s[k * out_cols + j];
                }
                assert_eq!(product[r * out_cols + j].to_bits(), (want as f32).to_bits(), "product ({r}, {j})");
            }
            for j in 0..cols {
                let mut want = 0.0f64;
                for k in 0..cols {
                    want += f64::from(row[k]) * s[k * cols + j];
                }
                assert_eq!(in_place[r * cols + j].to_bits(), (want as f32).to_bits(), "in place ({r}, {j})");
            }
        }
    }

    #[test]
    fn orthonormalize_gives_orthonormal_columns_spanning_the_same_space() {
        let (rows, cols) = (700, 12);
        let original = tall(rows, cols);
        let mut q = original.clone();
        orthonormalize(&mut q, cols);
        let g = gram(&q, cols);
        for i in 0..cols {
            for j in 0..cols {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((g[i * cols + j] - want).abs() < 1e-5, "QᵀQ ({i}, {j}) = {}", g[i * cols + j]);
            }
        }
        // Each original column is Q Qᵀ of itself.
        let (nq, no) = (matrix(rows, cols, &q), matrix(rows, cols, &original));
        let residual = &no - &nq * (nq.transpose() * &no);
        assert!(residual.norm() < 1e-5 * no.norm(), "residual {}", residual.norm());
        // A rank-deficient matrix (two equal columns) still gives orthonormal columns.
        let mut deficient = original.clone();
        for r in 0..rows {
            deficient[r * cols + 1] = deficient[r * cols];
        }
        orthonormalize(&mut deficient, cols);
        let g = gram(&deficient, cols);
        assert!((0..cols).all(|i| (g[i * cols + i] - 1.0).abs() < 1e-5), "unit columns");
    }
}
