//! File-driven tests run on every back end: every `tests/ir/*.ir` file may carry lines
//!
//! ```text
//! // run: @fib(20) == 6765
//! // run: @"std::vec::dot$1"(-3) == 9
//! // run: @safe_div(7, 0) == error: integer division by zero
//! ```
//!
//! Arguments are scalar literals (`true`/`false`, integers are i64, numbers with a
//! `.` or an exponent, `inf`, `NaN` are f64). The expectation is the printed form of
//! the result (`Value`'s Display) or `error: ` and the error's message. The calls
//! run on the interpreter (with a call-depth limit of 200) and on the Cranelift JIT, and
//! must give the expected result on both.

use std::path::PathBuf;

use mad::back::cranelift::Cranelift;
use mad::back::interp::Interpreter;
use mad::back::{CompiledModule, Executable};
use mad::ir::parse::parse_module;
use mad_runtime::Value;

struct RunLine {
    line: usize,
    func: String,
    args: Vec<Value>,
    expected: String,
}

fn parse_arg(text: &str) -> Value {
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ if text.contains(['.', 'e', 'E']) || text.contains("inf") || text == "NaN" => Value::F64(
            text.parse()
                .unwrap_or_else(|_| panic!("bad f64 argument `{text}`")),
        ),
        _ => Value::I64(
            text.parse()
                .unwrap_or_else(|_| panic!("bad i64 argument `{text}`")),
        ),
    }
}

fn parse_run_line(line: usize, text: &str) -> RunLine {
    let rest = text
        .strip_prefix('@')
        .unwrap_or_else(|| panic!("line {line}: a run line calls `@name(...)`"));
    let (func, rest) = if let Some(quoted) = rest.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = quoted.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => name.push(chars.next().expect("escaped character").1),
                '"' => {
                    end = Some(i + 1);
                    break;
                }
                c => name.push(c),
            }
        }
        (name, &quoted[end.expect("closing quote")..])
    } else {
        let end = rest.find('(').expect("`(`");
        (rest[..end].to_string(), &rest[end..])
    };
    let rest = rest.strip_prefix('(').expect("`(` after the name");
    let close = rest.find(')').expect("`)`");
    let args = rest[..close]
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(parse_arg)
        .collect();
    let expected = rest[close + 1..]
        .trim()
        .strip_prefix("==")
        .expect("`==`")
        .trim()
        .to_string();
    RunLine {
        line,
        func,
        args,
        expected,
    }
}

#[test]
fn run_lines_of_the_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ir");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let mut count = 0;
            let mut failures = Vec::new();
            for path in files {
                let text = std::fs::read_to_string(&path).expect("read");
                let m = parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                // Every back end runs every line: the interpreter (with a call-depth limit
                // of 200) and the Cranelift JIT, through the back-end contract.
                let interp = Interpreter::compile(&m, &[], &Interpreter::new().with_max_call_depth(200))
                    .unwrap_or_else(|e| match e {});
                let jit = Cranelift::compile(&m, &[], &Default::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let engines: [(&str, &dyn CompiledModule); 2] = [("interpreter", &interp), ("cranelift", &jit)];
                for (i, l) in text.lines().enumerate() {
                    let Some(run) = l.trim().strip_prefix("// run:") else {
                        continue;
                    };
                    let run = parse_run_line(i + 1, run.trim());
                    let f = m.find(&run.func).unwrap_or_else(|| {
                        panic!("{}:{}: no function {}", path.display(), run.line, run.func)
                    });
                    for (engine, module) in engines {
                        let got = match module.call_traced(f, &run.args, &mut std::io::sink()) {
                            Ok(v) => v.to_string(),
                            Err((e, _)) => format!("error: {e}"),
                        };
                        count += 1;
                        if got != run.expected {
                            failures.push(format!(
                                "{}:{} ({engine}): expected `{}`, got `{got}`",
                                path.display(),
                                run.line,
                                run.expected
                            ));
                        }
                    }
                }
            }
            (count, failures)
        })
        .expect("spawn");
    let (count, failures) = handle.join().expect("no crash");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(count >= 20, "only {count} run lines found");
}
