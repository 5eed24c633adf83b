//! JSON text of the solve records: compact, one object per line, numbers written as Rust's
//! shortest round-trip form (`{:?}`: `1.0`, `2.5e-5`, `1e20`), non-finite numbers as `null`,
//! and control characters in strings as `\u00XX` escapes.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, Serializer};
use std::io::{self, Write};

/// `value` as one line of compact JSON (no newline).
pub fn to_line<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, RecordFormatter);
    // Writing into a `Vec` cannot fail, and the records hold only numbers, strings,
    // booleans and options of them.
    value
        .serialize(&mut ser)
        .expect("a solve record serializes as JSON");
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// Compact JSON (the trait's default layout) with floats in Rust's shortest round-trip form (serde_json writes
/// non-finite floats as `null` before asking the formatter) and every control character
/// escaped as `\u00XX`.
struct RecordFormatter;

impl Formatter for RecordFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        write!(writer, "{value:?}")
    }

    fn write_f32<W: ?Sized + Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        write!(writer, "{value:?}")
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        let byte = match char_escape {
            CharEscape::Quote => return writer.write_all(b"\\\""),
            CharEscape::ReverseSolidus => return writer.write_all(b"\\\\"),
            CharEscape::Solidus => return writer.write_all(b"/"),
            CharEscape::Backspace => 0x08,
            CharEscape::FormFeed => 0x0c,
            CharEscape::LineFeed => b'\n',
            CharEscape::CarriageReturn => b'\r',
            CharEscape::Tab => b'\t',
            CharEscape::AsciiControl(b) => b,
        };
        write!(writer, "\\u{byte:04x}")
    }
}

#[cfg(test)]
mod tests {
    use super::to_line;

    #[test]
    fn numbers_are_rust_shortest_round_trip_and_non_finite_is_null() {
        let xs = [1.0, 0.5, 2.5e-5, 1e-7, 1e16, 1e20, 123456.789, -0.0, f64::NAN, f64::INFINITY];
        assert_eq!(
            to_line(&xs[..]),
            "[1.0,0.5,2.5e-5,1e-7,1e16,1e20,123456.789,-0.0,null,null]"
        );
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_control_characters() {
        assert_eq!(to_line("a\"b\\c\nd\te\u{1}/é"), "\"a\\\"b\\\\c\\u000ad\\u0009e\\u0001/é\"");
    }
}
