//! Snapshot tests of `madc explain`: each `tests/explain/*.mad` at the workspace
//! root is compiled and the mode chosen for every region is compared with the
//! snapshot; the chosen modes are also checked against the emitted derivative IR
//! (a region reported as taped has `tape.push` in its gradient, and only then).
//!
//! Accept new output with `INSTA_UPDATE=always cargo test -p mad --test explain`.

use mad::front::{SourceFiles, compile};
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/explain")
}

fn compiled(name: &str, src: &str) -> (mad::front::Compiled, SourceFiles) {
    let mut files = SourceFiles::new();
    let id = files.add(name.to_string(), src.to_string());
    let c = compile(&mut files, id).unwrap_or_else(|_| panic!("{name} compiles"));
    (c, files)
}

#[test]
fn explain_snapshots() {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/explain exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mad"))
        .collect();
    entries.sort();
    assert!(entries.len() >= 2);
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_string();
        let src = std::fs::read_to_string(&path).expect("read source");
        let (c, files) = compiled(&format!("{stem}.mad"), &src);
        let out = mad::front::explain::explain(&c, &files);
        insta::with_settings!({ snapshot_path => "snapshots/explain", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(stem.clone(), out);
        });
    }
}

#[test]
fn reported_modes_match_the_gradient_ir() {
    let src = std::fs::read_to_string(corpus().join("loops.mad")).expect("read");
    let (c, _files) = compiled("loops.mad", &src);
    for (name, taped) in [
        ("b3", true),
        ("early", true),
        ("stored", false),
        ("straight", false),
    ] {
        let mut m = c.module.clone();
        let f = c.function(name).expect("function").func;
        let g = mad::ad::vjp(&mut m, f).expect("reverse mode");
        let text = mad::ir::print::print_function(&m, g);
        assert_eq!(text.contains("tape.push"), taped, "{name}:\n{text}");
        assert_eq!(text.contains("tape.pop"), taped, "{name}:\n{text}");
    }
}

/// Recursion reported as split on the tape has `$rfwd`/`$rbwd` behind its
/// gradient; recursion reported as recomputing has neither.
#[test]
fn reported_recursion_modes_match_the_gradient_ir() {
    let src = std::fs::read_to_string(corpus().join("recursion.mad")).expect("read");
    let (c, files) = compiled("recursion.mad", &src);
    let text = mad::front::explain::explain(&c, &files);
    for (name, split) in [
        ("rpow", true),
        ("tree", true),
        ("ev", true),
        ("od", true),
        ("loopy", false),
        ("strict", false),
    ] {
        let mut m = c.module.clone();
        let f = c.function(name).expect("function").func;
        mad::ad::vjp(&mut m, f).expect("reverse mode");
        assert_eq!(m.find(&format!("{name}$rfwd")).is_some(), split, "{name}");
        assert_eq!(m.find(&format!("{name}$rbwd")).is_some(), split, "{name}");
    }
    assert_eq!(
        text.matches("recursion: split on the tape, O(depth)")
            .count(),
        5
    );
    assert_eq!(text.matches("O(depth²) work").count(), 4);
}

/// An energy term reported as taped has `tape.push` in its gradient, as functions do;
/// residual terms are reported as forward mode (their Jacobian has no reverse pass).
#[test]
fn reported_term_modes_match_the_gradient_ir() {
    let src = std::fs::read_to_string(corpus().join("terms.mad")).expect("read");
    let (c, files) = compiled("terms.mad", &src);
    let text = mad::front::explain::explain(&c, &files);
    assert!(text.contains("residual fit(e: vertex)\n  forward mode: the Jacobian"), "{text}");
    for t in &c.mesh.energies {
        let mut m = c.module.clone();
        let g = mad::ad::vjp(&mut m, t.func).expect("reverse mode");
        let ir = mad::ir::print::print_function(&m, g);
        let taped = t.name == "settle";
        assert_eq!(ir.contains("tape.push"), taped, "{}:\n{ir}", t.name);
    }
    assert_eq!(text.matches("while at 13:5: tape").count(), 1, "{text}");
}
