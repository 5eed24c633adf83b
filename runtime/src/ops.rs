//! Scalar semantics of the elementwise operations.
//!
//! Floating-point ops follow IEEE 754 (libm for transcendentals, [`crate::special`] for the
//! special functions); integer ops wrap on overflow, and integer division or remainder by zero
//! is an error, not a trap.

use std::fmt;

use crate::special;

/// One-operand elementwise operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    /// Logical not (bool only).
    Not,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    /// log(1 + x), accurate near 0.
    Log1p,
    /// eˣ − 1, accurate near 0.
    Expm1,
    /// The error function.
    Erf,
    /// log |Γ(x)|.
    Lgamma,
    /// ψ(x), the derivative of `lgamma`.
    Digamma,
    /// ψ′(x), the derivative of `digamma`.
    Trigamma,
    /// log(1 + eˣ), computed stably.
    Softplus,
    /// 1/(1 + e^(−x)), the derivative of `softplus`.
    Sigmoid,
    Abs,
    Floor,
    Ceil,
    /// The value itself, with no derivative: a value whose tangent and adjoint are zero
    /// (reverse mode forms it; no surface syntax names it).
    Detach,
}

/// Two-operand elementwise operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// Remainder with the sign of the dividend (Rust's `%`).
    Rem,
    Pow,
    Atan2,
    Min,
    Max,
    /// ψ⁽ⁿ⁾(x), the polygamma function of order `n` (the first operand, an integer
    /// value: other orders give NaN); the derivative of `digamma` is order 1, of
    /// `trigamma` order 2.
    Polygamma,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Logical and (bool only).
    And,
    /// Logical or (bool only).
    Or,
}

impl UnaryOp {
    pub const ALL: [UnaryOp; 26] = [
        UnaryOp::Neg,
        UnaryOp::Not,
        UnaryOp::Sqrt,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Asin,
        UnaryOp::Acos,
        UnaryOp::Atan,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Tanh,
        UnaryOp::Log1p,
        UnaryOp::Expm1,
        UnaryOp::Erf,
        UnaryOp::Lgamma,
        UnaryOp::Digamma,
        UnaryOp::Trigamma,
        UnaryOp::Softplus,
        UnaryOp::Sigmoid,
        UnaryOp::Abs,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Detach,
    ];

    /// The name used by the IR text form.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Not => "not",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Asin => "asin",
            UnaryOp::Acos => "acos",
            UnaryOp::Atan => "atan",
            UnaryOp::Sinh => "sinh",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Erf => "erf",
            UnaryOp::Lgamma => "lgamma",
            UnaryOp::Digamma => "digamma",
            UnaryOp::Trigamma => "trigamma",
            UnaryOp::Softplus => "softplus",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Abs => "abs",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Detach => "detach",
        }
    }

    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether the op accepts floating-point operands only.
    pub fn float_only(self) -> bool {
        !matches!(self, UnaryOp::Neg | UnaryOp::Not | UnaryOp::Abs | UnaryOp::Detach)
    }

    pub fn f64(self, x: f64) -> f64 {
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Not => f64::NAN,
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Tan => x.tan(),
            UnaryOp::Asin => x.asin(),
            UnaryOp::Acos => x.acos(),
            UnaryOp::Atan => x.atan(),
            UnaryOp::Sinh => x.sinh(),
            UnaryOp::Cosh => x.cosh(),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Log1p => x.ln_1p(),
            UnaryOp::Expm1 => x.exp_m1(),
            UnaryOp::Erf => special::erf(x),
            UnaryOp::Lgamma => special::lgamma(x),
            UnaryOp::Digamma => special::digamma(x),
            UnaryOp::Trigamma => special::trigamma(x),
            UnaryOp::Softplus => special::softplus(x),
            UnaryOp::Sigmoid => special::sigmoid(x),
            UnaryOp::Abs => x.abs(),
            UnaryOp::Floor => x.floor(),
            UnaryOp::Ceil => x.ceil(),
            UnaryOp::Detach => x,
        }
    }

    pub fn f32(self, x: f32) -> f32 {
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Floor => x.floor(),
            UnaryOp::Ceil => x.ceil(),
            UnaryOp::Detach => x,
            UnaryOp::Sqrt => x.sqrt(),
            // Transcendentals of f32 are computed in f64 and rounded once, so the
            // interpreter and the JIT (which calls the f64 libm routine) agree.
            other => other.f64(x as f64) as f32,
        }
    }

    pub fn i64(self, x: i64) -> Result<i64, RtError> {
        match self {
            UnaryOp::Neg => Ok(x.wrapping_neg()),
            UnaryOp::Abs => Ok(x.wrapping_abs()),
            _ => Err(RtError::BadOperand(self.name())),
        }
    }
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 18] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Pow,
        BinaryOp::Atan2,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Polygamma,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::And,
        BinaryOp::Or,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Rem => "rem",
            BinaryOp::Pow => "pow",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Polygamma => "polygamma",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }

    pub fn from_name(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// How the source writes the operation (for run-time messages): `+`, `hadamard` (the only
    /// product of two tensors entry by entry), `min`, …
    pub fn source_form(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "hadamard",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Pow => "^",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Polygamma => "polygamma",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    /// Comparisons produce `bool` from numeric operands.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    /// Whether the op accepts floating-point operands only.
    pub fn float_only(self) -> bool {
        matches!(self, BinaryOp::Atan2 | BinaryOp::Polygamma)
    }

    /// Arithmetic on `f64`. Comparisons return 1.0 / 0.0 here; use [`BinaryOp::cmp_f64`].
    pub fn f64(self, a: f64, b: f64) -> f64 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Rem => a % b,
            BinaryOp::Pow => a.powf(b),
            BinaryOp::Atan2 => a.atan2(b),
            BinaryOp::Min => min_f64(a, b),
            BinaryOp::Max => max_f64(a, b),
            BinaryOp::Polygamma => special::polygamma(a, b),
            _ => {
                if self.cmp_f64(a, b) {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    pub fn f32(self, a: f32, b: f32) -> f32 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Min => min_f64(a as f64, b as f64) as f32,
            BinaryOp::Max => max_f64(a as f64, b as f64) as f32,
            other => other.f64(a as f64, b as f64) as f32,
        }
    }

    pub fn cmp_f64(self, a: f64, b: f64) -> bool {
        match self {
            BinaryOp::Eq => a == b,
            BinaryOp::Ne => a != b,
            BinaryOp::Lt => a < b,
            BinaryOp::Le => a <= b,
            BinaryOp::Gt => a > b,
            BinaryOp::Ge => a >= b,
            _ => false,
        }
    }

    pub fn cmp_i64(self, a: i64, b: i64) -> bool {
        match self {
            BinaryOp::Eq => a == b,
            BinaryOp::Ne => a != b,
            BinaryOp::Lt => a < b,
            BinaryOp::Le => a <= b,
            BinaryOp::Gt => a > b,
            BinaryOp::Ge => a >= b,
            _ => false,
        }
    }

    /// Integer arithmetic: wrapping; `/` and `%` by zero are errors; `/` truncates;
    /// `^` with a negative exponent is an error.
    pub fn i64(self, a: i64, b: i64) -> Result<i64, RtError> {
        Ok(match self {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            BinaryOp::Div => {
                if b == 0 {
                    return Err(RtError::DivByZero);
                }
                a.wrapping_div(b)
            }
            BinaryOp::Rem => {
                if b == 0 {
                    return Err(RtError::DivByZero);
                }
                a.wrapping_rem(b)
            }
            BinaryOp::Pow => {
                if b < 0 {
                    return Err(RtError::NegativeExponent);
                }
                wrapping_pow_u64(a, b as u64)
            }
            BinaryOp::Min => a.min(b),
            BinaryOp::Max => a.max(b),
            other if other.is_comparison() => other.cmp_i64(a, b) as i64,
            other => return Err(RtError::BadOperand(other.name())),
        })
    }
}

/// `min` that returns the other operand when one is NaN (IEEE minNum).
pub fn min_f64(a: f64, b: f64) -> f64 {
    a.min(b)
}

/// `max` that returns the other operand when one is NaN (IEEE maxNum).
pub fn max_f64(a: f64, b: f64) -> f64 {
    a.max(b)
}

/// An error raised while running compiled code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RtError {
    DivByZero,
    NegativeExponent,
    IndexOutOfBounds { index: i64, len: i64 },
    ShapeMismatch(String),
    BadOperand(&'static str),
    RecursionLimit,
    Other(String),
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RtError::DivByZero => write!(f, "integer division by zero"),
            RtError::NegativeExponent => write!(f, "integer power with a negative exponent"),
            RtError::IndexOutOfBounds { index, len } => {
                write!(f, "index {index} is out of bounds for length {len}")
            }
            RtError::ShapeMismatch(m) => write!(f, "shape mismatch: {m}"),
            RtError::BadOperand(op) => write!(f, "`{op}` does not accept this operand type"),
            RtError::RecursionLimit => write!(f, "recursion is too deep"),
            RtError::Other(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for RtError {}

/// `a^e` wrapping at 64 bits, for every non-negative `i64` exponent (`i64::wrapping_pow`
/// takes a `u32`): binary exponentiation, each product wrapping, which is the exact
/// power reduced modulo 2⁶⁴.
pub fn wrapping_pow_u64(a: i64, mut e: u64) -> i64 {
    let (mut base, mut acc) = (a, 1i64);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    acc
}

#[cfg(test)]
mod pow_tests {
    use super::*;

    #[test]
    fn integer_powers_wrap_for_exponents_beyond_u32() {
        assert_eq!(wrapping_pow_u64(3, 5), 243);
        assert_eq!(wrapping_pow_u64(-1, 4_294_967_296), 1);
        assert_eq!(wrapping_pow_u64(-1, 4_294_967_297), -1);
        assert_eq!(wrapping_pow_u64(3, 4_294_967_296), 2491309678558969857);
        assert_eq!(wrapping_pow_u64(3, i64::MAX as u64), -6148914691236517205);
        assert_eq!(wrapping_pow_u64(7, 0), 1);
        for e in 0..40u32 {
            assert_eq!(wrapping_pow_u64(3, e as u64), 3i64.wrapping_pow(e));
        }
        assert_eq!(BinaryOp::Pow.i64(-1, 4_294_967_296), Ok(1));
    }
}
