//! Linear layers in 8-bit integers: `y = x Wᵀ + b` with `W` quantized once
//! per output row and `x` quantized per token row as it arrives, the
//! products summed exactly in `i32`, then scaled back to `f32`.
//!
//! Why: a linear layer is nine tenths of encoding a passage, and an 8-bit
//! multiply-add does four times the work of an `f32` one per instruction
//! (AVX-512 VNNI's `vpdpbusd`: 64 byte products into 16 sums). Symmetric
//! quantization (`q = round(v / s)`, `s = max|v| / 127`) keeps each row's
//! scale, so a token whose values are small is not flattened by another's.
//!
//! `vpdpbusd` multiplies unsigned by signed bytes, so `x` is stored as
//! `q + 128` and `128 · Σ w` is taken off each sum. The integer sums are the
//! same on every CPU: the portable loop below gives bit-identical vectors
//! where VNNI is missing, only slower.

/// Outputs per packed group: one 512-bit register of `i32` sums.
const GROUP: usize = 16;
/// Token rows per cache block: their bytes stay in L1/L2 while every
/// weight group passes over them.
const ROW_BLOCK: usize = 32;

/// An int8 copy of a linear layer.
pub(crate) struct QuantLinear {
    inputs: usize,
    outputs: usize,
    /// `inputs` rounded up to a multiple of 4 (one `vpdpbusd` lane).
    width: usize,
    /// Per group of [`GROUP`] outputs, per 4 inputs: 16 outputs × 4 bytes.
    /// Padding outputs and inputs are zero.
    packed: Vec<i8>,
    /// Per output, padded to whole groups: how sums become outputs.
    back: Dequant,
}

/// `y = (sum − 128 · Σw) · (x scale · w scale) + b`, per output; padded
/// outputs have zeros.
struct Dequant {
    /// `128 · Σ q` of each weight row: what the `+ 128` of `x` added.
    shift: Vec<i32>,
    scales: Vec<f32>,
    bias: Vec<f32>,
}

/// A row's scale: `max |v| / 127` (1 for a row of zeros).
fn row_scale(row: &[f32]) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max > 0.0 { max / 127.0 } else { 1.0 }
}

/// `round(v / scale)` to nearest, ties to even, as the VNNI path's
/// `vcvtps2dq` rounds: the two paths give the same bytes.
fn quantize(v: f32, inv: f32) -> i32 {
    (v * inv).round_ties_even().clamp(-127.0, 127.0) as i32
}

impl QuantLinear {
    /// `weight` is `outputs × inputs`, as PyTorch stores it.
    pub(crate) fn new(weight: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> QuantLinear {
        assert_eq!(weight.len(), inputs * outputs, "weight is outputs × inputs");
        let width = inputs.div_ceil(4) * 4;
        let groups = outputs.div_ceil(GROUP);
        let mut packed = vec![0i8; groups * width * GROUP];
        let mut scales = vec![0f32; groups * GROUP];
        let mut sums = vec![0i32; groups * GROUP];
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            scales[o] = row_scale(row);
            let inv = 1.0 / scales[o];
            let (g, lane) = (o / GROUP, o % GROUP);
            for (i, &v) in row.iter().enumerate() {
                let q = quantize(v, inv);
                packed[g * width * GROUP + (i / 4) * GROUP * 4 + lane * 4 + i % 4] = q as i8;
                sums[o] += q;
            }
        }
        let mut padded_bias = bias.to_vec();
        padded_bias.resize(groups * GROUP, 0.0);
        let back = Dequant { shift: sums.iter().map(|s| 128 * s).collect(), scales, bias: padded_bias };
        QuantLinear { inputs, outputs, width, packed, back }
    }

    /// `x` is `rows × inputs`; `out` becomes `rows × outputs`.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, out: &mut Vec<f32>) {
        assert_eq!(x.len(), rows * self.inputs, "input is rows × inputs");
        let (xq, x_scales) = self.quantize_rows(x, rows);
        let groups = self.outputs.div_ceil(GROUP);
        let padded = groups * GROUP;
        // Every element is written below, so a buffer of the right length
        // (the same layer shape again) is not cleared first.
        out.resize(rows * padded, 0.0);
        let shape = Shape { rows, width: self.width, groups };
        products(&xq, &x_scales, &self.packed, &self.back, shape, out);
        if padded != self.outputs {
            for m in 0..rows {
                out.copy_within(m * padded..m * padded + self.outputs, m * self.outputs);
            }
            out.truncate(rows * self.outputs);
        }
    }
}

impl QuantLinear {
    /// Each row of `x` as `q + 128` bytes, `width` apart (padding is 128,
    /// a zero), and each row's scale.
    fn quantize_rows(&self, x: &[f32], rows: usize) -> (Vec<u8>, Vec<f32>) {
        let mut xq = vec![128u8; rows * self.width];
        let mut scales = Vec::with_capacity(rows);
        for (row, q) in x.chunks_exact(self.inputs).zip(xq.chunks_exact_mut(self.width)) {
            let scale = row_scale(row);
            scales.push(scale);
            let mut done = 0;
            #[cfg(target_arch = "x86_64")]
            if kernel() == Int8Kernel::Vnni {
                // SAFETY: the CPU has AVX-512F; `q` is at least as long as `row`.
                done = unsafe { vnni::quantize_shifted(row, 1.0 / scale, q) };
            }
            for (slot, &v) in q[done..].iter_mut().zip(&row[done..]) {
                *slot = (quantize(v, 1.0 / scale) + 128) as u8;
            }
        }
        (xq, scales)
    }
}

/// The shape of one product: token rows, bytes per row, output groups.
#[derive(Clone, Copy)]
struct Shape {
    rows: usize,
    width: usize,
    groups: usize,
}

/// `out[m][o] = (Σ_i xq[m][i] · w[o][i] − shift[o]) · (x_scales[m] · scales[o]) + bias[o]`
/// (u8 × i8 summed in i32) for every row and padded output, with VNNI when
/// the CPU has it. `out` is `rows × groups · 16`.
fn products(xq: &[u8], x_scales: &[f32], packed: &[i8], back: &Dequant, at: Shape, out: &mut [f32]) {
    let Shape { rows, width, groups } = at;
    assert!(xq.len() >= rows * width && x_scales.len() >= rows && packed.len() >= groups * width * GROUP);
    assert!(
        back.shift.len() >= groups * GROUP && back.scales.len() >= groups * GROUP && back.bias.len() >= groups * GROUP
    );
    assert!(out.len() >= rows * groups * GROUP);
    match kernel() {
        // SAFETY: the CPU has the features, and the lengths were checked above.
        #[cfg(target_arch = "x86_64")]
        Int8Kernel::Vnni => unsafe { vnni::products(xq, x_scales, packed, back, at, out) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Int8Kernel::Avx2 => unsafe { avx2::products(xq, x_scales, packed, back, at, out) },
        _ => portable_products(xq, x_scales, packed, back, at, out),
    }
}

/// Which loop sums the int8 products. Every kernel gives the same sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int8Kernel {
    /// AVX-512 VNNI: 64 byte products per instruction.
    Vnni,
    /// AVX2: 32 byte products per four instructions.
    Avx2,
    /// Plain Rust, for any CPU.
    Portable,
}

impl Int8Kernel {
    pub fn as_str(self) -> &'static str {
        match self {
            Int8Kernel::Vnni => "AVX-512 VNNI",
            Int8Kernel::Avx2 => "AVX2",
            Int8Kernel::Portable => "the portable loop",
        }
    }
}

/// The fastest kernel benches allow (0: any, 1: AVX2 at most, 2: portable),
/// so that one CPU can time every kernel.
static KERNEL_CAP: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Use no kernel faster than `cap` from now on (`None`: the fastest this CPU has).
pub(crate) fn cap_kernel(cap: Option<Int8Kernel>) {
    let level = match cap {
        None | Some(Int8Kernel::Vnni) => 0,
        Some(Int8Kernel::Avx2) => 1,
        Some(Int8Kernel::Portable) => 2,
    };
    KERNEL_CAP.store(level, std::sync::atomic::Ordering::Relaxed);
}

/// The kernel int8 products run on now.
pub(crate) fn kernel() -> Int8Kernel {
    let cap = KERNEL_CAP.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(target_arch = "x86_64")]
    {
        if cap == 0
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
        {
            return Int8Kernel::Vnni;
        }
        if cap <= 1 && std::is_x86_feature_detected!("avx2") {
            return Int8Kernel::Avx2;
        }
    }
    let _ = cap;
    Int8Kernel::Portable
}

fn portable_products(xq: &[u8], x_scales: &[f32], packed: &[i8], back: &Dequant, at: Shape, out: &mut [f32]) {
    let Shape { rows, width, groups } = at;
    for m in 0..rows {
        let x = &xq[m * width..][..width];
        for g in 0..groups {
            let w = &packed[g * width * GROUP..][..width * GROUP];
            let mut sums = [0i32; GROUP];
            for (k, xs) in x.chunks_exact(4).enumerate() {
                let wk = &w[k * GROUP * 4..][..GROUP * 4];
                for (lane, sum) in sums.iter_mut().enumerate() {
                    let ws = &wk[lane * 4..][..4];
                    *sum += xs.iter().zip(ws).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum::<i32>();
                }
            }
            for (lane, sum) in sums.into_iter().enumerate() {
                let o = g * GROUP + lane;
                let scale = x_scales[m] * back.scales[o];
                out[m * groups * GROUP + o] = (sum - back.shift[o]) as f32 * scale + back.bias[o];
            }
        }
    }
}

/// The order both SIMD kernels step through a product: blocks of
/// [`ROW_BLOCK`] rows (so a block's token bytes stay in cache while every
/// group's weights pass), and within one, each run of `wide` groups
/// against the rows four at a time. `block(m, g, four_rows, whole)` sums
/// rows `m..m + 4` (or row `m` alone) against groups `g..g + wide`, or, when
/// fewer than `wide` are left (`whole` false), against groups `g..`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blocks(at: Shape, wide: usize, mut block: impl FnMut(usize, usize, bool, bool)) {
    let Shape { rows, groups, .. } = at;
    for start in (0..rows).step_by(ROW_BLOCK) {
        let end = (start + ROW_BLOCK).min(rows);
        let mut g = 0;
        while g < groups {
            let whole = g + wide <= groups;
            let mut m = start;
            while m < end {
                let four_rows = m + 4 <= end;
                block(m, g, four_rows, whole);
                m += if four_rows { 4 } else { 1 };
            }
            g += if whole { wide } else { groups - g };
        }
    }
}

/// The same sums with AVX2 alone. `vpmaddubsw` multiplies unsigned by
/// signed bytes into saturating `i16` pairs, which `x + 128` (up to 255)
/// times a weight (up to 127) would overflow; so each step takes `|q|` of
/// the token's byte and moves its sign onto the weight (`vpsignb`): a pair
/// is then at most 2 · 127 · 127 = 32,258, exact, and `vpmaddwd` by ones
/// sums the pairs into `i32`. That gives `Σ q·w` itself, which is the VNNI
/// path's `sum − shift`, so no shift is taken off.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{Dequant, GROUP, Shape};

    /// `R` rows by one group of 16 outputs (two registers of 8 sums each).
    ///
    /// # Safety
    /// AVX2 is present; rows `m..m + R` and group `g` exist in every slice.
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(clippy::needless_range_loop)]
    unsafe fn block<const R: usize>(
        (xq, x_scales, packed): (*const u8, *const f32, *const i8),
        back: &Dequant,
        out: *mut f32,
        (m, g, width, groups): (usize, usize, usize, usize),
    ) {
        let ones = _mm256_set1_epi16(1);
        let flip = _mm256_set1_epi8(-128);
        let mut sums = [[_mm256_setzero_si256(); 2]; R];
        for k in 0..width / 4 {
            // SAFETY: k·4 + 4 <= width for every row, and the group is whole.
            unsafe {
                let w0 = _mm256_loadu_si256(packed.add(g * width * GROUP + k * GROUP * 4).cast());
                let w1 = _mm256_loadu_si256(packed.add(g * width * GROUP + k * GROUP * 4 + 32).cast());
                for r in 0..R {
                    let four = (xq.add((m + r) * width + k * 4) as *const i32).read_unaligned();
                    // x + 128 with its top bit flipped is q as a signed byte.
                    let q = _mm256_xor_si256(_mm256_set1_epi32(four), flip);
                    let magnitude = _mm256_abs_epi8(q);
                    let p0 = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w0, q));
                    let p1 = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w1, q));
                    sums[r][0] = _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(p0, ones));
                    sums[r][1] = _mm256_add_epi32(sums[r][1], _mm256_madd_epi16(p1, ones));
                }
            }
        }
        let o = g * GROUP;
        for h in 0..2 {
            // SAFETY: group g is inside the padded per-output vectors and out's rows.
            unsafe {
                let w_scale = _mm256_loadu_ps(back.scales.as_ptr().add(o + 8 * h));
                let bias = _mm256_loadu_ps(back.bias.as_ptr().add(o + 8 * h));
                for r in 0..R {
                    // Multiply, then add (no fused multiply-add): the portable path's rounding.
                    let scale = _mm256_mul_ps(_mm256_set1_ps(*x_scales.add(m + r)), w_scale);
                    let exact = _mm256_cvtepi32_ps(sums[r][h]);
                    let y = _mm256_add_ps(_mm256_mul_ps(exact, scale), bias);
                    _mm256_storeu_ps(out.add((m + r) * groups * GROUP + o + 8 * h), y);
                }
            }
        }
    }

    /// # Safety
    /// As [`super::products`] checked: the CPU has AVX2 and the slices are long enough.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn products(
        xq: &[u8],
        x_scales: &[f32],
        packed: &[i8],
        back: &Dequant,
        at: Shape,
        out: &mut [f32],
    ) {
        let Shape { width, groups, .. } = at;
        let inputs = (xq.as_ptr(), x_scales.as_ptr(), packed.as_ptr());
        let y = out.as_mut_ptr();
        super::blocks(at, 1, |m, g, four_rows, _| {
            // SAFETY: rows m.. and group g exist as the flag says.
            unsafe {
                if four_rows {
                    block::<4>(inputs, back, y, (m, g, width, groups))
                } else {
                    block::<1>(inputs, back, y, (m, g, width, groups))
                }
            }
        });
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    use super::{Dequant, GROUP, Shape};

    /// `R` rows by `G` groups of 16 outputs: `R × G` registers of sums, each
    /// step broadcasting 4 bytes of a row against 64 bytes of a group; then
    /// each register is scaled back to `f32` and stored.
    ///
    /// # Safety
    /// AVX-512F/BW/VNNI are present; rows `m..m + R` and groups `g..g + G`
    /// exist in every slice, as [`super::products`] checked.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    #[allow(clippy::needless_range_loop)]
    unsafe fn block<const R: usize, const G: usize>(
        (xq, x_scales, packed): (*const u8, *const f32, *const i8),
        back: &Dequant,
        out: *mut f32,
        (m, g, width, groups): (usize, usize, usize, usize),
    ) {
        let mut sums = [[_mm512_setzero_si512(); G]; R];
        for k in 0..width / 4 {
            // SAFETY: k·4 + 4 <= width for every row, and the groups are whole.
            unsafe {
                let mut w = [_mm512_setzero_si512(); G];
                for j in 0..G {
                    w[j] = _mm512_loadu_si512(packed.add((g + j) * width * GROUP + k * GROUP * 4).cast());
                }
                for r in 0..R {
                    let four = (xq.add((m + r) * width + k * 4) as *const i32).read_unaligned();
                    let x = _mm512_set1_epi32(four);
                    for j in 0..G {
                        sums[r][j] = _mm512_dpbusd_epi32(sums[r][j], x, w[j]);
                    }
                }
            }
        }
        for j in 0..G {
            let o = (g + j) * GROUP;
            // SAFETY: group g + j is inside the padded per-output vectors and out's rows.
            unsafe {
                let shift = _mm512_loadu_si512(back.shift.as_ptr().add(o).cast());
                let w_scale = _mm512_loadu_ps(back.scales.as_ptr().add(o));
                let bias = _mm512_loadu_ps(back.bias.as_ptr().add(o));
                for r in 0..R {
                    // Multiply, then add (no fused multiply-add): the portable path's rounding.
                    let scale = _mm512_mul_ps(_mm512_set1_ps(*x_scales.add(m + r)), w_scale);
                    let exact = _mm512_cvtepi32_ps(_mm512_sub_epi32(sums[r][j], shift));
                    let y = _mm512_add_ps(_mm512_mul_ps(exact, scale), bias);
                    _mm512_storeu_ps(out.add((m + r) * groups * GROUP + o), y);
                }
            }
        }
    }

    /// `q[i] = round(row[i] · inv) + 128` for the whole sixteens of `row`
    /// (ties to even, as the portable path rounds); returns how many were done.
    ///
    /// # Safety
    /// AVX-512F is present and `q` is at least as long as `row`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn quantize_shifted(row: &[f32], inv: f32, q: &mut [u8]) -> usize {
        let whole = row.len() / 16 * 16;
        assert!(q.len() >= whole);
        let inv = _mm512_set1_ps(inv);
        let (lo, hi) = (_mm512_set1_ps(-127.0), _mm512_set1_ps(127.0));
        let shift = _mm_set1_epi8(-128);
        for i in (0..whole).step_by(16) {
            // SAFETY: i + 16 <= whole <= both lengths.
            unsafe {
                let v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(row.as_ptr().add(i)), inv), lo), hi);
                let bytes = _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v));
                _mm_storeu_si128(q.as_mut_ptr().add(i).cast(), _mm_xor_si128(bytes, shift));
            }
        }
        whole
    }

    /// # Safety
    /// As [`super::products`] checked: the CPU has the features and the slices are long enough.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn products(
        xq: &[u8],
        x_scales: &[f32],
        packed: &[i8],
        back: &Dequant,
        at: Shape,
        out: &mut [f32],
    ) {
        let Shape { width, groups, .. } = at;
        let inputs = (xq.as_ptr(), x_scales.as_ptr(), packed.as_ptr());
        let y = out.as_mut_ptr();
        super::blocks(at, 4, |m, g, four_rows, four_groups| {
            // SAFETY: rows m.. and groups g.. exist as the flags say.
            unsafe {
                match (four_rows, four_groups) {
                    (true, true) => block::<4, 4>(inputs, back, y, (m, g, width, groups)),
                    (false, true) => block::<1, 4>(inputs, back, y, (m, g, width, groups)),
                    (true, false) => (g..groups).for_each(|j| block::<4, 1>(inputs, back, y, (m, j, width, groups))),
                    (false, false) => (g..groups).for_each(|j| block::<1, 1>(inputs, back, y, (m, j, width, groups))),
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shapes with tails everywhere: inputs not a multiple of 4, outputs not
    /// of 16 or 64, rows not of 4 or 32.
    #[test]
    fn int8_products_match_f32_and_the_kernels_agree() {
        for (rows, inputs, outputs) in [(1, 5, 3), (7, 38, 21), (37, 64, 70), (70, 384, 96)] {
            let (x, w, b) = (
                crate::pseudo_values(rows * inputs, 1, 1.0),
                crate::pseudo_values(inputs * outputs, 2, 1.0),
                crate::pseudo_values(outputs, 3, 1.0),
            );
            let q = QuantLinear::new(&w, &b, inputs, outputs);
            let mut out = Vec::new();
            q.forward(&x, rows, &mut out);
            for m in 0..rows {
                for o in 0..outputs {
                    let exact: f32 = (0..inputs).map(|i| x[m * inputs + i] * w[o * inputs + i]).sum::<f32>() + b[o];
                    // Each operand is off by at most half a step of 1/127.
                    let bound = inputs as f32 * 2.0 / 127.0;
                    assert!((out[m * outputs + o] - exact).abs() < bound, "{rows}×{inputs}×{outputs} at ({m},{o})");
                }
            }
            let groups = outputs.div_ceil(GROUP);
            let (xq, scales) = q.quantize_rows(&x, rows);
            for (m, row) in x.chunks_exact(inputs).enumerate() {
                let portable: Vec<u8> = row.iter().map(|&v| (quantize(v, 1.0 / scales[m]) + 128) as u8).collect();
                assert_eq!(&xq[m * q.width..][..inputs], &portable[..], "row {m} quantized alike");
            }
            let (mut fast, mut slow) = (vec![0f32; rows * groups * GROUP], vec![0f32; rows * groups * GROUP]);
            let shape = Shape { rows, width: q.width, groups };
            products(&xq, &scales, &q.packed, &q.back, shape, &mut fast);
            portable_products(&xq, &scales, &q.packed, &q.back, shape, &mut slow);
            assert_eq!(fast, slow, "{rows}×{inputs}×{outputs}: {} and portable sums", kernel().as_str());
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                let mut wide = vec![0f32; rows * groups * GROUP];
                // SAFETY: the CPU has AVX2; the lengths are as `products` checks.
                unsafe { avx2::products(&xq, &scales, &q.packed, &q.back, shape, &mut wide) };
                assert_eq!(wide, slow, "{rows}×{inputs}×{outputs}: AVX2 and portable sums");
            }
        }
    }
}
