//! Dot products of embedding vectors: the one hot loop every search runs.

/// Dot product of two unit vectors (their cosine). A question is compared
/// with every passage of an index, so this runs with AVX2 when the CPU has
/// it: the same sums in the same order, on wider registers.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        /// [`dot`], compiled for AVX2.
        #[target_feature(enable = "avx2")]
        fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
            dot(a, b)
        }
        // SAFETY: the CPU was seen to support AVX2.
        return unsafe { dot_avx2(a, b) };
    }
    dot(a, b)
}

/// Dot product, with eight running sums so that the loop vectorises: a query
/// is compared with every unit of an index, and the plain streamed product
/// is made of these.
#[inline(always)]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut sums = [0f32; LANES];
    let (a_whole, b_whole) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_whole.remainder().iter().zip(b_whole.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_whole.zip(b_whole) {
        for l in 0..LANES {
            sums[l] += x[l] * y[l];
        }
    }
    sums.iter().sum::<f32>() + tail
}
