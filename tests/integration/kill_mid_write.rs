//! A build killed (SIGKILL) while it writes its outputs leaves no partial cache file: the
//! destination is either absent or the previous complete version, and the next build removes
//! the dead build's temporary files and writes a complete cache.

use crate::common;

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
    let (mut child, temps) = stalled_in_write(input, out, cache);
    child.kill().unwrap(); // SIGKILL: no destructor, no cleanup runs
    child.wait().unwrap();
    temps
}

/// Starts a build that stalls in its first output write and returns it, still running, once a
/// temporary file of the output exists and has data, with the temporary files.
fn stalled_in_write(input: &Path, out: &Path, cache: &Path) -> (std::process::Child, Vec<PathBuf>) {
    let dir = out.parent().unwrap();
    let mut child =
        shrec(input, out, cache).env("SHREC_TEST_STALL_WRITE", format!("{}:60000", out.file_name().unwrap().to_str().unwrap())).spawn().unwrap();
    let started = Instant::now();
    let temps = loop {
        let t = temp_files(dir);
        // the output's own temporary file (the stall is in its write; the files staged before
        // it are complete temporary files too)
        let own = format!(".{}.", out.file_name().unwrap().to_str().unwrap());
        if t.iter().any(|p| p.file_name().unwrap().to_string_lossy().starts_with(&own) && std::fs::metadata(p).is_ok_and(|m| m.len() >= 4096)) {
            break t;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the build never reached its output write");
        assert!(child.try_wait().unwrap().is_none(), "the build ended before it was killed");
        std::thread::sleep(Duration::from_millis(20));
    };
    (child, temps)
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

/// Stale temporary files across PID namespaces (issue 23, B11): the clean-up went by the pid in a
/// temporary file's name, checked in /proc, so a live build in another PID namespace sharing the
/// folder (its pid does not exist here) lost its temporary file under it. Now a writer holds its
/// temporary file's lock until the rename, and the clean-up removes only files whose lock it can
/// take. Here files stand for live writers of another namespace (a pid no process here can have,
/// in the old and the new name shape, locked) and for a dead writer (not locked); then a real
/// build is caught writing: its temporary file is locked until it is killed.
#[test]
fn live_writers_temporary_files_are_kept_whatever_their_pid() {
    use std::os::unix::io::AsRawFd;
    let dir = tmpdir("live-temps");
    // SAFETY: flock only takes a descriptor the File keeps open through the call.
    let flock = |f: &std::fs::File| unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    let dest = dir.join("x.bin");
    // pid_max is at most 2^22 on Linux: no process here has pid 999999999
    let live: Vec<PathBuf> = [".x.bin.999999999.0.tmp", ".x.bin.999999999-0123456789abcdef.0.tmp"].iter().map(|n| dir.join(n)).collect();
    let held: Vec<std::fs::File> = live
        .iter()
        .map(|p| {
            let f = std::fs::File::create(p).unwrap();
            assert_eq!(flock(&f), 0);
            f
        })
        .collect();
    let dead = dir.join(".x.bin.999999998-fedcba9876543210.0.tmp");
    std::fs::write(&dead, b"half").unwrap();
    shrec::cache::atomic::write(&dest, b"new").unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), b"new");
    for p in &live {
        assert!(p.exists(), "{} was removed while its writer held it", p.display());
    }
    assert!(!dead.exists(), "the dead writer's file stays");
    drop(held); // the writers end
                // (A process forked by another test of this binary holds copies of every descriptor, locks
                // included, until it execs: retry for that instant.)
    for _ in 0..50 {
        shrec::cache::atomic::write(&dest, b"again").unwrap();
        if temp_files(&dir).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));

    // A build writing its output holds the lock of its temporary file.
    let input = dir.join("input");
    std::fs::create_dir_all(&input).unwrap();
    let agal = walkdir::WalkDir::new(repo().join("tests/corpus/agal")).sort_by_file_name().into_iter().map(|e| e.unwrap().into_path());
    for (i, p) in agal.filter(|p| p.extension().is_some_and(|x| x == "agal")).take(8).enumerate() {
        std::fs::copy(p, input.join(format!("{i}.agal"))).unwrap();
    }
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let (mut child, temps) = stalled_in_write(&input, &out_dir.join("c.cpp"), &dir.join("cache"));
    let cpp_temp = temps.iter().find(|p| p.file_name().unwrap().to_string_lossy().starts_with(".c.cpp.")).expect("the .cpp's temporary file");
    let f = std::fs::File::open(cpp_temp).unwrap();
    let held = flock(&f) != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(held, "the writing build does not hold its temporary file's lock");
    assert_eq!(flock(&f), 0, "after the kill the lock is free (the kernel released it)");
    std::fs::remove_dir_all(&dir).unwrap();
}
