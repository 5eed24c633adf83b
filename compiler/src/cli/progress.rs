//! Progress of long `madc run` solves: an indicatif bar on standard error when
//! it is a terminal (time steps of a dynamics run, or iterations of a static
//! solve), with the log lines printed above it; plain log lines otherwise.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar, or nothing when standard error is not a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `total` units named `unit` (e.g. "steps"), shown only when
    /// standard error is a terminal.
    pub fn new(total: u64, unit: &str) -> Progress {
        Progress::with_terminal(total, unit, std::io::stderr().is_terminal())
    }

    /// As [`Progress::new`], with the terminal test decided by the caller.
    pub fn with_terminal(total: u64, unit: &str, terminal: bool) -> Progress {
        if !terminal {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let template = format!(
            "{{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed_precise}} (eta {{eta}})  {{msg}}"
        );
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        Progress { bar: Some(bar) }
    }

    /// Whether a bar is shown.
    #[cfg(test)]
    pub fn visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Prints a log line on standard error (above the bar when there is one).
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// Moves the bar to `pos` with a short status message.
    pub fn set(&self, pos: u64, message: String) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
            b.set_message(message);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    /// An early return (an error mid-solve) also clears the bar.
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_without_a_terminal() {
        let p = Progress::with_terminal(10, "steps", false);
        assert!(!p.visible());
        p.set(3, "x".into());
        p.finish();
        let q = Progress::with_terminal(10, "steps", true);
        assert!(q.visible());
        q.finish();
    }
}
