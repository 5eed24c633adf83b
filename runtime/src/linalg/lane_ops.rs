//! The lane-wise operations the batched projections are written with ([`Lanes`]), for two
//! representations of [`LANES`] values: the portable [`Wide`] (an array left to the
//! compiler's vectorizer) and, on x86-64 processors with AVX-512, [`Zmm2`] (two AVX-512
//! registers, whose arrays of matrix entries the compiler keeps in registers).
//!
//! The arithmetic operators, square roots, comparisons and selects round identically in
//! both: every one is the IEEE operation of the scalar operators, comparisons treat NaN
//! alike (ordered `>`, `<`, `≤`, `=`; unordered `≠`), negation flips the sign bit and a
//! select moves bits. The exceptions are the rotation helpers ([`Lanes::rotate_first`],
//! [`Lanes::rotate_second`], [`Lanes::add_product`], [`Lanes::sub_product`]): on [`Zmm2`]
//! each is one masked fused multiply-add, which rounds once where [`Wide`] rounds a product
//! and a sum and then selects. The Jacobi sweeps spend most of their instructions on them
//! (about a third fewer with the fused forms), so the AVX-512 sweeps agree with the
//! portable ones to rounding, not bit for bit. Every helper acts lane by lane, so lanes stay
//! independent bit for bit with either representation.

// Index loops are the natural form of these small matrix computations.
#![allow(clippy::needless_range_loop)]

use super::jacobi_lanes::{LANES, Mask, Wide};
use super::tridiag_ql::unit_scale;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A per-lane condition of [`Lanes`].
pub(crate) trait LaneMask: Copy {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn not(self) -> Self;
    /// Whether no lane is set.
    fn none(self) -> bool;
}

/// [`LANES`] f64 values and their lane-wise operations.
pub(crate) trait Lanes:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A per-lane condition.
    type Mask: LaneMask;
    fn splat(x: f64) -> Self;
    fn load(w: &Wide) -> Self;
    fn store(self, w: &mut Wide);
    /// The sign bit cleared.
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    fn gt(self, o: Self) -> Self::Mask;
    fn lt(self, o: Self) -> Self::Mask;
    fn le(self, o: Self) -> Self::Mask;
    fn eq(self, o: Self) -> Self::Mask;
    /// Not equal, or unordered (NaN): `!(x == y)`.
    fn ne(self, o: Self) -> Self::Mask;
    /// Finite (false for NaN).
    fn finite(self) -> Self::Mask;
    /// `> 0` and finite (false for NaN).
    fn positive_finite(self) -> Self::Mask;
    /// `a` where `m` is set, `b` elsewhere, bit for bit.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    fn mask_of(b: &[bool; LANES]) -> Self::Mask;
    fn lanes_of(m: Self::Mask) -> [bool; LANES];
    /// Lane by lane, the power of two that brings a positive finite value near 1, as
    /// [`super::tridiag_ql::unit_scale`] computes it.
    fn unit_scales(self) -> Self;
    /// `m`, where the optimizer must not look through it (see the Jacobi rotation).
    fn opaque(m: Self::Mask) -> Self::Mask {
        m
    }
    /// `x·c − s·y` where `m` is set, `x` elsewhere: the first output of a plane rotation.
    /// [`Wide`] rounds each product and the difference; [`Zmm2`] fuses `x·c` into the
    /// subtraction and the select into the instruction (module docs).
    #[inline(always)]
    fn rotate_first(m: Self::Mask, x: Self, y: Self, c: Self, s: Self) -> Self {
        Self::select(m, c * x - s * y, x)
    }
    /// `y·c + s·x` where `m` is set, `y` elsewhere: the second output of a plane rotation
    /// (rounded as [`Lanes::rotate_first`]).
    #[inline(always)]
    fn rotate_second(m: Self::Mask, x: Self, y: Self, c: Self, s: Self) -> Self {
        Self::select(m, s * x + c * y, y)
    }
    /// `x + f·g` where `m` is set, `x` elsewhere ([`Zmm2`]: one fused operation).
    #[inline(always)]
    fn add_product(m: Self::Mask, x: Self, f: Self, g: Self) -> Self {
        Self::select(m, x + f * g, x)
    }
    /// `x − f·g` where `m` is set, `x` elsewhere ([`Zmm2`]: one fused operation).
    #[inline(always)]
    fn sub_product(m: Self::Mask, x: Self, f: Self, g: Self) -> Self {
        Self::select(m, x - f * g, x)
    }
}

impl LaneMask for Mask {
    #[inline(always)]
    fn and(self, o: Mask) -> Mask {
        Mask::and(self, o)
    }
    #[inline(always)]
    fn or(self, o: Mask) -> Mask {
        Mask::or(self, o)
    }
    #[inline(always)]
    fn not(self) -> Mask {
        Mask::not(self)
    }
    #[inline(always)]
    fn none(self) -> bool {
        let mut any = 0u64;
        for l in 0..LANES {
            any |= self.0[l];
        }
        any == 0
    }
}

impl Lanes for Wide {
    type Mask = Mask;
    #[inline(always)]
    fn splat(x: f64) -> Wide {
        Wide::splat(x)
    }
    #[inline(always)]
    fn load(w: &Wide) -> Wide {
        *w
    }
    #[inline(always)]
    fn store(self, w: &mut Wide) {
        *w = self;
    }
    #[inline(always)]
    fn abs(self) -> Wide {
        Wide::abs(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Wide {
        Wide::sqrt(self)
    }
    #[inline(always)]
    fn gt(self, o: Wide) -> Mask {
        self.cmp(o, |p, q| p > q)
    }
    #[inline(always)]
    fn lt(self, o: Wide) -> Mask {
        self.cmp(o, |p, q| p < q)
    }
    #[inline(always)]
    fn le(self, o: Wide) -> Mask {
        self.cmp(o, |p, q| p <= q)
    }
    #[inline(always)]
    fn eq(self, o: Wide) -> Mask {
        self.cmp(o, |p, q| p == q)
    }
    #[inline(always)]
    fn ne(self, o: Wide) -> Mask {
        self.cmp(o, |p, q| p != q)
    }
    #[inline(always)]
    fn finite(self) -> Mask {
        self.cmp(self, |p, _| p.is_finite())
    }
    /// Through `black_box`: the optimizer would otherwise turn the portable selects back
    /// into compares of narrow masks (re-widened for every blend) and
    /// `store(select(m, new, load p), p)` into masked stores, which many processors run as
    /// slow microcode.
    #[inline(always)]
    fn opaque(m: Mask) -> Mask {
        std::hint::black_box(m)
    }
    #[inline(always)]
    fn positive_finite(self) -> Mask {
        self.cmp(self, |p, _| p > 0.0 && p.is_finite())
    }
    #[inline(always)]
    fn select(m: Mask, a: Wide, b: Wide) -> Wide {
        m.select(a, b)
    }
    #[inline(always)]
    fn mask_of(b: &[bool; LANES]) -> Mask {
        let mut out = [0u64; LANES];
        for l in 0..LANES {
            out[l] = if b[l] { u64::MAX } else { 0 };
        }
        Mask(out)
    }
    #[inline(always)]
    fn lanes_of(m: Mask) -> [bool; LANES] {
        let mut out = [false; LANES];
        for l in 0..LANES {
            out[l] = m.0[l] != 0;
        }
        out
    }
    #[inline(always)]
    fn unit_scales(self) -> Wide {
        self.map(unit_scale)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::{K, Zmm2};

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! [`Zmm2`]: every method must only run on processors with AVX-512F (the functions that
    //! use it are compiled with that feature and called after the run-time check).

    use super::{LANES, LaneMask, Lanes, Wide, unit_scale};
    use std::arch::x86_64::*;
    use std::ops::{Add, Div, Mul, Neg, Sub};

    /// [`LANES`] values in two AVX-512 registers (lanes 0–7, 8–15).
    #[derive(Clone, Copy)]
    pub(crate) struct Zmm2(pub(crate) __m512d, pub(crate) __m512d);

    /// A per-lane condition as two AVX-512 mask registers.
    #[derive(Clone, Copy)]
    pub(crate) struct K(pub(crate) __mmask8, pub(crate) __mmask8);

    // SAFETY (every `unsafe` block below): AVX-512F is present (module docs).

    macro_rules! binary {
        ($tr:ident, $f:ident, $op:ident) => {
            impl $tr for Zmm2 {
                type Output = Zmm2;
                #[inline(always)]
                fn $f(self, o: Zmm2) -> Zmm2 {
                    unsafe { Zmm2($op(self.0, o.0), $op(self.1, o.1)) }
                }
            }
        };
    }
    binary!(Add, add, _mm512_add_pd);
    binary!(Sub, sub, _mm512_sub_pd);
    binary!(Mul, mul, _mm512_mul_pd);
    binary!(Div, div, _mm512_div_pd);

    impl Neg for Zmm2 {
        type Output = Zmm2;
        /// The sign bit flipped, as the portable `-x`.
        #[inline(always)]
        fn neg(self) -> Zmm2 {
            unsafe {
                let sign = _mm512_set1_epi64(i64::MIN);
                let flip = |x: __m512d| {
                    _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), sign))
                };
                Zmm2(flip(self.0), flip(self.1))
            }
        }
    }

    impl Zmm2 {
        /// A comparison with predicate `P`, lane by lane.
        #[inline(always)]
        fn cmp<const P: i32>(self, o: Zmm2) -> K {
            unsafe {
                K(
                    _mm512_cmp_pd_mask::<P>(self.0, o.0),
                    _mm512_cmp_pd_mask::<P>(self.1, o.1),
                )
            }
        }
    }

    impl K {
        pub(crate) const ALL: K = K(0xff, 0xff);
        pub(crate) const NONE: K = K(0, 0);
    }

    impl LaneMask for K {
        #[inline(always)]
        fn and(self, o: K) -> K {
            K(self.0 & o.0, self.1 & o.1)
        }
        #[inline(always)]
        fn or(self, o: K) -> K {
            K(self.0 | o.0, self.1 | o.1)
        }
        #[inline(always)]
        fn not(self) -> K {
            K(!self.0, !self.1)
        }
        #[inline(always)]
        fn none(self) -> bool {
            (self.0 | self.1) == 0
        }
    }

    impl Lanes for Zmm2 {
        type Mask = K;
        #[inline(always)]
        fn splat(x: f64) -> Zmm2 {
            unsafe { Zmm2(_mm512_set1_pd(x), _mm512_set1_pd(x)) }
        }
        #[inline(always)]
        fn load(w: &Wide) -> Zmm2 {
            let p = w.0.as_ptr();
            // SAFETY: a Wide is 16 contiguous f64.
            unsafe { Zmm2(_mm512_loadu_pd(p), _mm512_loadu_pd(p.add(8))) }
        }
        #[inline(always)]
        fn store(self, w: &mut Wide) {
            let p = w.0.as_mut_ptr();
            // SAFETY: a Wide is 16 contiguous f64.
            unsafe {
                _mm512_storeu_pd(p, self.0);
                _mm512_storeu_pd(p.add(8), self.1);
            }
        }
        #[inline(always)]
        fn abs(self) -> Zmm2 {
            unsafe { Zmm2(_mm512_abs_pd(self.0), _mm512_abs_pd(self.1)) }
        }
        #[inline(always)]
        fn sqrt(self) -> Zmm2 {
            unsafe { Zmm2(_mm512_sqrt_pd(self.0), _mm512_sqrt_pd(self.1)) }
        }
        #[inline(always)]
        fn gt(self, o: Zmm2) -> K {
            self.cmp::<_CMP_GT_OQ>(o)
        }
        #[inline(always)]
        fn lt(self, o: Zmm2) -> K {
            self.cmp::<_CMP_LT_OQ>(o)
        }
        #[inline(always)]
        fn le(self, o: Zmm2) -> K {
            self.cmp::<_CMP_LE_OQ>(o)
        }
        #[inline(always)]
        fn eq(self, o: Zmm2) -> K {
            self.cmp::<_CMP_EQ_OQ>(o)
        }
        #[inline(always)]
        fn ne(self, o: Zmm2) -> K {
            self.cmp::<_CMP_NEQ_UQ>(o)
        }
        /// |x| < ∞ (false for NaN).
        #[inline(always)]
        fn finite(self) -> K {
            self.abs().lt(Zmm2::splat(f64::INFINITY))
        }
        #[inline(always)]
        fn positive_finite(self) -> K {
            self.gt(Zmm2::splat(0.0)).and(self.finite())
        }
        #[inline(always)]
        fn select(m: K, a: Zmm2, b: Zmm2) -> Zmm2 {
            unsafe {
                Zmm2(
                    _mm512_mask_blend_pd(m.0, b.0, a.0),
                    _mm512_mask_blend_pd(m.1, b.1, a.1),
                )
            }
        }
        #[inline(always)]
        fn mask_of(b: &[bool; LANES]) -> K {
            // Loops, not closures: closures were left as calls.
            let mut bits = 0u16;
            for l in 0..LANES {
                bits |= u16::from(b[l]) << l;
            }
            K(bits as u8, (bits >> 8) as u8)
        }
        #[inline(always)]
        fn lanes_of(m: K) -> [bool; LANES] {
            let bits = u16::from(m.0) | (u16::from(m.1) << 8);
            let mut out = [false; LANES];
            for l in 0..LANES {
                out[l] = bits >> l & 1 == 1;
            }
            out
        }
        #[inline(always)]
        fn rotate_first(m: K, x: Zmm2, y: Zmm2, c: Zmm2, s: Zmm2) -> Zmm2 {
            let sy = s * y;
            unsafe { Zmm2(_mm512_mask_fmsub_pd(x.0, m.0, c.0, sy.0), _mm512_mask_fmsub_pd(x.1, m.1, c.1, sy.1)) }
        }
        #[inline(always)]
        fn rotate_second(m: K, x: Zmm2, y: Zmm2, c: Zmm2, s: Zmm2) -> Zmm2 {
            let sx = s * x;
            unsafe { Zmm2(_mm512_mask_fmadd_pd(y.0, m.0, c.0, sx.0), _mm512_mask_fmadd_pd(y.1, m.1, c.1, sx.1)) }
        }
        #[inline(always)]
        fn add_product(m: K, x: Zmm2, f: Zmm2, g: Zmm2) -> Zmm2 {
            unsafe { Zmm2(_mm512_mask3_fmadd_pd(f.0, g.0, x.0, m.0), _mm512_mask3_fmadd_pd(f.1, g.1, x.1, m.1)) }
        }
        #[inline(always)]
        fn sub_product(m: K, x: Zmm2, f: Zmm2, g: Zmm2) -> Zmm2 {
            unsafe { Zmm2(_mm512_mask3_fnmadd_pd(f.0, g.0, x.0, m.0), _mm512_mask3_fnmadd_pd(f.1, g.1, x.1, m.1)) }
        }
        #[inline(always)]
        fn unit_scales(self) -> Zmm2 {
            let mut w = Wide::ZERO;
            self.store(&mut w);
            Zmm2::load(&w.map(unit_scale))
        }
    }
}
