//! The CMake path of "Embedding the cache": `examples/cmake` configured and built with CMake and
//! g++ through `build/shrec.cmake`, run on every key, and rebuilt with nothing changed (shrec must
//! not run again), in both layouts.

use crate::common;

use common::{copy_tree, have_tool, repo, run, tmpdir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// Distinct keys of the shaders shrec can translate in `dir`.
fn buildable_keys(dir: &Path) -> std::collections::BTreeSet<u64> {
    shrec::scan::scan_dir(dir).shaders.iter().filter(|s| shrec::formats::has_translator(s.container)).map(|s| s.key).collect()
}

/// A file holding a shader, under `dir`.
fn first_shader_file(dir: &Path) -> PathBuf {
    let scan = shrec::scan::scan_dir(dir);
    scan.shaders.iter().find(|s| shrec::formats::has_translator(s.container)).expect("a shader").path.clone()
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).and_then(|m| m.modified()).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Checks the example's output and the blobs it dumped: every key found, DXIL hash valid,
/// SPIR-V accepted by spirv-val (on a sample).
fn check_run(stdout: &str, dump: &Path, keys: &std::collections::BTreeSet<u64>, layout: &str) {
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert!(stdout.contains(&format!("checked {} shaders, 0 failed, layout {layout}", keys.len())), "{stdout}");
    for (i, k) in keys.iter().enumerate() {
        let dxil = std::fs::read(dump.join(format!("{k:016X}.dxil"))).unwrap_or_else(|e| panic!("{k:016X}: {e}"));
        assert_eq!(&dxil[..4], b"DXBC");
        assert!(shrec::pack::dxil_hash::hash_is_valid(&dxil), "{k:016X}: DXIL container hash");
        let spv = std::fs::read(dump.join(format!("{k:016X}.spv"))).unwrap();
        assert_eq!(u32::from_le_bytes(spv[..4].try_into().unwrap()), 0x0723_0203);
        if i % 8 == 0 {
            common::spirv_val(&spv, &format!("cmake-{k:016X}")).unwrap_or_else(|d| panic!("{k:016X}: {d}"));
        }
    }
}

fn configure_and_build(dir: &Path, input: &Path, extra: &str) -> (PathBuf, String) {
    let build = dir.join("build");
    run(Command::new("cmake")
        .arg("-S")
        .arg(repo().join("examples/cmake"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DSHREC_EXECUTABLE={}", env!("CARGO_BIN_EXE_shrec")))
        .arg(format!("-DSHREC_INPUT={}", input.display()))
        .arg(format!("-DSHREC_EXTRA_ARGS={extra}")));
    let out = run(Command::new("cmake").arg("--build").arg(&build));
    (build, out)
}

fn cmake_example(layout: &str, extra: &str) {
    if !have_tool("cmake") || !have_tool("g++") {
        return;
    }
    let dir = tmpdir(&format!("embed-cmake-{layout}"));
    let input = dir.join("shaders");
    copy_tree(&repo().join("tests/corpus"), &input);
    let keys = buildable_keys(&input);
    assert!(keys.len() > 140, "{} shaders of tests/corpus", keys.len());

    let (build, first) = configure_and_build(&dir, &input, extra);
    assert!(first.contains("shrec: building shader cache generated/shader_cache.cpp"), "{first}");
    let generated = build.join("generated/shader_cache.cpp");
    let header = build.join("generated/shader_cache.h");
    assert_eq!(std::fs::read_to_string(&header).unwrap().contains("SHREC_CACHE_PER_SHADER_FRAMES"), layout == "per-shader");
    let exe = build.join("shader_cache_example");
    let dump = dir.join("dump");
    std::fs::create_dir_all(&dump).unwrap();
    check_run(&run(Command::new(&exe).arg(&dump)), &dump, &keys, layout);

    // Nothing touched: the build tool's own up-to-date check does not run shrec again.
    let (cpp_time, exe_time) = (mtime(&generated), mtime(&exe));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(!second.contains("shrec"), "second build ran shrec:\n{second}");
    assert!(!second.contains("Building CXX"), "second build compiled something:\n{second}");
    assert_eq!(mtime(&generated), cpp_time);
    assert_eq!(mtime(&exe), exe_time);

    // A new file under INPUT (found by the CONFIGURE_DEPENDS glob) reruns shrec; a copy of a
    // program has the same key, so the cache keeps its keys.
    let program = first_shader_file(&input);
    std::fs::copy(&program, input.join("added-copy.agal")).unwrap();
    let third = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(third.contains("shrec: building shader cache"), "adding an input file did not rerun shrec:\n{third}");
    // ... and since the cache's bytes did not change, shrec left it alone and nothing recompiled.
    assert!(!third.contains("Building CXX"), "an unchanged cache was recompiled:\n{third}");
    assert_eq!(mtime(&generated), cpp_time);
    check_run(&run(Command::new(&exe).arg(&dump)), &dump, &keys, layout);
    let fourth = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(!fourth.contains("shrec"), "{fourth}");

    // One input rewritten so that the cache changes (it now holds another shader's bytes): shrec
    // runs once, and only the cache's own translation unit is compiled again (the header's bytes
    // did not change, so the sources including it are not rebuilt).
    let scan = shrec::scan::scan_dir(&input);
    let unique = |k: u64| scan.shaders.iter().filter(|s| s.key == k).count() == 1;
    let single = |p: &Path| scan.shaders.iter().filter(|s| s.path == p).count() == 1;
    let mut files = scan.shaders.iter().filter(|s| shrec::formats::has_translator(s.container) && s.offset == 0 && s.member.is_empty());
    // a: the only copy of its key and the only shader of its file, so the rewrite removes a key
    let a = files.clone().find(|s| unique(s.key) && single(&s.path)).expect("a shader file").clone();
    let b = files.find(|s| s.key != a.key && s.path != a.path).expect("another shader file").clone();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::copy(&b.path, &a.path).unwrap();
    let fifth = run(Command::new("cmake").arg("--build").arg(&build));
    assert_eq!(fifth.matches("shrec: building shader cache").count(), 1, "shrec ran once:\n{fifth}");
    let compiled: Vec<&str> = fifth.lines().filter(|l| l.contains("Building CXX")).collect();
    assert_eq!(compiled.len(), 1, "only the cache's translation unit is compiled:\n{fifth}");
    assert!(compiled[0].contains("shader_cache.cpp"), "{fifth}");
    assert!(mtime(&generated) > cpp_time, "the cache was rewritten");
    check_run(&run(Command::new(&exe).arg(&dump)), &dump, &buildable_keys(&input), layout);
    let sixth = run(Command::new("cmake").arg("--build").arg(&build));
    assert!(!sixth.contains("shrec") && !sixth.contains("Building CXX"), "{sixth}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cmake_example_single_frame_layout() {
    cmake_example("single", "");
}

#[test]
fn cmake_example_per_shader_layout_with_dictionary() {
    cmake_example("per-shader", "--layout;per-shader;--zstd-dict");
}

/// A shader shrec cannot build fails the CMake build, naming it; with ALLOW_FAILURES the build
/// succeeds and still names it.
#[test]
fn cmake_allow_failures() {
    if !have_tool("cmake") || !have_tool("g++") {
        return;
    }
    let dir = tmpdir("embed-cmake-failures");
    let input = dir.join("shaders");
    copy_tree(&repo().join("tests/corpus/agal"), &input);
    copy_tree(&repo().join("tests/corpus-invalid/agal"), &input);
    let build = dir.join("build");
    let configure = |allow: &str| {
        run(Command::new("cmake")
            .arg("-S")
            .arg(repo().join("examples/cmake"))
            .arg("-B")
            .arg(&build)
            .arg(format!("-DSHREC_EXECUTABLE={}", env!("CARGO_BIN_EXE_shrec")))
            .arg(format!("-DSHREC_INPUT={}", input.display()))
            .arg(format!("-DSHREC_ALLOW_FAILURES={allow}")))
    };
    configure("OFF");
    let out = Command::new("cmake").arg("--build").arg(&build).output().unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "a failed shader must fail the build:\n{log}");
    assert!(log.contains("ruffle_sampler_conflict_fs_INVALID.agal") && log.contains("Flash Error #3696"), "{log}");
    configure("ON");
    let out = Command::new("cmake").arg("--build").arg(&build).output().unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "ALLOW_FAILURES:\n{log}");
    assert!(log.contains("Flash Error #3696"), "the failure is still reported:\n{log}");
    assert!(build.join("shader_cache_example").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
