//! XenosRecomp (hedge-dev/XenosRecomp, MIT) as an oracle independent of shrec (issues 22 item 2
//! and 24): its SPIR-V interfaces, SPIR-V sizes and DXC time against shrec's, shader by shader.
//!
//! XenosRecomp is not built here (its sources are not ours to vendor or to build from this
//! repository): the tests that need it read the outputs of a XenosRecomp the user built by its own
//! README, in the directory named by `SHREC_XR_OUT` (its layout: docs/xenosrecomp-oracle.md §1).
//! Without it they panic with "did not run" — they are `#[ignore]`d so that a plain `cargo test`
//! lists them as ignored, never as passed:
//!
//! ```text
//! SHREC_XR_OUT=/path/to/outputs cargo test --release -p shrec-verify --test xenosrecomp_oracle -- --ignored --nocapture --test-threads=1
//! ```
//!
//! The parser and the interface diff themselves are tested without XenosRecomp (first test).

use shrec_testkit as common;

use shrec::build::{self, BuildOptions};
use shrec::cache::CacheEntry;
use shrec::dxc::{self, Target};
use shrec::formats::xenos::lower::{LowerOptions, Profile};
use shrec::formats::{self, Stage, TranslateOptions};
use shrec_runtime::smolv;
use shrec_verify::xenosrecomp::{self, XrCache};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// shrec's build of `input` (SPIR-V only, no incremental cache), entries by key.
fn shrec_build(input: &Path, name: &str) -> BTreeMap<u64, CacheEntry> {
    shrec_build_profile(input, name, Profile::Generic)
}

/// [`shrec_build`] in a profile (`--profile`).
fn shrec_build_profile(input: &Path, name: &str, profile: Profile) -> BTreeMap<u64, CacheEntry> {
    // a directory per call: the tests run in parallel threads of one process, several per mode
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = common::tmpdir(&format!("{name}-{}", CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let mut opts = BuildOptions::new(input, dir.join("cache.cpp"));
    opts.targets = vec![Target::Spirv];
    opts.cache_dir = None;
    opts.translate.xenos_profile = profile;
    let out = build::run(&opts).unwrap_or_else(|e| panic!("shrec build {}: {e}", input.display()));
    let _ = std::fs::remove_dir_all(&dir);
    out.entries.into_iter().map(|e| (e.key, e)).collect()
}

/// shrec's SPIR-V as its cache stores it: SMOL-V with debug info stripped (XenosRecomp's
/// `kEncodeFlagStripDebugInfo`), decoded.
fn stripped(spirv: &[u8]) -> (Vec<u8>, usize) {
    let s = smolv::encode(spirv, true).expect("SMOL-V encodes DXC's SPIR-V");
    (smolv::decode(&s).expect("SMOL-V decodes"), s.len())
}

fn words_mut(spirv: &mut [u8]) -> Vec<u32> {
    spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn xr_cache_parser_and_interface_diff_work_on_shrec_output() {
    let input = common::repo().join("tests/corpus/xenos/LibXenonProject+xmplayer");
    let built = shrec_build(&input, "xr-parser");
    assert_eq!(built.len(), 6, "xmplayer's six shaders");
    let rows: Vec<(u64, Option<Vec<u8>>, u32)> = built
        .values()
        .enumerate()
        .map(|(i, e)| {
            // The third entry stands for a shader DXC rejected: size 0, as XenosRecomp writes it.
            let s = (i != 2).then(|| smolv::encode(e.spirv.as_ref().unwrap(), true).unwrap());
            (e.key, s, e.spec_constants_mask)
        })
        .collect();
    let text = xenosrecomp::write_xr_cpp(&rows, 22);
    let xr = XrCache::parse(&text).expect("parses its own layout");
    assert_eq!(xr.entries.len(), 6);
    for (i, (key, e)) in built.iter().enumerate() {
        let x = xr.entry(*key).expect("every key");
        assert_eq!(x.spec_constants_mask, e.spec_constants_mask);
        let got = xr.spirv(*key).unwrap();
        if i == 2 {
            assert_eq!(got, None, "size-0 entry reads as not compiled");
            continue;
        }
        let got = got.unwrap();
        assert_eq!(got, stripped(e.spirv.as_ref().unwrap()).0);
        let a = xenosrecomp::reflect(&got).unwrap();
        let b = xenosrecomp::reflect(e.spirv.as_ref().unwrap()).unwrap();
        assert_eq!(a.diff(&b), vec![], "stripping debug info changes no interface item");
        assert!(a.items.contains_key("push_constant") && a.items.contains_key("entry"), "{:?}", a.items);
    }

    // A planted interface change is reported as exactly that item: move the first Location.
    let (key, e) = built.iter().next().unwrap();
    let mut spirv = e.spirv.clone().unwrap();
    let words = words_mut(&mut spirv);
    let mut i = 5;
    let mut moved = None;
    while i < words.len() {
        let (len, op) = ((words[i] >> 16) as usize, words[i] & 0xFFFF);
        // OpDecorate (71) %target Location (30) L
        if op == 71 && len == 4 && words[i + 2] == 30 {
            moved = Some((i + 3, words[i + 3]));
            break;
        }
        i += len.max(1);
    }
    let (at, loc) = moved.expect("a Location decoration");
    spirv[at * 4..at * 4 + 4].copy_from_slice(&(loc + 20).to_le_bytes());
    let d = xenosrecomp::reflect(e.spirv.as_ref().unwrap()).unwrap().diff(&xenosrecomp::reflect(&spirv).unwrap());
    assert_eq!(d.len(), 2, "0x{key:016X}: {d:?}");
    assert!(d.iter().any(|x| x.item.ends_with(&format!("location={loc:02}")) && x.right.is_none()), "{d:?}");
    assert!(d.iter().any(|x| x.item.ends_with(&format!("location={:02}", loc + 20)) && x.left.is_none()), "{d:?}");

    // Inconsistent files are rejected, naming what is wrong.
    let bad = text.replace("g_shaderCacheEntryCount = 6", "g_shaderCacheEntryCount = 7");
    assert!(XrCache::parse(&bad).unwrap_err().contains("g_shaderCacheEntryCount"));
    let bad = text.replacen("{ 0x", "{ 0x1, 0x", 1);
    assert!(XrCache::parse(&bad).unwrap_err().contains("fields"));

    // The Metal branch's rows (AIR offset and size before the mask, then a file name, which may
    // hold ',' and '}') read back as the same entries, with their AIR ranges.
    let mut metal = String::new();
    for (i, line) in text.lines().enumerate() {
        match line.strip_prefix("\t{ ").and_then(|l| l.strip_suffix(" },")) {
            Some(row) => {
                let f: Vec<&str> = row.split(", ").collect();
                metal += &format!("\t{{ {}, {}, {}, {}, {}, {i}, 7, {}, \"shader/a,}}b.fxo\" }},\n", f[0], f[1], f[2], f[3], f[4], f[5]);
            }
            None => metal += &format!("{line}\n"),
        }
    }
    let m = XrCache::parse(&metal).expect("parses the Metal layout");
    assert_eq!(m.entries.len(), xr.entries.len());
    for (a, b) in m.entries.iter().zip(&xr.entries) {
        assert_eq!((a.key, a.spirv_offset, a.spirv_size, a.spec_constants_mask), (b.key, b.spirv_offset, b.spirv_size, b.spec_constants_mask));
        assert!(a.air_offset > 0 && a.air_size == 7 && b.air_size == 0);
    }
}

/// `SHREC_XR_OUT`: the directory of XenosRecomp's outputs (docs/xenosrecomp-oracle.md §1).
fn xr_out() -> PathBuf {
    match std::env::var_os("SHREC_XR_OUT") {
        Some(p) => PathBuf::from(p),
        None => panic!(
            "did not run: SHREC_XR_OUT is not set. Build XenosRecomp by its own README, write its outputs \
             in the layout of docs/xenosrecomp-oracle.md §1, then set SHREC_XR_OUT to that directory"
        ),
    }
}

struct Oracle {
    input: PathBuf,
    xr: XrCache,
    shrec: BTreeMap<u64, CacheEntry>,
}

fn load(mode: &str) -> Oracle {
    let dir = xr_out();
    let mut input = PathBuf::from(std::fs::read_to_string(dir.join("INPUT")).unwrap_or_else(|e| panic!("{}/INPUT: {e}", dir.display())).trim());
    if !input.is_dir() {
        // the outputs were written from another checkout that is gone: this repository's copy
        // of the corpus (the tests compare keys, so another input would fail, not pass)
        let here = common::repo().join("tests/corpus/xenos");
        println!("{}/INPUT names {}, which is gone: reading {}", dir.display(), input.display(), here.display());
        input = here;
    }
    let cpp = dir.join(format!("{mode}.cpp"));
    let text = std::fs::read_to_string(&cpp).unwrap_or_else(|e| panic!("{}: {e}", cpp.display()));
    let xr = XrCache::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", cpp.display()));
    let shrec = shrec_build_profile(&input, &format!("xr-oracle-{mode}"), profile(mode));
    Oracle { input, xr, shrec }
}

/// shrec's profile for a XenosRecomp mode: `generic` or `unleashed` (built with UNLEASHED_RECOMP).
fn profile(mode: &str) -> Profile {
    match mode {
        "generic" => Profile::Generic,
        "unleashed" => Profile::Unleashed,
        m => panic!("mode {m}"),
    }
}

/// Keys and spec-constant masks, then every interface item, on every shader both compile.
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn interfaces_match_xenosrecomp() {
    interfaces_match("generic");
}

/// The same, XenosRecomp built with UNLEASHED_RECOMP against shrec `--profile unleashed`.
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn interfaces_match_xenosrecomp_unleashed() {
    interfaces_match("unleashed");
}

fn interfaces_match(mode: &str) {
    let o = load(mode);
    let xr_keys: BTreeSet<u64> = o.xr.entries.iter().map(|e| e.key).collect();
    let sh_keys: BTreeSet<u64> = o.shrec.keys().copied().collect();
    // XenosRecomp's stored outputs may predate shaders added to the corpus since: every shader
    // they hold must be found, the others are listed.
    assert!(xr_keys.is_subset(&sh_keys), "shrec finds every shader of XenosRecomp's outputs: missing {:?}", xr_keys.difference(&sh_keys));
    let newer: Vec<String> = sh_keys.difference(&xr_keys).map(|k| format!("0x{k:016X}")).collect();
    if !newer.is_empty() {
        println!("not in XenosRecomp's outputs (added to the corpus after they were made): {newer:?}");
    }
    let mut both = 0;
    let mut xr_only_failed = Vec::new();
    let mut differing = 0;
    println!("interface differences:");
    let mut by_item: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = Vec::new();
    for e in &o.xr.entries {
        let s = &o.shrec[&e.key];
        assert_eq!(e.spec_constants_mask, s.spec_constants_mask, "0x{:016X}: spec-constant mask", e.key);
        let Some(xs) = o.xr.spirv(e.key).unwrap() else {
            xr_only_failed.push(format!("0x{:016X}", e.key));
            continue;
        };
        both += 1;
        let xi = xenosrecomp::reflect(&xs).unwrap_or_else(|err| panic!("0x{:016X} XenosRecomp: {err}", e.key));
        let si = xenosrecomp::reflect(s.spirv.as_ref().unwrap()).unwrap_or_else(|err| panic!("0x{:016X} shrec: {err}", e.key));
        let d = xi.diff(&si);
        if !d.is_empty() {
            differing += 1;
        }
        // One line per shader and kind of difference: "output location (only XenosRecomp): 00 11 12 …".
        let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for x in &d {
            let (kind, which) = x.item.split_once('=').unwrap_or((&x.item, ""));
            let side = match (&x.left, &x.right) {
                (Some(l), None) => format!("only XenosRecomp: {l}"),
                (None, Some(r)) => format!("only shrec: {r}"),
                (l, r) => format!("XenosRecomp {} | shrec {}", l.as_deref().unwrap_or(""), r.as_deref().unwrap_or("")),
            };
            *by_item.entry(format!("{kind} ({})", side.split(':').next().unwrap())).or_default() += 1;
            lines.entry(format!("{kind} ({side})")).or_default().push(which.to_string());
        }
        for (k, v) in lines {
            println!("  0x{:016X} [{}] {k}: {}", e.key, if s.stage == Stage::Pixel { "ps" } else { "vs" }, v.join(" "));
        }
        all.extend(d);
    }
    for (k, n) in &by_item {
        println!("  {n:4} × {k}");
    }
    common::log_uncaptured(&format!(
        "xenosrecomp oracle ({mode}): {} shaders, masks equal; {both} compiled by both, DXC rejected in XenosRecomp only: {xr_only_failed:?}; \
         interfaces differ on {differing} ({} items)",
        o.xr.entries.len(),
        all.len()
    ));
    assert!(both > 0);
    assert_eq!(differing, 0, "SPIR-V interfaces differ from XenosRecomp's (listed above); input {}", o.input.display());
}

fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for clock_gettime to fill.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// XenosRecomp's single-file HLSL of each key (hlsl/MODE/<path>.hlsl), by key.
fn xr_hlsl(input: &Path, mode: &str) -> BTreeMap<u64, (Stage, String)> {
    let dir = xr_out().join("hlsl").join(mode);
    let scan = shrec::scan::scan_dir(input);
    let mut m = BTreeMap::new();
    for s in scan.shaders.iter().filter(|s| s.offset == 0 && s.member.is_empty()) {
        let rel = s.path.strip_prefix(input).unwrap_or(&s.path);
        let f = dir.join(format!("{}.hlsl", rel.display()));
        if let Ok(t) = std::fs::read_to_string(&f) {
            m.entry(s.key).or_insert((s.stage, t));
        }
    }
    m
}

/// shrec's HLSL of each key, as `shrec build` generates it (no hooks).
fn shrec_hlsl(input: &Path) -> BTreeMap<u64, String> {
    let scan = shrec::scan::scan_dir(input);
    let mut m = BTreeMap::new();
    for s in &scan.shaders {
        if m.contains_key(&s.key) {
            continue;
        }
        let bytes = shrec::scan::read_container(s).unwrap();
        let t = formats::translate(s.container, &bytes, s.index, &TranslateOptions::default())
            .unwrap_or_else(|e| panic!("0x{:016X}: {}", s.key, e.reason()));
        m.insert(s.key, shrec::hlsl::write(&t.module));
    }
    m
}

/// Per shader: SPIR-V bytes (as each cache stores it: SMOL-V-stripped, decoded; and SMOL-V) and
/// DXC CPU time (thread CPU, best of ROUNDS, both HLSLs compiled alternately in this thread with
/// the same DXC library and XenosRecomp's arguments, which are shrec's).
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn bench_spirv_bytes_and_dxc_cpu_against_xenosrecomp() {
    const ROUNDS: usize = 5;
    let o = load("generic");
    let xr_src = xr_hlsl(&o.input, "generic");
    let sh_src = shrec_hlsl(&o.input);
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let mut rows = Vec::new();
    let (mut tx, mut ts, mut bx, mut bs, mut mx, mut ms, mut dx, mut ds) = (0, 0, 0, 0, 0, 0, 0u64, 0u64);
    let (mut tvx, mut tvs, mut tpx, mut tps) = (0, 0, 0, 0);
    for e in &o.xr.entries {
        let Some(xs) = o.xr.spirv(e.key).unwrap() else { continue };
        let s = &o.shrec[&e.key];
        let (ss, smol_len) = stripped(s.spirv.as_ref().unwrap());
        let (stage, xr_text) = xr_src.get(&e.key).unwrap_or_else(|| panic!("0x{:016X}: no XenosRecomp HLSL", e.key));
        assert_eq!(*stage, s.stage);
        // The harness compiles XenosRecomp's HLSL to exactly what XenosRecomp stored.
        let again = dxc::compile(&lib, xr_text, *stage, Target::Spirv).unwrap_or_else(|err| panic!("0x{:016X}: {err}", e.key));
        assert_eq!(stripped(&again).0, xs, "0x{:016X}: XenosRecomp's HLSL through shrec's DXC call = its cache", e.key);
        let sh_text = &sh_src[&e.key];
        // SHREC_XR_DUMP=DIR: both HLSL texts and SPIR-V modules, for spirv-dis and diffing.
        if let Some(dir) = std::env::var_os("SHREC_XR_DUMP").map(PathBuf::from) {
            std::fs::create_dir_all(&dir).unwrap();
            let sh_spirv = dxc::compile_with_spec_constants(&lib, sh_text, *stage, Target::Spirv, s.spec_constants_mask).unwrap();
            for (name, data) in
                [("xr.hlsl", xr_text.as_bytes()), ("shrec.hlsl", sh_text.as_bytes()), ("xr.spv", &again[..]), ("shrec.spv", &sh_spirv[..])]
            {
                std::fs::write(dir.join(format!("{:016X}.{name}", e.key)), data).unwrap();
            }
        }
        let (mut best_x, mut best_s) = (u64::MAX, u64::MAX);
        for _ in 0..ROUNDS {
            let t0 = thread_cpu_ns();
            dxc::compile(&lib, xr_text, *stage, Target::Spirv).unwrap();
            let t1 = thread_cpu_ns();
            dxc::compile_with_spec_constants(&lib, sh_text, *stage, Target::Spirv, s.spec_constants_mask).unwrap();
            let t2 = thread_cpu_ns();
            best_x = best_x.min(t1 - t0);
            best_s = best_s.min(t2 - t1);
        }
        let smol_x = o.xr.smolv(e.key).unwrap().len();
        rows.push(format!(
            "0x{:016X} {}  spirv {:6} {:6} ({:.2}×)  smolv {:6} {:6}  dxc-cpu-ms {:7.2} {:7.2} ({:.2}×)",
            e.key,
            if *stage == Stage::Pixel { "ps" } else { "vs" },
            xs.len(),
            ss.len(),
            ss.len() as f64 / xs.len() as f64,
            smol_x,
            smol_len,
            best_x as f64 / 1e6,
            best_s as f64 / 1e6,
            best_s as f64 / best_x as f64
        ));
        tx += 1;
        ts += 1;
        bx += xs.len();
        bs += ss.len();
        mx += smol_x;
        ms += smol_len;
        dx += best_x;
        ds += best_s;
        if *stage == Stage::Pixel {
            tpx += xs.len();
            tps += ss.len();
        } else {
            tvx += xs.len();
            tvs += ss.len();
        }
    }
    println!("key                 st  spirv XR/shrec           smolv XR/shrec  DXC CPU ms XR/shrec");
    for r in &rows {
        println!("{r}");
    }
    common::log_uncaptured(&format!(
        "xenosrecomp bench: {tx} shaders both compile; SPIR-V bytes XR {bx} shrec {bs} ({:.2}×; vertex {:.2}×, pixel {:.2}×); \
         SMOL-V XR {mx} shrec {ms}; DXC CPU (best of {ROUNDS}) XR {:.1} ms shrec {:.1} ms ({:.2}×)",
        bs as f64 / bx as f64,
        tvs as f64 / tvx.max(1) as f64,
        tps as f64 / tpx.max(1) as f64,
        dx as f64 / 1e6,
        ds as f64 / 1e6,
        ds as f64 / dx as f64
    ));
    assert_eq!(tx, ts);
    assert!(tx > 0);
}

/// What XenosRecomp's `UNLEASHED_RECOMP` mode changes against its generic mode, shader by
/// shader (masks, SPIR-V interface items, sizes): the target of shrec's `--profile unleashed`,
/// compared by `interfaces_match_xenosrecomp_unleashed` and the `_unleashed` parity test.
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn unleashed_mode_report() {
    let dir = xr_out();
    let read = |mode: &str| {
        let p = dir.join(format!("{mode}.cpp"));
        XrCache::parse(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let (g, u) = (read("generic"), read("unleashed"));
    let gk: BTreeSet<u64> = g.entries.iter().map(|e| e.key).collect();
    let uk: BTreeSet<u64> = u.entries.iter().map(|e| e.key).collect();
    assert_eq!(gk, uk, "the mode changes no key");
    let (mut masks, mut ifaces, mut gb, mut ub) = (0, 0, 0, 0);
    for e in &g.entries {
        let ue = u.entry(e.key).unwrap();
        if e.spec_constants_mask != ue.spec_constants_mask {
            masks += 1;
            println!("0x{:016X} mask generic {} unleashed {}", e.key, e.spec_constants_mask, ue.spec_constants_mask);
        }
        match (g.spirv(e.key).unwrap(), u.spirv(e.key).unwrap()) {
            (Some(a), Some(b)) => {
                gb += a.len();
                ub += b.len();
                let d = xenosrecomp::reflect(&a).unwrap().diff(&xenosrecomp::reflect(&b).unwrap());
                if !d.is_empty() {
                    ifaces += 1;
                }
                for x in d {
                    println!("0x{:016X} {x}  (generic | unleashed)", e.key);
                }
            }
            (a, b) => println!("0x{:016X} compiled: generic {} unleashed {}", e.key, a.is_some(), b.is_some()),
        }
    }
    common::log_uncaptured(&format!(
        "xenosrecomp UNLEASHED_RECOMP vs generic: {} shaders, masks differ on {masks}, interfaces on {ifaces}; SPIR-V bytes {gb} → {ub}",
        g.entries.len()
    ));
}

/// Execution parity, first step: every corpus container compiled by both runs on lavapipe with
/// the same job (inputs, constants, textures: verify_xenos's `corpus_shaders` cases, seed 7),
/// once with shrec's SPIR-V and once with XenosRecomp's, and both are compared lane by lane
/// with the Xenos reference interpreter (shrec_verify::interp::xenos). Lanes where XenosRecomp
/// disagrees with the interpreter are listed per shader; shrec must have none.
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn execution_parity_on_lavapipe() {
    execution_parity("generic");
}

/// The same with XenosRecomp built with UNLEASHED_RECOMP and shrec `--profile unleashed`. The
/// harness leaves the spec constants at 0, where the interpreter's (generic) semantics are the
/// profile's on this corpus: alpha to coverage, bicubic GI and reverse-Z sit behind spec bits,
/// and no corpus shader has the name-keyed differences (docs/profiles.md).
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn execution_parity_on_lavapipe_unleashed() {
    execution_parity("unleashed");
}

fn execution_parity(mode: &str) {
    use shrec_verify::xenos::{self as xv, TestProgram};
    use shrec_verify::Rng;
    let o = load(mode);
    let lower = LowerOptions { profile: profile(mode) };
    let gpu = xv::gpu_or_skip().expect("lavapipe (Vulkan) is required for execution parity");
    let scan = shrec::scan::scan_dir(&o.input);
    let key_of: BTreeMap<PathBuf, u64> =
        scan.shaders.iter().filter(|s| s.offset == 0 && s.member.is_empty()).map(|s| (s.path.clone(), s.key)).collect();
    // The programs of verify_xenos.rs `corpus_shaders` (same files, order and seed).
    let mut files: Vec<PathBuf> = ["bin", "psu", "vsu"].iter().flat_map(|e| common::files_with_extension(&o.input, e)).collect();
    files.retain(|f| std::fs::read(f).is_ok_and(|b| shrec::formats::xenos::container::check(&b).is_ok()));
    // SHREC_XR_FINITE=1: replace every non-finite constant and vertex input by a finite value
    // (random_cases draws inf / NaN one time in four for vertex shaders): separates the
    // special-value semantics from everything else.
    let finite = std::env::var("SHREC_XR_FINITE").is_ok_and(|v| v == "1");
    let fin = |v: &mut [f32; 4]| v.iter_mut().filter(|x| !x.is_finite()).for_each(|x| *x = 0.75);
    let mut rng = Rng::new(7);
    let (mut shaders, mut lanes_sh, mut lanes_xr, mut bad_sh, mut bad_xr, mut inc_xr) = (0, 0, 0, 0, 0, 0);
    let mut xr_failing = Vec::new();
    let mut seen = BTreeSet::new();
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let pixel = bytes[3] & 1 == 0;
        let mut cases = xv::random_cases(&mut rng, &bytes, 16, pixel);
        if finite {
            for c in &mut cases {
                c.c.iter_mut().for_each(fin);
                c.inputs.values_mut().for_each(fin);
            }
        }
        let textures = (0..16).map(|s| (s, xv::random_texture(&mut rng, 8))).collect();
        let key = *key_of.get(&f).unwrap_or_else(|| panic!("{}: no key", f.display()));
        let Some(xr_spirv) = o.xr.spirv(key).unwrap() else { continue };
        if !seen.insert(key) {
            continue;
        }
        let name = f.strip_prefix(common::repo()).unwrap_or(&f).display().to_string();
        let t = TestProgram { name: name.clone(), bytes, cases, textures, reproduce: "xenosrecomp_oracle execution_parity_on_lavapipe".into() };
        let (sc, _) = xv::run_profile(gpu, &t, &lower);
        let (xc, _) = xv::run_with_spirv_profile(gpu, &t, &xr_spirv, &lower);
        shaders += 1;
        lanes_sh += sc.comparisons;
        lanes_xr += xc.comparisons;
        bad_sh += sc.mismatches;
        bad_xr += xc.mismatches;
        inc_xr += xc.inconclusive;
        println!(
            "0x{key:016X} {name}: shrec {} lanes {} mismatches {} inconclusive | XenosRecomp {} lanes {} mismatches {} inconclusive",
            sc.comparisons, sc.mismatches, sc.inconclusive, xc.comparisons, xc.mismatches, xc.inconclusive
        );
        // The first mismatching invocation / quad of each run (the listing is left out).
        for r in sc.reports.iter().chain(&xc.reports) {
            let mut on = false;
            for l in r.lines() {
                on = (on || l.starts_with("invocation ") || l.starts_with("quad ")) && !l.starts_with("constants (first case)");
                if on {
                    println!("    {l}");
                }
            }
        }
        if xc.mismatches > 0 {
            xr_failing.push(format!("0x{key:016X}"));
        }
    }
    common::log_uncaptured(&format!(
        "xenosrecomp execution parity ({mode}){}: {shaders} shaders run with both SPIR-Vs; shrec {lanes_sh} lanes {bad_sh} mismatches; \
         XenosRecomp {lanes_xr} lanes {bad_xr} mismatches ({inc_xr} inconclusive) on {xr_failing:?}",
        if finite { " (finite inputs)" } else { "" }
    ));
    assert!(shaders > 0);
    assert_eq!(bad_sh, 0, "shrec disagrees with the interpreter");
}

/// The synthetic containers of the UNLEASHED_RECOMP paths the corpus lacks (the names
/// XenosRecomp keys on: g_MtxProjection, g_IndexCount, g_InstanceTypes,
/// g_MtxPrevInvViewProjection / sampZBuffer, tf10), XenosRecomp's UNLEASHED build of them (the
/// directory named by `SHREC_XR_OUT/BUILD`, directory mode) and shrec's
/// `--profile unleashed` build; the directory holding the inputs is removed by the caller.
/// `tag` names the temporary directories (the tests run in parallel threads of one process).
fn synthetic_unleashed(tag: &str) -> (PathBuf, Vec<(&'static str, Vec<u8>)>, XrCache, BTreeMap<u64, CacheEntry>) {
    use shrec_verify::xenos::synthetic::{pixel_shader, vertex_shader};
    let out = xr_out();
    let build = PathBuf::from(
        std::fs::read_to_string(out.join("BUILD"))
            .unwrap_or_else(|e| {
                panic!("{}/BUILD (names the directory holding unleashed/XenosRecomp, docs/xenosrecomp-oracle.md §1): {e}", out.display())
            })
            .trim(),
    );
    const F4: u16 = 2;
    const SMP: u16 = 3;
    let shaders: Vec<(&str, Vec<u8>)> = vec![
        ("reverse_z.vs", vertex_shader(&[("g_MtxProjection", F4, 0, 4)], &[])),
        ("reverse_z_normal.vs", vertex_shader(&[("g_MtxProjection", F4, 0, 4)], &[(3, 0)])),
        ("instanced.vs", vertex_shader(&[("g_MtxWorld", F4, 0, 4), ("g_IndexCount", F4, 4, 1), ("g_InstanceTypes", F4, 5, 1)], &[])),
        ("instanced_rz.vs", vertex_shader(&[("g_MtxProjection", F4, 0, 4), ("g_IndexCount", F4, 4, 1)], &[])),
        ("plain.vs", vertex_shader(&[("g_MtxWorld", F4, 0, 4)], &[])),
        (
            "gi.ps",
            pixel_shader(
                &[("g_MtxPrevInvViewProjection", F4, 0, 4), ("sampZBuffer", SMP, 1, 1), ("g_GISampler", SMP, 10, 1), ("tex", SMP, 0, 1)],
                10,
            ),
        ),
        ("nogi.ps", pixel_shader(&[("sampZBuffer", SMP, 1, 1), ("tex", SMP, 0, 1), ("tex2", SMP, 2, 1)], 2)),
    ];
    let dir = common::tmpdir(&format!("xr-unleashed-synthetic-{tag}"));
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for (name, bytes) in &shaders {
        std::fs::write(input.join(name), bytes).unwrap();
    }
    let cpp = dir.join("xr.cpp");
    let bin = build.join("unleashed/XenosRecomp");
    let st = std::process::Command::new(&bin)
        .arg(&input)
        .arg(&cpp)
        .arg(build.join("unleashed/shader_common.h"))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    assert!(st.status.success(), "XenosRecomp: {}", String::from_utf8_lossy(&st.stderr));
    let xr = XrCache::parse(&std::fs::read_to_string(&cpp).unwrap()).unwrap();
    let sh = shrec_build_profile(&input, &format!("xr-unleashed-synthetic-shrec-{tag}"), Profile::Unleashed);
    assert_eq!(xr.entries.len(), shaders.len());
    (dir, shaders, xr, sh)
}

fn name_of<'a>(shaders: &'a [(&'static str, Vec<u8>)], key: u64) -> &'a str {
    shaders.iter().find(|(_, b)| shrec::formats::xenos::container::key(b) == key).map(|x| x.0).unwrap_or("?")
}

/// Keys, masks and every SPIR-V interface item of the synthetic shaders equal XenosRecomp
/// UNLEASHED_RECOMP's.
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn synthetic_unleashed_shaders_match_xenosrecomp() {
    let (dir, shaders, xr, sh) = synthetic_unleashed("interfaces");
    let mut compared = 0;
    for e in &xr.entries {
        let s = sh.get(&e.key).unwrap_or_else(|| panic!("0x{:016X}: not built by shrec", e.key));
        let name = name_of(&shaders, e.key);
        println!("{name} 0x{:016X}: mask XenosRecomp {} shrec {}", e.key, e.spec_constants_mask, s.spec_constants_mask);
        assert_eq!(e.spec_constants_mask, s.spec_constants_mask, "{name}: mask");
        let xs = xr.spirv(e.key).unwrap().unwrap_or_else(|| panic!("{name}: XenosRecomp's HLSL was rejected by DXC"));
        let d = xenosrecomp::reflect(&xs).unwrap().diff(&xenosrecomp::reflect(s.spirv.as_ref().unwrap()).unwrap());
        for x in &d {
            println!("  {x}  (XenosRecomp | shrec)");
        }
        assert_eq!(d, vec![], "{name}: interface");
        compared += 1;
    }
    common::log_uncaptured(&format!("xenosrecomp UNLEASHED synthetic: {compared} shaders, masks and interfaces equal"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Execution of the synthetic shaders with every UNLEASHED_RECOMP spec-constant combination
/// they read, shrec `--profile unleashed` against XenosRecomp UNLEASHED_RECOMP directly (both
/// SPIR-Vs on lavapipe with the same job, specialised alike; no interpreter: it does not model
/// these paths). Finite inputs (random dyadic constants, vertex inputs, 8×8 textures, 16
/// invocations / quads per run): XenosRecomp's generic approximations (docs/xenosrecomp-oracle.md
/// §6) need special values, so every lane must agree.
#[test]
#[ignore = "needs SHREC_XR_OUT (XenosRecomp's outputs, docs/xenosrecomp-oracle.md); panics 'did not run' without it"]
fn synthetic_unleashed_execution_matches_xenosrecomp() {
    use shrec_verify::xenos::{self as xv, TestProgram};
    use shrec_verify::Rng;
    const R11G11B10: u32 = 1;
    const ALPHA_TEST: u32 = 2;
    const BICUBIC: u32 = 4;
    const A2C: u32 = 8;
    const REVERSE_Z: u32 = 16;
    let (dir, shaders, xr, _) = synthetic_unleashed("execution");
    let gpu = xv::gpu_or_skip().expect("lavapipe (Vulkan) is required for execution parity");
    let lower = LowerOptions { profile: Profile::Unleashed };
    let fin = |v: &mut [f32; 4]| v.iter_mut().filter(|x| !x.is_finite()).for_each(|x| *x = 0.75);
    let mut rng = Rng::new(11);
    let (mut runs, mut lanes, mut differing, mut far, mut zeros) = (0, 0, 0, 0, 0);
    let mut engaged: BTreeMap<u32, usize> = BTreeMap::new();
    let mut lines = Vec::new();
    for e in &xr.entries {
        let name = name_of(&shaders, e.key);
        let bytes = shaders.iter().find(|s| s.0 == name).unwrap().1.clone();
        let pixel = bytes[3] & 1 == 0;
        let xs = xr.spirv(e.key).unwrap().unwrap();
        let specs: &[u32] = if pixel {
            &[0, ALPHA_TEST, A2C, BICUBIC, BICUBIC | A2C, ALPHA_TEST | BICUBIC | A2C]
        } else {
            &[0, REVERSE_Z, REVERSE_Z | R11G11B10, R11G11B10]
        };
        // the combinations of the bits this shader reads (a shader reading none has no spec constant)
        for &spec in specs.iter().filter(|&&b| b & !e.spec_constants_mask == 0) {
            let mut cases = xv::random_cases(&mut rng, &bytes, 16, pixel);
            for c in &mut cases {
                c.c.iter_mut().for_each(fin);
                c.inputs.values_mut().for_each(fin);
            }
            let textures = (0..16).map(|s| (s, xv::random_texture(&mut rng, 8))).collect();
            let t = TestProgram {
                name: name.into(),
                bytes: bytes.clone(),
                cases,
                textures,
                reproduce: "xenosrecomp_oracle synthetic_unleashed_execution_matches_xenosrecomp".into(),
            };
            let v = xv::run_versus(gpu, &t, &xs, &lower, spec).unwrap_or_else(|err| panic!("{name} spec {spec}: {err}"));
            if spec != 0 {
                // the specialisation engages: shrec with the bits against XenosRecomp without
                // them differs (checked below: for every combination on some shader)
                let off = xv::run_versus_specs(gpu, &t, &xs, &lower, spec, 0).unwrap_or_else(|err| panic!("{name} spec {spec} / 0: {err}"));
                *engaged.entry(spec).or_insert(0) += (off.beyond_rounding > 0) as usize;
            }
            runs += 1;
            lanes += v.lanes;
            differing += v.differing;
            far += v.beyond_rounding;
            zeros += v.signed_zeros;
            let line = format!(
                "{name} spec {spec:2}: {} lanes, {} differ ({} beyond rounding), {} +0.0 / -0.0",
                v.lanes, v.differing, v.beyond_rounding, v.signed_zeros
            );
            println!("{line}\n{}", v.report);
            lines.push(line);
        }
    }
    common::log_uncaptured(&format!(
        "xenosrecomp UNLEASHED synthetic execution: {runs} runs, {lanes} lanes, {differing} differ from XenosRecomp ({far} beyond rounding); \
         {zeros} lanes are +0.0 on one side and -0.0 on the other; runs that differ from XenosRecomp without the bits, per spec value: {engaged:?}"
    ));
    assert!(engaged.values().all(|&n| n > 0), "a spec value changes no output of any shader: {engaged:?}");
    // (on failure the inputs stay in the temporary directory, for `shrec hlsl`)
    assert_eq!(differing, 0, "shrec --profile unleashed and XenosRecomp UNLEASHED_RECOMP disagree ({}):\n{}", dir.display(), lines.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
