//! Solving from Rust through `mad::solve` gives what `madc run --json` reports: the same
//! iteration records (timings aside), the same summary, and for time steps the same step
//! records and frames.

use crate::cli_common::madc;
use mad::energy::EnergyProgram;
use mad::solve::{Event, FixSpec, Overrides, Record};

fn compile(example: &str) -> EnergyProgram {
    let path = format!("{}/../examples/{example}", env!("CARGO_MANIFEST_DIR"));
    EnergyProgram::compile_file(path).unwrap()
}

/// A JSON line with the value of every `…_ms` field replaced by `T` (timings differ from run
/// to run).
fn without_times(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("_ms\":") {
        let value = at + "_ms\":".len();
        out.push_str(&rest[..value]);
        out.push('T');
        rest = &rest[value..];
        rest = &rest[rest.find([',', '}']).unwrap()..];
    }
    out.push_str(rest);
    out
}

/// The text of the field `key` of a flat JSON line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let rest = &line[line.find(&pat).unwrap_or_else(|| panic!("no `{key}` in {line}")) + pat.len()..];
    &rest[..rest.find([',', '}']).unwrap()]
}

/// The JSON lines of `madc run ARGS… --json`, which must exit with 0.
fn madc_json(args: &[&str]) -> Vec<String> {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--json");
    let (code, out, err) = madc(&all);
    assert_eq!(code, 0, "{err}");
    out.lines().map(without_times).collect()
}

#[test]
fn a_static_solve_reports_what_madc_run_reports() {
    let prog = compile("smooth.mad");
    // `madc run examples/smooth.mad --mesh disk:6 --fix boundary`
    let overrides = Overrides {
        mesh: Some("disk:6".into()),
        fix: Some(FixSpec::Boundary),
        ..Overrides::default()
    };
    let settings = mad::solve::merge(prog.decls(), &overrides, |w| panic!("warning: {w}")).unwrap();
    assert_eq!(settings.solver, "gd", "the file's solve block names the solver");
    let mut lines = Vec::new();
    let outcome = mad::solve::solve(&prog, &settings, |event| {
        match event {
            Event::Iteration(it) => lines.push(Record::Iteration(it.clone()).to_json()),
            Event::Warning(w) => return Err(format!("unexpected warning: {w}")),
            Event::Step(..) => return Err("a static solve has no time steps".into()),
            Event::Started => {}
        }
        Ok(())
    })
    .unwrap();
    let summary = Record::Summary(outcome.summary(&settings)).to_json();
    lines.push(summary.clone());
    let lines: Vec<String> = lines.iter().map(|l| without_times(l)).collect();

    let cli = madc_json(&["examples/smooth.mad", "--mesh", "disk:6", "--fix", "boundary"]);
    assert_eq!(lines, cli);
    // The same final energy and iteration count, read back from the command's summary.
    let cli_summary = cli.last().unwrap();
    assert!(outcome.success && outcome.report.iterations > 0);
    assert_eq!(field(cli_summary, "iterations").parse::<usize>().unwrap(), outcome.report.iterations);
    assert_eq!(field(cli_summary, "energy").parse::<f64>().unwrap(), outcome.report.energy);
    assert_eq!(outcome.problem.x.len(), outcome.frame().x.len());
}

#[test]
fn time_steps_report_and_write_what_madc_run_does() {
    let dir = std::env::temp_dir().join(format!("mad-solve-library-{}", std::process::id()));
    let (library_dir, cli_dir) = (dir.join("library"), dir.join("cli"));
    let prog = compile("flag.mad");
    let overrides = Overrides {
        steps: Some(3),
        dt: Some(0.02),
        ..Overrides::default()
    };
    let settings = mad::solve::merge(prog.decls(), &overrides, |w| panic!("warning: {w}")).unwrap();
    let mut lines = Vec::new();
    let outcome = mad::solve::solve(&prog, &settings, |event| {
        match event {
            Event::Iteration(it) => lines.push(Record::Iteration(it.clone()).to_json()),
            Event::Step(step, frame) => {
                lines.push(Record::Step(step.clone()).to_json());
                let path = library_dir.join(format!("flag_{:04}.ply", step.time_step));
                frame.write_mesh(path.to_str().unwrap(), None)?;
            }
            Event::Warning(w) => return Err(format!("unexpected warning: {w}")),
            Event::Started => {}
        }
        Ok(())
    })
    .unwrap();
    assert!(outcome.success);
    assert_eq!(outcome.time_steps, 3);
    lines.push(Record::Summary(outcome.summary(&settings)).to_json());
    let lines: Vec<String> = lines.iter().map(|l| without_times(l)).collect();

    let out = cli_dir.join("flag.ply");
    let out = out.to_str().unwrap();
    let cli = madc_json(&["examples/flag.mad", "--steps", "3", "--dt", "0.02", "--out", out]);
    // The command's summary names the last frame it wrote; the library's has no `out`.
    let (cli_summary, library_summary) = (cli.last().unwrap(), lines.last().unwrap());
    assert_eq!(
        cli_summary.replace(&format!("\"out\":\"{}\"", cli_dir.join("flag_0003.ply").display()), "\"out\":null"),
        *library_summary
    );
    assert_eq!(lines[..lines.len() - 1], cli[..cli.len() - 1]);
    for k in 1..=3 {
        let name = format!("flag_{k:04}.ply");
        assert_eq!(
            std::fs::read(library_dir.join(&name)).unwrap(),
            std::fs::read(cli_dir.join(&name)).unwrap(),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
