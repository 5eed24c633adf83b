//! Special functions of the elementwise ops, on `f64` (the `f32` ops round these once):
//! the error function, log |Γ|, the polygamma family ([`polygamma`]), and the logistic pair
//! softplus/sigmoid. The interpreter calls them through [`crate::ops`] and compiled code
//! calls the same functions by symbol ([`crate::jit::math`]), so both compute the same bits.
//!
//! `erf` and `lgamma` are the `libm` crate's (ports of the FreeBSD/musl routines, within
//! about one unit in the last place); the others are written here.

mod polygamma;

pub use polygamma::{MAX_ORDER, digamma, polygamma, trigamma};

/// The error function, 2/√π ∫₀ˣ e^(−t²) dt: ±1 at ±inf, NaN at NaN.
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// log |Γ(x)|: `+inf` at the poles `0, −1, −2, …` and at `±inf`, NaN at NaN.
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma_r(x).0
}

/// log(1 + eˣ), computed as max(x, 0) + log1p(e^(−|x|)) (no overflow, no cancellation):
/// `+inf` at `+inf`, 0 at `−inf`, NaN at NaN.
pub fn softplus(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The logistic function 1/(1 + e^(−x)), the derivative of [`softplus`]: 1/(1 + e^(−x)) for
/// x ≥ 0 and eˣ/(1 + eˣ) below (relative accuracy on both tails): 1 at `+inf`, 0 at `−inf`,
/// NaN at NaN.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(what: &str, got: f64, want: f64, tol: f64) {
        let err = if want == 0.0 {
            got.abs()
        } else {
            ((got - want) / want).abs()
        };
        assert!(err <= tol, "{what}: {got:e}, want {want:e}");
    }

    // Reference values: mpmath at 50 digits, at the exact double arguments.
    #[test]
    fn lgamma_and_erf_match_reference_values() {
        for (x, want) in [
            (1e-10, 23.025850929882736),
            (0.5, 0.5723649429247001),
            (1.0, 0.0),
            (1.5, -0.12078223763524522),
            (2.0, 0.0),
            (2.5, 0.2846828704729192),
            (3.0, std::f64::consts::LN_2),
            (10.0, 12.801827480081469),
            (100.5, 361.4355404677776),
            (1e5, 1051287.7089736569),
            (-0.5, 1.2655121234846454),
            (-2.5, -0.056243716497674054),
            (-3.7, -1.3797399049658245),
            (-100.3, -363.7662061826763),
        ] {
            close(&format!("lgamma({x})"), lgamma(x), want, 1e-14);
        }
        for (x, want) in [
            (1e-10, 1.1283791670955126e-10),
            (0.1, 0.1124629160182849),
            (0.5, 0.5204998778130465),
            (1.0, 0.8427007929497149),
            (2.0, 0.9953222650189527),
            (3.5, 0.9999992569016276),
            (5.9, 0.9999999999999999),
            (-0.7, -0.6778011938374184),
        ] {
            close(&format!("erf({x})"), erf(x), want, 1e-15);
        }
        assert_eq!(lgamma(0.0), f64::INFINITY);
        assert_eq!(lgamma(-3.0), f64::INFINITY);
        assert_eq!(lgamma(f64::INFINITY), f64::INFINITY);
        assert_eq!(lgamma(f64::NEG_INFINITY), f64::INFINITY);
        assert!(lgamma(f64::NAN).is_nan());
        assert_eq!(erf(f64::INFINITY), 1.0);
        assert_eq!(erf(f64::NEG_INFINITY), -1.0);
        assert!(erf(f64::NAN).is_nan());
    }

    #[test]
    fn softplus_and_sigmoid_are_stable_on_both_tails() {
        for (x, sp, sg) in [
            (-800.0, 0.0, 0.0),
            (-40.0, 4.248354255291589e-18, 4.248354255291589e-18),
            (-1.0, 0.3132616875182228, 0.2689414213699951),
            (0.0, std::f64::consts::LN_2, 0.5),
            (0.5, 0.9740769841801067, 0.6224593312018546),
            (30.0, 30.000000000000092, 0.9999999999999064),
        ] {
            close(&format!("softplus({x})"), softplus(x), sp, 1e-15);
            close(&format!("sigmoid({x})"), sigmoid(x), sg, 1e-15);
        }
        assert_eq!(softplus(800.0), 800.0);
        assert_eq!(softplus(f64::INFINITY), f64::INFINITY);
        assert_eq!(softplus(f64::NEG_INFINITY), 0.0);
        assert!(softplus(f64::NAN).is_nan());
        assert_eq!(sigmoid(f64::INFINITY), 1.0);
        assert_eq!(sigmoid(f64::NEG_INFINITY), 0.0);
        assert!(sigmoid(f64::NAN).is_nan());
    }
}
