//! The C ABI as a C++ program uses it: builds this crate's static library with cargo, compiles
//! `tests/c_abi_consumer.cpp` against `include/shrec_runtime.h` with g++, links it, and decodes
//! every reference SMOL-V vector of the repository (tests/vectors/smolv) byte for byte.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cpp_program_decodes_every_reference_vector() {
    if Command::new("g++").arg("--version").output().is_err() {
        panic!("g++ is required (apt-get install g++)");
    }
    let krate = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = krate.parent().unwrap();
    // Its own target dir: the outer `cargo test` holds no lock on it, and reruns are incremental.
    let target = repo.join("target/c-abi");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo)
        .args(["build", "--release", "--locked", "-p", "shrec-runtime-c", "--manifest-path"])
        .arg(repo.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR"));
    let lib = target.join("release/libshrec_runtime_c.a");
    let exe = target.join("c_abi_consumer");
    run(Command::new("g++")
        .args(["-std=c++17", "-O1", "-Wall", "-Werror", "-I"])
        .arg(krate.join("include"))
        .arg(krate.join("tests/c_abi_consumer.cpp"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe));
    let vectors = repo.join("tests/vectors/smolv");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&vectors)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "spv"))
        .map(|p| p.with_extension(""))
        .filter(|p| p.with_extension("smolv").is_file())
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{} vectors", names.len());
    let out = run(Command::new(&exe).args(&names));
    assert_eq!(out.trim(), format!("ok {}", names.len()));
    println!("C ABI: {} reference SMOL-V vectors decoded byte for byte by a C++ program", names.len());
}
