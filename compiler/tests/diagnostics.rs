//! Snapshot tests of the front end's diagnostics: each `tests/diagnostics/E01xx_*.mad`
//! at the workspace root is compiled, its diagnostics are rendered without colour,
//! and the text is compared with the snapshot. Every file must fail with its code,
//! and every code the front end defines must have a file. Each file is compiled as read
//! from its path (its `mod name;` declarations load files of `tests/diagnostics/modules/`),
//! except the E0134 files, whose error is that of a program given as text.
//!
//! Accept new output with `INSTA_UPDATE=always cargo test -p mad --test diagnostics`.

use codespan_reporting::term::{self, Config};
use mad::front::{SourceFiles, compile, compile_file};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/diagnostics")
}

/// Compiles `src` under `name`: as read from `path`, or as text without a file.
fn render(name: &str, src: &str, path: Option<&Path>) -> (String, Vec<String>) {
    let mut files = SourceFiles::new();
    let id = files.add(name.to_string(), src.to_string());
    let compiled = match path {
        Some(path) => compile_file(&mut files, id, path),
        None => compile(&mut files, id),
    };
    let diags = match compiled {
        Ok(_) => return (String::from("(compiled without errors)\n"), Vec::new()),
        Err(d) => d,
    };
    let config = Config::default();
    let mut out = String::new();
    let mut codes = Vec::new();
    for d in &diags {
        codes.extend(d.code.clone());
        out.push_str(&term::emit_into_string(&config, &files, d).expect("render diagnostic"));
    }
    (out, codes)
}

#[test]
fn diagnostics_snapshots() {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/diagnostics exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mad"))
        .collect();
    entries.sort();
    let mut seen = Vec::new();
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_string();
        let code = stem.split('_').next().expect("code prefix").to_string();
        let src = std::fs::read_to_string(&path).expect("read source");
        let from_file = (code != "E0134").then_some(path.as_path());
        let (out, codes) = render(&format!("{stem}.mad"), &src, from_file);
        assert!(
            codes.contains(&code),
            "{stem}: expected a diagnostic {code}, got {codes:?}\n{out}"
        );
        seen.push(code);
        insta::with_settings!({ snapshot_path => "snapshots/diagnostics", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(stem.clone(), format!("{src}\n---\n{out}"));
        });
    }
    for code in mad::front::diagnostics::ALL_CODES {
        assert!(
            seen.iter().any(|c| c == code),
            "no snapshot file tests/diagnostics/{code}_*.mad"
        );
    }
}
