//! HLSL size and DXC work of this build against a baseline shrec binary, in one run:
//! `SHREC_BASELINE=/path/to/baseline/shrec cargo bench --bench compact_hlsl`.
//!
//! Both binaries write the HLSL of every shader of tests/corpus (`build --hlsl-dir`, SPIR-V
//! target only); this process then compiles every file of both sets with the same DXC library
//! for DXIL and for SPIR-V (the build's own arguments, `dxc::compile`), measuring the thread CPU
//! time of each compilation (best of SHREC_BENCH_REPEAT, default 1) and the output bytes. Both
//! sets include this build's shader_common.h (a superset of the baseline's: scalar overloads
//! only). It prints HLSL bytes, DXC CPU per backend, SPIR-V and DXIL bytes per family and in
//! total, new / old, and checks the targets (HLSL ≤ 0.5, DXC CPU ≤ 0.7, SPIR-V ≤ 0.9): PASS /
//! FAIL lines, exit 1 when one is missed. Without SHREC_BASELINE it says so and exits 0.

#[path = "common/mod.rs"]
mod common;
use common::{env_usize, Check};
use shrec::dxc::{self, Target};
use shrec::Stage;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Thread CPU time so far (DXC compiles on the calling thread).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer to a local.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Totals of one HLSL set.
#[derive(Default, Clone, Copy)]
struct Totals {
    shaders: usize,
    hlsl: u64,
    dxil: u64,
    spirv: u64,
    dxil_cpu: Duration,
    spirv_cpu: Duration,
    failed: usize,
}

/// Writes the corpus HLSL of `shrec` into `dir/h`.
fn dump_hlsl(shrec: &Path, corpus: &Path, dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("bench directory");
    let h = dir.join("h");
    let status = Command::new(shrec)
        .arg("build")
        .arg(corpus)
        .arg("-o")
        .arg(dir.join("cache.rs"))
        .args(["--no-cache", "--targets", "spirv", "--hlsl-dir"])
        .arg(&h)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run shrec");
    assert!(status.success(), "{} build failed ({status})", shrec.display());
    h
}

/// Family and stage from a `--hlsl-dir` file name (`KEY.family.stage.hlsl`).
fn family_stage(name: &str) -> Option<(String, Stage)> {
    let mut parts = name.split('.');
    let (_, family, stage) = (parts.next()?, parts.next()?, parts.next()?);
    let stage = match stage {
        "vertex" => Stage::Vertex,
        "pixel" | "fragment" => Stage::Pixel,
        "geometry" => Stage::Geometry,
        _ => return None,
    };
    Some((family.to_string(), stage))
}

/// The specialization-constant mask of every shader, by file name, from the files of `dir` that
/// declare one (this build's `--hlsl-dir` files end with the line; the baseline's do not, and
/// its files of the same name are the same shaders).
fn masks(dir: &Path) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("HLSL directory") {
        let f = e.expect("entry").path();
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        let mask = shrec::hlsl::declared_spec_constants_mask(&text).expect("readable mask line").unwrap_or(0);
        if mask != 0 {
            out.insert(f.file_name().unwrap_or_default().to_string_lossy().to_string(), mask);
        }
    }
    out
}

/// Compiles every file of `dir` for both targets as the build does (with the shader's
/// specialization-constant mask from `masks`: DXIL as a library when it is non-zero).
fn measure(lib: &dxc::DxcLib, dir: &Path, masks: &BTreeMap<String, u32>, repeat: usize) -> BTreeMap<String, Totals> {
    let mut out: BTreeMap<String, Totals> = BTreeMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).expect("HLSL directory").map(|e| e.expect("entry").path()).collect();
    files.sort();
    for f in files {
        let name = f.file_name().unwrap_or_default().to_string_lossy().to_string();
        let Some((family, stage)) = family_stage(&name) else { continue };
        let hlsl = std::fs::read_to_string(&f).expect("HLSL file");
        let t = out.entry(family).or_default();
        t.shaders += 1;
        t.hlsl += hlsl.len() as u64;
        for target in [Target::Dxil, Target::Spirv] {
            let mut best = Duration::MAX;
            let mut bytes = 0;
            for _ in 0..repeat.max(1) {
                let start = thread_cpu();
                let mask = masks.get(&name).copied().unwrap_or(0);
                match dxc::compile_with_spec_constants(lib, &hlsl, stage, target, mask) {
                    Ok(b) => bytes = b.len() as u64,
                    Err(_) => {
                        t.failed += 1;
                        break;
                    }
                }
                best = best.min(thread_cpu() - start);
            }
            let best = if best == Duration::MAX { Duration::ZERO } else { best };
            match target {
                Target::Dxil => {
                    t.dxil += bytes;
                    t.dxil_cpu += best;
                }
                Target::Spirv => {
                    t.spirv += bytes;
                    t.spirv_cpu += best;
                }
            }
        }
    }
    out
}

fn ratio(new: f64, old: f64) -> f64 {
    if old == 0.0 {
        f64::NAN
    } else {
        new / old
    }
}

fn main() {
    let Ok(baseline) = std::env::var("SHREC_BASELINE") else {
        println!("compact_hlsl: set SHREC_BASELINE to a baseline shrec binary (e.g. built from b22deaf) to compare against");
        return;
    };
    let repeat = env_usize("SHREC_BENCH_REPEAT", 1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("tests/corpus");
    let work = std::env::temp_dir().join(format!("shrec-compact-bench-{}", std::process::id()));
    let new_bin = PathBuf::from(env!("CARGO_BIN_EXE_shrec"));
    let old_dir = dump_hlsl(Path::new(&baseline), &corpus, &work.join("old"));
    let new_dir = dump_hlsl(&new_bin, &corpus, &work.join("new"));
    let lib = dxc::locate(&dxc::LocateOptions::default()).expect("DXC library");
    let masks = masks(&new_dir);
    let old = measure(&lib, &old_dir, &masks, repeat);
    let new = measure(&lib, &new_dir, &masks, repeat);
    let _ = std::fs::remove_dir_all(&work);

    println!("tests/corpus, new / old (DXC CPU: thread time per compilation, best of {repeat}):");
    println!(
        "{:<7} {:>7} {:>21} {:>21} {:>21} {:>21} {:>21}",
        "family", "shaders", "HLSL bytes", "DXIL DXC CPU s", "SPIR-V DXC CPU s", "DXIL bytes", "SPIR-V bytes"
    );
    let mut total_old = Totals::default();
    let mut total_new = Totals::default();
    let row = |name: &str, o: &Totals, n: &Totals| {
        let cell = |nv: f64, ov: f64, secs: bool| {
            if secs {
                format!("{nv:.2}/{ov:.2}={:.2}", ratio(nv, ov))
            } else {
                format!("{nv:.0}/{ov:.0}={:.2}", ratio(nv, ov))
            }
        };
        println!(
            "{name:<7} {:>7} {:>21} {:>21} {:>21} {:>21} {:>21}",
            n.shaders,
            cell(n.hlsl as f64, o.hlsl as f64, false),
            cell(n.dxil_cpu.as_secs_f64(), o.dxil_cpu.as_secs_f64(), true),
            cell(n.spirv_cpu.as_secs_f64(), o.spirv_cpu.as_secs_f64(), true),
            cell(n.dxil as f64, o.dxil as f64, false),
            cell(n.spirv as f64, o.spirv as f64, false),
        );
    };
    for (family, n) in &new {
        let o = old.get(family).copied().unwrap_or_default();
        row(family, &o, n);
        for (t, x) in [(&mut total_old, &o), (&mut total_new, n)] {
            t.shaders += x.shaders;
            t.hlsl += x.hlsl;
            t.dxil += x.dxil;
            t.spirv += x.spirv;
            t.dxil_cpu += x.dxil_cpu;
            t.spirv_cpu += x.spirv_cpu;
            t.failed += x.failed;
        }
    }
    row("total", &total_old, &total_new);
    println!("DXC failures: new {}, old {}", total_new.failed, total_old.failed);

    let mut check = Check { failed: Vec::new() };
    let hlsl = ratio(total_new.hlsl as f64, total_old.hlsl as f64);
    check.target("corpus HLSL bytes new/old", hlsl, hlsl <= 0.5, "≤ 0.5");
    let cpu_new = (total_new.dxil_cpu + total_new.spirv_cpu).as_secs_f64();
    let cpu_old = (total_old.dxil_cpu + total_old.spirv_cpu).as_secs_f64();
    let cpu = ratio(cpu_new, cpu_old);
    check.target("corpus DXC CPU new/old (both targets)", cpu, cpu <= 0.7, "≤ 0.7");
    let spirv = ratio(total_new.spirv as f64, total_old.spirv as f64);
    check.target("corpus SPIR-V bytes new/old", spirv, spirv <= 0.9, "≤ 0.9");
    // every file compiles, as in the build (the shaders with a specialization-constant mask
    // included)
    check.target("DXC failures (new + old)", (total_new.failed + total_old.failed) as f64, total_new.failed + total_old.failed == 0, "= 0");
    if !check.failed.is_empty() {
        println!("missed: {}", check.failed.join(", "));
        std::process::exit(1);
    }
}
