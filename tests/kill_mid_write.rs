//! A build killed (SIGKILL) while it writes its outputs leaves no partial cache file: the
//! destination is either absent or the previous complete version, and the next build removes
//! the dead build's temporary files and writes a complete cache.

mod common;

use common::{copy_tree, repo, run, tmpdir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn shrec(input: &Path, out: &Path, cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shrec"));
    c.arg("build").arg(input).arg("-o").arg(out).arg("--cache-dir").arg(cache).arg("-q");
    c
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| shrec::cache::atomic::is_temp_name(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// Starts a build that stalls in its first output write, waits until a temporary file of the
/// output exists and has data, kills the process and returns the temporary files it left.
fn kill_while_writing(input: &Path, out: &Path, cache: &Path) -> Vec<PathBuf> {
    let dir = out.parent().unwrap();
    let mut child =
        shrec(input, out, cache).env("SHREC_TEST_STALL_WRITE", format!("{}:60000", out.file_name().unwrap().to_str().unwrap())).spawn().unwrap();
    let started = Instant::now();
    let temps = loop {
        let t = temp_files(dir);
        if t.iter().any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() >= 4096)) {
            break t;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the build never reached its output write");
        assert!(child.try_wait().unwrap().is_none(), "the build ended before it was killed");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL: no destructor, no cleanup runs
    child.wait().unwrap();
    temps
}

#[test]
fn killed_build_leaves_no_partial_cache() {
    let dir = tmpdir("kill-mid-write");
    let cache = dir.join("cache");
    let input = dir.join("input");
    copy_tree(&repo().join("tests/corpus/agal"), &input);
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("shader_cache.cpp");
    let header = out_dir.join("shader_cache.h");

    // Fill the artifact cache first, so the killed builds spend their time in the output write.
    run(shrec(&input, &dir.join("warmup.cpp"), &cache).arg("--report").arg(dir.join("r.json")));

    // 1. No previous output: after the kill, neither file exists; only temporary files do.
    let left = kill_while_writing(&input, &out, &cache);
    assert!(!left.is_empty());
    assert!(!out.exists() && !header.exists(), "a partial cache file was left behind");

    // The next build removes the dead build's temporary files and writes complete files.
    let status = shrec(&input, &out, &cache).status().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(temp_files(&out_dir).is_empty(), "stale temporary files: {:?}", temp_files(&out_dir));
    let complete = std::fs::read(&out).unwrap();
    assert!(complete.ends_with(b";\n"), "the cache ends with its last declaration");

    // 2. A previous output exists and the input changes (one shader file fewer): after the
    //    kill, the old files are still there, byte for byte.
    let old_header = std::fs::read(&header).unwrap();
    let scan = shrec::scan::scan_dir(&input);
    std::fs::remove_file(&scan.shaders[0].path).unwrap();
    let left = kill_while_writing(&input, &out, &cache);
    assert!(!left.is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), complete, "the previous cache was damaged");
    assert_eq!(std::fs::read(&header).unwrap(), old_header);
    std::fs::remove_dir_all(&dir).unwrap();
}
