//! Standard output of the command line. A write that fails (a full disk, `/dev/full`; also
//! one to standard error) is remembered and reported once, when the command ends, as an
//! error with exit status 1,
//! instead of being lost or ending `madc` with a panic (`print!` panics on a failed
//! write: [`is_print_failure`] recognizes that panic). A closed pipe is not such a failure:
//! `SIGPIPE` ends the process quietly first (`super::restore_sigpipe`).

use std::sync::Mutex;

static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Remembers the first failed write to standard output.
pub fn record(message: String) {
    let mut f = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    if f.is_none() {
        *f = Some(message);
    }
}

/// Remembers `r`'s error, if it failed.
pub fn note(r: std::io::Result<()>) {
    if let Err(e) = r {
        record(e.to_string());
    }
}

/// Writes `bytes` to standard output, remembering a failure.
pub fn write(bytes: &[u8]) {
    note(std::io::Write::write_all(&mut std::io::stdout().lock(), bytes));
}

/// The first failed write, if any (and forgets it).
pub fn take_failure() -> Option<String> {
    FAILED.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Whether a panic's message is that of `print!`/`println!` (or `eprint!`/`eprintln!`)
/// failing to write.
pub fn is_print_failure(message: &str) -> bool {
    message.starts_with("failed printing to stdout") || message.starts_with("failed printing to stderr")
}

/// Writes a line to standard error, ignoring a failure (there is nowhere left to report it).
pub fn error_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
