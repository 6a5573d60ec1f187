//! The cargo path of "Embedding the cache": `examples/cargo-consumer`, whose build script runs
//! shrec as a library into OUT_DIR, built with cargo (own target dir under `target/`), run on
//! every key through `shrec-runtime`, and rebuilt with nothing changed (the build script must
//! not run again), then with an input file added (it must).

use crate::common;

use common::{copy_tree, repo, run};
use std::path::{Path, PathBuf};
use std::process::Command;

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// This machine's target triple (`rustc -vV`). The example is built for it with an explicit
/// `--target`: cargo shares the build script's and build-dependencies' (shrec's) compiled units
/// only between builds that both name a target, so the Windows cross-build of the same example
/// (scripts/windows-wine-check.sh, after the tests in `.ci/run`) reuses them.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().find_map(|l| l.strip_prefix("host: ")).expect("rustc -vV names its host").trim().to_string()
}

/// `cargo build -v` of the example; returns stderr (cargo's status lines).
fn build(target_dir: &Path, input: &Path, log: &Path) -> String {
    let (ok, stderr) = try_build(target_dir, input, log, false);
    assert!(ok, "cargo build of the example failed:\n{stderr}");
    stderr
}

/// As [`build`], returning whether it succeeded; `allow_failures` sets SHREC_ALLOW_FAILURES=1.
fn try_build(target_dir: &Path, input: &Path, log: &Path, allow_failures: bool) -> (bool, String) {
    let out = Command::new(cargo())
        .args(["build", "-v", "--locked", "--target", &host_triple(), "--manifest-path"])
        .arg(repo().join("examples/cargo-consumer/Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        .env("SHREC_EXAMPLE_INPUT", input)
        .env("SHREC_EXAMPLE_RUN_LOG", log)
        // The outer `cargo test` may have set these for its own build.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env("SHREC_ALLOW_FAILURES", if allow_failures { "1" } else { "0" })
        .output()
        .expect("cargo runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn runs(log: &Path) -> usize {
    std::fs::read_to_string(log).map(|t| t.lines().count()).unwrap_or(0)
}

#[test]
fn cargo_example_builds_cache_in_build_rs_and_reads_every_shader() {
    // Reused across test runs so that the example's dependencies (shrec among them) compile once.
    let target_dir = repo().join("target/embed-example");
    let work = target_dir.join("work");
    let _ = std::fs::remove_dir_all(&work);
    let input = work.join("shaders");
    copy_tree(&repo().join("tests/corpus"), &input);
    let log = work.join("build-script-runs.log");
    let keys: std::collections::BTreeSet<u64> =
        shrec::scan::scan_dir(&input).shaders.iter().filter(|s| shrec::formats::has_translator(s.container)).map(|s| s.key).collect();

    let first = build(&target_dir, &input, &log);
    assert_eq!(runs(&log), 1, "the build script runs once on a fresh input:\n{first}");

    let exe: PathBuf = target_dir.join(host_triple()).join("debug/shrec-cargo-consumer");
    let dump = work.join("dump");
    let stdout = run(Command::new(&exe).arg(&dump));
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert!(stdout.contains(&format!("checked {} shaders (0 failed)", keys.len())), "{stdout}");
    for k in &keys {
        let dxil = std::fs::read(dump.join(format!("{k:016X}.dxil"))).unwrap_or_else(|e| panic!("{k:016X}: {e}"));
        assert!(shrec::pack::dxil_hash::hash_is_valid(&dxil), "{k:016X}: DXIL container hash");
        let spv = std::fs::read(dump.join(format!("{k:016X}.spv"))).unwrap();
        assert_eq!(u32::from_le_bytes(spv[..4].try_into().unwrap()), 0x0723_0203);
    }

    // Nothing touched: cargo's own freshness check skips the build script.
    let second = build(&target_dir, &input, &log);
    assert_eq!(runs(&log), 1, "the build script ran again with nothing changed:\n{second}");
    assert!(second.contains("Fresh shrec-cargo-consumer"), "{second}");
    assert!(!second.contains("build-script-build`"), "{second}");

    // A file added under the input directory: rerun-if-changed on the directory catches it.
    let program = shrec::scan::scan_dir(&input).shaders.into_iter().find(|s| shrec::formats::has_translator(s.container)).unwrap().path;
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::copy(&program, input.join("added-copy.agal")).unwrap();
    let third = build(&target_dir, &input, &log);
    assert_eq!(runs(&log), 2, "adding an input file did not rerun the build script:\n{third}");
    let stdout = run(&mut Command::new(&exe));
    assert!(stdout.contains(&format!("checked {} shaders (0 failed)", keys.len())), "{stdout}");

    // A shader shrec cannot build: a cargo:warning naming it, and a build error unless allowed.
    copy_tree(&repo().join("tests/corpus-invalid/agal"), &input.join("invalid"));
    let (ok, failed) = try_build(&target_dir, &input, &log, false);
    assert!(!ok, "a failed shader must fail the build:\n{failed}");
    assert!(failed.contains("warning: ") && failed.contains("Flash Error #3696") && failed.contains("SHREC_ALLOW_FAILURES=1"), "{failed}");
    let (ok, allowed) = try_build(&target_dir, &input, &log, true);
    assert!(ok && allowed.contains("Flash Error #3696"), "{allowed}");
}
