//! Differential testing of the Cranelift JIT against the reference interpreter:
//! random arguments for any IR signature, bitwise value comparison (any NaN
//! equals any NaN), and a runner that compares results, errors and printed output.

#![allow(dead_code)]

use std::collections::HashMap;

use mad::back::cranelift;
use mad::back::native::NativeModule;
use mad::back::interp;
use mad::ir::parse::parse_module;
use mad::ir::validate::validate_module;
use mad::ir::{Dim, FuncRef, Module, ScalarKind, Type};
use mad_runtime::{RtError, Tensor, TensorData, Value};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// A small deterministic generator seeded by proptest.
pub struct Gen(u64, bool);

impl Gen {
    /// With `small_ints`, every `i64` is in -3..=5 (for programs whose loop
    /// counts or allocation sizes come from their arguments).
    pub fn new(seed: u64, small_ints: bool) -> Gen {
        Gen(seed ^ 0x9E37_79B9_7F4A_7C15, small_ints)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn f64(&mut self) -> f64 {
        const SPECIAL: [f64; 12] = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e-310,
            1e300,
            -3.0,
        ];
        match self.below(10) {
            0..=2 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            3 => f64::from_bits(self.next()),
            _ => (self.below(2_000_001) as f64 - 1_000_000.0) / 100_000.0,
        }
    }
    pub fn i64(&mut self) -> i64 {
        const SPECIAL: [i64; 6] = [i64::MIN, i64::MAX, -1, 0, 1, i64::MIN + 1];
        match self.below(10) {
            _ if self.1 => self.below(9) as i64 - 3,
            0 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            1 => self.next() as i64,
            _ => self.below(9) as i64 - 3,
        }
    }
    pub fn scalar(&mut self, k: ScalarKind) -> Value {
        match k {
            ScalarKind::F64 => Value::F64(self.f64()),
            ScalarKind::F32 => Value::F32(self.f64() as f32),
            ScalarKind::I64 => Value::I64(self.i64()),
            ScalarKind::Bool => Value::Bool(self.below(2) == 1),
        }
    }
}

/// Random arguments for a signature: symbolic extents agree within a call;
/// dynamic ones usually share one extent and sometimes differ.
pub fn gen_args(params: &[Type], seed: u64, small_ints: bool) -> Vec<Value> {
    let mut g = Gen::new(seed, small_ints);
    let base = g.below(5) as usize;
    let mut syms = HashMap::new();
    params
        .iter()
        .map(|t| gen_value(t, &mut g, base, &mut syms))
        .collect()
}

fn gen_value(t: &Type, g: &mut Gen, base: usize, syms: &mut HashMap<String, usize>) -> Value {
    match t {
        Type::Scalar(k) => g.scalar(*k),
        Type::Tuple(items) => {
            Value::Tuple(items.iter().map(|t| gen_value(t, g, base, syms)).collect())
        }
        Type::Tensor { elem, shape } => {
            let shape: Vec<usize> = shape
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => *n as usize,
                    Dim::Sym(s) => {
                        let v = g.below(5) as usize;
                        *syms.entry(s.clone()).or_insert(v)
                    }
                    Dim::Dyn => {
                        if g.below(6) == 0 {
                            g.below(5) as usize
                        } else {
                            base
                        }
                    }
                })
                .collect();
            let n: usize = shape.iter().product();
            let vals: Vec<Value> = (0..n).map(|_| g.scalar(*elem)).collect();
            let data = match elem {
                ScalarKind::F64 => {
                    TensorData::F64(vals.iter().map(|v| v.as_f64().unwrap()).collect())
                }
                ScalarKind::F32 => TensorData::F32(
                    vals.iter()
                        .map(|v| if let Value::F32(x) = v { *x } else { 0.0 })
                        .collect(),
                ),
                ScalarKind::I64 => {
                    TensorData::I64(vals.iter().map(|v| v.as_i64().unwrap()).collect())
                }
                ScalarKind::Bool => {
                    TensorData::Bool(vals.iter().map(|v| v.as_bool().unwrap()).collect())
                }
            };
            Value::Tensor(Tensor { shape, data })
        }
    }
}

fn same_f64(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

/// Bitwise equality, except that any NaN equals any NaN.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F64(x), Value::F64(y)) => same_f64(*x, *y),
        (Value::F32(x), Value::F32(y)) => same_f64(*x as f64, *y as f64),
        (Value::Tensor(x), Value::Tensor(y)) => {
            x.shape == y.shape
                && x.data.kind() == y.data.kind()
                && x.data.len() == y.data.len()
                && (0..x.data.len()).all(|i| same(&x.data.get(i), &y.data.get(i)))
        }
        (Value::Tuple(xs), Value::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y))
        }
        _ => a == b,
    }
}

fn same_result(a: &Result<Value, RtError>, b: &Result<Value, RtError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => same(x, y),
        (Err(x), Err(y)) => x == y,
        _ => false,
    }
}

/// Runs `f` in both back ends and compares results and output.
pub fn compare(m: &Module, jit: &NativeModule, f: FuncRef, args: &[Value]) -> Result<(), String> {
    // The interpreter recurses on the host stack: give it the stack its docs ask for.
    let (r1, o1) = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || {
                let mut o1 = Vec::new();
                let r1 = interp::call(m, f, args, &mut o1);
                (r1, o1)
            })
            .expect("spawn")
            .join()
            .expect("interpreter thread")
    });
    let mut o2 = Vec::new();
    let r2 = jit.call(f, args, &mut o2);
    if same_result(&r1, &r2) && o1 == o2 {
        Ok(())
    } else {
        Err(format!(
            "args {args:?}\ninterp: {r1:?}\n  output {:?}\njit:    {r2:?}\n  output {:?}",
            String::from_utf8_lossy(&o1),
            String::from_utf8_lossy(&o2)
        ))
    }
}

/// Parses and validates `text`, compiles it, and compares every function on
/// `cases` random argument lists.
pub fn diff_text(text: &str, cases: u32) {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    diff_module(&m, cases, text, false);
}

/// As [`diff_text`] for a parsed module; `small_ints` as in [`Gen::new`].
pub fn diff_module(m: &Module, cases: u32, what: &str, small_ints: bool) {
    if let Err(es) = validate_module(m) {
        panic!("invalid IR: {es:?}\n{what}");
    }
    let jit = cranelift::compile(m, &[]).unwrap_or_else(|e| panic!("{e}\n{what}"));
    for (h, f) in m.functions.iter() {
        let params = f.param_types();
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&any::<u64>(), |seed| {
                let args = gen_args(&params, seed, small_ints);
                compare(m, &jit, h, &args).map_err(TestCaseError::fail)
            })
            .unwrap_or_else(|e| panic!("function `{}`: {e}\n{what}", f.name));
    }
}
