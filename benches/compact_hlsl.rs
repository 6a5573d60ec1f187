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
//! `SHREC_BENCH_DUMP=DIR` keeps both sets' HLSL, SPIR-V and DXIL in DIR/old and DIR/new.

#[path = "common/mod.rs"]
mod common;
use common::{env_usize, thread_cpu, Check};
use shrec::dxc::{self, Target};
use shrec::Stage;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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
/// `dump`: a directory to write each compilation's output into (`NAME.spv`, `NAME.dxil`).
fn measure(lib: &dxc::DxcLib, dir: &Path, masks: &BTreeMap<String, u32>, repeat: usize, dump: Option<&Path>) -> BTreeMap<String, Totals> {
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
                    Ok(b) => {
                        bytes = b.len() as u64;
                        if let Some(d) = dump {
                            let ext = if target == Target::Spirv { "spv" } else { "dxil" };
                            std::fs::write(d.join(format!("{name}.{ext}")), &b).expect("dump file");
                        }
                    }
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
    // SHREC_BENCH_DUMP=DIR keeps both sets' HLSL and DXC outputs in DIR/old and DIR/new
    let dump = std::env::var_os("SHREC_BENCH_DUMP").map(PathBuf::from);
    let dump_in = |dir: &Path, set: &str| {
        dump.as_ref().map(|d| {
            let to = d.join(set);
            let _ = std::fs::remove_dir_all(&to);
            std::fs::create_dir_all(&to).expect("dump directory");
            for e in std::fs::read_dir(dir).expect("HLSL directory") {
                let f = e.expect("entry").path();
                std::fs::copy(&f, to.join(f.file_name().unwrap_or_default())).expect("copy HLSL");
            }
            to
        })
    };
    let (old_dump, new_dump) = (dump_in(&old_dir, "old"), dump_in(&new_dir, "new"));
    let old = measure(&lib, &old_dir, &masks, repeat, old_dump.as_deref());
    let new = measure(&lib, &new_dir, &masks, repeat, new_dump.as_deref());

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
    println!();
    if !large_shaders(&new_bin, Path::new(&baseline), &lib, &work.join("large")) {
        check.failed.push("generated shaders within the time limit".to_string());
    }
    let _ = std::fs::remove_dir_all(&work);
    if !check.failed.is_empty() {
        println!("missed: {}", check.failed.join(", "));
        std::process::exit(1);
    }
}

/// Generated shaders far larger than the corpus's: HLSL bytes, DXC CPU per backend and output
/// bytes of this build against the baseline, and whether this build's `shrec build` compiles
/// them within the default `--dxc-time-limit`.
mod large {
    use shrec_verify::gx2::asm::{a, alu, c, r, C, G};
    use shrec_verify::xenos::asm::{self as xa, Alu, Src};

    /// ALU instructions of the generated GX2 shader.
    pub const GX2_INSTRUCTIONS: usize = 100_000;

    /// A GX2 pixel shader (GFD) of `GX2_INSTRUCTIONS` vector ALU instructions over R1..R12
    /// (R0 the interpolated input, C0..C15 register-mode constants), 32 groups of four per ALU
    /// clause (a clause holds at most 128 instruction slots), exporting R1. Every group reads
    /// registers earlier groups wrote, so liveness cannot drop the chain.
    pub fn gx2() -> Vec<u8> {
        const OPS: [&str; 5] = ["MUL", "ADD", "MULADD", "MAX", "MIN"];
        let groups_total = GX2_INSTRUCTIONS / 4;
        let mut cfs: Vec<C> = Vec::new();
        let mut groups: Vec<G> = Vec::new();
        for k in 0..groups_total {
            let dst = 1 + (k % 12) as u32;
            let insts = (0..4u8)
                .map(|ch| {
                    let op = OPS[(k + ch as usize) % OPS.len()];
                    let s0 = if k < 12 { r(0, (ch + 1) % 4) } else { r(1 + ((k + 5) % 12) as u32, (ch + k as u8) % 4) };
                    let s1 = if k % 3 == 0 { c((k % 16) as u32, ch) } else { r(1 + ((k + 7) % 12) as u32, 3 - ch) };
                    let s2 = r(1 + ((k + 11) % 12) as u32, ch);
                    let operands = if op == "MULADD" { 3 } else { 2 };
                    a(op, (dst, ch), &[s0, s1, s2][..operands])
                })
                .collect();
            groups.push(G(insts, vec![]));
            if groups.len() == 32 {
                cfs.push(alu("ALU", std::mem::take(&mut groups)));
            }
        }
        if !groups.is_empty() {
            cfs.push(alu("ALU", groups));
        }
        cfs.push(C::Exp { done: true, ty: 0, base: 0, gpr: 1, burst: 0, sel: [0, 1, 2, 3] });
        let n = cfs.len();
        let program = shrec_verify::gx2::asm::assemble(&cfs, n - 1);
        shrec_verify::gx2::gfd(&shrec_verify::gx2::pixel_shader(program, 1, 1, false, vec![]))
    }

    /// ALU slots of the generated Xenos shader: the largest program an exec's 12-bit slot
    /// address reaches with six slots per exec (`xenos_slots()` with its CF triples in front).
    pub fn xenos_slots() -> usize {
        // slots s need ceil(s / 6) execs, two per CF triple; the last exec starts below 4096
        (1..4096).rev().find(|&s: &usize| xa::cf_triples(s.div_ceil(6)) as usize + 6 * (s.div_ceil(6) - 1) < 4096).unwrap_or(0)
    }

    /// A Xenos pixel shader of `xenos_slots()` vector ALU instructions (add, mul, max, min,
    /// mad) over r1..r12 (r0 the interpolated TEXCOORD0, c0..c15 constants), exporting r1 to
    /// oC0 in the last slot.
    pub fn xenos() -> Vec<u8> {
        // vector opcodes: 0 add, 1 mul, 2 max, 3 min, 11 mad
        const OPS: [u32; 5] = [1, 0, 11, 2, 3];
        let slots_total = xenos_slots();
        let execs = slots_total.div_ceil(6);
        let base = xa::cf_triples(execs);
        let mut slots = Vec::with_capacity(slots_total);
        for k in 0..slots_total {
            let last = k + 1 == slots_total;
            let src0 = if k < 12 { Src::r(0).swz([1, 2, 3, 0]) } else { Src::r(1 + ((k + 5) % 12) as u32).swz([(k % 4) as u8, 1, 2, 3]) };
            let src1 = if k % 3 == 0 { Src::c((k % 16) as u32) } else { Src::r(1 + ((k + 7) % 12) as u32).swz([3, 2, 1, 0]) };
            let src2 = Src::r(1 + ((k + 11) % 12) as u32);
            let alu = if last {
                Alu { vop: 0, vdst: 0, vmask: 0xF, export: true, src: [Src::r(1), Src::r(2), Src::r(0)], ..Alu::default() }
            } else {
                Alu { vop: OPS[k % OPS.len()], vdst: 1 + (k % 12) as u32, vmask: 0xF, src: [src0, src1, src2], ..Alu::default() }
            };
            slots.push(alu.encode());
        }
        let cf: Vec<u64> = (0..execs)
            .map(|e| {
                let n = (slots_total - 6 * e).min(6);
                let op = if e + 1 == execs { xa::EXEC_END } else { xa::EXEC };
                xa::exec(op, base + 6 * e as u32, &vec![false; n], 0, false)
            })
            .collect();
        let code = xa::microcode(&cf, &slots);
        let spec = shrec_verify::xenos::container::Spec {
            vertex: false,
            microcode: &code,
            vertex_elements: &[],
            interpolators: &[(0, 5, 0)],
            ps_outputs: 1,
            float_defs: &[],
            int_defs: &[],
        };
        shrec_verify::xenos::container::write(&spec)
    }
}

/// One generated shader's HLSL from `shrec hlsl` of binary `shrec` (`None`: it failed, with
/// its message printed).
fn hlsl_of(shrec: &Path, file: &Path) -> Option<String> {
    let out = Command::new(shrec).arg("hlsl").arg(file).output().expect("run shrec hlsl");
    if !out.status.success() {
        println!("  {} hlsl {}: {}", shrec.display(), file.display(), String::from_utf8_lossy(&out.stderr).trim());
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Compiles `hlsl` as the build compiles a large shader: in a DXC worker process under the
/// default `--dxc-time-limit` and `--dxc-memory-limit`. The worker is started for this one
/// compilation (on a thread of its own, whose worker ends with it) and reaped here, so its CPU
/// time is the compilation's (plus loading the DXC library, a few tens of ms). `Err`: the
/// failure, such as the time limit.
fn compile_in_worker(exe: &Path, lib: &dxc::DxcLib, hlsl: &str, target: Target, mask: u32) -> (Result<u64, String>, Duration) {
    let (exe, lib, hlsl) = (exe.to_path_buf(), lib.clone(), hlsl.to_string());
    // as the build: SPIR-V of HLSL over the default --spirv-unoptimized-above gets -O0
    let args: Vec<String> =
        if target == Target::Spirv && hlsl.len() > shrec::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES { vec!["-O0".into()] } else { vec![] };
    let result = std::thread::spawn(move || {
        let limits = Some(shrec::limits::DxcLimits::default());
        match shrec::dxc_worker::compile(&exe, &lib, &hlsl, Stage::Pixel, target, mask, &args, limits) {
            Ok(Ok(bytes)) => Ok(bytes.len() as u64),
            Ok(Err(e)) => Err(e.to_string().lines().next().unwrap_or("DXC error").to_string()),
            Err(e) => Err(e.to_string()),
        }
    })
    .join()
    .expect("compile thread");
    let mut cpu = Duration::ZERO;
    // the worker's stdin closed with its thread: wait for it and take its CPU time
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value; wait4 writes the status and the rusage
        // through valid pointers to locals.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; -1 waits for any child of this process (only workers are left
        // unreaped: every `Command` above was waited for).
        let pid = unsafe { libc::wait4(-1, &mut status, 0, &mut usage) };
        if pid <= 0 {
            break;
        }
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        cpu += tv(usage.ru_utime) + tv(usage.ru_stime);
    }
    (result, cpu)
}

/// The generated shaders' lines; false when this build misses the time limit on one of them.
fn large_shaders(new_bin: &Path, old_bin: &Path, lib: &dxc::DxcLib, work: &Path) -> bool {
    std::fs::create_dir_all(work).expect("bench directory");
    let shaders = [
        (format!("gx2 ({} ALU instructions)", large::GX2_INSTRUCTIONS), "large.gsh", large::gx2()),
        (format!("xenos ({} ALU slots, the most exec addressing reaches)", large::xenos_slots()), "large.xenos.bin", large::xenos()),
    ];
    let limit = shrec::limits::DxcLimits::default().cpu_seconds;
    let mut within = true;
    for (what, file_name, bytes) in shaders {
        let file = work.join(file_name);
        std::fs::write(&file, &bytes).expect("write generated shader");
        println!("generated {what}: {} bytes of container", bytes.len());
        let texts = [("new", hlsl_of(new_bin, &file)), ("old", hlsl_of(old_bin, &file))];
        let mask = texts[0].1.as_deref().map_or(0, |t| shrec::hlsl::declared_spec_constants_mask(t).ok().flatten().unwrap_or(0));
        let mut new_ok = texts[0].1.is_some();
        for (set, text) in &texts {
            let Some(text) = text else { continue };
            let mut cells = vec![format!("HLSL {} bytes", text.len())];
            for target in [Target::Dxil, Target::Spirv] {
                let (result, cpu) = compile_in_worker(new_bin, lib, text, target, mask);
                let name = match target {
                    Target::Spirv if text.len() > shrec::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES => "SPIR-V (-O0)",
                    Target::Spirv => "SPIR-V",
                    Target::Dxil => "DXIL",
                };
                match result {
                    Ok(len) => cells.push(format!("{name} {len} bytes, DXC CPU {:.2} s", cpu.as_secs_f64())),
                    Err(e) => {
                        // a worker stopped at a limit was reaped by shrec itself: no CPU time here
                        cells.push(format!("{name} failed ({e})"));
                        if *set == "new" {
                            new_ok = false;
                        }
                    }
                }
                if *set == "new" && cpu.as_secs() >= limit {
                    new_ok = false;
                }
            }
            println!("  {set}: {}", cells.join("; "));
        }
        let verdict = if new_ok { "PASS" } else { "FAIL" };
        println!("  {verdict} {what}: compiles for both targets within the default --dxc-time-limit ({limit} s)");
        within &= new_ok;
    }
    within
}
