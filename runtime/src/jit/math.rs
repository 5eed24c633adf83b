//! Floating-point routines that compiled code calls by symbol name.
//!
//! The transcendentals are the C library's own functions (`libm`), registered by
//! address, which are exactly what the Rust standard library's methods call (so
//! compiled code and [`crate::ops`] compute the same bits, with no wrapper call in
//! between). The special functions (`mad_erf`, `mad_lgamma`, …, `mad_polygamma`) are
//! [`crate::special`]'s, which [`crate::ops`] calls too. The others are the Rust
//! standard library's functions. `min`/`max` follow
//! [`crate::ops::min_f64`]/[`crate::ops::max_f64`] (a NaN operand yields the other).

use crate::special;

macro_rules! unary_f64 {
    ($($name:ident => $method:ident),* $(,)?) => {
        $(pub extern "C" fn $name(x: f64) -> f64 { x.$method() })*
    };
}

unary_f64! {
    floor => floor, ceil => ceil, trunc => trunc, nearbyint => round_ties_even,
}

/// The C library's math functions.
mod libm {
    unsafe extern "C" {
        pub fn sin(x: f64) -> f64;
        pub fn cos(x: f64) -> f64;
        pub fn tan(x: f64) -> f64;
        pub fn asin(x: f64) -> f64;
        pub fn acos(x: f64) -> f64;
        pub fn atan(x: f64) -> f64;
        pub fn sinh(x: f64) -> f64;
        pub fn cosh(x: f64) -> f64;
        pub fn tanh(x: f64) -> f64;
        pub fn exp(x: f64) -> f64;
        pub fn log(x: f64) -> f64;
        pub fn log1p(x: f64) -> f64;
        pub fn expm1(x: f64) -> f64;
        pub fn pow(x: f64, y: f64) -> f64;
        pub fn atan2(y: f64, x: f64) -> f64;
        /// Both `sin(x)` and `cos(x)` in one call (the same bits as the two calls).
        pub fn sincos(x: f64, s: *mut f64, c: *mut f64);
    }
}

pub extern "C" fn floorf(x: f32) -> f32 {
    x.floor()
}
pub extern "C" fn ceilf(x: f32) -> f32 {
    x.ceil()
}
pub extern "C" fn truncf(x: f32) -> f32 {
    x.trunc()
}
pub extern "C" fn nearbyintf(x: f32) -> f32 {
    x.round_ties_even()
}
pub extern "C" fn fma(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}
pub extern "C" fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}
pub extern "C" fn fmod(a: f64, b: f64) -> f64 {
    a % b
}
pub extern "C" fn mad_erf(x: f64) -> f64 {
    special::erf(x)
}
pub extern "C" fn mad_lgamma(x: f64) -> f64 {
    special::lgamma(x)
}
pub extern "C" fn mad_digamma(x: f64) -> f64 {
    special::digamma(x)
}
pub extern "C" fn mad_trigamma(x: f64) -> f64 {
    special::trigamma(x)
}
pub extern "C" fn mad_softplus(x: f64) -> f64 {
    special::softplus(x)
}
pub extern "C" fn mad_sigmoid(x: f64) -> f64 {
    special::sigmoid(x)
}
pub extern "C" fn mad_polygamma(n: f64, x: f64) -> f64 {
    special::polygamma(n, x)
}
pub extern "C" fn mad_min_f64(a: f64, b: f64) -> f64 {
    crate::ops::min_f64(a, b)
}
pub extern "C" fn mad_max_f64(a: f64, b: f64) -> f64 {
    crate::ops::max_f64(a, b)
}

/// `(symbol, address)` of every routine above: f64 → f64 ones, then the others.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    let f1: [(&str, unsafe extern "C" fn(f64) -> f64); 23] = [
        ("sin", libm::sin),
        ("cos", libm::cos),
        ("tan", libm::tan),
        ("asin", libm::asin),
        ("acos", libm::acos),
        ("atan", libm::atan),
        ("sinh", libm::sinh),
        ("cosh", libm::cosh),
        ("tanh", libm::tanh),
        ("exp", libm::exp),
        ("log", libm::log),
        ("log1p", libm::log1p),
        ("expm1", libm::expm1),
        ("mad_erf", mad_erf),
        ("mad_lgamma", mad_lgamma),
        ("mad_digamma", mad_digamma),
        ("mad_trigamma", mad_trigamma),
        ("mad_softplus", mad_softplus),
        ("mad_sigmoid", mad_sigmoid),
        ("floor", floor),
        ("ceil", ceil),
        ("trunc", trunc),
        ("nearbyint", nearbyint),
    ];
    let f2: [(&str, unsafe extern "C" fn(f64, f64) -> f64); 6] = [
        ("pow", libm::pow),
        ("atan2", libm::atan2),
        ("fmod", fmod),
        ("mad_min_f64", mad_min_f64),
        ("mad_max_f64", mad_max_f64),
        ("mad_polygamma", mad_polygamma),
    ];
    let g1: [(&str, extern "C" fn(f32) -> f32); 4] = [
        ("floorf", floorf),
        ("ceilf", ceilf),
        ("truncf", truncf),
        ("nearbyintf", nearbyintf),
    ];
    let mut out: Vec<(&'static str, *const u8)> = Vec::new();
    out.extend(f1.iter().map(|(n, f)| (*n, *f as *const u8)));
    out.extend(f2.iter().map(|(n, f)| (*n, *f as *const u8)));
    out.extend(g1.iter().map(|(n, f)| (*n, *f as *const u8)));
    out.push(("fma", fma as *const u8));
    out.push(("sincos", libm::sincos as *const u8));
    out.push(("fmaf", fmaf as *const u8));
    out
}
