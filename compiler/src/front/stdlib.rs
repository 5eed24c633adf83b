//! The standard library's sources, embedded in the compiler: `std::vec`,
//! `std::mat`, `std::math` and `std::reduce` (all in the prelude).

/// `(module name, file name, source)` of every standard library module.
pub const MODULES: [(&str, &str, &str); 4] = [
    (
        "vec",
        "<std>/vec.mad",
        include_str!("../../../stdlib/vec.mad"),
    ),
    (
        "mat",
        "<std>/mat.mad",
        include_str!("../../../stdlib/mat.mad"),
    ),
    (
        "math",
        "<std>/math.mad",
        include_str!("../../../stdlib/math.mad"),
    ),
    (
        "reduce",
        "<std>/reduce.mad",
        include_str!("../../../stdlib/reduce.mad"),
    ),
];
