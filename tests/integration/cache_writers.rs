//! The `.cpp` / `.h` and `.rs` cache writers, checked by compiling and running real consumers:
//! g++ + libzstd for the C++ cache, cargo for the Rust module.
//!
//! Needs `g++` and libzstd's header and library (Debian: `libzstd-dev`). A missing tool FAILS
//! the test unless `SHREC_ALLOW_MISSING_TOOLS=1`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use shrec::cache::{self, CacheEntry, CacheWriteError, SpirvEncoding, WriteOptions};
use shrec::{Family, Stage};

use crate::common;
use common::{have_tool, run, tmpdir, CPP_CONSUMER};

// ---- helpers ------------------------------------------------------------------------------

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Somewhat compressible bytes.
    fn blob(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| if self.below(3) == 0 { self.next() as u8 } else { b"DXBCSPV"[self.below(7) as usize] }).collect()
    }
}

const FAMILIES: [Family; 4] = [Family::Xenos, Family::Gx2, Family::Pica, Family::Agal];
const STAGES: [Stage; 3] = [Stage::Vertex, Stage::Pixel, Stage::Geometry];

/// `n` entries with distinct keys in random order; some without DXIL or SPIR-V, some with meta.
fn synthetic_entries(seed: u64, n: usize, dxil: bool, spirv: bool) -> Vec<CacheEntry> {
    let mut r = Rng(seed);
    let mut keys = std::collections::BTreeSet::new();
    // Edge keys: small (unpadded hex), and the top of the range.
    keys.insert(0x1);
    keys.insert(u64::MAX);
    keys.insert(0x5873A0E094914DE6);
    while keys.len() < n {
        keys.insert(r.next());
    }
    let mut keys: Vec<u64> = keys.into_iter().collect();
    for i in (1..keys.len()).rev() {
        keys.swap(i, r.below(i as u64 + 1) as usize);
    }
    keys.into_iter()
        .map(|key| {
            let has_dxil = dxil && r.below(8) != 0;
            let has_spirv = spirv && r.below(8) != 0;
            CacheEntry {
                key,
                family: FAMILIES[r.below(4) as usize],
                stage: STAGES[r.below(3) as usize],
                dxil: has_dxil.then(|| {
                    let len = 1 + r.below(400) as usize;
                    r.blob(len)
                }),
                spirv: has_spirv.then(|| {
                    let len = 4 * (1 + r.below(100) as usize);
                    r.blob(len)
                }),
                spec_constants_mask: if r.below(4) == 0 { r.below(32) as u32 } else { 0 },
                meta: (0..if r.below(3) == 0 { 3 * (1 + r.below(3)) } else { 0 }).map(|_| r.next() as u32).collect(),
            }
        })
        .collect()
}

fn raw_opts(level: i32) -> WriteOptions {
    WriteOptions { zstd_level: level, spirv_encoding: SpirvEncoding::Raw, ..WriteOptions::default() }
}

/// Expected per-key line of both consumers:
/// `<key hex> <family> <stage> <mask> <dxil hex|-> <spirv hex|-> <meta words…>`.
fn expected_lines(entries: &[CacheEntry]) -> BTreeMap<u64, String> {
    entries.iter().map(|e| (e.key, common::consumer_line(e, None))).collect()
}

// ---- C++ -----------------------------------------------------------------------------------

/// Writes the cache as `dir/shader_cache.cpp`, compiles it and the consumer, runs the consumer
/// with `keys`. None when the tools are missing and allowed to be.
fn cpp_roundtrip(dir: &Path, entries: &[CacheEntry], opts: &WriteOptions, keys: &[u64]) -> Option<(cache::CacheSizes, String)> {
    if !have_tool("g++") {
        return None;
    }
    let out = dir.join("shader_cache.cpp");
    let sizes = cache::cpp::write(&out, entries, opts).unwrap();
    fs::write(dir.join("consumer.cpp"), CPP_CONSUMER).unwrap();
    let strict = ["-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror"];
    run(Command::new("g++").args(strict).arg("-c").arg(&out).arg("-o").arg(dir.join("cache.o")));
    run(Command::new("g++").args(strict).arg(dir.join("consumer.cpp")).arg(dir.join("cache.o")).arg("-lzstd").arg("-o").arg(dir.join("consumer")));
    let args: Vec<String> = keys.iter().map(|k| format!("{k:x}")).collect();
    let stdout = run(Command::new(dir.join("consumer")).args(&args));
    Some((sizes, stdout))
}

#[test]
fn cpp_cache_compiles_and_every_blob_round_trips() {
    let dir = tmpdir("cpp-roundtrip");
    let entries = synthetic_entries(0x1234_5678_9ABC_DEF1, 60, true, true);
    let mut keys: Vec<u64> = entries.iter().map(|e| e.key).collect();
    keys.push(0x42); // absent
    let Some((sizes, stdout)) = cpp_roundtrip(&dir, &entries, &raw_opts(22), &keys) else { return };
    assert!(!stdout.contains("FAIL"), "{stdout}");

    let dxil_raw: u64 = entries.iter().filter_map(|e| e.dxil.as_ref()).map(|d| d.len() as u64).sum();
    let spirv_raw: u64 = entries.iter().filter_map(|e| e.spirv.as_ref()).map(|d| d.len() as u64).sum();
    let meta: usize = entries.iter().map(|e| e.meta.len()).sum();
    assert_eq!(sizes.entries, 60);
    assert_eq!(sizes.dxil.raw, dxil_raw);
    assert_eq!(sizes.spirv.raw, spirv_raw);
    assert!(sizes.dxil.compressed > 0 && sizes.dxil.compressed < dxil_raw);
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("count 60 encoding 1 dxil {} {dxil_raw} spirv {} {spirv_raw} meta {meta}", sizes.dxil.compressed, sizes.spirv.compressed)
    );
    let expected = expected_lines(&entries);
    for key in &keys[..60] {
        assert_eq!(lines.next().unwrap(), expected[key], "key {key:016x}");
    }
    assert_eq!(lines.next().unwrap(), "missing 0000000000000042");
    assert_eq!(lines.next(), None);
    // The header sits next to the .cpp under the same stem.
    assert!(dir.join("shader_cache.h").exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cpp_cache_without_dxil_or_spirv_keeps_every_symbol() {
    let dir = tmpdir("cpp-backends");
    // SPIR-V only (XR's Linux build), then DXIL only, then an empty cache.
    for (i, (dxil, spirv, n)) in [(false, true, 20), (true, false, 20), (false, false, 0)].into_iter().enumerate() {
        let sub = dir.join(i.to_string());
        fs::create_dir_all(&sub).unwrap();
        let entries = synthetic_entries(99 + i as u64, n, dxil, spirv);
        let entries = if n == 0 { Vec::new() } else { entries };
        let keys: Vec<u64> = entries.iter().map(|e| e.key).collect();
        let Some((sizes, stdout)) = cpp_roundtrip(&sub, &entries, &raw_opts(3), &keys) else { return };
        assert!(!stdout.contains("FAIL"), "{stdout}");
        if !dxil {
            assert_eq!(sizes.dxil, cache::BackendSize { raw: 0, compressed: 0 });
        }
        if !spirv {
            assert_eq!(sizes.spirv, cache::BackendSize { raw: 0, compressed: 0 });
        }
        let expected = expected_lines(&entries);
        let got: Vec<&str> = stdout.lines().skip(1).collect();
        assert_eq!(got.len(), keys.len());
        for (key, line) in keys.iter().zip(got) {
            assert_eq!(line, expected[key]);
        }
        // Every symbol is defined for every compiler: in the .cpp, or (cl.exe's byte items of a
        // non-empty blob) in the .msvc.inc it includes under cl.exe.
        let text = fs::read_to_string(sub.join("shader_cache.cpp")).unwrap() + &fs::read_to_string(sub.join("shader_cache.msvc.inc")).unwrap();
        for sym in [
            "g_compressedDxilCache[]",
            "g_dxilCacheCompressedSize",
            "g_dxilCacheDecompressedSize",
            "g_compressedSpirvCache[]",
            "g_spirvCacheCompressedSize",
            "g_spirvCacheDecompressedSize",
            "g_shaderCacheEntryCount",
        ] {
            assert!(text.contains(sym), "{sym} missing");
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

fn dxil_compressed_len(text: &str) -> usize {
    let at = text.find("const size_t g_dxilCacheCompressedSize = ").unwrap() + "const size_t g_dxilCacheCompressedSize = ".len();
    text[at..].split(';').next().unwrap().parse().unwrap()
}

#[test]
fn cpp_text_shape() {
    let dir = tmpdir("cpp-shape");
    let entries = synthetic_entries(7, 25, true, true);
    let out = dir.join("cache.cpp");
    cache::cpp::write(&out, &entries, &raw_opts(1)).unwrap();
    let text = fs::read_to_string(&out).unwrap();
    let header = fs::read_to_string(dir.join("cache.h")).unwrap();
    assert!(text.contains("#include \"cache.h\"\n"));
    assert_eq!(header, cache::cpp::HEADER);

    // UR's ABI, verbatim.
    for decl in [
        "struct ShaderCacheEntry\n{\n    const uint64_t hash;\n    const uint32_t dxilOffset;\n    const uint32_t dxilSize;\n    const uint32_t spirvOffset;\n    const uint32_t spirvSize;\n    const uint32_t specConstantsMask;\n    struct GuestShader* guestShader;\n};",
        "extern ShaderCacheEntry g_shaderCacheEntries[];",
        "extern const size_t g_shaderCacheEntryCount;",
        "extern const uint8_t g_compressedDxilCache[];",
        "extern const size_t g_dxilCacheCompressedSize;",
        "extern const size_t g_dxilCacheDecompressedSize;",
        "extern const uint8_t g_compressedSpirvCache[];",
        "extern const size_t g_spirvCacheCompressedSize;",
        "extern const size_t g_spirvCacheDecompressedSize;",
        "inline ShaderCacheEntry* shrecFindEntry(uint64_t key)",
    ] {
        assert!(header.contains(decl), "header lacks {decl}");
    }

    // Rows: XR's format, sorted, one per entry, offsets contiguous per backend.
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("\t{ 0x")).collect();
    assert_eq!(rows.len(), 25);
    let mut sorted = entries.clone();
    sorted.sort_by_key(|e| e.key);
    let (mut dxil_next, mut spirv_next) = (0u32, 0u32);
    for (row, e) in rows.iter().zip(&sorted) {
        let inner = row.strip_prefix("\t{ ").unwrap().strip_suffix(" },").unwrap();
        let f: Vec<&str> = inner.split(", ").collect();
        assert_eq!(f.len(), 7, "{row}");
        assert_eq!(f[0], format!("0x{:X}", e.key)); // uppercase, no padding
        let n: Vec<u32> = f[1..6].iter().map(|x| x.parse().unwrap()).collect();
        let dl = e.dxil.as_ref().map_or(0, |d| d.len() as u32);
        let sl = e.spirv.as_ref().map_or(0, |d| d.len() as u32);
        assert_eq!((n[0], n[1]), if dl > 0 { (dxil_next, dl) } else { (0, 0) }, "{row}");
        assert_eq!((n[2], n[3]), if sl > 0 { (spirv_next, sl) } else { (0, 0) }, "{row}");
        assert_eq!(n[4], e.spec_constants_mask);
        assert_eq!(f[6], "nullptr");
        dxil_next += dl;
        spirv_next += sl;
    }
    assert!(rows.iter().any(|r| r.starts_with("\t{ 0x1, ")), "small keys are not zero-padded");

    // Byte arrays (cl.exe's copy, in the side file the .cpp includes only there): bounded lines,
    // zstd magic first.
    let msvc = fs::read_to_string(dir.join("cache.msvc.inc")).unwrap();
    assert!(
        text.contains("#if defined(_MSC_VER) && !defined(__clang__)\n#include \"cache.msvc.inc\"\nstatic_assert(SHREC_MSVC_INC_ID == 0x"),
        "{text}"
    );
    assert!(!text.contains("g_compressedDxilCache[] = {"), "the .cpp holds each blob once");
    let start = msvc.find("g_compressedDxilCache[] = {\n").unwrap();
    let first = msvc[start..].lines().nth(1).unwrap();
    assert!(first.starts_with("\t40,181,47,253,"), "{first}");
    // ... and the string literal g++/clang read starts with the same magic, octal-escaped.
    let literal = text.find(&format!("g_compressedDxilCache[{}] =\n", dxil_compressed_len(&text) + 1)).expect("string-literal branch");
    let first = text[literal..].lines().nth(1).unwrap();
    assert!(first.starts_with("\t\"(\\265/\\375"), "{first}");
    for l in text.lines() {
        assert!(l.len() <= 300, "line of {} chars", l.len());
        if l.starts_with('\t') && l.ends_with(',') && !l.contains('{') {
            assert!(l.split(',').count() - 1 <= cache::cpp::BYTES_PER_LINE);
        }
    }
    assert!(text.contains("const size_t g_shaderCacheEntryCount = 25;"));
    assert!(text.contains("const uint32_t g_shrecSpirvEncoding = 1;"));

    // Deterministic: the same input gives the same bytes, whatever the thread count.
    let again = dir.join("again.cpp");
    let mut shuffled = entries.clone();
    shuffled.reverse();
    cache::cpp::write(&again, &shuffled, &raw_opts(1)).unwrap();
    let text2 = fs::read_to_string(&again).unwrap();
    assert_eq!(text.replace("cache.h", "X").replace("cache.msvc.inc", "Y"), text2.replace("again.h", "X").replace("again.msvc.inc", "Y"));
    assert_eq!(msvc, fs::read_to_string(dir.join("again.msvc.inc")).unwrap());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicates_and_failures_leave_previous_files_untouched() {
    let dir = tmpdir("cpp-dup");
    let entries = synthetic_entries(11, 10, true, true);
    let out = dir.join("shader_cache.cpp");
    // Identical duplicates are merged.
    let mut doubled = entries.clone();
    doubled.extend(entries.iter().cloned());
    let sizes = cache::cpp::write(&out, &doubled, &raw_opts(3)).unwrap();
    assert_eq!(sizes.entries, 10);
    let before_cpp = fs::read(&out).unwrap();
    let before_h = fs::read(dir.join("shader_cache.h")).unwrap();

    // Same key, different contents: error naming the file and the key; nothing replaced.
    let mut bad = entries.clone();
    let mut twin = entries[3].clone();
    twin.spec_constants_mask ^= 1;
    bad.push(twin);
    let err = cache::cpp::write(&out, &bad, &raw_opts(3)).unwrap_err();
    assert!(matches!(err, CacheWriteError::DuplicateKey { key, .. } if key == entries[3].key));
    let msg = err.to_string();
    assert!(msg.contains("shader_cache.cpp") && msg.contains(&format!("{:016X}", entries[3].key)), "{msg}");
    let err = cache::rust::write(&dir.join("shader_cache.rs"), &bad, &raw_opts(3)).unwrap_err();
    assert!(matches!(err, CacheWriteError::DuplicateKey { .. }));
    assert!(!dir.join("shader_cache.rs").exists());

    assert_eq!(fs::read(&out).unwrap(), before_cpp);
    assert_eq!(fs::read(dir.join("shader_cache.h")).unwrap(), before_h);
    let names: Vec<String> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names.len(), 3, "the .cpp, .h and .msvc.inc only: {names:?}");

    // An unwritable destination is an I/O error naming the path, and leaves nothing behind.
    let missing = dir.join("no/such/dir/cache.cpp");
    let err = cache::cpp::write(&missing, &entries, &raw_opts(3)).unwrap_err();
    assert!(matches!(err, CacheWriteError::Io { .. }));
    assert!(err.to_string().contains("no/such/dir/cache.h"), "{err}");
    // A .cpp path ending in .h would overwrite itself with the header.
    assert!(matches!(cache::cpp::write(&dir.join("x.h"), &entries, &raw_opts(3)), Err(CacheWriteError::BadPath { .. })));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn atomic_write_failure_keeps_previous_file_and_leaves_no_temp() {
    let dir = tmpdir("atomic");
    let dest = dir.join("file.bin");
    cache::atomic::write(&dest, b"previous").unwrap();
    let err = cache::atomic::write_with(&dest, |w| {
        w.write_all(b"half of the new con")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "disk full");
    assert_eq!(fs::read(&dest).unwrap(), b"previous");
    let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("file.bin")]);

    // A batch whose second file fails replaces neither.
    let a = dir.join("a");
    let b = dir.join("b");
    fs::write(&a, b"old a").unwrap();
    let mut batch = cache::atomic::Batch::new();
    batch.stage_with(&a, |w| w.write_all(b"new a")).unwrap();
    let (path, _) = batch.stage_with(&b, |_| Err(std::io::Error::other("boom"))).unwrap_err();
    assert_eq!(path, b);
    drop(batch);
    assert_eq!(fs::read(&a).unwrap(), b"old a");
    assert!(!b.exists());
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
    fs::remove_dir_all(&dir).unwrap();
}

// ---- Rust ----------------------------------------------------------------------------------

const RS_MAIN: &str = r#"
mod cache {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/gen/shader_cache.rs"));
}
#[path = "../gen/shader_cache.rs"]
mod cache_by_path;

fn main() {
    let keys: Vec<u64> = std::env::args().skip(1).map(|a| u64::from_str_radix(&a, 16).unwrap()).collect();
    assert_eq!(cache_by_path::ENTRIES.len(), cache::ENTRY_COUNT);
    println!(
        "count {} encoding {} dxil {} {} spirv {} {}",
        cache::ENTRIES.len(),
        cache::SPIRV_ENCODING,
        cache::DXIL_COMPRESSED.len(),
        cache::DXIL_DECOMPRESSED_SIZE,
        cache::SPIRV_COMPRESSED.len(),
        cache::SPIRV_DECOMPRESSED_SIZE
    );
    assert_eq!(cache::DXIL_COMPRESSED.len(), cache::DXIL_COMPRESSED_SIZE);
    assert_eq!(cache::SPIRV_COMPRESSED.len(), cache::SPIRV_COMPRESSED_SIZE);
    assert!(cache::ENTRIES.windows(2).all(|w| w[0].key < w[1].key));
    for e in cache::ENTRIES.iter() {
        println!(
            "entry {:016x} {} {} {} {} {} {} {} {:?}",
            e.key, e.family, e.stage, e.dxil_offset, e.dxil_size, e.spirv_offset, e.spirv_size,
            e.spec_constants_mask, e.meta
        );
    }
    for k in keys {
        match cache::lookup(k) {
            Some(e) => println!("found {:016x} {:016x}", k, e.key),
            None => println!("missing {:016x}", k),
        }
    }
    println!("families {} {} {} {}", cache::FAMILY_XENOS, cache::FAMILY_GX2, cache::FAMILY_PICA, cache::FAMILY_AGAL);
    println!("stages {} {} {}", cache::STAGE_VERTEX, cache::STAGE_PIXEL, cache::STAGE_GEOMETRY);
}
"#;

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Builds the consumer project in `proj` (module already in `proj/gen`). Err(stderr) on failure.
fn build_rs_consumer(proj: &Path) -> Result<PathBuf, String> {
    let out = Command::new(cargo())
        .args(["build", "--offline", "--quiet"])
        .arg("--manifest-path")
        .arg(proj.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(proj.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTC_WRAPPER")
        .output()
        .expect("cannot run cargo");
    if out.status.success() {
        Ok(proj.join("target/debug/consumer"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn rs_project(name: &str) -> PathBuf {
    let proj = tmpdir(name);
    fs::create_dir_all(proj.join("src")).unwrap();
    fs::create_dir_all(proj.join("gen")).unwrap();
    fs::write(proj.join("Cargo.toml"), "[package]\nname = \"consumer\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n").unwrap();
    fs::write(proj.join("src/main.rs"), RS_MAIN).unwrap();
    proj
}

#[test]
fn rust_module_builds_standalone_and_matches_inputs() {
    let proj = rs_project("rs-roundtrip");
    let module = proj.join("gen/shader_cache.rs");
    let entries = synthetic_entries(0xFEED_F00D, 40, true, true);
    let sizes = cache::rust::write(&module, &entries, &raw_opts(19)).unwrap();
    let (dxil_path, spirv_path) = cache::rust::blob_paths(&module);
    assert_eq!(dxil_path, proj.join("gen/shader_cache.dxil.zst"));
    assert_eq!(spirv_path, proj.join("gen/shader_cache.spirv.zst"));

    let bin = build_rs_consumer(&proj).unwrap_or_else(|e| panic!("generated module does not build:\n{e}"));
    let mut keys: Vec<u64> = entries.iter().map(|e| e.key).collect();
    keys.push(0x42);
    let args: Vec<String> = keys.iter().map(|k| format!("{k:x}")).collect();
    let stdout = run(Command::new(&bin).args(&args));
    let mut lines = stdout.lines();

    let dxil_c = fs::read(&dxil_path).unwrap();
    let spirv_c = fs::read(&spirv_path).unwrap();
    let dxil = zstd::decode_all(&dxil_c[..]).unwrap();
    let spirv = zstd::decode_all(&spirv_c[..]).unwrap();
    assert_eq!((dxil_c.len() as u64, dxil.len() as u64), (sizes.dxil.compressed, sizes.dxil.raw));
    assert_eq!((spirv_c.len() as u64, spirv.len() as u64), (sizes.spirv.compressed, sizes.spirv.raw));
    assert_eq!(lines.next().unwrap(), format!("count 40 encoding 1 dxil {} {} spirv {} {}", dxil_c.len(), dxil.len(), spirv_c.len(), spirv.len()));

    let by_key: BTreeMap<u64, &CacheEntry> = entries.iter().map(|e| (e.key, e)).collect();
    for e in by_key.values() {
        let l = lines.next().unwrap();
        let f: Vec<&str> = l.splitn(10, ' ').collect();
        assert_eq!(f[0], "entry");
        assert_eq!(u64::from_str_radix(f[1], 16).unwrap(), e.key);
        assert_eq!(f[2].parse::<u32>().unwrap(), e.family.abi_id());
        assert_eq!(f[3].parse::<u32>().unwrap(), e.stage.abi_id());
        let n: Vec<usize> = f[4..8].iter().map(|x| x.parse().unwrap()).collect();
        let slice = |blob: &[u8], off: usize, len: usize| if len == 0 { Vec::new() } else { blob[off..off + len].to_vec() };
        assert_eq!(slice(&dxil, n[0], n[1]), e.dxil.clone().unwrap_or_default(), "dxil of {l}");
        assert_eq!(slice(&spirv, n[2], n[3]), e.spirv.clone().unwrap_or_default(), "spirv of {l}");
        assert_eq!(f[8].parse::<u32>().unwrap(), e.spec_constants_mask);
        assert_eq!(f[9], format!("{:?}", e.meta));
    }
    for k in &keys[..40] {
        assert_eq!(lines.next().unwrap(), format!("found {k:016x} {k:016x}"));
    }
    assert_eq!(lines.next().unwrap(), "missing 0000000000000042");
    assert_eq!(lines.next().unwrap(), "families 0 1 2 3");
    assert_eq!(lines.next().unwrap(), "stages 0 1 2");
    assert_eq!(lines.next(), None);

    // A module next to blobs of another cache (crash between renames, partial copy) must not
    // build. Same length is caught by the checksum bytes, other lengths by the array type.
    let mut same_len = dxil_c.clone();
    *same_len.last_mut().unwrap() ^= 0xFF;
    fs::write(&dxil_path, &same_len).unwrap();
    let err = build_rs_consumer(&proj).expect_err("blob with another checksum built");
    assert!(err.contains("shader_cache.dxil.zst does not belong to this module"), "{err}");
    let other = tmpdir("rs-other");
    cache::rust::write(&other.join("shader_cache.rs"), &synthetic_entries(5, 40, true, true), &raw_opts(19)).unwrap();
    fs::copy(other.join("shader_cache.dxil.zst"), &dxil_path).unwrap();
    let err = build_rs_consumer(&proj).expect_err("mixed cache files built");
    assert!(err.contains("mismatched types"), "{err}");
    fs::remove_dir_all(&other).unwrap();
    fs::remove_dir_all(&proj).unwrap();
}

#[test]
fn rust_module_without_backends_builds() {
    let proj = rs_project("rs-empty");
    let module = proj.join("gen/shader_cache.rs");
    let sizes = cache::rust::write(&module, &[], &raw_opts(3)).unwrap();
    assert_eq!(sizes, cache::CacheSizes::default());
    assert_eq!(fs::read(proj.join("gen/shader_cache.dxil.zst")).unwrap().len(), 0);
    let bin = build_rs_consumer(&proj).unwrap_or_else(|e| panic!("empty module does not build:\n{e}"));
    let stdout = run(Command::new(&bin).arg("1"));
    assert_eq!(stdout.lines().next().unwrap(), "count 0 encoding 1 dxil 0 0 spirv 0 0");
    assert!(stdout.contains("missing 0000000000000001"));
    fs::remove_dir_all(&proj).unwrap();
}

/// One build's outputs are committed together (issue 23, B10): a rename that fails in the middle
/// of a set used to leave the files renamed before it in place (a new `.msvc.inc` next to the
/// old `.cpp`, which cl.exe compiled with the wrong blobs). Now those are put back, and a set
/// mixed anyway (a crash between renames) fails to compile. The `.cpp` is made immutable
/// (`chattr +i`; a directory stands in its place where that is not allowed), so its rename,
/// the last of the set, fails.
#[test]
fn a_failed_rename_puts_back_the_whole_set() {
    let dir = tmpdir("cpp-set");
    let out = dir.join("c.cpp");
    let (h, msvc) = (dir.join("c.h"), dir.join("c.msvc.inc"));
    cache::cpp::write(&out, &synthetic_entries(5, 12, true, true), &raw_opts(3)).unwrap();
    let before: Vec<Vec<u8>> = [&out, &h, &msvc].iter().map(|p| fs::read(p).unwrap()).collect();
    let immutable = Command::new("chattr").arg("+i").arg(&out).stderr(std::process::Stdio::null()).status().is_ok_and(|s| s.success());
    if !immutable {
        fs::remove_file(&out).unwrap();
        fs::create_dir_all(out.join("x")).unwrap();
    }
    let newer = synthetic_entries(6, 9, true, true);
    let err = cache::cpp::write(&out, &newer, &raw_opts(3));
    if immutable {
        let _ = Command::new("chattr").arg("-i").arg(&out).status();
    }
    let err = err.expect_err("the .cpp cannot be replaced").to_string();
    assert!(fs::read(&msvc).unwrap() == before[2], "the .msvc.inc was replaced, the .cpp was not: a mixed set");
    assert_eq!(fs::read(&h).unwrap(), before[1]);
    assert!(err.contains("c.cpp") && err.contains("(the other files of the set were put back as they were)"), "{err}");
    if immutable {
        assert_eq!(fs::read(&out).unwrap(), before[0]);
    } else {
        fs::remove_dir_all(&out).unwrap();
    }
    let temps: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| cache::atomic::is_temp_name(n)).collect();
    assert!(temps.is_empty(), "{temps:?}");

    // A set mixed anyway does not compile under cl.exe's branch (g++ taking it with _MSC_VER).
    if !have_tool("g++") {
        return;
    }
    let other = dir.join("other");
    fs::create_dir_all(&other).unwrap();
    cache::cpp::write(&other.join("c.cpp"), &newer, &raw_opts(3)).unwrap();
    if !immutable {
        fs::write(&out, &before[0]).unwrap();
    }
    let compile = |cpp: &Path| Command::new("g++").args(["-std=c++17", "-fsyntax-only", "-D_MSC_VER=1930"]).arg(cpp).output().unwrap();
    let ok = compile(&out);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    fs::copy(other.join("c.msvc.inc"), &msvc).unwrap();
    let mixed = compile(&out);
    let stderr = String::from_utf8_lossy(&mixed.stderr);
    assert!(!mixed.status.success() && stderr.contains("c.msvc.inc and this .cpp come from different shrec builds"), "{stderr}");
    fs::remove_dir_all(&dir).unwrap();
}
