//! Every bundled example runs with `madc` and prints what its `// expected output:`
//! block says, on the JIT and on the reference interpreter; examples without a
//! `main` (mesh-energy files) must pass `madc check`. An example in several files is a
//! folder of `examples/` whose `main.mad` is the program (the other files are the modules
//! it loads).

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// The lines after `// expected output:`, each without its `// ` prefix.
fn expected_output(src: &str) -> Option<String> {
    let mut lines = src
        .lines()
        .skip_while(|l| l.trim() != "// expected output:");
    lines.next()?;
    let mut out = String::new();
    for l in lines {
        let Some(rest) = l.strip_prefix("//") else {
            break;
        };
        out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        out.push('\n');
    }
    Some(out)
}

fn madc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_madc"))
        .args(args)
        .output()
        .expect("madc runs")
}

/// The example programs: each `examples/*.mad`, and `main.mad` of each folder of `examples/`.
fn programs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let main = path.join("main.mad");
            if main.is_file() {
                out.push(main);
            }
        } else if path.extension().and_then(|e| e.to_str()) == Some("mad") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn examples_print_their_expected_output() {
    let mut ran = 0;
    let programs = programs();
    assert!(programs.iter().any(|p| p.ends_with("modules/main.mad")), "{programs:?}");
    for path in programs {
        let src = std::fs::read_to_string(&path).unwrap();
        let file = path.to_str().unwrap();
        match expected_output(&src) {
            Some(expected) => {
                for engine in [&[][..], &["--interp"][..]] {
                    let mut args = vec!["run", file];
                    args.extend_from_slice(engine);
                    let out = madc(&args);
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert!(
                        out.status.success(),
                        "{file} {engine:?} failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    assert_eq!(stdout, expected, "{file} {engine:?}");
                }
                ran += 1;
            }
            None => {
                let out = madc(&["check", file]);
                assert!(
                    out.status.success(),
                    "{file}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    assert!(ran >= 5, "only {ran} examples with expected output");
}
