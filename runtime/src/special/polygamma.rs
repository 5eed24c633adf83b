//! The polygamma functions ψ⁽ⁿ⁾(x) = dⁿ⁺¹/dxⁿ⁺¹ log Γ(x): the digamma function ψ (n = 0),
//! the trigamma function ψ′ (n = 1), and every order n ≥ 0.
//!
//! For `x > 0` and n ≥ 1: the recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) − (−1)ⁿ n!/xⁿ⁺¹ moves the
//! argument up to `z ≥ 10 + n`, where the asymptotic series in Bernoulli numbers converges to
//! full precision within twenty terms; every term of the recurrence has one sign, so the sum
//! loses no precision. The digamma function, whose positive zero x₀ ≈ 1.4616 would cancel
//! there, is computed on `[1, 2]` as ψ(x) − ψ(x₀), every part a multiple of `x − x₀`
//! (relative accuracy at the zero too), taken there from `(0, 1)` and `(2, 10)` by the
//! recurrence, and by its asymptotic series from 10 on. For `x < 0`: the reflection
//! ψ(1 − x) − ψ(x) = π cot(πx), differentiated n times. Accuracy: a few units in the last
//! place for `x > 0` (about `n` units for large orders); near the negative zeros of ψ⁽ⁿ⁾ the
//! error is absolute, about 1e-16 times the size of the reflection's terms.
//!
//! Special values: NaN at NaN and at `−inf`; at `+inf`, `+inf` for ψ and zero for n ≥ 1; at
//! the poles `x = 0, −1, −2, …` (either zero included) `+inf` for odd n (the limit from both
//! sides) and NaN for even n (the two sides' limits differ in sign). An order that is not an
//! integer in `0..=170` gives NaN (above 170, n! overflows).

use std::f64::consts::PI;

/// Bernoulli numbers B₂, B₄, …, B₄₀.
const BERNOULLI: [f64; 20] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
    43867.0 / 798.0,
    -174611.0 / 330.0,
    854513.0 / 138.0,
    -236364091.0 / 2730.0,
    8553103.0 / 6.0,
    -23749461029.0 / 870.0,
    8615841276005.0 / 14322.0,
    -7709321041217.0 / 510.0,
    2577687858367.0 / 6.0,
    -26315271553053477373.0 / 1919190.0,
    2929993913841559.0 / 6.0,
    -261082718496449122051.0 / 13530.0,
];

/// The positive zero of ψ as a sum of two doubles: x₀ = `ZERO_HI + ZERO_LO`.
const ZERO_HI: f64 = 1.4616321449683622;
const ZERO_LO: f64 = 9.549995429965697e-17;

/// The highest order computed (171! overflows).
pub const MAX_ORDER: u32 = 170;

/// The argument from which the asymptotic series of ψ is used.
const DIGAMMA_ASYMPTOTIC: f64 = 10.0;

/// ψ(x), the digamma function: the derivative of log Γ(x).
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x <= 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // ψ(x) = ψ(1 − x) − π cot(πx).
        return digamma(1.0 - x) - PI * cot_pi(x);
    }
    if x < 1.0 {
        return digamma(x + 1.0) - 1.0 / x;
    }
    if x <= 2.0 {
        return digamma_near_zero(x);
    }
    if x < DIGAMMA_ASYMPTOTIC {
        // ψ(x) = ψ(b) + Σᵢ 1/(b + i) with b = x − j in [1, 2) (b and every b + i exact),
        // the smallest terms added first.
        let j = (x - 1.0).floor();
        let b = x - j;
        let mut acc = 0.0;
        for i in (0..j as u32).rev() {
            acc += 1.0 / (b + i as f64);
        }
        return acc + digamma_near_zero(b);
    }
    digamma_asymptotic(x)
}

/// The number of unit steps that take `x > 0` to at least `start`.
fn shift(x: f64, start: f64) -> u32 {
    if x >= start {
        0
    } else {
        (start - x).ceil() as u32
    }
}

/// ψ′(x), the trigamma function.
pub fn trigamma(x: f64) -> f64 {
    polygamma_order(1, x)
}

/// ψ⁽ⁿ⁾(x) for an order `n` that is an integer in `0..=170` (NaN otherwise).
pub fn polygamma(n: f64, x: f64) -> f64 {
    if !(0.0..=MAX_ORDER as f64).contains(&n) || n != n.trunc() {
        return f64::NAN;
    }
    match n as u32 {
        0 => digamma(x),
        k => polygamma_order(k, x),
    }
}

/// ln z − 1/(2z) − Σ B₂ₖ/(2k z²ᵏ), for `z ≥ 10`.
fn digamma_asymptotic(z: f64) -> f64 {
    let w = 1.0 / (z * z);
    let mut series = 0.0;
    for k in (1..=10).rev() {
        series = series * w + BERNOULLI[k - 1] / (2 * k) as f64;
    }
    z.ln() - 0.5 / z - series * w
}

/// ψ(x) for `x` in `[1, 2]`, as ψ(x) − ψ(x₀) with d = x − x₀:
/// d · Σₖ₌₀⁹ 1/((x + k)(x₀ + k)) + ψ(x + 10) − ψ(x₀ + 10), the last difference taken term
/// by term of the asymptotic series (each a multiple of d, so nothing cancels).
fn digamma_near_zero(x: f64) -> f64 {
    // `x − ZERO_HI` is exact (Sterbenz).
    let d = (x - ZERO_HI) - ZERO_LO;
    let mut sum = 0.0;
    for k in 0..10 {
        let k = k as f64;
        sum += 1.0 / ((x + k) * (ZERO_HI + k));
    }
    let (z1, z2) = (x + 10.0, ZERO_HI + 10.0);
    // ln(z1/z2) = log1p(d/z2); 1/(2z1) − 1/(2z2) = −d/(2 z1 z2);
    // z1^(−2k) − z2^(−2k) = z2^(−2k) expm1(−2k ln(z1/z2)).
    let l = (d / z2).ln_1p();
    let w = 1.0 / (z2 * z2);
    let mut series = 0.0;
    let mut wk = 1.0;
    for k in 1..=10 {
        wk *= w;
        series += BERNOULLI[k - 1] / (2 * k) as f64 * wk * (-2.0 * k as f64 * l).exp_m1();
    }
    d * sum + (l + d / (2.0 * z1 * z2) - series)
}

/// n!/yⁿ⁺¹, as (1/y)·Π (j/y): no intermediate overflow or underflow unless the result's.
fn scaled_power(n: u32, y: f64) -> f64 {
    if n == 1 {
        // One rounding fewer for the trigamma function.
        return 1.0 / (y * y);
    }
    let r = 1.0 / y;
    let mut p = r;
    for j in 1..=n {
        p *= j as f64 * r;
    }
    p
}

/// ψ⁽ⁿ⁾(x) for n ≥ 1.
fn polygamma_order(n: u32, x: f64) -> f64 {
    let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return sign * 0.0;
    }
    if x <= 0.0 {
        if x == x.floor() {
            return if n % 2 == 1 { f64::INFINITY } else { f64::NAN };
        }
        // ψ⁽ⁿ⁾(x) = (−1)ⁿ ψ⁽ⁿ⁾(1 − x) − πⁿ⁺¹ Pₙ(cot πx), the reflection differentiated n times.
        let reflected = polygamma_order(n, 1.0 - x);
        let c = cot_pi(x);
        let p = cot_derivative(n, c) * PI.powi(n as i32 + 1);
        return if n % 2 == 1 {
            -reflected - p
        } else {
            reflected - p
        };
    }
    // (−1)ⁿ⁺¹ n! [Σₖ (x + k)^−(n+1) + R(z)], z = x + m ≥ 10 + n, where
    // n!·R(z) = (n−1)!/zⁿ + n!/(2zⁿ⁺¹) + Σ B₂ₖ (2k+n−1)!/((2k)! z²ᵏ⁺ⁿ).
    let m = shift(x, 10.0 + n as f64);
    let z = x + m as f64;
    let p = scaled_power(n, z);
    let w = 1.0 / (z * z);
    let mut series = 0.5;
    let mut zk = z;
    for k in 1..=BERNOULLI.len() {
        zk *= w;
        // (2k+n−1)!/((2k)! n!) = Π_{j=1}^{n−1} (2k + j)/(j + 1).
        let mut c = 1.0;
        for j in 1..n {
            c *= (2 * k as u32 + j) as f64 / (j + 1) as f64;
        }
        let term = BERNOULLI[k - 1] * c * zk;
        series += term;
        if term.abs() <= 1e-18 * series.abs() {
            break;
        }
    }
    // The recurrence's terms, the smallest first.
    let mut acc = scaled_power(n - 1, z) + p * series;
    for k in (0..m).rev() {
        acc += scaled_power(n, x + k as f64);
    }
    sign * acc
}

/// cot(πx), reduced to `[−½, ½]` first (exactly), so that large arguments keep their accuracy.
fn cot_pi(x: f64) -> f64 {
    let r = x - x.round();
    1.0 / (PI * r).tan()
}

/// Pₙ(c) with dⁿ/dxⁿ cot(πx) = πⁿ Pₙ(cot πx): P₀(c) = c, Pₖ₊₁(c) = −(1 + c²) Pₖ′(c).
fn cot_derivative(n: u32, c: f64) -> f64 {
    // Coefficients of Pₖ, lowest degree first (degree k + 1).
    let mut p = vec![0.0, 1.0];
    for _ in 0..n {
        let dp: Vec<f64> = (1..p.len()).map(|i| i as f64 * p[i]).collect();
        let mut next = vec![0.0; p.len() + 1];
        for (i, a) in dp.iter().enumerate() {
            next[i] -= a;
            next[i + 2] -= a;
        }
        p = next;
    }
    p.iter().rev().fold(0.0, |acc, a| acc * c + a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative error of `got` against `want` (absolute where `want` is 0).
    fn rel(got: f64, want: f64) -> f64 {
        if want == 0.0 {
            got.abs()
        } else {
            ((got - want) / want).abs()
        }
    }

    fn check(what: &str, f: impl Fn(f64) -> f64, table: &[(f64, f64)], tol: f64) {
        for &(x, want) in table {
            let got = f(x);
            assert!(
                rel(got, want) <= tol,
                "{what}({x}) = {got:e}, want {want:e} (rel {:e})",
                rel(got, want)
            );
        }
    }

    // Reference values: mpmath at 50 digits, at the exact double arguments.
    #[test]
    fn digamma_matches_reference_values() {
        check(
            "digamma",
            digamma,
            &[
                (1e-8, -100000000.57721564),
                (0.001, -1000.5755719318103),
                (0.25, -4.2274535333762655),
                (0.5, -1.9635100260214235),
                (1.0, -0.5772156649015329),
                (1.4616321449683622, -9.241265521729427e-17),
                (1.46, -0.0015805619870834522),
                (1.47, 0.008066489011364869),
                (1.5, 0.03648997397857652),
                (2.0, 0.42278433509846713),
                (2.5, 0.7031566406452432),
                (3.7, 1.1671535393615113),
                (9.99, 2.250700372831201),
                (10.0, 2.251752589066721),
                (25.5, 3.2189424728839198),
                (1e3, 6.907255195648812),
                (1e10, 23.025850929890456),
                (-0.5, 0.03648997397857652),
                (-1.5, 0.7031566406452432),
                (-2.25, 4.158583564657972),
                (-10.3, 4.662403493582087),
                (-0.9999, -9999.576951174615),
            ],
            1e-14,
        );
    }

    #[test]
    fn trigamma_matches_reference_values() {
        check(
            "trigamma",
            trigamma,
            &[
                (0.001, 1000001.6425331958),
                (0.25, 17.19732915450711),
                (0.5, 4.934802200544679),
                (1.0, 1.6449340668482264),
                (1.5, 0.9348022005446793),
                (2.5, 0.49035775610023485),
                (9.5, 0.11099728846909904),
                (12.0, 0.08690187287176838),
                (100.0, 0.010050166663333571),
                (1e8, 1.000000005e-08),
                (-0.5, 8.934802200544679),
                (-1.25, 19.181879647671607),
                (-7.6, 10.788265451054698),
            ],
            1e-14,
        );
    }

    #[test]
    fn higher_orders_match_reference_values() {
        let table: [(f64, [(f64, f64); 6]); 4] = [
            (
                2.0,
                [
                    (0.3, -75.27253658872604),
                    (1.0, -2.4041138063191885),
                    (2.7, -0.19700583557913573),
                    (15.0, -0.004750602716551555),
                    (-0.4, 21.287168462856535),
                    (-3.3, 68.76944547748523),
                ],
            ),
            (
                3.0,
                [
                    (0.3, 743.1417646550498),
                    (1.0, 6.493939402266829),
                    (2.7, 0.17117980334609884),
                    (15.0, 0.0006544797782827373),
                    (-0.4, 281.78204104534575),
                    (-3.3, 768.9856582554286),
                ],
            ),
            (
                5.0,
                [
                    (0.3, 164634.84609922304),
                    (1.0, 122.0811674381339),
                    (2.7, 0.3736807289076233),
                    (15.0, 3.722215094961951e-05),
                    (-0.4, 31876.50690776846),
                    (-3.3, 165660.14652917208),
                ],
            ),
            (
                10.0,
                [
                    (0.3, -2048468424178.0745),
                    (1.0, -3630593.311606629),
                    (2.7, -67.48504526219644),
                    (15.0, -8.644004350424738e-07),
                    (-0.4, 85517084631.51274),
                    (-3.3, 2048284893018.124),
                ],
            ),
        ];
        for (n, rows) in table {
            check(
                &format!("polygamma({n}, ·)"),
                |x| polygamma(n, x),
                &rows,
                1e-14,
            );
        }
        // Orders 0 and 1 are digamma and trigamma.
        assert_eq!(polygamma(0.0, 2.5), digamma(2.5));
        assert_eq!(polygamma(1.0, 2.5), trigamma(2.5));
    }

    #[test]
    fn special_values() {
        assert!(digamma(f64::NAN).is_nan());
        assert!(digamma(f64::NEG_INFINITY).is_nan());
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
        for pole in [0.0, -0.0, -1.0, -2.0, -1e20] {
            assert!(digamma(pole).is_nan(), "digamma({pole})");
            assert_eq!(trigamma(pole), f64::INFINITY, "trigamma({pole})");
            assert!(polygamma(2.0, pole).is_nan(), "polygamma(2, {pole})");
            assert_eq!(polygamma(3.0, pole), f64::INFINITY, "polygamma(3, {pole})");
        }
        assert_eq!(trigamma(f64::INFINITY), 0.0);
        assert_eq!(polygamma(2.0, f64::INFINITY), 0.0);
        assert!(trigamma(f64::NEG_INFINITY).is_nan());
        for bad in [-1.0, 0.5, 171.0, f64::NAN, f64::INFINITY] {
            assert!(polygamma(bad, 2.0).is_nan(), "order {bad}");
        }
        // Large orders stay finite where the value is.
        assert!(rel(polygamma(170.0, 300.0), -4.335360007808032e-117) < 1e-13);
        // Huge arguments: the leading terms, without underflow of intermediate powers.
        assert!(rel(trigamma(1e200), 1e-200) < 1e-15);
        assert!(rel(digamma(1e300), 1e300f64.ln()) < 1e-15);
    }

    #[test]
    fn recurrence_and_reflection_hold() {
        // ψ⁽ⁿ⁾(x + 1) = ψ⁽ⁿ⁾(x) + (−1)ⁿ n!/xⁿ⁺¹ on both sides of every branch point.
        for n in 0..6u32 {
            let fact: f64 = (1..=n).map(|j| j as f64).product();
            for &x in &[-2.7, -0.3, 0.2, 0.9, 1.3, 2.2, 9.6, 10.4, 14.5, 40.0] {
                let lhs = polygamma(n as f64, x + 1.0);
                let (a, b) = (
                    polygamma(n as f64, x),
                    if n % 2 == 0 { fact } else { -fact } / x.powi(n as i32 + 1),
                );
                // The sum may cancel: the error is relative to its terms.
                let scale = a.abs() + b.abs();
                assert!(
                    (lhs - (a + b)).abs() <= 1e-14 * scale,
                    "n = {n}, x = {x}: {lhs} vs {}",
                    a + b
                );
            }
        }
    }
}
