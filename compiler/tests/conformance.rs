//! The language reference (`docs/language.md`) as executable claims: every
//! `tests/conformance/*.mad` at the workspace root is run through `madc` on the JIT and
//! on the reference interpreter.
//!
//! A file holds one or more cases, separated by a line `// ====`. Each case is a whole
//! program and says what it must do with comment lines:
//!
//! - `// expected output:` followed by `// `-prefixed lines: `madc run` succeeds and
//!   writes exactly those lines to standard output;
//! - `// expected error: E0xxx`: `madc check` and `madc run` fail with exit status 1 and
//!   a diagnostic with that code;
//! - `// expected run-time error: TEXT`: `madc run` exits with status 2 and standard error
//!   contains `TEXT` (and standard output is the expected output, if the case gives one);
//! - `// expected argument error: TEXT`: `madc run` rejects the command-line arguments
//!   before running (exit status 1, `TEXT` on standard error);
//! - `// expected check: ok`: `madc check` succeeds (files without `main`);
//! - `// args: ARG ...`: extra arguments after the file for `madc run`
//!   (`--entry NAME`, `-- 1.5 3`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance")
}

fn madc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madc"))
        .args(args)
        .output()
        .expect("madc runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What one case expects.
#[derive(Default)]
struct Expect {
    output: Option<String>,
    error: Option<String>,
    runtime_error: Option<String>,
    argument_error: Option<String>,
    check_ok: bool,
    args: Vec<String>,
}

fn directive<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.trim()
        .strip_prefix("//")?
        .trim_start()
        .strip_prefix(key)
        .map(str::trim)
}

fn parse_expect(src: &str) -> Expect {
    let mut e = Expect::default();
    let mut lines = src.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "// expected output:" {
            let mut out = String::new();
            for l in lines.by_ref() {
                let Some(rest) = l.strip_prefix("//") else {
                    break;
                };
                out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                out.push('\n');
            }
            e.output = Some(out);
        } else if let Some(c) = directive(l, "expected error:") {
            e.error = Some(c.to_string());
        } else if let Some(m) = directive(l, "expected run-time error:") {
            e.runtime_error = Some(m.to_string());
        } else if let Some(m) = directive(l, "expected argument error:") {
            e.argument_error = Some(m.to_string());
        } else if directive(l, "expected check:") == Some("ok") {
            e.check_ok = true;
        } else if let Some(a) = directive(l, "args:") {
            e.args = a.split_whitespace().map(String::from).collect();
        }
    }
    e
}

/// Runs one case; returns the failures it found.
fn run_case(name: &str, file: &str, src: &str) -> Vec<String> {
    let e = parse_expect(src);
    let mut fails = Vec::new();
    let kinds = [
        e.output.is_some() || e.runtime_error.is_some(),
        e.error.is_some(),
        e.argument_error.is_some(),
        e.check_ok,
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return vec![format!(
            "{name}: a case needs exactly one kind of expectation"
        )];
    }
    if let Some(code) = &e.error {
        let out = madc(&["check", file]);
        let err = text(&out.stderr);
        if out.status.code() != Some(1) || !err.contains(&format!("[{code}]")) {
            fails.push(format!(
                "{name}: check should fail with {code}, got {:?}:\n{err}",
                out.status.code()
            ));
        }
    }
    if e.check_ok {
        let out = madc(&["check", file]);
        if !out.status.success() {
            fails.push(format!("{name}: check failed:\n{}", text(&out.stderr)));
        }
        return fails;
    }
    for engine in [None, Some("--interp")] {
        let mut args = vec!["run", file];
        args.extend(engine);
        args.extend(e.args.iter().map(String::as_str));
        let out = madc(&args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let tag = format!("{name} [{}]", engine.unwrap_or("jit"));
        let code = out.status.code();
        if let Some(c) = &e.error {
            if code != Some(1) || !stderr.contains(&format!("[{c}]")) {
                fails.push(format!(
                    "{tag}: run should fail with {c}, got {code:?}:\n{stderr}"
                ));
            }
        } else if let Some(m) = &e.argument_error {
            if code != Some(1) || !stderr.contains(m.as_str()) || !stdout.is_empty() {
                fails.push(format!(
                    "{tag}: expected argument error `{m}`, got {code:?}:\n{stdout}\n{stderr}"
                ));
            }
        } else if let Some(m) = &e.runtime_error {
            if code != Some(2) || !stderr.contains(m.as_str()) {
                fails.push(format!(
                    "{tag}: expected run-time error `{m}`, got {code:?}:\n{stderr}"
                ));
            }
            if let Some(want) = &e.output
                && &stdout != want
            {
                fails.push(format!("{tag}: output\n{stdout}\nexpected\n{want}"));
            }
        } else if let Some(want) = &e.output {
            if code != Some(0) {
                fails.push(format!("{tag}: exit {code:?}:\n{stderr}"));
            } else if &stdout != want {
                fails.push(format!("{tag}: output\n{stdout}\nexpected\n{want}"));
            }
        }
    }
    fails
}

/// The cases of one file: the text between `// ====` lines.
fn cases(src: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for l in src.lines() {
        if l.trim() == "// ====" {
            out.push(String::new());
        } else {
            let last = out.last_mut().expect("one case");
            last.push_str(l);
            last.push('\n');
        }
    }
    out.retain(|c| {
        c.lines()
            .any(|l| !l.trim().is_empty() && !l.trim().starts_with("//"))
    });
    out
}

#[test]
fn the_language_reference_holds() {
    let dir = std::env::temp_dir().join(format!("mad-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/conformance exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mad"))
        .collect();
    files.sort();
    let mut fails = Vec::new();
    let mut total = 0;
    for path in &files {
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let src = std::fs::read_to_string(path).unwrap();
        for (i, case) in cases(&src).iter().enumerate() {
            let name = format!("{stem}#{}", i + 1);
            let file = dir.join(format!("{stem}-{}.mad", i + 1));
            std::fs::write(&file, case).unwrap();
            fails.extend(run_case(&name, file.to_str().unwrap(), case));
            total += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        fails.is_empty(),
        "{} of {total} cases failed:\n\n{}",
        fails.len(),
        fails.join("\n\n")
    );
    assert!(
        files.len() >= 20 && total >= 100,
        "only {} files, {total} cases",
        files.len()
    );
}
