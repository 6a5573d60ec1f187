//! GitHub Actions: workflow-command annotations on stdout and the job summary, when the command
//! runs in a workflow. The text (escaped for the workflow commands and Markdown) comes from
//! [`shrec::report`]; this module only decides where it goes.

use shrec::report::{self, printable, Report};
use std::path::PathBuf;

/// Whether the command runs in a GitHub Actions workflow.
pub(crate) fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// A build that could not run: one `::error::` annotation.
pub(crate) fn print_fatal(message: &str) {
    println!("::error::{}", report::escape_annotation_data(message));
}

/// One annotation per failed shader and scan error, and the build's summary appended to
/// `$GITHUB_STEP_SUMMARY` (every step of the job writes to the same file).
pub(crate) fn print_report(r: &Report) {
    for a in report::github_annotations(r) {
        println!("{a}");
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        use std::io::Write as _;
        let written =
            std::fs::OpenOptions::new().append(true).create(true).open(&path).and_then(|mut f| f.write_all(report::step_summary(r).as_bytes()));
        if let Err(e) = written {
            eprintln!("warning: {}", printable(&format!("GITHUB_STEP_SUMMARY {}: {e}", PathBuf::from(&path).display())));
        }
    }
}
