//! Robustness: thousands of deterministic mutations of realistic sources
//! must never panic, and their diagnostics must always render.

use crate::common;
use common::{depth, render};
use mad_grammar::nesting::MAX_DEPTH;

const INPUTS: [(&str, &str); 3] = [
    ("cloth", include_str!("inputs/cloth.mad")),
    ("programs", include_str!("inputs/programs.mad")),
    ("param", include_str!("inputs/param.mad")),
];

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SNIPPETS: [&str; 24] = [
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "..",
    "::",
    "-",
    "^",
    "!",
    "if",
    "else",
    "fn",
    "let",
    "\"",
    "/*",
    "*/",
    "1e",
    "99999999999999999999",
    "@ad(tape)",
    "\u{e9}",
];

fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            // Flip a byte (may produce invalid UTF-8; converted lossily below).
            0 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
            // Truncate.
            1 => bytes.truncate(at),
            // Duplicate a slice.
            2 => {
                let len = rng.below(64).min(bytes.len() - at.min(bytes.len()));
                let piece = bytes[at..at + len].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, piece);
            }
            // Delete a slice.
            3 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            // Insert a token.
            _ => {
                let snippet = SNIPPETS[rng.below(SNIPPETS.len())].as_bytes();
                bytes.splice(at..at, snippet.iter().copied());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn inputs_parse_cleanly() {
    for (name, src) in INPUTS {
        let (file, diags) = mad_grammar::parse(src, 0);
        assert!(diags.is_empty(), "{name}:\n{}", render(src, &diags));
        assert!(file.items.len() >= 5, "{name}");
    }
}

#[test]
fn mutations_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut with_errors = 0;
    for (name, src) in INPUTS {
        for i in 0..1000 {
            let mutated = mutate(src, &mut rng);
            let result = std::panic::catch_unwind(|| {
                let (file, diags) = mad_grammar::parse(&mutated, 0);
                assert!(depth(&file) <= MAX_DEPTH as usize + 1);
                // Every diagnostic renders (spans lie inside the source, on
                // character boundaries) and has a code and a primary label.
                for d in &diags {
                    assert!(d.code.as_deref().is_some_and(|c| c.starts_with("E00")));
                    assert!(!d.labels.is_empty());
                }
                render(&mutated, &diags);
                diags.len()
            });
            match result {
                Ok(n) => with_errors += usize::from(n > 0),
                Err(_) => panic!("{name} mutation {i} panicked; input:\n{mutated}"),
            }
        }
    }
    // The mutations do exercise the error paths.
    assert!(
        with_errors > 2000,
        "only {with_errors} mutations had errors"
    );
}

#[test]
fn odd_inputs() {
    let long_ident = "a".repeat(100_000);
    let long_number = "9".repeat(100_000);
    let long_string = format!("\"{}\"", "x".repeat(100_000));
    let odd = [
        "",
        " ",
        "\n\n\n",
        "\0",
        "\u{feff}fn f() {}",
        "}}}}}}",
        ")))]]]",
        "fn",
        "fn f(",
        "@",
        "/*",
        "\"",
        "1.",
        "t.1e5",
        "\u{10ffff}\u{e9}\u{20ac}",
        long_ident.as_str(),
        long_number.as_str(),
        long_string.as_str(),
    ];
    for src in odd {
        let (_, diags) = mad_grammar::parse(src, 0);
        render(src, &diags);
    }
    let (_, diags) = mad_grammar::parse("", 0);
    assert!(diags.is_empty());
}
