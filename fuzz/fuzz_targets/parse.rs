//! Fuzzes the parser: any bytes, read as (lossy) UTF-8 the way the compiler
//! reads source files, must parse without panicking, and every diagnostic
//! must point inside the source on character boundaries.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let (_file, diags) = mad_grammar::parse(&src, 0);
    for d in &diags {
        for label in &d.labels {
            assert!(label.range.start <= label.range.end && label.range.end <= src.len());
            assert!(src.is_char_boundary(label.range.start) && src.is_char_boundary(label.range.end));
        }
    }
});
