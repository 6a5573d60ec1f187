//! `--abi xenosrecomp` and `--abi xenosrecomp-metal` from the consumer's side: the `.cpp` of the
//! Xenos corpus compiles against a `shader_cache.h` of each XenosRecomp layout (written here from
//! the public layouts described in docs/cache-abi.md, not copied), a C++ program reads every
//! entry back (ranges inside the decompressed blobs, the blobs themselves), and a header of the
//! other layout is a compile error that names the `--abi` to use.

use crate::common;

use common::{repo, tmpdir};
use shrec::formats::{self, TranslateOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The blob declarations both layouts share.
const EXTERNS: &str = "extern ShaderCacheEntry g_shaderCacheEntries[];
extern const size_t g_shaderCacheEntryCount;
extern const uint8_t g_compressedDxilCache[];
extern const size_t g_dxilCacheCompressedSize;
extern const size_t g_dxilCacheDecompressedSize;
extern const uint8_t g_compressedSpirvCache[];
extern const size_t g_spirvCacheCompressedSize;
extern const size_t g_spirvCacheDecompressedSize;
";

/// XenosRecomp's main branch (990d03b) and UnleashedRecomp's main branch: six values per entry.
fn main_header() -> String {
    format!(
        "#pragma once\n#include <cstddef>\n#include <cstdint>\nstruct ShaderCacheEntry {{\n\
         \tconst uint64_t hash;\n\tconst uint32_t dxilOffset;\n\tconst uint32_t dxilSize;\n\
         \tconst uint32_t spirvOffset;\n\tconst uint32_t spirvSize;\n\tconst uint32_t specConstantsMask;\n\
         \tstruct GuestShader* guestShader;\n}};\n{EXTERNS}"
    )
}

/// XenosRecomp's Metal branch and UnleashedRecomp's Metal port: AIR offset and size before the
/// mask, a 256-byte file name after it, and the AIR blob.
fn metal_header() -> String {
    format!(
        "#pragma once\n#include <cstddef>\n#include <cstdint>\nstruct ShaderCacheEntry {{\n\
         \tconst uint64_t hash;\n\tconst uint32_t dxilOffset;\n\tconst uint32_t dxilSize;\n\
         \tconst uint32_t spirvOffset;\n\tconst uint32_t spirvSize;\n\tconst uint32_t airOffset;\n\
         \tconst uint32_t airSize;\n\tconst uint32_t specConstantsMask;\n\tchar filename[256];\n\
         \tstruct GuestShader* guestShader;\n}};\n{EXTERNS}\
         extern const uint8_t g_compressedAirCache[];\nextern const size_t g_airCacheCompressedSize;\n\
         extern const size_t g_airCacheDecompressedSize;\n"
    )
}

/// The consumer: decompresses both blobs (zstd), checks every entry's ranges, writes each
/// shader's bytes to `<out>/<KEY>.dxil` / `.smolv` and prints one line per entry:
/// `KEY dxilSize spirvSize mask` (Metal: `airOffset airSize` too), then the AIR blob's sizes.
fn consumer_source(metal: bool) -> String {
    let air_fields = if metal { "std::printf(\" %u %u\", (unsigned)e.airOffset, (unsigned)e.airSize);" } else { "" };
    let air_sizes = if metal { "std::printf(\"air %zu %zu\\n\", g_airCacheCompressedSize, g_airCacheDecompressedSize);" } else { "" };
    format!(
        r#"#include "shader_cache.h"
#include <zstd.h>
#include <cstdio>
#include <string>
#include <vector>
static std::vector<uint8_t> unpack(const uint8_t* c, size_t cs, size_t ds) {{
    std::vector<uint8_t> out(ds);
    if (cs == 0) return out;
    size_t n = ZSTD_decompress(out.data(), ds, c, cs);
    if (ZSTD_isError(n) || n != ds) {{ std::fprintf(stderr, "zstd\n"); std::exit(3); }}
    return out;
}}
static void dump(const std::string& path, const uint8_t* p, size_t n) {{
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(p, 1, n, f) != n) std::exit(4);
    std::fclose(f);
}}
int main(int argc, char** argv) {{
    auto dxil = unpack(g_compressedDxilCache, g_dxilCacheCompressedSize, g_dxilCacheDecompressedSize);
    auto spirv = unpack(g_compressedSpirvCache, g_spirvCacheCompressedSize, g_spirvCacheDecompressedSize);
    for (size_t i = 0; i < g_shaderCacheEntryCount; i++) {{
        const ShaderCacheEntry& e = g_shaderCacheEntries[i];
        if (i > 0 && g_shaderCacheEntries[i - 1].hash >= e.hash) return 5;
        if (e.guestShader != nullptr) return 6;
        if ((size_t)e.dxilOffset + e.dxilSize > dxil.size() || (size_t)e.spirvOffset + e.spirvSize > spirv.size()) return 7;
        char key[32];
        std::snprintf(key, sizeof key, "%016llX", (unsigned long long)e.hash);
        dump(std::string(argv[1]) + "/" + key + ".dxil", dxil.data() + e.dxilOffset, e.dxilSize);
        dump(std::string(argv[1]) + "/" + key + ".smolv", spirv.data() + e.spirvOffset, e.spirvSize);
        std::printf("%s %u %u %u", key, (unsigned)e.dxilSize, (unsigned)e.spirvSize, (unsigned)e.specConstantsMask);
        {air_fields}
        std::printf("\n");
    }}
    {air_sizes}
    return 0;
}}
"#
    )
}

/// Builds the Xenos corpus with `--abi <abi>` into `<dir>/gen/shader_cache.cpp`, next to `header`.
fn build(dir: &Path, abi: &str, header: &str) -> PathBuf {
    let gen = dir.join("gen");
    std::fs::create_dir_all(&gen).unwrap();
    std::fs::write(gen.join("shader_cache.h"), header).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shrec"))
        .arg("build")
        .arg(repo().join("tests/corpus/xenos"))
        .arg("-o")
        .arg(gen.join("shader_cache.cpp"))
        .args(["--abi", abi, "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    gen
}

/// g++ on the consumer and the cache; the compiler's output on failure.
fn compile(dir: &Path, gen: &Path, metal: bool) -> Result<PathBuf, String> {
    std::fs::write(dir.join("main.cpp"), consumer_source(metal)).unwrap();
    let exe = dir.join("consumer");
    let out = Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Werror", "-I"])
        .arg(gen)
        .arg(dir.join("main.cpp"))
        .arg(gen.join("shader_cache.cpp"))
        .arg("-lzstd")
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(exe)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Key → specialization-constant mask of every Xenos corpus shader shrec translates.
fn translated_masks() -> BTreeMap<u64, u32> {
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus/xenos"));
    let mut m = BTreeMap::new();
    for s in scan.shaders {
        let bytes = shrec::scan::read_container(&s).unwrap();
        if let Ok(tr) = formats::translate(s.container, &bytes, s.index, &TranslateOptions::default()) {
            m.insert(s.key, tr.spec_constants_mask);
        }
    }
    m
}

/// The entry point names of a SPIR-V module (OpEntryPoint's literal name).
fn spirv_entry_points(spirv: &[u8]) -> Vec<String> {
    let words: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut names = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let (len, op) = ((words[i] >> 16) as usize, words[i] & 0xFFFF);
        if op == 15 {
            let bytes: Vec<u8> = words[i + 3..i + len].iter().flat_map(|w| w.to_le_bytes()).collect();
            names.push(String::from_utf8_lossy(&bytes[..bytes.iter().position(|&b| b == 0).unwrap()]).into_owned());
        }
        i += len.max(1);
    }
    names
}

/// Runs the consumer and checks every entry against the translation: all corpus keys, DXIL and
/// SPIR-V present and well-formed, the mask the translation computed, the entry point `entry`.
fn check_readback(dir: &Path, exe: &Path, metal: bool, entry: &str) {
    let blobs = dir.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    let out = Command::new(exe).arg(&blobs).output().unwrap();
    assert!(out.status.success(), "consumer exit {:?}", out.status.code());
    let text = String::from_utf8(out.stdout).unwrap();
    let masks = translated_masks();
    let mut lines = text.lines();
    let mut seen = 0;
    let mut with_mask = 0;
    for line in lines.by_ref().take(masks.len()) {
        let f: Vec<&str> = line.split(' ').collect();
        let key = u64::from_str_radix(f[0], 16).unwrap();
        let mask: u32 = f[3].parse().unwrap();
        assert_eq!(Some(&mask), masks.get(&key), "0x{key:016X}: the mask read back is the translation's");
        with_mask += usize::from(mask != 0);
        if metal {
            assert_eq!((f[4], f[5]), ("0", "0"), "0x{key:016X}: no Metal backend, AIR range 0 / 0");
        }
        let dxil = std::fs::read(blobs.join(format!("{}.dxil", f[0]))).unwrap();
        assert_eq!(&dxil[..4], b"DXBC", "0x{key:016X}: a DXIL container at its offset");
        assert_eq!(dxil.len().to_string(), f[1]);
        let smolv = std::fs::read(blobs.join(format!("{}.smolv", f[0]))).unwrap();
        let spirv = shrec::pack::smolv::decode(&smolv).unwrap_or_else(|e| panic!("0x{key:016X}: SMOL-V: {e}"));
        assert_eq!(spirv_entry_points(&spirv), vec![entry.to_string()], "0x{key:016X}");
        if mask == 0 {
            // A stage profile: the entry point's name is in the container (a library exports it
            // by the function's name as well, checked by the HLSL being named so).
            assert!(dxil.windows(entry.len()).any(|w| w == entry.as_bytes()), "0x{key:016X}: DXIL entry point {entry}");
        }
        seen += 1;
    }
    assert_eq!(seen, masks.len(), "every translated corpus shader is in the table:\n{text}");
    assert!(with_mask > 0, "the corpus has shaders with specialization constants");
    if metal {
        assert_eq!(lines.next(), Some("air 0 0"), "the AIR blob is empty");
    }
    assert_eq!(lines.next(), None, "no entry beyond the translated shaders");
}

#[test]
fn xenosrecomp_main_layout_reads_back_and_refuses_the_metal_header() {
    if !common::have_tool("g++") {
        return;
    }
    let dir = tmpdir("xr-layout-main");
    let gen = build(&dir, "xenosrecomp", &main_header());
    let exe = compile(&dir, &gen, false).unwrap_or_else(|e| panic!("the main-branch header compiles:\n{e}"));
    check_readback(&dir, &exe, false, "main");

    // The same .cpp against the Metal branch's header: a compile error naming the option.
    std::fs::write(gen.join("shader_cache.h"), metal_header()).unwrap();
    let err = compile(&dir, &gen, true).expect_err("a Metal-layout header does not compile");
    assert!(err.contains("static assertion failed") && err.contains("run shrec build --abi xenosrecomp-metal"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn xenosrecomp_metal_layout_reads_back_and_refuses_the_main_header() {
    if !common::have_tool("g++") {
        return;
    }
    let dir = tmpdir("xr-layout-metal");
    let gen = build(&dir, "xenosrecomp-metal", &metal_header());
    let exe = compile(&dir, &gen, true).unwrap_or_else(|e| panic!("the Metal-branch header compiles:\n{e}"));
    check_readback(&dir, &exe, true, "shaderMain");

    std::fs::write(gen.join("shader_cache.h"), main_header()).unwrap();
    let err = compile(&dir, &gen, false).expect_err("a main-layout header does not compile");
    assert!(
        err.contains("static assertion failed")
            && err.contains("static assertion failed: this .cpp was written by shrec --abi xenosrecomp-metal")
            && err.contains("run shrec build --abi xenosrecomp\n"),
        "{err}"
    );

    // A header with the field count of the output but another order (the mask where the Metal
    // layout has airOffset): the mask would be read from the wrong field; it does not compile.
    let swapped = metal_header().replace(
        "const uint32_t airOffset;\n\tconst uint32_t airSize;\n\tconst uint32_t specConstantsMask;",
        "const uint32_t specConstantsMask;\n\tconst uint32_t airOffset;\n\tconst uint32_t airSize;",
    );
    assert_ne!(swapped, metal_header());
    std::fs::write(gen.join("shader_cache.h"), swapped).unwrap();
    let err = compile(&dir, &gen, true).expect_err("a reordered header does not compile");
    assert!(err.contains("static assertion failed") && err.contains("--abi xenosrecomp"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
