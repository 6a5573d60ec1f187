//! The SPIR-V stage, direct back end against DXC, in one run:
//! `cargo bench --bench spirv_direct` (issue "SPIR-V straight from the IR").
//!
//! For every distinct shader of tests/corpus that the direct back end covers
//! (docs/spirv-direct.md), this process writes its SPIR-V both ways on one thread and measures
//! the thread CPU time of each (best of SHREC_BENCH_REPEAT, default 3): direct =
//! `shrec::spirv::write` (the IR passes and the SPIR-V writer); DXC = `shrec::hlsl::write` (the
//! same IR passes and the HLSL writer) plus DXC's compilation with the build's SPIR-V arguments.
//! Translation (decode and lowering) is common to both and not counted. It prints per family
//! and in total the CPU time and the bytes of both — raw SPIR-V, SMOL-V, and SMOL-V in one
//! zstd frame at the cache's default level, as `shrec build` embeds them — and checks the
//! target: direct CPU / DXC CPU ≤ 0.05 (PASS / FAIL, exit 1 on FAIL). The shaders the direct
//! back end does not cover yet are counted and named by family, not measured.

#[path = "common/mod.rs"]
mod common;
use common::{env_usize, thread_cpu, Check};
use shrec::dxc::{self, Target};
use shrec::formats::{self, TranslateOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// The best thread CPU time of `repeat` runs of `f`, and its last result.
fn best_of<T>(repeat: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..repeat.max(1) {
        let t0 = thread_cpu();
        let r = f();
        best = best.min(thread_cpu() - t0);
        out = Some(r);
    }
    (best, out.expect("ran at least once"))
}

/// One back end's totals over a set of shaders.
#[derive(Default)]
struct Side {
    cpu: Duration,
    raw: u64,
    smolv: Vec<u8>,
}

impl Side {
    fn add(&mut self, cpu: Duration, spirv: &[u8]) {
        self.cpu += cpu;
        self.raw += spirv.len() as u64;
        let encoded = shrec::pack::smolv::encode(spirv, false).expect("SMOL-V encodes a valid module");
        self.smolv.extend_from_slice(&encoded);
    }

    fn zstd(&self) -> u64 {
        zstd::bulk::compress(&self.smolv, shrec::cache::DEFAULT_ZSTD_LEVEL).expect("zstd").len() as u64
    }
}

#[derive(Default)]
struct Family {
    shaders: usize,
    not_covered: BTreeMap<&'static str, usize>,
    direct: Side,
    dxc: Side,
}

fn main() {
    let repeat = env_usize("SHREC_BENCH_REPEAT", 3);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let lib = match dxc::locate(&dxc::LocateOptions::default()) {
        Ok(l) => l,
        Err(e) => {
            println!("spirv_direct: no DXC ({e}); the comparison needs it");
            std::process::exit(1);
        }
    };
    let scan = shrec::scan::scan_dir(&corpus);
    let mut seen = BTreeSet::new();
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    for s in scan.shaders.iter().filter(|s| seen.insert(s.key)) {
        let family_name = s.path.strip_prefix(&corpus).ok().and_then(|p| p.iter().next()).map_or("?".into(), |c| c.to_string_lossy().into_owned());
        let family = families.entry(family_name).or_default();
        let bytes = shrec::scan::read_container(s).expect("corpus file");
        let t = match formats::translate(s.container, &bytes, s.index, &TranslateOptions::default()) {
            Ok(t) => t,
            Err(_) => continue,
        };
        let (direct_cpu, direct) = best_of(repeat, || shrec::spirv::write(&t.module, &shrec::spirv::Options::default()));
        let words = match direct {
            Ok(w) => w,
            Err(shrec::spirv::SpirvError::Unsupported { construct }) => {
                *family.not_covered.entry(construct).or_default() += 1;
                continue;
            }
            Err(e) => panic!("{}: {e}", s.path.display()),
        };
        let (dxc_cpu, via_dxc) = best_of(repeat, || {
            let hlsl = shrec::hlsl::write(&t.module);
            dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Spirv, t.spec_constants_mask)
        });
        let via_dxc = via_dxc.unwrap_or_else(|e| panic!("{}: DXC: {e}", s.path.display()));
        let direct_bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        family.shaders += 1;
        family.direct.add(direct_cpu, &direct_bytes);
        family.dxc.add(dxc_cpu, &via_dxc);
    }

    println!("SPIR-V stage, direct / DXC (thread CPU, best of {repeat}; bytes raw, SMOL-V, SMOL-V + zstd {})", shrec::cache::DEFAULT_ZSTD_LEVEL);
    println!("{:<6} {:>7} {:>24} {:>22} {:>22} {:>20}", "family", "shaders", "CPU ms direct/dxc", "raw", "SMOL-V", "zstd");
    let mut total = Family::default();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let row = |name: &str, f: &Family, zd: u64, zx: u64| {
        println!(
            "{name:<6} {:>7} {:>9.1}/{:>7.1}={:<6.3} {:>8}/{:>8}={:.2} {:>8}/{:>8}={:.2} {:>7}/{:>7}={:.2}",
            f.shaders,
            ms(f.direct.cpu),
            ms(f.dxc.cpu),
            ratio(ms(f.direct.cpu), ms(f.dxc.cpu)),
            f.direct.raw,
            f.dxc.raw,
            ratio(f.direct.raw as f64, f.dxc.raw as f64),
            f.direct.smolv.len(),
            f.dxc.smolv.len(),
            ratio(f.direct.smolv.len() as f64, f.dxc.smolv.len() as f64),
            zd,
            zx,
            ratio(zd as f64, zx as f64)
        );
    };
    for (name, f) in &families {
        row(name, f, f.direct.zstd(), f.dxc.zstd());
        total.shaders += f.shaders;
        for (c, n) in &f.not_covered {
            *total.not_covered.entry(c).or_default() += n;
        }
        for (mine, theirs) in [(&mut total.direct, &f.direct), (&mut total.dxc, &f.dxc)] {
            mine.cpu += theirs.cpu;
            mine.raw += theirs.raw;
            mine.smolv.extend_from_slice(&theirs.smolv);
        }
    }
    let (zd, zx) = (total.direct.zstd(), total.dxc.zstd());
    row("total", &total, zd, zx);
    for (name, f) in &families {
        if !f.not_covered.is_empty() {
            println!("  not covered by the direct back end yet ({name}): {:?}", f.not_covered);
        }
    }
    let mut check = Check { failed: Vec::new() };
    let r = ratio(ms(total.direct.cpu), ms(total.dxc.cpu));
    check.target(&format!("SPIR-V stage CPU direct/DXC over the {} covered corpus shaders", total.shaders), r, r <= 0.05, "≤ 0.05");
    if !check.failed.is_empty() {
        std::process::exit(1);
    }
}
