//! Snapshot tests of the cleaned derivative IR that `madc emit ir --grad NAME`
//! (and `--hessian`, `--jvp`, `--vjp`) prints: each `tests/ad/*.mad` at the
//! workspace root names, in `// emit: --grad NAME` header lines, the derivatives
//! to show; each is snapshotted as `<file>__<flag>_<name>`.
//!
//! Accept new output with `INSTA_UPDATE=always cargo test -p mad --test ad_emit`.

use mad::ad::show::{Derivative, derivative_ir};
use mad::front::{SourceFiles, compile};
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ad")
}

fn requests(src: &str) -> Vec<(Derivative, String)> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("// emit:"))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let flag = words.next().expect("a flag");
            let name = words.next().expect("a function name").to_string();
            let which = match flag {
                "--grad" => Derivative::Grad,
                "--hessian" => Derivative::Hessian,
                "--jvp" => Derivative::Jvp,
                "--vjp" => Derivative::Vjp,
                other => panic!("unknown flag {other}"),
            };
            (which, name)
        })
        .collect()
}

#[test]
fn derivative_ir_snapshots() {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/ad exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mad"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty());
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_string();
        let src = std::fs::read_to_string(&path).expect("read source");
        let reqs = requests(&src);
        assert!(!reqs.is_empty(), "{stem}: no `// emit:` header");
        for (which, name) in reqs {
            let mut files = SourceFiles::new();
            let id = files.add(format!("{stem}.mad"), src.clone());
            let mut compiled =
                compile(&mut files, id).unwrap_or_else(|_| panic!("{stem} compiles"));
            let f = compiled
                .function(&name)
                .unwrap_or_else(|| panic!("{stem}: no function {name}"))
                .func;
            let text = derivative_ir(&mut compiled.module, f, which)
                .unwrap_or_else(|e| panic!("{stem}: {e}"));
            mad::ir::validate::validate_module(&compiled.module).expect("the module stays valid");
            let flag = format!("{which:?}").to_lowercase();
            insta::with_settings!({ snapshot_path => "snapshots/ad_emit", prepend_module_to_snapshot => false }, {
                insta::assert_snapshot!(format!("{stem}__{flag}_{name}"), text);
            });
        }
    }
}
