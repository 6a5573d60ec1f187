//! Helpers shared by the tests of shrec (`tests/integration/`) and of `shrec-verify` (a
//! dev-dependency of both; never published).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh, empty directory under the system temp dir, unique per test name and process. All
/// integration tests share one process (tests/integration/main.rs): a name must be unique across
/// all of its modules.
pub fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shrec-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The repository root (tests/corpus, tests/fixtures, ...): the parent of this crate's folder.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("shrec-testkit lies inside the repository")
}

/// Whether `tool` runs; panics when it does not unless SHREC_ALLOW_MISSING_TOOLS=1.
pub fn have_tool(tool: &str) -> bool {
    let ok = Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        if std::env::var("SHREC_ALLOW_MISSING_TOOLS").as_deref() == Ok("1") {
            eprintln!("SKIPPED: {tool} not found (SHREC_ALLOW_MISSING_TOOLS=1)");
            return false;
        }
        panic!("{tool} is required for this test (set SHREC_ALLOW_MISSING_TOOLS=1 to skip)");
    }
    true
}

pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let hint = if stderr.contains("zstd.h") { "\n(hint: libzstd's header is missing: apt-get install libzstd-dev)" } else { "" };
        panic!("{cmd:?} failed ({}):\n{}{stderr}{hint}", out.status, String::from_utf8_lossy(&out.stdout));
    }
    String::from_utf8(out.stdout).unwrap()
}

/// A C++ consumer of a generated `.cpp` cache: for every key given on the command line, looks the
/// entry up with `shrecFindEntry`, decompresses both blobs and prints
/// `<key> <family> <stage> <mask> <dxil hex|-> <spirv hex|-> <meta words…>`.
pub const CPP_CONSUMER: &str = r#"
#include "shader_cache.h"
#include <zstd.h>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<uint8_t> decompress(const uint8_t* src, size_t srcSize, size_t rawSize)
{
    std::vector<uint8_t> out(rawSize);
    if (srcSize == 0) {
        if (rawSize != 0) { std::printf("FAIL empty blob with raw size\n"); std::exit(1); }
        return out;
    }
    if (ZSTD_getFrameContentSize(src, srcSize) != rawSize) { std::printf("FAIL content size\n"); std::exit(1); }
    size_t n = ZSTD_decompress(out.data(), out.size(), src, srcSize);
    if (ZSTD_isError(n) || n != rawSize) { std::printf("FAIL decompress %s\n", ZSTD_getErrorName(n)); std::exit(1); }
    return out;
}

static void hex(const std::vector<uint8_t>& blob, uint32_t off, uint32_t size)
{
    if (size == 0) { std::printf(" -"); return; }
    if (size_t(off) + size > blob.size()) { std::printf("FAIL slice out of range\n"); std::exit(1); }
    std::printf(" ");
    for (uint32_t i = 0; i < size; i++) std::printf("%02x", blob[off + i]);
}

int main(int argc, char** argv)
{
    std::vector<uint8_t> dxil = decompress(g_compressedDxilCache, g_dxilCacheCompressedSize, g_dxilCacheDecompressedSize);
    std::vector<uint8_t> spirv = decompress(g_compressedSpirvCache, g_spirvCacheCompressedSize, g_spirvCacheDecompressedSize);
    std::printf("count %zu encoding %u dxil %zu %zu spirv %zu %zu meta %zu\n", g_shaderCacheEntryCount,
        (unsigned)g_shrecSpirvEncoding, g_dxilCacheCompressedSize, g_dxilCacheDecompressedSize,
        g_spirvCacheCompressedSize, g_spirvCacheDecompressedSize, g_shrecMetaCount);
    for (size_t i = 1; i < g_shaderCacheEntryCount; i++)
        if (!(g_shaderCacheEntries[i - 1].hash < g_shaderCacheEntries[i].hash)) { std::printf("FAIL unsorted\n"); return 1; }
    for (size_t i = 0; i < g_shaderCacheEntryCount; i++)
        if (g_shaderCacheEntries[i].guestShader != nullptr) { std::printf("FAIL guestShader\n"); return 1; }
    for (int a = 1; a < argc; a++) {
        uint64_t key = std::strtoull(argv[a], nullptr, 16);
        ShaderCacheEntry* e = shrecFindEntry(key);
        if (!e) { std::printf("missing %016" PRIx64 "\n", key); continue; }
        const ShrecEntryInfo* info = shrecEntryInfo(e);
        std::printf("%016" PRIx64 " %u %u %u", e->hash, info->family, info->stage, e->specConstantsMask);
        hex(dxil, e->dxilOffset, e->dxilSize);
        hex(spirv, e->spirvOffset, e->spirvSize);
        if (size_t(info->metaOffset) + info->metaCount > g_shrecMetaCount) { std::printf("FAIL meta range\n"); return 1; }
        for (uint32_t m = 0; m < info->metaCount; m++) std::printf(" %x", g_shrecMeta[info->metaOffset + m]);
        std::printf("\n");
        e->guestShader = reinterpret_cast<GuestShader*>(1); // the memo is writable
    }
    return 0;
}
"#;

/// `<key> <family> <stage> <mask> <dxil hex|-> <spirv hex|-> <meta words…>`, as the C++ consumer prints.
pub fn consumer_line(e: &shrec::cache::CacheEntry, spirv_as_stored: Option<&[u8]>) -> String {
    let hex = |b: &[u8]| if b.is_empty() { "-".to_string() } else { b.iter().map(|x| format!("{x:02x}")).collect() };
    let mut l = format!(
        "{:016x} {} {} {} {} {}",
        e.key,
        e.family.abi_id(),
        e.stage.abi_id(),
        e.spec_constants_mask,
        hex(e.dxil.as_deref().unwrap_or(&[])),
        hex(spirv_as_stored.or(e.spirv.as_deref()).unwrap_or(&[]))
    );
    for w in &e.meta {
        l.push_str(&format!(" {w:x}"));
    }
    l
}

/// Compiles `cache_cpp` (which includes its header by name) and the consumer with g++, runs the
/// consumer on `keys`, returns its stdout. None when g++ is missing and allowed to be.
pub fn run_cpp_consumer(cache_cpp: &Path, keys: &[u64]) -> Option<String> {
    if !have_tool("g++") {
        return None;
    }
    let dir = cache_cpp.parent().unwrap();
    let header = cache_cpp.with_extension("h");
    let consumer = CPP_CONSUMER.replace("#include \"shader_cache.h\"", &format!("#include \"{}\"", header.file_name().unwrap().to_string_lossy()));
    std::fs::write(dir.join("consumer.cpp"), consumer).unwrap();
    let strict = ["-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror"];
    run(Command::new("g++").args(strict).arg("-c").arg(cache_cpp).arg("-o").arg(dir.join("cache.o")));
    run(Command::new("g++")
        .args(strict)
        .arg("-I")
        .arg(dir)
        .arg(dir.join("consumer.cpp"))
        .arg(dir.join("cache.o"))
        .arg("-lzstd")
        .arg("-o")
        .arg(dir.join("consumer")));
    let args: Vec<String> = keys.iter().map(|k| format!("{k:x}")).collect();
    Some(run(Command::new(dir.join("consumer")).args(&args)))
}

/// Runs `spirv-val` on a module; Err(diagnostics) when it rejects it. Panics when the tool is
/// missing (unless SHREC_ALLOW_MISSING_TOOLS=1, then Ok).
pub fn spirv_val(spirv: &[u8], name: &str) -> Result<(), String> {
    if !have_tool("spirv-val") {
        return Ok(());
    }
    // Unique per call: tests run in parallel threads of one process and may reuse a name.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("shrec-val-{}-{n}-{name}.spv", std::process::id()));
    std::fs::write(&path, spirv).unwrap();
    let out = Command::new("spirv-val").arg(&path).output().expect("spirv-val runs");
    let _ = std::fs::remove_file(&path);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

/// Prints a line the test harness does not capture (`println!`/`eprintln!` output of a passing
/// test is swallowed), so that summary lines such as `verify agal: N comparisons, 0 mismatches`
/// appear in CI logs.
pub fn log_uncaptured(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Copies a directory tree (files and folders) from `from` into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Every file under `dir` whose name ends in `.{ext}`, sorted.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// The distinct Xenos shaders of tests/corpus/xenos by key: (path, container bytes). 28 since
/// the RetroArch pair joined (tests/corpus/xenos/SOURCES.md).
pub fn xenos_corpus() -> std::collections::BTreeMap<u64, (String, Vec<u8>)> {
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus/xenos"));
    let mut m = std::collections::BTreeMap::new();
    for s in scan.shaders {
        m.entry(s.key).or_insert_with(|| (s.path.display().to_string(), shrec::scan::read_container(&s).unwrap()));
    }
    assert_eq!(m.len(), 28);
    m
}
