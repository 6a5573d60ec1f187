//! End-to-end benchmark on a synthetic game directory (issue "Speed"): prints, in one run,
//! - scan throughput vs raw read throughput of the same files,
//! - translation time per shader,
//! - cold build wall time vs the DXC floor (total DXC CPU time ÷ threads),
//! - scaling from 1 thread to all cores (on a subset),
//! - warm rebuild vs cold,
//! - g++ -O0 time of the generated .cpp vs an equally large one-line decimal array.
//!
//! `cargo bench --bench pipeline` (sizes: SHREC_BENCH_SHADERS, default 2000 distinct AGAL
//! programs; SHREC_BENCH_FILLER_MB, default 512 MB of non-shader filler).

use shrec::build::{self, BuildOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Distinct valid AGAL programs: the verification suite's random generator.
fn programs(n: usize) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < n {
        let p = shrec::verify::agal::gen::program(0xBE7C4, i);
        i += 1;
        if seen.insert(xxhash_rust::xxh3::xxh3_64(&p.bytes)) {
            out.push(p.bytes);
        }
    }
    out
}

/// Writes the game directory: archives holding the programs at random offsets between filler
/// bytes, plus big filler files. Reuses it when the stamp matches.
fn game_dir(shaders: usize, filler_mb: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-game");
    let stamp = format!("v1 {shaders} {filler_mb}");
    if std::fs::read_to_string(dir.join("STAMP")).ok().as_deref() == Some(stamp.as_str()) {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let mut rng = Rng(0x9E3779B97F4A7C15);
    // Filler bytes are printable ASCII (0x20..0x7F): no 0xA0 (AGAL) or 0x10 (Xenos) byte, and the
    // ASCII magics (Gfx2, SHAB, DVLB) that appear by chance fail their header checks — the scan
    // count below asserts that nothing but the programs is found.
    let filler = |n: usize, rng: &mut Rng| -> Vec<u8> { (0..n).map(|_| (rng.next() % 0x60) as u8 + 0x20).collect() };
    let progs = programs(shaders);
    for (a, chunk) in progs.chunks(100).enumerate() {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("data/archive{a:03}.pak"))).unwrap());
        for p in chunk {
            let gap = (rng.next() % 4096) as usize;
            f.write_all(&filler(gap, &mut rng)).unwrap();
            f.write_all(p).unwrap();
        }
        f.write_all(&filler(1 << 20, &mut rng)).unwrap();
    }
    let block = filler(1 << 20, &mut rng);
    for i in 0..filler_mb.div_ceil(64) {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("data/movie{i:02}.bik"))).unwrap());
        for _ in 0..64.min(filler_mb - i * 64) {
            f.write_all(&block).unwrap();
        }
    }
    std::fs::write(dir.join("STAMP"), stamp).unwrap();
    dir
}

fn raw_read(dir: &Path) -> (u64, Duration) {
    let t = Instant::now();
    let mut bytes = 0u64;
    for e in walkdir::WalkDir::new(dir) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            bytes += std::fs::read(e.path()).unwrap().len() as u64;
        }
    }
    (bytes, t.elapsed())
}

fn mbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn build_once(input: &Path, out: &Path, cache: &Path, jobs: Option<usize>) -> build::BuildOutput {
    let mut o = BuildOptions::new(input, out);
    o.cache_dir = Some(cache.to_path_buf());
    o.jobs = jobs;
    let r = build::run(&o).expect("build");
    assert_eq!(shrec::report::exit_code(&r.report), 0, "{}", shrec::report::summary_table(&r.report));
    r
}

fn gpp_seconds(file: &Path) -> Option<f64> {
    let t = Instant::now();
    let ok = std::process::Command::new("g++")
        .args(["-std=c++17", "-O0", "-c", "-o", "/dev/null"])
        .arg(file)
        .status()
        .ok()?
        .success();
    ok.then(|| t.elapsed().as_secs_f64())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let shaders = env_usize("SHREC_BENCH_SHADERS", 2000);
    let filler_mb = env_usize("SHREC_BENCH_FILLER_MB", 512);
    let dir = game_dir(shaders, filler_mb);
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-work");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    // Scan vs raw read (both with a warm page cache: read once first).
    let _ = raw_read(&dir);
    let (bytes, read_t) = raw_read(&dir);
    let t = Instant::now();
    let scan = shrec::scan::scan_dir(&dir);
    let scan_t = t.elapsed();
    assert_eq!(scan.shaders.len(), shaders, "every embedded program found, nothing else");
    println!("data: {} files, {:.0} MB, {} shaders", scan.files, bytes as f64 / 1e6, scan.shaders.len());
    println!("scan: {:.0} MB/s vs raw read {:.0} MB/s: ratio {:.2}", mbps(bytes, scan_t), mbps(bytes, read_t), read_t.as_secs_f64() / scan_t.as_secs_f64());

    // Cold build, all cores.
    let cold = build_once(&dir, &work.join("cache.cpp"), &work.join("cache"), None);
    let t = &cold.timings;
    let dxc = t.dxc_dxil + t.dxc_spirv;
    let floor = dxc.as_secs_f64() / t.threads as f64;
    println!(
        "cold build ({} threads): wall {:.2} s, DXC {:.2} s CPU, floor {:.2} s, wall/floor {:.3}, translate {:.1} µs/shader, write {:.2} s",
        t.threads,
        t.wall.as_secs_f64(),
        dxc.as_secs_f64(),
        floor,
        t.wall.as_secs_f64() / floor,
        t.translate.as_secs_f64() * 1e6 / shaders as f64,
        t.write.as_secs_f64()
    );

    // Warm rebuild: nothing changed.
    let warm = build_once(&dir, &work.join("cache.cpp"), &work.join("cache"), None);
    assert_eq!(warm.report.dxc_compilations, 0);
    println!(
        "warm rebuild: {:.3} s = {:.2}% of cold",
        warm.timings.wall.as_secs_f64(),
        warm.timings.wall.as_secs_f64() / t.wall.as_secs_f64() * 100.0
    );

    // Scaling on a subset: 1 thread vs all cores, fresh caches.
    let subset = work.join("subset");
    std::fs::create_dir_all(&subset).unwrap();
    for e in std::fs::read_dir(dir.join("data")).unwrap().take(3) {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pak") {
            std::fs::copy(&p, subset.join(p.file_name().unwrap())).unwrap();
        }
    }
    let one = build_once(&subset, &work.join("s1.cpp"), &work.join("c1"), Some(1)).timings.wall;
    let all = build_once(&subset, &work.join("sn.cpp"), &work.join("cn"), Some(cores)).timings.wall;
    println!("scaling (subset): 1 thread {:.2} s, {cores} threads {:.2} s, speed-up {:.2}", one.as_secs_f64(), all.as_secs_f64(), one.as_secs_f64() / all.as_secs_f64());

    // g++ time of the generated .cpp vs a one-line decimal array of the same bytes.
    let cpp = work.join("cache.cpp");
    let compressed: u64 = cold.sizes.map_or(0, |s| s.dxil.compressed + s.spirv.compressed);
    let mut line = String::from("#include <cstdint>\n#include <cstddef>\nextern const uint8_t blob[] = {");
    let mut rng = Rng(7);
    for _ in 0..compressed {
        line.push_str(&format!("{},", rng.next() as u8));
    }
    line.push_str("};\n");
    let one_line = work.join("oneline.cpp");
    std::fs::write(&one_line, line).unwrap();
    match (gpp_seconds(&cpp), gpp_seconds(&one_line)) {
        (Some(a), Some(b)) => println!("g++ -O0: generated .cpp {a:.2} s vs one-line decimals {b:.2} s: {:.0}%", a / b * 100.0),
        _ => println!("g++ -O0: g++ not available"),
    }
}
