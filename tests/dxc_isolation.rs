//! `--isolate-dxc`: DXC in worker processes. A worker that dies (here: aborts on purpose, as a
//! crashing DXC would) fails the one shader it was compiling; the build goes on with a new
//! worker, and the cache holds everything else. Without crashes the output is byte-identical
//! to in-process compilation.

mod common;

use common::{repo, tmpdir};
use std::path::Path;
use std::process::Command;

fn build(out: &Path, extra: &[&str], abort_at: Option<u32>) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shrec"));
    c.arg("build").arg(repo().join("tests/corpus/agal")).arg("-o").arg(out).args(["--no-cache", "-q"]).args(extra);
    if let Some(n) = abort_at {
        c.env("SHREC_TEST_DXC_ABORT_AT", n.to_string());
    }
    let o = c.output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_crashing_dxc_fails_one_shader_not_the_build() {
    let dir = tmpdir("dxc-isolation");

    // Reference: in-process, and isolated without crashes: the same bytes.
    let (code, _) = build(&dir.join("inproc.cpp"), &[], None);
    assert_eq!(code, 0);
    let (code, _) = build(&dir.join("isolated.cpp"), &["--isolate-dxc"], None);
    assert_eq!(code, 0);
    let text = |name: &str| {
        let stem = name.trim_end_matches(".cpp");
        std::fs::read_to_string(dir.join(name)).unwrap().replace(&format!("{stem}.h"), "HEADER").replace(&format!("{stem}.msvc.inc"), "MSVC")
    };
    assert!(text("inproc.cpp") == text("isolated.cpp"), "isolated compilation changed the output");
    assert!(std::fs::read(dir.join("inproc.msvc.inc")).unwrap() == std::fs::read(dir.join("isolated.msvc.inc")).unwrap());

    // Every worker aborts on its 5th request: one thread compiles 2 shaders (4 requests), then
    // the next shader's first compilation kills the worker.
    let (code, stderr) = build(&dir.join("crashy.cpp"), &["--isolate-dxc", "-j", "1", "--report", dir.join("r.json").to_str().unwrap()], Some(5));
    assert_eq!(code, 2, "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let text = report.to_string();
    let crashed = stderr
        .lines()
        .filter(|l| l.starts_with("error: ") && l.contains("]: DXC (dxil): crashed while compiling this shader (worker process signal: 6"))
        .count();
    let errors = stderr.lines().filter(|l| l.starts_with("error: ")).count();
    assert!(crashed >= 5, "{crashed} crashes reported:\n{stderr}");
    assert_eq!(crashed, errors, "only crashes fail:\n{stderr}");
    assert!(text.contains("crashed while compiling this shader"), "the JSON report names the crash");
    // The rest of the batch was built and written.
    let cpp = std::fs::read_to_string(dir.join("crashy.cpp")).unwrap();
    let rows = cpp.lines().filter(|l| l.starts_with("\t{ 0x")).count();
    let all = std::fs::read_to_string(dir.join("inproc.cpp")).unwrap().lines().filter(|l| l.starts_with("\t{ 0x")).count();
    assert_eq!(rows + crashed, all, "every shader is either in the cache or reported as crashed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 23 B1: with many worker threads, their DXC compiler objects used to be released by
/// thread-local destructors while the process exited and DXC's globals were being torn down:
/// `-j 500` ended in SIGSEGV after writing the outputs in about one build of five (2 of 10 on
/// this test's input before the fix). Each thread now releases its compilers when its work is
/// done; ten builds in a row must all exit 0.
#[test]
fn many_threads_exit_cleanly() {
    let dir = tmpdir("dxc-many-threads");
    for run in 0..10 {
        let out = Command::new(env!("CARGO_BIN_EXE_shrec"))
            .arg("build")
            .arg(repo().join("tests/corpus"))
            .arg("-o")
            .arg(dir.join("c.cpp"))
            .args(["--no-cache", "-q", "-j", "500"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "run {run}: {:?}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 23 B2: a `--dxc` that is not DXC (any file), or a truncated copy of the real library
/// (dlopen used to die of SIGBUS on it), is one fatal error before any work: exit 1, naming the
/// library, and the previous good outputs stay as they were.
#[test]
fn a_library_that_will_not_load_is_fatal_and_keeps_the_outputs() {
    let dir = tmpdir("dxc-bad-library");
    let out = dir.join("c.cpp");
    let (code, stderr) = build(&out, &[], None);
    assert_eq!(code, 0, "{stderr}");
    let good = std::fs::read(&out).unwrap();
    let real = shrec::dxc::locate(&shrec::dxc::LocateOptions::default()).expect("DXC").path;
    let bytes = std::fs::read(&real).unwrap();
    std::fs::write(dir.join("not-dxc.so"), b"this is not a shared library\n").unwrap();
    std::fs::write(dir.join("truncated.so"), &bytes[..bytes.len() / 3]).unwrap();
    for name in ["not-dxc.so", "truncated.so"] {
        let lib = dir.join(name);
        let (code, stderr) = build(&out, &["--dxc", lib.to_str().unwrap()], None);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stderr.contains(&format!("DXC library {}", lib.display())), "{name}: {stderr}");
        assert_eq!(std::fs::read(&out).unwrap(), good, "{name}: the good cache was replaced");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
