//! Builds the shader cache at compile time with shrec as a library.
//!
//! Input: `$SHREC_EXAMPLE_INPUT`, else the repository's `tests/corpus`. Output:
//! `$OUT_DIR/shader_cache.rs` (+ its blobs), in the per-shader layout with a dictionary, so the
//! program decompresses only the shaders it looks up. Cargo reruns this script only when a file
//! under the input directory (or one of the variables below) changes.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=SHREC_EXAMPLE_INPUT");
    println!("cargo:rerun-if-env-changed=SHREC_DXC");
    println!("cargo:rerun-if-env-changed=SHREC_EXAMPLE_RUN_LOG");
    println!("cargo:rerun-if-env-changed=SHREC_ALLOW_FAILURES");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let input = match std::env::var_os("SHREC_EXAMPLE_INPUT") {
        Some(p) => PathBuf::from(p),
        None => manifest.join("../../tests/corpus"),
    };
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    // The directory (cargo scans it for changes) and every file in it, explicitly.
    println!("cargo:rerun-if-changed={}", input.display());
    rerun_for_files(&input);

    let mut opts = shrec::build::BuildOptions::new(&input, out_dir.join("shader_cache.rs"));
    // Compiled artifacts are reused across rebuilds (a changed input recompiles only what changed).
    opts.cache_dir = Some(out_dir.join("shrec-cache"));
    opts.layout = shrec::cache::CacheLayout::PerShader;
    opts.zstd_dict = Some(shrec::cache::DEFAULT_DICT_SIZE);
    // A shader that fails is a build error (its runtime lookup would find nothing), unless the
    // project says it can live without it: SHREC_ALLOW_FAILURES=1.
    opts.allow_failures = std::env::var_os("SHREC_ALLOW_FAILURES").is_some_and(|v| v == "1");
    let built = shrec::build::run(&opts).unwrap_or_else(|e| panic!("shrec: {e}"));
    for o in &built.report.outcomes {
        if let Some(line) = shrec::report::error_line(o) {
            println!("cargo:warning={}", line.lines().next().unwrap_or(""));
        }
    }
    for e in &built.report.scan_errors {
        println!("cargo:warning={}", shrec::report::scan_error_line(e));
    }
    if shrec::report::exit_code(&built.report) != 0 {
        let failed = built.report.totals().failed;
        panic!(
            "shrec: {failed} shader(s) failed and {} file(s) could not be scanned (the cargo:warning lines above); \
             set SHREC_ALLOW_FAILURES=1 to build without them",
            built.report.scan_errors.len()
        );
    }
    if let Some(s) = &built.sizes {
        for line in s.to_string().lines() {
            eprintln!("{line}");
        }
    }

    // For tests/integration/embed_cargo.rs: one line per run of this script.
    if let Some(log) = std::env::var_os("SHREC_EXAMPLE_RUN_LOG") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        writeln!(f, "build.rs ran: {} entries", built.entries.len()).unwrap();
    }
}

fn rerun_for_files(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rerun_for_files(&p);
        } else {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
