//! `--isolate-dxc`: DXC in worker processes. A worker that dies (here: aborts on purpose, as a
//! crashing DXC would) fails the one shader it was compiling; the build goes on with a new
//! worker, and the cache holds everything else. Without crashes the output is byte-identical
//! to in-process compilation.

use crate::common;

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
    // Each backend is compiled (and may crash) on its own: a shader whose DXIL compilation
    // crashed keeps its SPIR-V in the cache and the other way round, and the error says so.
    let crash_lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: ") && l.contains("crashed while compiling this shader (worker process signal: 6"))
        .filter(|l| l.contains("]: DXC (dxil): ") || l.contains("]: DXC (spirv): "))
        .collect();
    let crashed = crash_lines.len();
    let errors = stderr.lines().filter(|l| l.starts_with("error: ")).count();
    assert!(crashed >= 5, "{crashed} crashes reported:\n{stderr}");
    assert_eq!(crashed, errors, "only crashes fail:\n{stderr}");
    assert!(text.contains("crashed while compiling this shader"), "the JSON report names the crash");
    let failed = report["outcomes"].as_array().unwrap().iter().filter(|o| o["status"] == "failed");
    assert!(failed.map(|o| o["error_kind"].as_str()).all(|k| k == Some("dxc.crash")), "every failure is a crash: {text}");
    // The rest of the batch was built and written: a shader is missing from the cache only when
    // both of its backends crashed.
    let key_of = |l: &str| l.split(" 0x").nth(1).and_then(|k| k.split(']').next()).map(str::to_string);
    let mut per_key = std::collections::BTreeMap::<String, usize>::new();
    for l in &crash_lines {
        *per_key.entry(key_of(l).expect("a crash line names its key")).or_default() += 1;
    }
    let both = per_key.values().filter(|&&n| n == 2).count();
    let cpp = std::fs::read_to_string(dir.join("crashy.cpp")).unwrap();
    let rows = cpp.lines().filter(|l| l.starts_with("\t{ 0x")).count();
    let all = std::fs::read_to_string(dir.join("inproc.cpp")).unwrap().lines().filter(|l| l.starts_with("\t{ 0x")).count();
    assert_eq!(rows + both, all, "every shader is in the cache unless both of its backends crashed");
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

/// A PICA program of `depth` nested forward jumps (past the structured lowering's depth shrec
/// takes the flat pc-dispatch form): DXC's time and memory grow steeply with it (measured
/// 2026-11-26: depth 1 000 is 357 KB of HLSL and 2-3 s of CPU per compilation, depth 2 000 is
/// 710 KB, 48 s and 865 MB for the two compilations in-process).
fn nested_jumps(depth: u32) -> Vec<u8> {
    use shrec::formats::pica::decode::Rel;
    use shrec_verify::pica;
    let mut a = pica::asm::Asm::default();
    for i in 0..depth {
        a.flowu("jmpu", i % 16, 2 * depth - i, 0);
    }
    for _ in depth..=2 * depth {
        a.op("add", "r1", &["r1", "v1"], Rel::None);
    }
    a.op("mov", "o0", &["r1"], Rel::None);
    a.simple("end");
    pica::dvlb(&a, 0, &[(0, 0, 0xF)], &[])
}

/// Per-shader DXC limits (issue 23, B8): DXC in-process cannot be stopped, and one 16 KB PICA
/// program took 68 s and 945 MB. A shader whose HLSL is over `--dxc-isolate-above` (128 KiB by
/// default) is now compiled in a worker process, under a CPU-time limit per compilation and an
/// address-space limit; past one it fails, naming it, and the rest of the build goes on.
#[test]
fn large_shaders_compile_in_workers_under_limits() {
    let dir = tmpdir("dxc-limits");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let opts = shrec::formats::TranslateOptions::default();
    let hlsl_len =
        |dvlb: &[u8]| shrec::hlsl::write(&shrec::formats::translate(shrec::detect::ContainerKind::Dvlb, dvlb, 0, &opts).unwrap().module).len();
    let (small, large, huge) = (nested_jumps(250), nested_jumps(500), nested_jumps(2000));
    let threshold = shrec::limits::DXC_ISOLATE_HLSL_BYTES;
    assert!(hlsl_len(&small) < threshold && hlsl_len(&large) > threshold, "{} {}", hlsl_len(&small), hlsl_len(&large));
    std::fs::write(input.join("small.shbin"), &small).unwrap();
    std::fs::write(input.join("large.shbin"), &large).unwrap();
    let build = |extra: &[&str], abort_at: Option<u32>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_shrec"));
        c.arg("build").arg(&input).arg("-o").arg(dir.join("c.cpp")).args(["--no-cache", "-q", "--report"]).arg(dir.join("r.json")).args(extra);
        if let Some(n) = abort_at {
            c.env("SHREC_TEST_DXC_ABORT_AT", n.to_string());
        }
        let o = c.output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
        let status = |name: &str| {
            let o = report["outcomes"].as_array().unwrap().iter().find(|o| o["path"].as_str().unwrap().ends_with(name)).unwrap();
            (
                o["status"].as_str().unwrap().to_string(),
                o["reason"].as_str().unwrap_or("").to_string(),
                o["error_kind"].as_str().unwrap_or("").to_string(),
            )
        };
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            status("small.shbin"),
            status(&format!("{}.shbin", if input.join("huge.shbin").exists() { "huge" } else { "large" })),
        )
    };

    // Every worker aborts at its first request: the large shader fails, so it was sent to one;
    // the small one is compiled in-process.
    let (code, stderr, small_status, large_status) = build(&[], Some(1));
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(small_status.0, "compiled", "{stderr}");
    assert_eq!(large_status.0, "failed");
    assert!(large_status.1.starts_with("DXC (dxil): crashed while compiling this shader (worker process signal: 6"), "{}", large_status.1);
    assert_eq!(large_status.2, "dxc.crash");

    // The time limit: CPU seconds per compilation.
    std::fs::remove_file(input.join("large.shbin")).unwrap();
    std::fs::write(input.join("huge.shbin"), &huge).unwrap();
    let (code, stderr, small_status, huge_status) = build(&["--dxc-time-limit", "1"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(small_status.0, "compiled", "{stderr}");
    assert!(
        huge_status.1.starts_with("DXC (dxil): used more than its time limit of 1 s of CPU time on this shader (--dxc-time-limit;"),
        "{}",
        huge_status.1
    );
    assert_eq!(huge_status.2, "dxc.time_limit");

    // The memory limit: the worker's address space.
    let (code, stderr, small_status, huge_status) = build(&["--dxc-memory-limit", "384"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(small_status.0, "compiled", "{stderr}");
    assert!(huge_status.1.contains("most likely out of its 384 MiB of address space (--dxc-memory-limit)"), "{}", huge_status.1);
    assert_eq!(huge_status.2, "dxc.memory_limit");
    assert!(!stderr.contains("panicked"), "the worker's end is quiet: {stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The test hooks (`SHREC_TEST_*` variables: stall a write, crash a DXC worker or make it spin) exist only in a
/// build with the `test-hooks` feature, which the tests enable through a dev-dependency on the
/// package itself; a released shrec (`cargo build`, `cargo install`) reads none of them. Every
/// place in `src/` that reads such a variable sits under `#[cfg(feature = "test-hooks")]`.
#[test]
fn test_hooks_are_behind_their_feature() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    assert!(manifest.contains("\ntest-hooks = []"), "the feature exists and enables nothing else");
    assert!(!manifest.contains("default = [\"test-hooks\""), "not a default feature");
    let mut reads = 0;
    for e in walkdir::WalkDir::new(repo().join("src")).into_iter().filter_map(Result::ok) {
        if e.path().extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("\"SHREC_TEST_") {
                reads += 1;
                let before = &lines[i.saturating_sub(4)..i];
                assert!(
                    before.iter().any(|l| l.trim() == "#[cfg(feature = \"test-hooks\")]"),
                    "{}:{}: a test hook outside the test-hooks feature: {line}",
                    e.path().display(),
                    i + 1
                );
            }
        }
    }
    assert_eq!(reads, 4, "SHREC_TEST_STALL_WRITE, SHREC_TEST_DXC_ABORT_AT, SHREC_TEST_DXC_SPIN_AT and SHREC_TEST_KEEP_ZERO_DXIL_HASH");
}
