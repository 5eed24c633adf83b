//! The standard library's sources, embedded in the compiler: `std::vec`,
//! `std::mat`, `std::math`, `std::reduce` and `std::linalg` (all in the prelude).

/// `(module name, file name, source)` of every standard library module.
pub const MODULES: [(&str, &str, &str); 5] = [
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
    (
        "linalg",
        "<std>/linalg.mad",
        include_str!("../../../stdlib/linalg.mad"),
    ),
];
