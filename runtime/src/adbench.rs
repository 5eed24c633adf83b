//! Readers of the text files of Microsoft's ADBench (its GMM, BA and LSTM instances), into
//! the arrays a `.mad` program takes, in the order of its parameters.
//!
//! The formats are whitespace-separated numbers (line breaks do not matter):
//! - GMM: `d k n`, then `k` weights (alphas), `k × d` means, `k × d(d+1)/2` icf rows, the
//!   points (`n × d` numbers, or one point of `d` numbers that stands for all `n`, as
//!   ADBench's large instances store it), and the Wishart prior's `gamma m`.
//!   Arrays: `alphas [k]`, `means [k, d]`, `icf [k, d(d+1)/2]`, `x [n, d]`; scalars `gamma`
//!   (f64), `m` (i64).
//! - BA: `n m p`, then one camera (11 numbers), one point (3), one weight (1) and one
//!   feature (2), each standing for all of its kind, as ADBench stores them; observation `i`
//!   sees camera `i mod n` and point `i mod m`. Arrays: `cams [n, 11]`, `x [m, 3]`,
//!   `w [p]`, `obs [p, 2]` (i64: camera, point), `feats [p, 2]`.
//! - LSTM: `l c b`, then the main parameters (per layer `4b` weights and `4b` biases),
//!   the extra parameters (`b` input weights, `b` output weights, `b` output biases), the
//!   state (per layer `b` hidden and `b` cell values) and the sequence (`c × b`). Arrays:
//!   `main_params [2l, 4b]`, `extra_params [3, b]`, `state [2l, b]`, `sequence [c, b]`.
//!
//! A file that does not fit its format is an error naming the line and what was expected.

use crate::value::{Tensor, TensorData, Value};

/// The three ADBench problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    Gmm,
    Ba,
    Lstm,
}

/// One argument of the problem's program: an array or a scalar, with its name.
#[derive(Clone, Debug, PartialEq)]
pub enum Argument {
    Array(String, Tensor),
    Scalar(String, Value),
}

/// A file that does not fit its format: the line (from 1) and what went wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct AdbenchError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for AdbenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for AdbenchError {}

/// The numbers of a file, each with its line.
struct Tokens<'a> {
    words: Vec<(usize, &'a str)>,
    at: usize,
}

/// Sizes beyond this are refused (a tensor of 2³² entries is the run time's limit).
const MAX_ENTRIES: usize = 1 << 32;

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Tokens<'a> {
        let words = text
            .lines()
            .enumerate()
            .flat_map(|(i, l)| l.split_whitespace().map(move |w| (i + 1, w)))
            .collect();
        Tokens { words, at: 0 }
    }

    fn line(&self) -> usize {
        self.words.get(self.at).or(self.words.last()).map_or(1, |w| w.0)
    }

    fn err(&self, message: String) -> AdbenchError {
        AdbenchError { line: self.line(), message }
    }

    fn left(&self) -> usize {
        self.words.len() - self.at
    }

    fn next(&mut self, what: &str) -> Result<&'a str, AdbenchError> {
        let w = self.words.get(self.at).ok_or_else(|| self.err(format!("the file ends where {what} was expected")))?;
        self.at += 1;
        Ok(w.1)
    }

    fn size(&mut self, what: &str) -> Result<usize, AdbenchError> {
        let w = self.next(what)?;
        match w.parse::<usize>() {
            Ok(n) if n <= MAX_ENTRIES => Ok(n),
            _ => {
                self.at -= 1;
                Err(self.err(format!("{what} must be a size (a non-negative integer up to 2^32), found `{w}`")))
            }
        }
    }

    fn float(&mut self, what: &str) -> Result<f64, AdbenchError> {
        let w = self.next(what)?;
        w.parse::<f64>().map_err(|_| {
            self.at -= 1;
            self.err(format!("{what} must be a number, found `{w}`"))
        })
    }

    fn floats(&mut self, n: usize, what: &str) -> Result<Vec<f64>, AdbenchError> {
        if self.left() < n {
            return Err(self.err(format!("{what}: {n} numbers expected, the file has {} left", self.left())));
        }
        (0..n).map(|_| self.float(what)).collect()
    }

    fn end(&self) -> Result<(), AdbenchError> {
        match self.words.get(self.at) {
            None => Ok(()),
            Some(w) => Err(AdbenchError { line: w.0, message: format!("unexpected `{}` after the last expected number", w.1) }),
        }
    }
}

/// `count` copies of `one` as a `[count, len(one)]` array (or `[count]` when `one` has one
/// number and `flat`).
fn repeated(one: &[f64], count: usize, flat: bool, t: &Tokens<'_>) -> Result<Tensor, AdbenchError> {
    let total = count.checked_mul(one.len()).filter(|&n| n <= MAX_ENTRIES).ok_or_else(|| t.err(format!("{count} copies of {} numbers are too many", one.len())))?;
    let mut data = Vec::with_capacity(total);
    for _ in 0..count {
        data.extend_from_slice(one);
    }
    let shape = if flat { vec![count] } else { vec![count, one.len()] };
    Ok(Tensor { shape, data: TensorData::F64(data) })
}

fn array(name: &str, shape: Vec<usize>, data: Vec<f64>) -> Argument {
    Argument::Array(name.into(), Tensor { shape, data: TensorData::F64(data) })
}

fn product(a: usize, b: usize, t: &Tokens<'_>) -> Result<usize, AdbenchError> {
    a.checked_mul(b).filter(|&n| n <= MAX_ENTRIES).ok_or_else(|| t.err(format!("sizes {a} × {b} are too large")))
}

fn gmm(t: &mut Tokens<'_>) -> Result<Vec<Argument>, AdbenchError> {
    let d = t.size("d (the dimension)")?;
    let k = t.size("k (the component count)")?;
    let n = t.size("n (the point count)")?;
    let icf = d * (d + 1) / 2;
    let alphas = t.floats(k, "the alphas")?;
    let means = t.floats(product(k, d, t)?, "the means")?;
    let icfs = t.floats(product(k, icf, t)?, "the icf rows")?;
    // All n points, or one that stands for all of them; then `gamma m`.
    let x = if t.left() == product(n, d, t)? + 2 {
        Tensor { shape: vec![n, d], data: TensorData::F64(t.floats(n * d, "the points")?) }
    } else {
        let one = t.floats(d, "the point")?;
        repeated(&one, n, false, t)?
    };
    let gamma = t.float("the Wishart gamma")?;
    let w = t.next("the Wishart m")?;
    let m: i64 = w.parse().map_err(|_| {
        t.at -= 1;
        t.err(format!("the Wishart m must be an integer, found `{w}`"))
    })?;
    t.end()?;
    Ok(vec![
        array("alphas", vec![k], alphas),
        array("means", vec![k, d], means),
        array("icf", vec![k, icf], icfs),
        Argument::Array("x".into(), x),
        Argument::Scalar("gamma".into(), Value::F64(gamma)),
        Argument::Scalar("m".into(), Value::I64(m)),
    ])
}

fn ba(t: &mut Tokens<'_>) -> Result<Vec<Argument>, AdbenchError> {
    let n = t.size("n (the camera count)")?;
    let m = t.size("m (the point count)")?;
    let p = t.size("p (the observation count)")?;
    if p > 0 && (n == 0 || m == 0) {
        return Err(t.err(format!("{p} observations need at least one camera and one point")));
    }
    let cam = t.floats(11, "the camera")?;
    let x = t.floats(3, "the point")?;
    let w = t.floats(1, "the weight")?;
    let feat = t.floats(2, "the feature")?;
    t.end()?;
    product(p, 2, t)?;
    let obs: Vec<i64> = (0..p).flat_map(|i| [(i % n.max(1)) as i64, (i % m.max(1)) as i64]).collect();
    Ok(vec![
        Argument::Array("cams".into(), repeated(&cam, n, false, t)?),
        Argument::Array("x".into(), repeated(&x, m, false, t)?),
        Argument::Array("w".into(), repeated(&w, p, true, t)?),
        Argument::Array("obs".into(), Tensor { shape: vec![p, 2], data: TensorData::I64(obs) }),
        Argument::Array("feats".into(), repeated(&feat, p, false, t)?),
    ])
}

fn lstm(t: &mut Tokens<'_>) -> Result<Vec<Argument>, AdbenchError> {
    let l = t.size("l (the layer count)")?;
    let c = t.size("c (the sequence length)")?;
    let b = t.size("b (the alphabet size)")?;
    let (rows, cols) = (product(2, l, t)?, product(4, b, t)?);
    let main = t.floats(product(rows, cols, t)?, "the main parameters")?;
    let extra = t.floats(product(3, b, t)?, "the extra parameters")?;
    let state = t.floats(product(rows, b, t)?, "the state")?;
    let sequence = t.floats(product(c, b, t)?, "the sequence")?;
    t.end()?;
    Ok(vec![
        array("main_params", vec![rows, cols], main),
        array("extra_params", vec![3, b], extra),
        array("state", vec![rows, b], state),
        array("sequence", vec![c, b], sequence),
    ])
}

/// The arguments of `problem`'s program from the text of an ADBench instance file.
pub fn read(problem: Problem, text: &str) -> Result<Vec<Argument>, AdbenchError> {
    let mut t = Tokens::new(text);
    match problem {
        Problem::Gmm => gmm(&mut t),
        Problem::Ba => ba(&mut t),
        Problem::Lstm => lstm(&mut t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(args: &[Argument]) -> Vec<(String, Vec<usize>)> {
        args.iter()
            .filter_map(|a| match a {
                Argument::Array(n, t) => Some((n.clone(), t.shape.clone())),
                Argument::Scalar(..) => None,
            })
            .collect()
    }

    #[test]
    fn reads_gmm_with_all_points_or_one() {
        let all = "2 2 3\n0.1\n0.2\n1 2\n3 4\n0.5 0.6 0.7\n0.8 0.9 1.0\n1 1\n2 2\n3 3\n1.5 0\n";
        let args = read(Problem::Gmm, all).unwrap();
        assert_eq!(shapes(&args), vec![("alphas".into(), vec![2]), ("means".into(), vec![2, 2]), ("icf".into(), vec![2, 3]), ("x".into(), vec![3, 2])]);
        assert_eq!(args[4], Argument::Scalar("gamma".into(), Value::F64(1.5)));
        assert_eq!(args[5], Argument::Scalar("m".into(), Value::I64(0)));
        let one = "2 2 3\n0.1 0.2\n1 2 3 4\n0.5 0.6 0.7 0.8 0.9 1.0\n7 8\n1.5 0\n";
        let Argument::Array(_, x) = &read(Problem::Gmm, one).unwrap()[3] else { panic!() };
        assert_eq!(x.data, TensorData::F64(vec![7.0, 8.0, 7.0, 8.0, 7.0, 8.0]));
    }

    #[test]
    fn reads_ba_and_lstm() {
        let text = "2 3 4\n1 2 3 4 5 6 7 8 9 10 11\n0.1 0.2 0.3\n0.9\n5 6\n";
        let args = read(Problem::Ba, text).unwrap();
        assert_eq!(shapes(&args), vec![("cams".into(), vec![2, 11]), ("x".into(), vec![3, 3]), ("w".into(), vec![4]), ("obs".into(), vec![4, 2]), ("feats".into(), vec![4, 2])]);
        let Argument::Array(_, obs) = &args[3] else { panic!() };
        assert_eq!(obs.data, TensorData::I64(vec![0, 0, 1, 1, 0, 2, 1, 0]));
        let (l, c, b) = (1, 2, 2);
        let numbers: Vec<String> = (0..(8 * l * b + 3 * b + 2 * l * b + c * b)).map(|i| format!("{}", i as f64 * 0.5)).collect();
        let args = read(Problem::Lstm, &format!("{l} {c} {b}\n{}\n", numbers.join(" "))).unwrap();
        assert_eq!(shapes(&args), vec![("main_params".into(), vec![2, 8]), ("extra_params".into(), vec![3, 2]), ("state".into(), vec![2, 2]), ("sequence".into(), vec![2, 2])]);
    }

    #[test]
    fn bad_files_name_the_line() {
        let e = read(Problem::Gmm, "2 2\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: the file ends where n (the point count) was expected");
        let e = read(Problem::Gmm, "2 2 3\n0.1\nx\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: the alphas must be a number, found `x`");
        let e = read(Problem::Ba, "1 1 -3\n").unwrap_err();
        assert!(e.to_string().starts_with("line 1: p (the observation count) must be a size"), "{e}");
        let e = read(Problem::Ba, "1 1 1\n1 2 3 4 5 6 7 8 9 10 11\n0 0 0\n1\n1 2\n3\n").unwrap_err();
        assert_eq!(e.to_string(), "line 6: unexpected `3` after the last expected number");
        let e = read(Problem::Lstm, "99999999 99999999 99999999\n").unwrap_err();
        assert!(e.to_string().contains("too large") || e.to_string().contains("expected"), "{e}");
        assert!(read(Problem::Ba, "").is_err());
    }
}
