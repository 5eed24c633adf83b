//! `.npy` files in and out of `madc run`: arrays for vector, matrix, fixed-size and integer
//! parameters, every bad argument named with what it expects, `--out-npy` round trips, and
//! the embedding API's `Matrix`.

use crate::cli_common::madc;
use mad::front::SurfaceType;
use mad::{Matrix, Program, Tensor, TensorData, Value};
use mad_runtime::npy;
use std::path::PathBuf;

const PROGRAM: &str = "
fn main(v: vector) -> f64 { sum(v) }
fn scaled(m: matrix, s: f64) -> matrix { m * s }
fn fixed(v: vec3, m: mat2x3) -> vec3 { v + m[1] }
fn ints(v: [i64]) -> i64 { sum(v) }
fn rows3(m: [[i64; 3]]) -> [[i64; 3]] { m }
fn twice(x: f64) -> f64 { 2.0 * x }
fn pair(v: vector) -> (f64, vector) { (sum(v), v) }
fn nothing(v: vector) { print(len(v)); }
fn pt(p: (f64, f64)) -> f64 { p.0 }
";

/// This test's scratch directory (tests run in parallel: each names its own).
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mad-run-npy-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn source(d: &PathBuf) -> String {
    let p = d.join("prog.mad");
    std::fs::write(&p, PROGRAM).unwrap();
    p.display().to_string()
}

fn save(d: &PathBuf, name: &str, shape: &[usize], data: TensorData) -> String {
    let p = d.join(name);
    npy::save(&p, &Tensor::new(shape.to_vec(), data).unwrap()).unwrap();
    p.display().to_string()
}

fn save_bytes(d: &PathBuf, name: &str, bytes: &[u8]) -> String {
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// `madc run PROG [--entry E] -- ARGS`, on the JIT and on the interpreter (which must agree).
fn run(prog: &str, entry: &str, args: &[&str]) -> (i32, String, String) {
    let mut first = None;
    for interp in [false, true] {
        let mut a = vec!["run", prog, "--entry", entry];
        if interp {
            a.push("--interp");
        }
        a.push("--");
        a.extend_from_slice(args);
        let r = madc(&a);
        match &first {
            None => first = Some(r),
            Some(f) => assert_eq!(f, &r, "the JIT and the interpreter differ on {args:?}"),
        }
    }
    first.unwrap()
}

#[test]
fn vector_and_matrix_arguments() {
    let d = dir("args");
    let prog = source(&d);
    let v = save(&d, "v.npy", &[4], TensorData::F64(vec![1.0, 2.0, 3.5, -0.5]));
    assert_eq!(run(&prog, "main", &[&v]), (0, "6.0\n".into(), String::new()));
    let m = save(&d, "m.npy", &[2, 3], TensorData::F64((0..6).map(f64::from).collect()));
    let (rc, out, err) = run(&prog, "scaled", &[&m, "2"]);
    assert_eq!((rc, out.as_str()), (0, "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]\n"), "{err}");
    // Fixed sizes when the lengths match; a 0-d array for a scalar.
    let v3 = save(&d, "v3.npy", &[3], TensorData::F64(vec![1.0; 3]));
    assert_eq!(run(&prog, "fixed", &[&v3, &m]).1, "[4.0, 5.0, 6.0]\n");
    let s = save(&d, "s.npy", &[], TensorData::F64(vec![1.25]));
    assert_eq!(run(&prog, "twice", &[&s]).1, "2.5\n");
    // Integer arrays: `[i64]`, `[[i64; 3]]`; an int32 array is widened.
    let i = save(&d, "i.npy", &[3], TensorData::I64(vec![5, -2, 10]));
    assert_eq!(run(&prog, "ints", &[&i]).1, "13\n");
    let mi = save(&d, "mi.npy", &[2, 3], TensorData::I64((0..6).collect()));
    assert_eq!(run(&prog, "rows3", &[&mi]).1, "[[0, 1, 2], [3, 4, 5]]\n");
    // Integer and float32 arrays fill float parameters.
    assert_eq!(run(&prog, "main", &[&i]).1, "13.0\n");
    let f4 = save(&d, "f4.npy", &[2], TensorData::F32(vec![0.5, 0.25]));
    assert_eq!(run(&prog, "main", &[&f4]).1, "0.75\n");
    let mut i4 = b"\x93NUMPY\x01\x00".to_vec();
    let h = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
    i4.extend((h.len() as u16).to_le_bytes());
    i4.extend(h.as_bytes());
    i4.extend([7i32, -3].iter().flat_map(|x| x.to_le_bytes()));
    let i4 = save_bytes(&d, "i4.npy", &i4);
    assert_eq!(run(&prog, "ints", &[&i4]).1, "4\n");
    // An empty vector.
    let e = save(&d, "e.npy", &[0], TensorData::F64(vec![]));
    assert_eq!(run(&prog, "main", &[&e]).1, "0.0\n");
}

/// An `.npy` header with the given dict text and data bytes.
fn npy_bytes(header: &str, body: &[u8]) -> Vec<u8> {
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    let h = format!("{header}\n");
    b.extend((h.len() as u16).to_le_bytes());
    b.extend(h.as_bytes());
    b.extend(body);
    b
}

#[test]
fn every_bad_argument_is_named_with_what_it_expects() {
    let d = dir("errors");
    let prog = source(&d);
    let v = save(&d, "v.npy", &[4], TensorData::F64(vec![1.0; 4]));
    let good = std::fs::read(&v).unwrap();
    let f8 = |n: usize| vec![0u8; 8 * n];
    let missing = d.join("missing.npy").display().to_string();
    let cases: Vec<(&str, Vec<String>, &str, &str)> = vec![
        ("main", vec![missing], "argument 1 (`v: vector`) of `main`", "cannot read"),
        ("main", vec![save_bytes(&d, "text.npy", b"hello, world\n")], "argument 1 (`v: vector`)", "not a .npy file"),
        ("main", vec![save_bytes(&d, "head.npy", &good[..30])], "argument 1 (`v: vector`)", "truncated"),
        ("main", vec![save_bytes(&d, "data.npy", &good[..good.len() - 5])], "argument 1 (`v: vector`)", "truncated data"),
        (
            "main",
            vec![save_bytes(&d, "magic.npy", &[b"\x93NUMPZ", &good[6..]].concat())],
            "argument 1 (`v: vector`)",
            "\\x93NUMPY magic",
        ),
        (
            "main",
            vec![save_bytes(&d, "i2.npy", &npy_bytes("{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }", &[0, 0]))],
            "argument 1 (`v: vector`)",
            "unsupported dtype '<i2'",
        ),
        (
            "main",
            vec![save_bytes(&d, "be.npy", &npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", &f8(1)))],
            "argument 1 (`v: vector`)",
            "big-endian dtype '>f8'",
        ),
        (
            "main",
            vec![save(&d, "m.npy", &[2, 2], TensorData::F64(vec![0.0; 4]))],
            "argument 1 (`v: vector`)",
            "the file holds a 2-D array of shape (2, 2)",
        ),
        (
            "scaled",
            vec![v.clone(), "1".into()],
            "argument 1 (`m: matrix`) of `scaled`",
            "the file holds a 1-D array of shape (4,); expected a 2-D float64",
        ),
        (
            "fixed",
            vec![v.clone(), save(&d, "m23.npy", &[2, 3], TensorData::F64(vec![0.0; 6]))],
            "argument 1 (`v: vec3`) of `fixed`",
            "shape (4,); expected a 1-D float64 (or float32 or integer) array of shape (3,)",
        ),
        (
            "fixed",
            vec![save(&d, "v3.npy", &[3], TensorData::F64(vec![0.0; 3])), save(&d, "m32.npy", &[3, 2], TensorData::F64(vec![0.0; 6]))],
            "argument 2 (`m: mat2x3`) of `fixed`",
            "expected a 2-D float64 (or float32 or integer) array of shape (2, 3)",
        ),
        ("ints", vec![v.clone()], "argument 1 (`v: [i64]`) of `ints`", "holds float64 data; expected a 1-D integer array"),
        ("main", vec!["3".into()], "argument 1 (`v: vector`)", "`3` is not a .npy file"),
        ("twice", vec!["x".into()], "argument 1 (`x: f64`) of `twice`", "`x` is not an f64"),
        ("scaled", vec![v.clone()], "`scaled` takes 2 arguments but 1 was given", "missing argument 2 (`s: f64`)"),
        ("main", vec![v.clone(), v.clone()], "`main` takes 1 argument but 2 were given", "extra `"),
        ("pt", vec![v.clone()], "`pt` cannot be run from the command line", "argument 1 (`p: (f64, f64)`)"),
    ];
    for (entry, args, names, says) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (rc, out, err) = run(&prog, entry, &args);
        assert_eq!(rc, 1, "{entry} {args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.starts_with("error: ") && err.contains(names) && err.contains(says), "{entry} {args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn out_npy_writes_the_result() {
    let d = dir("out");
    let prog = source(&d);
    let m = save(&d, "m.npy", &[2, 3], TensorData::F64((0..6).map(f64::from).collect()));
    let out = d.join("r.npy").display().to_string();
    for interp in [false, true] {
        let mut a = vec!["run", &prog, "--entry", "scaled", "--out-npy", &out];
        if interp {
            a.push("--interp");
        }
        a.extend(["--", &m, "0.5"]);
        let (rc, stdout, err) = madc(&a);
        assert_eq!((rc, stdout.as_str()), (0, ""), "{err}");
        let r = npy::load(&out).unwrap();
        assert_eq!(r, Tensor::from_f64(vec![2, 3], vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5]).unwrap());
    }
    // The written file is an argument again: a round trip.
    let (rc, stdout, _) = madc(&["run", &prog, "--entry", "scaled", "--", &out, "2"]);
    assert_eq!((rc, stdout.as_str()), (0, "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]\n"));
    // Scalars as 0-d arrays, i64 as int64, and what the program prints still goes to stdout.
    let v = save(&d, "v.npy", &[3], TensorData::F64(vec![1.0, 2.0, 3.0]));
    let s = d.join("s.npy").display().to_string();
    assert_eq!(madc(&["run", &prog, "--out-npy", &s, "--", &v]).0, 0);
    assert_eq!(npy::load_value(&s).unwrap(), Value::F64(6.0));
    let i = save(&d, "i.npy", &[2], TensorData::I64(vec![4, 5]));
    assert_eq!(madc(&["run", &prog, "--entry", "ints", "--out-npy", &s, "--", &i]).0, 0);
    let t = npy::load(&s).unwrap();
    assert_eq!((t.shape.len(), t.data), (0, TensorData::I64(vec![9])));
    let mi = save(&d, "mi.npy", &[1, 3], TensorData::I64(vec![1, 2, 3]));
    assert_eq!(madc(&["run", &prog, "--entry", "rows3", "--out-npy", &s, "--", &mi]).0, 0);
    assert_eq!(npy::load(&s).unwrap(), npy::load(&mi).unwrap());
    // A tuple or unit result, before running; a file that cannot be written, after.
    for (entry, says) in [("pair", "returns a tuple `(f64, vector)`"), ("nothing", "returns nothing")] {
        let (rc, stdout, err) = madc(&["run", &prog, "--entry", entry, "--out-npy", &s, "--", &v]);
        assert_eq!((rc, stdout.as_str()), (1, ""), "{err}");
        assert!(err.contains("--out-npy") && err.contains(says), "{err}");
    }
    let bad = d.join("no-such-dir").join("r.npy").display().to_string();
    let (rc, _, err) = madc(&["run", &prog, "--out-npy", &bad, "--", &v]);
    assert_eq!(rc, 1);
    assert!(err.contains("--out-npy") && err.contains("cannot write"), "{err}");
    // A file solved over a mesh has no function result to write.
    let energy = d.join("energy.mad");
    std::fs::write(&energy, "dof x: vertex -> vec3;\nenergy e(v: vertex) { dot(x[v.v0], x[v.v0]) }\n").unwrap();
    let (rc, _, err) = madc(&["run", energy.to_str().unwrap(), "--mesh", "grid:2x2", "--out-npy", &s]);
    assert_eq!(rc, 1);
    assert!(err.contains("--out-npy") && err.contains("--entry"), "{err}");
}

#[test]
fn the_api_takes_and_returns_matrices() {
    let p = Program::compile_str("m.mad", PROGRAM).unwrap();
    let scaled = p.function::<(Matrix, f64), Matrix>("scaled").unwrap();
    let m = Matrix::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]]).unwrap();
    let r = scaled.call((m.clone(), 10.0)).unwrap();
    assert_eq!((r.rows(), r.cols(), r.data()), (3, 2, &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0][..]));
    assert_eq!((r.get(2, 1), r.get(3, 0)), (Some(60.0), None));
    let rows = p.function::<(Matrix, f64), Vec<Vec<f64>>>("scaled").unwrap();
    assert_eq!(rows.call((Matrix::zeros(0, 4), 1.0)).unwrap(), Vec::<Vec<f64>>::new());
    assert_eq!(rows.call((m, 1.0)).unwrap()[2], vec![5.0, 6.0]);
    // Checked once: a Matrix is not a vector, nor a fixed matrix; ragged rows are no matrix.
    assert!(p.function::<(Matrix,), f64>("main").is_err());
    assert!(p.function::<(Vec<f64>, Matrix), [f64; 3]>("fixed").is_err());
    assert!(Matrix::from_rows(&[vec![1.0], vec![1.0, 2.0]]).is_none());
    assert!(Matrix::new(2, 2, vec![1.0; 3]).is_none());
    // A Value whose data does not match its shape is refused, not read past its end.
    let lying = Value::Tensor(Tensor { shape: vec![4, 4], data: TensorData::F64(vec![1.0; 3]) });
    assert!(p.call("scaled", &[lying, Value::F64(1.0)]).is_err());
    // `.npy` files for hosts: as stored, or read for a parameter's type.
    let d = dir("api");
    let path = d.join("m.npy");
    npy::save(&path, &Matrix::new(1, 2, vec![1.5, 2.5]).unwrap().into()).unwrap();
    let stored = npy::load_value(&path).unwrap();
    let m = mad::api::load_npy_for(&path, &SurfaceType::Matrix).unwrap();
    assert_eq!(m, stored);
    assert_eq!(p.call("scaled", &[m, Value::F64(2.0)]).unwrap(), Value::Tensor(Tensor::from_f64(vec![1, 2], vec![3.0, 5.0]).unwrap()));
    let e = mad::api::load_npy_for(&path, &SurfaceType::Vec(3)).unwrap_err();
    assert!(matches!(e, mad::Error::Npy(_)) && e.to_string().contains("expected a 1-D"), "{e}");
}
