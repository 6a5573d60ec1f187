//! False positives (issue "Robustness"): scans directories of non-shader files — by default the
//! system's `/usr/lib` and `/usr/share`, several GB of libraries, images, fonts, locales and data —
//! and lists every detection. Target: 0. Any detection is printed with its file, offset, kind
//! and key, and the run exits with 1, so a weak magic check shows up here first.
//!
//! `cargo bench --bench false_positives` (directories: SHREC_FP_DIRS, colon-separated).
//! Shader files a system legitimately holds (none on a Debian base system) would be listed in
//! `EXPECTED` with the reason.

use std::time::Instant;

/// (path suffix, reason) of detections that are real shaders.
const EXPECTED: &[(&str, &str)] = &[];

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dirs = std::env::var("SHREC_FP_DIRS").unwrap_or_else(|_| "/usr/lib:/usr/share".into());
    let (mut files, mut bytes, mut unexpected) = (0u64, 0u64, 0usize);
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        let t = Instant::now();
        let r = shrec::scan::scan_dir(std::path::Path::new(dir));
        files += r.files;
        bytes += r.bytes;
        println!(
            "{dir}: {} files, {:.2} GB scanned in {:.1} s, {} detections, {} container errors",
            r.files,
            r.bytes as f64 / 1e9,
            t.elapsed().as_secs_f64(),
            r.shaders.len(),
            r.errors.iter().filter(|e| e.kind.is_some()).count()
        );
        for s in &r.shaders {
            let expected = EXPECTED.iter().find(|(p, _)| s.path.to_string_lossy().ends_with(p));
            println!(
                "  {} {}+0x{:X} [{} {}] {}",
                if expected.is_some() { "expected" } else { "UNEXPECTED" },
                s.path.display(),
                s.offset,
                s.family,
                s.stage.name_in(s.family),
                shrec::scan::key_hex(s.key)
            );
            unexpected += expected.is_none() as usize;
        }
        // Container errors are candidates that passed the magic check and failed parsing: not
        // detections (nothing is built from them), but listed since they show weak magics.
        for e in r.errors.iter().filter(|e| e.kind.is_some()) {
            println!("  rejected candidate: {e}");
        }
    }
    println!("total: {files} files, {:.2} GB, {unexpected} unexpected detections (target 0)", bytes as f64 / 1e9);
    if bytes < 1_000_000_000 {
        println!("note: less than 1 GB scanned");
    }
    if unexpected > 0 {
        std::process::exit(1);
    }
}
