//! Fuzz the whole front end: bytes → source (invalid UTF-8 is a diagnostic) →
//! parse, resolve, type-check, lower, validate. It must never panic, and a
//! failure must come with at least one diagnostic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match mad::api::load_source("fuzz.mad".to_string(), data.to_vec()) {
        Ok((mut files, id)) => {
            if let Err(diags) = mad::front::compile(&mut files, id) {
                assert!(!diags.is_empty());
                let _ = mad::api::render(&files, &diags, false);
            }
        }
        Err(mad::Error::Compile(d)) => assert!(!d.diagnostics.is_empty()),
        Err(other) => panic!("unexpected error kind: {other}"),
    }
});
