//! Programs in several files (§7): `mod name;` and `mod name = "path";` load a module's
//! items from another file, through the embedding API and through `madc`; the errors of
//! loading name the file and line they come from, and so do run-time errors and `madc
//! explain` for code of a loaded file.

use mad::{Engine, Error, Program, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory holding `files` (relative path, text).
fn project(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mad-modules-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    dir
}

fn madc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_madc"))
        .args(args)
        .output()
        .expect("madc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// The compile diagnostics of a program that must not compile: (code, file, line) of
/// each, and the rendered text.
fn compile_errors(main: &Path) -> (Vec<(String, String, usize)>, String) {
    match Program::compile_file(main) {
        Err(Error::Compile(d)) => {
            let items = d
                .items()
                .into_iter()
                .map(|i| {
                    (
                        i.code.unwrap_or_default(),
                        i.file.unwrap_or_default(),
                        i.line.unwrap_or(0),
                    )
                })
                .collect();
            (items, d.render(false))
        }
        Err(other) => panic!("expected compile errors, got {other}"),
        Ok(_) => panic!("{} compiled", main.display()),
    }
}

/// The rendered diagnostics of `dir/main.mad`, which must be one error `code` at `line` of
/// `dir/file`.
fn only_error(dir: &Path, code: &str, file: &str, line: usize) -> String {
    let (errs, text) = compile_errors(&dir.join("main.mad"));
    let want = (code.to_string(), path_str(&dir.join(file)), line);
    assert_eq!(errs, [want], "{text}");
    text
}

const GEOMETRY: &str = "\
// Plane geometry.
const HALF: f64 = 0.5;

fn area(a: vec2, b: vec2) -> f64 {
    HALF * (a.x * b.y - a.y * b.x)
}

fn sq(x: f64) -> f64 { x * x }

fn pick(i: i64) -> f64 {
    let v = vec3(1.0, 2.0, 3.0);
    v[i]
}
";

const MAIN: &str = "\
mod geometry;
use geometry::area;

fn tri() -> f64 { area(vec2(2.0, 0.0), vec2(0.0, 3.0)) }
fn cube(x: f64) -> f64 { x * geometry::sq(x) }
fn main() {
    print(tri());
    print(geometry::HALF);
}
";

#[test]
fn a_two_file_program_through_the_api() {
    let dir = project("api", &[("main.mad", MAIN), ("geometry.mad", GEOMETRY)]);
    let p = Program::compile_file(dir.join("main.mad")).unwrap();
    for engine in [Engine::Jit, Engine::Interpreter] {
        let mut out = Vec::new();
        assert_eq!(
            p.call_with(engine, "tri", &[], &mut out).unwrap(),
            Value::F64(3.0)
        );
        assert_eq!(
            p.call_with(engine, "cube", &[Value::F64(2.0)], &mut out)
                .unwrap(),
            Value::F64(8.0)
        );
        p.call_with(engine, "main", &[], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "3.0\n0.5\n");
    }
    // A loaded module's functions are the program's, under their path.
    let sq = p.function::<(f64,), f64>("geometry::sq").unwrap();
    assert_eq!(sq.call((3.0,)).unwrap(), 9.0);
    // `EnergyProgram::compile_file` reads the same files.
    assert!(mad::energy::EnergyProgram::compile_file(dir.join("main.mad")).is_ok());
}

#[test]
fn a_two_file_program_through_madc() {
    let dir = project("cli", &[("main.mad", MAIN), ("geometry.mad", GEOMETRY)]);
    let main = path_str(&dir.join("main.mad"));
    for engine in [&[][..], &["--interp"][..]] {
        let mut args = vec!["run", main.as_str()];
        args.extend_from_slice(engine);
        let (rc, out, err) = madc(&args);
        assert_eq!(rc, 0, "{err}");
        assert_eq!(out, "3.0\n0.5\n");
    }
    let (rc, _, err) = madc(&["check", &main]);
    assert_eq!(rc, 0, "{err}");
    let (rc, out, err) = madc(&["run", &main, "--entry", "cube", "--", "3"]);
    assert_eq!((rc, out.as_str()), (0, "27.0\n"), "{err}");
    let (rc, out, err) = madc(&["emit", "ir", &main]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("geometry::area"), "{out}");
    let (rc, out, err) = madc(&["emit", "ir", "--grad", "geometry::sq", &main]);
    assert_eq!(rc, 0, "{err}");
    assert!(!out.is_empty());
}

#[test]
fn nested_loads_resolve_relative_to_the_declaring_file() {
    // main.mad loads lib/shapes.mad by path; shapes.mad's `mod circle;` is lib/circle.mad,
    // and circle.mad's `mod units = "../units.mad";` the units.mad beside main.mad.
    let dir = project(
        "nested",
        &[
            (
                "main.mad",
                "mod shapes = \"lib/shapes.mad\";\n\
                 fn main() { print(shapes::circle::area(2.0)); print(shapes::ring(2.0, 1.0)); }\n",
            ),
            (
                "lib/shapes.mad",
                "mod circle;\nfn ring(r: f64, s: f64) -> f64 { circle::area(r) - circle::area(s) }\n",
            ),
            (
                "lib/circle.mad",
                "mod units = \"../units.mad\";\nfn area(r: f64) -> f64 { units::PI * r * r }\n",
            ),
            ("units.mad", "const PI: f64 = 3.0;\n"),
            // Not loaded: a `circle.mad` beside main.mad must not be the one found.
            ("circle.mad", "fn area(r: f64) -> f64 { r }\n"),
        ],
    );
    let (rc, out, err) = madc(&["run", &path_str(&dir.join("main.mad"))]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "12.0\n9.0\n");
}

#[test]
fn use_brings_a_loaded_modules_items() {
    let dir = project(
        "use",
        &[
            (
                "main.mad",
                "mod ops;\nmod more;\n\
                 use ops::{add, mul};\nuse more::*;\n\
                 fn main() { print(add(1.0, mul(2.0, 3.0))); print(neg(4.0)); print(more::twice(1.5)); }\n",
            ),
            (
                "ops.mad",
                "fn add(a: f64, b: f64) -> f64 { a + b }\nfn mul(a: f64, b: f64) -> f64 { a * b }\n",
            ),
            // A loaded file's own `use` of a sibling module, reached through the root.
            (
                "more.mad",
                "use ops::mul;\nfn neg(x: f64) -> f64 { -x }\nfn twice(x: f64) -> f64 { mul(2.0, x) }\n",
            ),
        ],
    );
    let p = Program::compile_file(dir.join("main.mad")).unwrap();
    let mut out = Vec::new();
    p.call_with(Engine::Jit, "main", &[], &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "7.0\n-4.0\n3.0\n");
}

#[test]
fn derivatives_of_a_function_in_another_file() {
    let dir = project(
        "grad",
        &[
            (
                "main.mad",
                "mod poly;\n\
                 fn d(x: f64) -> f64 { grad(poly::cubic)(x) }\n\
                 fn h(x: f64) -> f64 { let m = hessian(poly::cubic)(x); m[0, 0] }\n\
                 fn uses(x: f64) -> f64 { poly::cubic(x) * 2.0 }\n\
                 fn du(x: f64) -> f64 { grad(uses)(x) }\n",
            ),
            (
                "poly.mad",
                "fn cubic(x: f64) -> f64 { x * x * x + 2.0 * x }\n",
            ),
        ],
    );
    let p = Program::compile_file(dir.join("main.mad")).unwrap();
    for engine in [Engine::Jit, Engine::Interpreter] {
        let mut out = Vec::new();
        let call = |name: &str, out: &mut Vec<u8>| {
            p.call_with(engine, name, &[Value::F64(2.0)], out).unwrap()
        };
        assert_eq!(call("d", &mut out), Value::F64(14.0));
        assert_eq!(call("h", &mut out), Value::F64(12.0));
        assert_eq!(call("du", &mut out), Value::F64(28.0));
    }
}

#[test]
fn a_missing_module_file_is_named_with_the_declaration() {
    let dir = project(
        "missing",
        &[(
            "main.mad",
            "fn main() {}\nmod gone;\nmod other = \"sub/x.mad\";\n",
        )],
    );
    let (errs, text) = compile_errors(&dir.join("main.mad"));
    let main = path_str(&dir.join("main.mad"));
    assert_eq!(
        errs,
        [("E0130".into(), main.clone(), 2), ("E0130".into(), main, 3)],
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "cannot find `{}`",
            path_str(&dir.join("gone.mad"))
        )),
        "{text}"
    );
    assert!(text.contains(&path_str(&dir.join("sub/x.mad"))), "{text}");
    // madc: the same diagnostics, exit status 1.
    let (rc, _, err) = madc(&["check", &path_str(&dir.join("main.mad"))]);
    assert_eq!(rc, 1);
    assert!(
        err.contains("error[E0130]") && err.contains("main.mad:2:5"),
        "{err}"
    );
}

#[test]
fn an_unreadable_module_file_is_an_error() {
    let dir = project(
        "unreadable",
        &[
            ("main.mad", "mod stuff = \"folder\";\n"),
            ("folder/keep.txt", ""),
        ],
    );
    let text = only_error(&dir, "E0131", "main.mad", 1);
    assert!(text.contains("cannot read"), "{text}");
    // Bytes that are not UTF-8 are error E0006 in the loaded file.
    let dir = project("latin1", &[("main.mad", "mod w;\n")]);
    std::fs::write(dir.join("w.mad"), b"fn f() {}\n// caf\xe9\n").unwrap();
    only_error(&dir, "E0006", "w.mad", 2);
}

#[test]
fn files_that_load_each_other_are_a_cycle() {
    let dir = project(
        "cycle",
        &[
            ("main.mad", "mod a;\nfn main() {}\n"),
            ("a.mad", "mod b;\nfn fa() -> f64 { 1.0 }\n"),
            ("b.mad", "fn fb() -> f64 { 2.0 }\nmod a = \"a.mad\";\n"),
        ],
    );
    let text = only_error(&dir, "E0132", "b.mad", 2);
    let a = path_str(&dir.join("a.mad"));
    let b = path_str(&dir.join("b.mad"));
    assert!(text.contains(&format!("{a} → {b} → {a}")), "{text}");
    // The root file loading itself.
    let dir = project("self", &[("main.mad", "mod main;\n")]);
    let (errs, text) = compile_errors(&dir.join("main.mad"));
    assert_eq!(errs[0].0, "E0132", "{text}");
}

#[test]
fn one_file_loaded_twice_is_an_error() {
    let dir = project(
        "twice",
        &[
            ("main.mad", "mod util;\nmod a;\n"),
            ("a.mad", "\nmod again = \"./util.mad\";\n"),
            ("util.mad", "fn f() -> f64 { 1.0 }\n"),
        ],
    );
    let text = only_error(&dir, "E0133", "a.mad", 2);
    assert!(text.contains("first loaded here"), "{text}");
}

#[test]
fn a_program_given_as_text_cannot_load_files() {
    match Program::compile_str("inline.mad", "fn main() {}\nmod geometry;\n") {
        Err(Error::Compile(d)) => {
            let items = d.items();
            assert_eq!(items.len(), 1);
            assert_eq!(items[0].code.as_deref(), Some("E0134"));
            assert_eq!(
                (items[0].file.as_deref(), items[0].line),
                (Some("inline.mad"), Some(2))
            );
            assert!(
                items[0]
                    .message
                    .contains("needs the program to come from a file"),
                "{}",
                items[0].message
            );
        }
        Err(other) => panic!("expected E0134, got {other}"),
        Ok(_) => panic!("compiled"),
    }
}

#[test]
fn errors_inside_a_loaded_file_name_that_file() {
    // A parse error and a type error: each at its own file and line, not the root's.
    let dir = project(
        "inner",
        &[
            (
                "main.mad",
                "mod good;\nmod bad;\nfn main() { print(good::one()); }\n",
            ),
            ("good.mad", "fn one() -> f64 {\n    1.0 + true\n}\n"),
            ("bad.mad", "fn ok() {}\n\nfn broken( {\n"),
        ],
    );
    only_error(&dir, "E0010", "bad.mad", 3);
    std::fs::write(dir.join("bad.mad"), "fn ok() {}\n").unwrap();
    let text = only_error(&dir, "E0102", "good.mad", 2);
    assert!(
        text.contains(&format!("{}:2:5", path_str(&dir.join("good.mad")))),
        "{text}"
    );
}

#[test]
fn mesh_declarations_belong_to_the_root_file() {
    let dir = project(
        "mesh",
        &[
            (
                "main.mad",
                "dof x: vertex -> vec3;\nmod springs;\nenergy e(v: edge) { springs::len2(x[v.v1] - x[v.v0]) }\n",
            ),
            (
                "springs.mad",
                "fn len2(d: vec3) -> f64 { dot(d, d) }\n\nparam k: f64 = 1.0;\n",
            ),
        ],
    );
    let text = only_error(&dir, "E0135", "springs.mad", 3);
    assert!(
        text.contains("a `param` cannot be declared in a module file"),
        "{text}"
    );
    // Functions of a module file called from the root's terms are fine.
    std::fs::write(
        dir.join("springs.mad"),
        "fn len2(d: vec3) -> f64 { dot(d, d) }\n",
    )
    .unwrap();
    let main = path_str(&dir.join("main.mad"));
    let (rc, out, err) = madc(&["eval", &main, "--mesh", "grid:2x2", "--energy"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("energy "), "{out}");
}

#[test]
fn a_run_time_error_in_a_loaded_file_names_that_file() {
    let dir = project("runtime", &[("main.mad", MAIN), ("geometry.mad", GEOMETRY)]);
    let geometry = path_str(&dir.join("geometry.mad"));
    let p = Program::compile_file(dir.join("main.mad")).unwrap();
    for engine in [Engine::Jit, Engine::Interpreter] {
        match p.call_with(engine, "geometry::pick", &[Value::I64(7)], &mut Vec::new()) {
            Err(Error::Runtime {
                at: Some(at),
                error,
            }) => {
                assert_eq!(
                    (at.file.as_str(), at.line, at.column),
                    (geometry.as_str(), 12, 5),
                    "{error}"
                );
                assert!(at.snippet.contains("v[i]"), "{}", at.snippet);
            }
            other => panic!("expected a located run-time error, got {other:?}"),
        }
    }
    let (rc, _, err) = madc(&[
        "run",
        &path_str(&dir.join("main.mad")),
        "--entry",
        "geometry::pick",
        "--",
        "7",
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains(&format!("{geometry}:12:5")), "{err}");
    assert!(
        err.contains("index 7 is out of bounds for length 3"),
        "{err}"
    );
}

#[test]
fn a_run_time_error_in_a_derivative_across_files_points_into_the_right_file() {
    // The derivative of b::f inlines a::g's reverse pass: the error is shown at f's call of
    // g, in b.mad (the generated code has no line of its own), not at a span of a.mad read
    // as if it were b.mad's.
    let dir = project(
        "derivative",
        &[
            (
                "main.mad",
                "mod a;\nmod b;\nfn main() { print(grad(b::f)(1.0, 5)); }\n",
            ),
            (
                "a.mad",
                "fn g(x: f64, i: i64) -> f64 {\n    let v = vec3(x, x, x);\n    v[i] * x\n}\n",
            ),
            (
                "b.mad",
                "// b\n\n\nfn f(x: f64, i: i64) -> f64 {\n    a::g(x, i) * 2.0\n}\n",
            ),
        ],
    );
    let b = path_str(&dir.join("b.mad"));
    let (rc, _, err) = madc(&["run", &path_str(&dir.join("main.mad"))]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains(&format!("{b}:5:5")), "{err}");
}

#[test]
fn explain_places_a_loaded_files_regions_in_that_file() {
    let dir = project(
        "explain",
        &[
            (
                "main.mad",
                "mod loops;\nfn main() { print(grad(loops::total)(2.0)); }\n",
            ),
            (
                "loops.mad",
                "// loops\nfn total(x: f64) -> f64 {\n    let mut s = 0.0;\n    for i in 0..3 {\n        s += x * i as f64;\n    }\n    s\n}\n",
            ),
        ],
    );
    let (rc, out, err) = madc(&["explain", &path_str(&dir.join("main.mad"))]);
    assert_eq!(rc, 0, "{err}");
    let loops = path_str(&dir.join("loops.mad"));
    assert!(
        out.contains(&format!(
            "fn loops::total(x: f64) -> f64 (in {loops})\n  for at 4:5:"
        )),
        "{out}"
    );
    assert!(out.contains("fn main()\n"), "{out}");
}
