//! Bad and hostile source never makes the compiler panic, hang or overflow its
//! stack: thousands of deterministic mutations of the bundled examples and the
//! standard library go through the whole front end (and the JIT when they
//! compile), and pathological inputs get diagnostics.

use mad::Program;
use mad::front::{self, SourceFiles};
use std::path::Path;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "let ",
    "mut ",
    "fn ",
    "if ",
    "else ",
    "while ",
    "for ",
    " in ",
    "..",
    "return ",
    "break;",
    "continue;",
    "^",
    "-",
    "*",
    "/",
    "%",
    "==",
    "<",
    "&&",
    "||",
    "!",
    " as i64",
    "x",
    "0",
    "1.5",
    "1e400",
    "99999999999999999999",
    "vec3(",
    "mat2(",
    "dot(",
    "print(",
    "zeros(",
    "grad(",
    "energy ",
    "dof ",
    "data ",
    "param ",
    "objective = ",
    "e.v0",
    "@ad(tape) ",
    "::",
    "\"",
    "/*",
    "'",
    "é",
];

fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if !bytes.is_empty() => {
                let end = (at + 1 + rng.below(20)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 => {
                let frag = FRAGMENTS[rng.below(FRAGMENTS.len())];
                bytes.splice(at..at, frag.bytes());
            }
            2 if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                bytes[i] = (rng.next() & 0x7f) as u8;
            }
            3 => {
                let start = rng.below(bytes.len() + 1);
                let end = (start + rng.below(80)).min(bytes.len());
                let chunk = bytes[start..end].to_vec();
                bytes.splice(at..at, chunk);
            }
            _ => bytes.truncate(at),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn front_end(src: &str) -> bool {
    let mut files = SourceFiles::new();
    let id = files.add("mutant.mad".to_string(), src.to_string());
    match front::compile(&mut files, id) {
        Ok(_) => true,
        Err(diags) => {
            assert!(
                !diags.is_empty(),
                "a failed compile reports at least one diagnostic:\n{src}"
            );
            // every diagnostic renders (labels are inside their files)
            let text = mad::api::render(&files, &diags, false);
            assert!(text.contains("error"), "{text}");
            false
        }
    }
}

#[test]
fn mutated_examples_and_stdlib_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seeds = Vec::new();
    for dir in ["examples", "stdlib"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().and_then(|e| e.to_str()) == Some("mad") {
                seeds.push(std::fs::read_to_string(p).unwrap());
            }
        }
    }
    assert!(seeds.len() >= 8);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut compiled, mut jitted) = (0, 0);
    for i in 0..3000 {
        let src = mutate(&seeds[i % seeds.len()], &mut rng);
        if front_end(&src) {
            compiled += 1;
            // Compiling to native code must not fail either (running could loop forever).
            if i % 10 == 0 {
                Program::compile_str("mutant.mad", &src).unwrap_or_else(|e| panic!("{e}\n{src}"));
                jitted += 1;
            }
        }
    }
    // The mutations are mild enough that some still compile, so both paths are exercised.
    assert!(compiled > 50, "only {compiled} mutants compiled");
    assert!(jitted > 0);
}

#[test]
fn pathological_inputs_get_diagnostics() {
    let deep_parens = format!(
        "fn main() {{ print({}1.0{}); }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let deep_blocks = format!("fn main() {{ {} }}", "{".repeat(50_000));
    let minus_chain = format!("fn main() {{ print({}1.0); }}", "-".repeat(100_000));
    let long_sum = format!("fn main() {{ print({}1.0); }}", "1.0 + ".repeat(20_000));
    let cases = [
        String::new(),
        "fn".to_string(),
        "fn main() { print(99999999999999999999999); }".to_string(),
        "fn main() { let x = 1e99999; }".to_string(),
        "\u{0}\u{1}\u{2}".to_string(),
        deep_parens,
        deep_blocks,
        minus_chain,
        long_sum,
    ];
    for src in &cases {
        // runs on the default test-thread stack on purpose
        let _ = front_end(src);
    }
}

#[test]
fn moderately_deep_but_legal_nesting_compiles_and_runs() {
    let src = format!(
        "fn main() {{ print({}1.0{}); }}",
        "(".repeat(200),
        ")".repeat(200)
    );
    let prog = Program::compile_str("deep.mad", &src).expect("200 nested parentheses are fine");
    let mut out = Vec::new();
    prog.call_with(mad::Engine::Jit, "main", &[], &mut out)
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "1.0\n");
}
