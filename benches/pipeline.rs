//! End-to-end benchmark on a synthetic game directory (issue "Speed"). One command,
//! `cargo bench --bench pipeline`, prints and checks:
//! - scan throughput vs raw read throughput of the same files (target ≥ 0.8),
//! - translation time per shader, per family,
//! - cold build wall time vs the DXC floor, total DXC CPU time ÷ threads (target ≤ 1.10),
//! - scaling from 1 thread to all cores (on a subset),
//! - warm rebuild vs cold (target ≤ 2%),
//! - g++ -O0 time of the generated .cpp vs an equally large one-line decimal array (target < 25%).
//!
//! It exits with 1 when a target is missed. The game directory: every shader container of
//! tests/corpus (all four families) plus distinct generated AGAL programs and PICA DVLBs (the
//! verification suites' random program generators), embedded at random offsets in `.pak`
//! archives between filler bytes, plus large filler files. Sizes: SHREC_BENCH_AGAL (default
//! 2000), SHREC_BENCH_PICA (default 1000), SHREC_BENCH_FILLER_MB (default 2048).

#[path = "common/mod.rs"]
mod common;
use common::{env_usize, mbps, Check, Rng};
use shrec::build::{self, BuildOptions};
use shrec::Family;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `n` distinct containers made by `make(i)`.
fn distinct(n: usize, make: impl Fn(u64) -> Vec<u8>) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < n {
        let p = make(i);
        i += 1;
        if seen.insert(xxhash_rust::xxh3::xxh3_64(&p)) {
            out.push(p);
        }
    }
    out
}

/// Every shader container of tests/corpus, as bytes (one per container, not per shader).
fn corpus_containers() -> Vec<Vec<u8>> {
    let scan = shrec::scan::scan_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"));
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for s in &scan.shaders {
        if seen.insert((s.path.clone(), s.offset)) {
            out.push(shrec::scan::read_container(s).expect("corpus file readable"));
        }
    }
    out
}

/// Writes the game directory: archives holding the containers at random offsets between filler
/// bytes, plus big filler files. Reuses it when the stamp matches. Returns the directory and
/// the number of shaders a scan must find.
fn game_dir(agal: usize, pica: usize, filler_mb: usize) -> (PathBuf, usize) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-game");
    let corpus = corpus_containers();
    let expected_corpus: usize = corpus.iter().map(|c| shrec::scan::scan_bytes(Path::new("x"), c).0.len()).sum();
    let expected = expected_corpus + agal + pica;
    let stamp = format!("v3 {agal} {pica} {filler_mb} {}", corpus.len());
    if std::fs::read_to_string(dir.join("STAMP")).ok().as_deref() == Some(stamp.as_str()) {
        return (dir, expected);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let mut rng = Rng(0x9E3779B97F4A7C15);
    // Filler bytes are printable ASCII (0x20..0x7F): no 0xA0 (AGAL) or 0x10 (Xenos) byte, and the
    // ASCII magics (Gfx2, SHAB, DVLB) that appear by chance fail their header checks — the scan
    // count below asserts that nothing but the embedded containers is found.
    let filler = |n: usize, rng: &mut Rng| -> Vec<u8> { (0..n).map(|_| (rng.next() % 0x60) as u8 + 0x20).collect() };
    let mut containers = corpus;
    containers.extend(distinct(agal, |i| shrec_verify::agal::gen::program(0xBE7C4, i).bytes));
    containers.extend(distinct(pica, |i| shrec_verify::pica::gen::program(0xBE7C5, i).bytes));
    // Shuffle so that every archive mixes families.
    for i in (1..containers.len()).rev() {
        containers.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    for (a, chunk) in containers.chunks(100).enumerate() {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("data/archive{a:03}.pak"))).unwrap());
        // Containers start 4-byte aligned: XenosRecomp's scan rule (which shrec keeps for
        // Xenos) only probes aligned offsets.
        let mut at = 0usize;
        for p in chunk {
            let gap = (rng.next() % 4096) as usize;
            let gap = gap + (4 - (at + gap) % 4) % 4;
            f.write_all(&filler(gap, &mut rng)).unwrap();
            f.write_all(p).unwrap();
            at += gap + p.len();
        }
        f.write_all(&filler(1 << 20, &mut rng)).unwrap();
    }
    let block = filler(1 << 20, &mut rng);
    for i in 0..filler_mb.div_ceil(256) {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("data/movie{i:02}.bik"))).unwrap());
        for _ in 0..256.min(filler_mb - i * 256) {
            f.write_all(&block).unwrap();
        }
    }
    std::fs::write(dir.join("STAMP"), stamp).unwrap();
    (dir, expected)
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
    let ok = std::process::Command::new("g++").args(["-std=c++17", "-O0", "-c", "-o", "/dev/null"]).arg(file).status().ok()?.success();
    ok.then(|| t.elapsed().as_secs_f64())
}

/// Translation (container read + decode + lower + HLSL) time per shader, per family.
fn translation_times(scan: &shrec::scan::ScanResult) -> BTreeMap<Family, (usize, Duration)> {
    let mut by_family: BTreeMap<Family, (usize, Duration)> = BTreeMap::new();
    for s in &scan.shaders {
        let t = Instant::now();
        let bytes = shrec::scan::read_container(s).unwrap();
        let tr = shrec::formats::translate(s.container, &bytes, s.index, &Default::default()).expect("bench shaders translate");
        std::hint::black_box(shrec::hlsl::write(&tr.module));
        let e = by_family.entry(s.family).or_default();
        e.0 += 1;
        e.1 += t.elapsed();
    }
    by_family
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let agal = env_usize("SHREC_BENCH_AGAL", 2000);
    let pica = env_usize("SHREC_BENCH_PICA", 1000);
    let filler_mb = env_usize("SHREC_BENCH_FILLER_MB", 2048);
    let (dir, expected) = game_dir(agal, pica, filler_mb);
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-work");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut check = Check { failed: Vec::new() };

    // Scan vs raw read (both with a warm page cache: read once first).
    let _ = raw_read(&dir);
    let (bytes, read_t) = raw_read(&dir);
    let t = Instant::now();
    let scan = shrec::scan::scan_dir(&dir);
    let scan_t = t.elapsed();
    assert_eq!(scan.shaders.len(), expected, "every embedded shader found, nothing else");
    assert!(scan.errors.is_empty(), "{:?}", scan.errors);
    let distinct_keys = scan.shaders.iter().map(|s| s.key).collect::<std::collections::BTreeSet<_>>().len();
    println!("data: {} files, {:.0} MB, {} shaders ({distinct_keys} distinct)", scan.files, bytes as f64 / 1e6, scan.shaders.len());
    println!("scan: {:.0} MB/s, raw read {:.0} MB/s", mbps(bytes, scan_t), mbps(bytes, read_t));

    for (family, (n, d)) in translation_times(&scan) {
        println!("translate {family}: {n} shaders, {:.1} µs/shader", d.as_secs_f64() * 1e6 / n as f64);
    }

    // Cold build, all cores.
    let cold = build_once(&dir, &work.join("cache.cpp"), &work.join("cache"), None);
    let t = &cold.timings;
    println!(
        "cold build ({} threads): wall {:.2} s, DXC {:.2} s CPU (dxil {:.2} + spirv {:.2}), floor {:.2} s; parse {:.3} s, translate {:.3} s, pack {:.2} s CPU (during DXC: {}), write {:.2} s",
        t.threads,
        t.wall.as_secs_f64(),
        (t.dxc_dxil + t.dxc_spirv).as_secs_f64(),
        t.dxc_dxil.as_secs_f64(),
        t.dxc_spirv.as_secs_f64(),
        t.dxc_floor().as_secs_f64(),
        t.parse.as_secs_f64(),
        t.translate.as_secs_f64(),
        t.pack.as_secs_f64(),
        cold.packed_during_build,
        t.write.as_secs_f64()
    );
    println!(
        "  scan {:.3} s, ended at {:.3} s; the first shader started compiling at {:.3} s",
        t.scan.as_secs_f64(),
        t.scan_ended.as_secs_f64(),
        t.first_shader_started.map_or(f64::NAN, |d| d.as_secs_f64())
    );

    // Warm rebuild: nothing changed.
    let warm = build_once(&dir, &work.join("cache.cpp"), &work.join("cache"), None);
    assert_eq!(warm.report.dxc_compilations, 0);
    assert!(!warm.output_written);
    println!("warm rebuild: {:.3} s (scan {:.3} s)", warm.timings.wall.as_secs_f64(), warm.timings.scan.as_secs_f64());

    // Scaling on a subset: 1 thread vs all cores, fresh caches.
    let subset = work.join("subset");
    std::fs::create_dir_all(&subset).unwrap();
    for e in std::fs::read_dir(dir.join("data")).unwrap().filter_map(|e| e.ok()).filter(|e| e.path().extension().is_some_and(|x| x == "pak")).take(3)
    {
        std::fs::copy(e.path(), subset.join(e.file_name())).unwrap();
    }
    let one = build_once(&subset, &work.join("s1.cpp"), &work.join("c1"), Some(1)).timings.wall;
    let all = build_once(&subset, &work.join("sn.cpp"), &work.join("cn"), Some(cores)).timings.wall;
    println!(
        "scaling (subset of 300 shaders): 1 thread {:.2} s, {cores} threads {:.2} s, speed-up {:.2}",
        one.as_secs_f64(),
        all.as_secs_f64(),
        one.as_secs_f64() / all.as_secs_f64()
    );

    // g++ time of the generated .cpp vs a one-line decimal array of the same number of bytes.
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
    let gpp = (gpp_seconds(&cpp), gpp_seconds(&one_line));
    if let (Some(a), Some(b)) = gpp {
        println!(
            "g++ -O0 -c: generated .cpp ({} KB) {a:.2} s, one-line decimals ({compressed} bytes) {b:.2} s",
            std::fs::metadata(&cpp).unwrap().len() / 1024
        );
    }

    println!("targets:");
    check.target("cold wall / DXC floor", t.wall_over_floor(), t.wall_over_floor() <= 1.10, "<= 1.10");
    let scan_ratio = read_t.as_secs_f64() / scan_t.as_secs_f64();
    check.target("scan throughput / raw read throughput", scan_ratio, scan_ratio >= 0.8, ">= 0.80");
    let warm_pct = warm.timings.wall.as_secs_f64() / t.wall.as_secs_f64() * 100.0;
    check.target("warm rebuild, % of cold", warm_pct, warm_pct <= 2.0, "<= 2%");
    match gpp {
        (Some(a), Some(b)) => check.target("g++ generated .cpp, % of one-line decimals", a / b * 100.0, a / b < 0.25, "< 25%"),
        _ => check.target("g++ available", 0.0, false, "g++ on PATH"),
    }
    if !check.failed.is_empty() {
        println!("missed: {}", check.failed.join(", "));
        std::process::exit(1);
    }
}
