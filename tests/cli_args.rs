//! Option values are checked before any work (issue 23, B15): out-of-range numbers are usage
//! errors (exit 2, clap's message), never a panic, an abort or minutes spent creating threads.

use std::process::Command;

fn shrec(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shrec")).args(args).output().expect("run shrec");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn out_of_range_option_values_are_usage_errors() {
    let dir = env!("CARGO_MANIFEST_DIR");
    for bad in [
        vec!["build", dir, "--no-cache", "--zstd-dict-size", "18446744073709551615"],
        vec!["build", dir, "--no-cache", "--zstd-dict-size", "1099511627776"],
        vec!["build", dir, "--no-cache", "-j", "5000"],
        vec!["build", dir, "--no-cache", "-j", "0"],
    ] {
        let started = std::time::Instant::now();
        let (code, err) = shrec(&bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
        assert!(!err.contains("panicked"), "{bad:?}: {err}");
        assert!(err.contains("error: invalid value"), "{bad:?}: {err}");
        assert!(started.elapsed().as_secs() < 30, "{bad:?} took {:?}", started.elapsed());
    }
}

/// Issue 23 B16: a fatal error (here: an input that does not exist) is one `::error` annotation
/// under GITHUB_ACTIONS, not only a stderr line.
#[test]
fn fatal_errors_are_annotated() {
    let out = Command::new(env!("CARGO_BIN_EXE_shrec"))
        .args(["build", "--no-cache", "-o", "/nonexistent-dir-shrec/x.cpp", "/nonexistent-input-shrec\n::warning::x"])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("run shrec");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let ann: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(ann.len(), 1, "{stdout}");
    assert!(ann[0].starts_with("::error::"), "{stdout}");
    assert!(!stderr.lines().any(|l| l.starts_with("::")), "{stderr}");
}
