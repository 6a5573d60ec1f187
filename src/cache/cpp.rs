//! The `.cpp` writer: XenosRecomp's generated file, UnleashedRecomp's `shader_cache.h` ABI.
//!
//! [`write()`] produces two files:
//! - `<stem>.h` ([`HEADER`]): UR's `struct ShaderCacheEntry` and the eight externs, unchanged,
//!   plus shrec's extras (`g_shrecEntryInfo[]`, `g_shrecMeta[]`, `g_shrecSpirvEncoding`, id enums,
//!   `shrecFindEntry`). The text is the same for every cache.
//! - `<stem>` (the `.cpp`), which `#include "<stem>.h"` and defines everything:
//!   `g_shaderCacheEntries[]` sorted by key, one row per shader written as
//!   `\t{ 0x<KEY>, dxilOffset, dxilSize, spirvOffset, spirvSize, specConstantsMask, nullptr },`
//!   (XenosRecomp's row plus the explicit null `guestShader` memo of UR's struct), then the
//!   compressed blobs as octal-escaped string literals (g++ and clang compile them an order of
//!   magnitude faster than byte items; the benchmark measures it).
//! - `<stem>.msvc.inc` ([`msvc_path`]): the same blobs as decimal byte items for cl.exe, whose
//!   string literals are capped at 64 KiB. The `.cpp` includes it under
//!   `#if defined(_MSC_VER) && !defined(__clang__)` in place of the literals, so other compilers
//!   never read it and the `.cpp` holds each blob once.
//!
//! A backend without any blob keeps its symbols, with sizes 0 and a one-byte placeholder array
//! (C++ has no empty arrays), so one header serves DXIL-less and SPIR-V-less builds alike.
//!
//! Crash safety: the files are written to temporary files and synced first; then the header is
//! renamed into place, then the `.msvc.inc`, then the `.cpp`; a failed rename puts back the
//! files renamed before it (`atomic::Batch::commit`). The header's text only changes with
//! [`SHREC_CACHE_LAYOUT_VERSION`](HEADER), which the `.cpp` checks with a `static_assert`, and
//! the `.cpp` checks the `.msvc.inc`'s `SHREC_MSVC_INC_ID` under cl.exe, so a crash between two
//! renames leaves a set that either is consistent or fails to compile.
//!
//! Note: for `shader_cache.cpp` the header is `shader_cache.h`, which replaces UR's hand-written
//! header of the same name with this superset. With [`CppAbi::XenosRecomp`] (`--abi
//! xenosrecomp`) no header is written and the `.cpp` defines exactly XenosRecomp's symbols, for
//! the project's own `shader_cache.h`.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::atomic::Batch;
use super::layout::{self, Layout, Row};
use super::{CacheEntry, CacheLayout, CacheSizes, CacheWriteError, CppAbi, WriteOptions};

/// Text of the header written next to the `.cpp`.
pub const HEADER: &str = include_str!("shader_cache.h");

/// Appended to [`HEADER`] for a per-shader-frames cache (`--layout per-shader`).
pub const PER_SHADER_HEADER: &str = include_str!("shader_cache_per_shader.h");

/// The header text for a layout.
pub fn header_text(layout: CacheLayout) -> String {
    match layout {
        CacheLayout::Single => HEADER.to_string(),
        CacheLayout::PerShader => format!("{HEADER}{PER_SHADER_HEADER}"),
    }
}

/// Items per line in the byte arrays (g++ parses many short lines faster than one huge one).
pub const BYTES_PER_LINE: usize = 64;
/// Items per line in `g_shrecMeta[]`.
pub const WORDS_PER_LINE: usize = 16;

/// The header path for a `.cpp` path: same directory, same stem, `.h`.
pub fn header_path(out: &Path) -> PathBuf {
    out.with_extension("h")
}

/// The MSVC blob file for a `.cpp` path: same directory, same stem, `.msvc.inc`.
pub fn msvc_path(out: &Path) -> PathBuf {
    out.with_extension("msvc.inc")
}

/// True under cl.exe (clang-cl reads string literals like clang).
const IF_MSVC: &str = "#if defined(_MSC_VER) && !defined(__clang__)\n";

/// Writes `out` (the `.cpp`) and [`header_path`]`(out)`. Returns the blob sizes. On error no
/// file was replaced and no temporary file is left.
pub fn write(out: &Path, entries: &[CacheEntry], opts: &WriteOptions) -> Result<CacheSizes, CacheWriteError> {
    write_prepacked(out, entries, opts, None)
}

/// [`write()`], with the single layout's frames already compressed by a
/// [`SinglePacker`](layout::SinglePacker) during the build (used only if they match `entries`).
pub fn write_prepacked(
    out: &Path,
    entries: &[CacheEntry],
    opts: &WriteOptions,
    packed: Option<super::Packed>,
) -> Result<CacheSizes, CacheWriteError> {
    let header = header_path(out);
    let header_name = header
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.contains(['"', '\\', '\n', '\r']))
        .ok_or_else(|| CacheWriteError::BadPath { path: out.to_path_buf(), reason: "the output needs a file name usable in #include \"...\"" })?
        .to_owned();
    if header == out {
        return Err(CacheWriteError::BadPath {
            path: out.to_path_buf(),
            reason: "the .cpp output must not end in .h (its header is written as <stem>.h)",
        });
    }

    if opts.abi.is_xenosrecomp() && opts.layout != CacheLayout::Single {
        return Err(CacheWriteError::Unsupported {
            path: out.to_path_buf(),
            reason: "--abi xenosrecomp has XenosRecomp's single-frame layout only (per-shader frames need shrec's header)",
        });
    }
    let msvc = msvc_path(out);
    let msvc_name = msvc.file_name().and_then(|n| n.to_str()).expect("named like the header, checked above").to_owned();

    let layout = layout::build_prepacked(out, entries, opts, packed)?;
    let io_err = |(path, source): (PathBuf, io::Error)| CacheWriteError::Io { path, source };
    let mut batch = Batch::new();
    if opts.abi == CppAbi::Shrec {
        let header_text = header_text(layout.layout);
        batch.stage_with(&header, |w| w.write_all(header_text.as_bytes())).map_err(io_err)?;
    }
    batch.stage_with(&msvc, |w| write_msvc(w, &layout)).map_err(io_err)?;
    batch.stage_with(out, |w| write_cpp(w, &layout, &header_name, &msvc_name, opts.abi)).map_err(io_err)?;
    batch.commit().map_err(io_err)?;
    Ok(layout.sizes())
}

/// One row of `g_shaderCacheEntries[]`, without the leading tab and trailing newline.
pub(crate) fn format_row(r: &Row, abi: CppAbi) -> String {
    match abi {
        // AIR offset and size 0 (no Metal backend), an empty `filename` (the Metal port uses it
        // only to name GPU objects for debugging).
        CppAbi::XenosRecompMetal => format!(
            "{{ 0x{:X}, {}, {}, {}, {}, 0, 0, {}, \"\", nullptr }},",
            r.key, r.dxil_offset, r.dxil_size, r.spirv_offset, r.spirv_size, r.spec_constants_mask
        ),
        CppAbi::Shrec | CppAbi::XenosRecomp => {
            format!(
                "{{ 0x{:X}, {}, {}, {}, {}, {}, nullptr }},",
                r.key, r.dxil_offset, r.dxil_size, r.spirv_offset, r.spirv_size, r.spec_constants_mask
            )
        }
    }
}

/// `static_assert`s on the `ShaderCacheEntry` of the project's header: the offset and size of
/// every field the rows initialize, and the struct's size (nothing after `guestShader`). A
/// header of the other XenosRecomp layout then fails to compile with a message that names the
/// `--abi` to use, instead of taking the mask from the AIR offset (same field count) or failing
/// on `nullptr` (the Metal layout has two fields more).
fn layout_guard(abi: CppAbi) -> String {
    let (fields, other): (&[(&str, usize, usize)], CppAbi) = match abi {
        CppAbi::XenosRecompMetal => (
            &[
                ("hash", 0, 8),
                ("dxilOffset", 8, 4),
                ("dxilSize", 12, 4),
                ("spirvOffset", 16, 4),
                ("spirvSize", 20, 4),
                ("airOffset", 24, 4),
                ("airSize", 28, 4),
                ("specConstantsMask", 32, 4),
                ("filename", 36, 256),
            ],
            CppAbi::XenosRecomp,
        ),
        CppAbi::Shrec | CppAbi::XenosRecomp => (
            &[("hash", 0, 8), ("dxilOffset", 8, 4), ("dxilSize", 12, 4), ("spirvOffset", 16, 4), ("spirvSize", 20, 4), ("specConstantsMask", 24, 4)],
            CppAbi::XenosRecompMetal,
        ),
    };
    let what = match abi {
        CppAbi::XenosRecompMetal => "XenosRecomp's Metal layout (hash, DXIL, SPIR-V and AIR offset/size, mask, filename[256], guestShader)",
        CppAbi::Shrec | CppAbi::XenosRecomp => "XenosRecomp's main-branch layout (hash, DXIL and SPIR-V offset/size, mask, guestShader)",
    };
    let msg = format!(
        "this .cpp was written by shrec --abi {} for {what}; the ShaderCacheEntry of this header differs: for the other XenosRecomp layout run shrec build --abi {}",
        abi.option_name(),
        other.option_name()
    );
    let mut s = String::from("#include <cstddef>\n#include <cstdint>\n");
    for (name, offset, size) in fields {
        writeln!(s, "static_assert(offsetof(ShaderCacheEntry, {name}) == {offset} && sizeof(ShaderCacheEntry::{name}) == {size}, \"{msg}\");")
            .unwrap();
    }
    let last = fields.last().map_or(0, |(_, o, n)| o + n);
    writeln!(
        s,
        "static_assert(offsetof(ShaderCacheEntry, guestShader) == ({last} + alignof(void*) - 1) / alignof(void*) * alignof(void*) && sizeof(ShaderCacheEntry) == offsetof(ShaderCacheEntry, guestShader) + sizeof(void*), \"{msg}\");\n"
    )
    .unwrap();
    s
}

/// Every blob of the cache (name of its symbol, bytes, what an empty one means), in `.cpp` order.
fn blobs(l: &Layout) -> Vec<(String, &[u8], &'static str)> {
    let mut b = vec![
        ("g_compressedDxilCache".to_string(), &l.dxil.compressed[..], "this backend is empty"),
        ("g_compressedSpirvCache".to_string(), &l.spirv.compressed[..], "this backend is empty"),
    ];
    if l.layout == CacheLayout::PerShader {
        b.push(("g_shrecDxilDict".to_string(), &l.dxil.dict[..], "no dictionary"));
        b.push(("g_shrecSpirvDict".to_string(), &l.spirv.dict[..], "no dictionary"));
    }
    b
}

/// `<stem>.msvc.inc`: the non-empty blobs as decimal byte items (see the module docs).
/// What ties a `.msvc.inc` to its `.cpp`: the low 32 bits of the XXH3-64 of its blobs, in
/// [`blobs`] order. The side file defines it as `SHREC_MSVC_INC_ID`; the `.cpp` checks it with a
/// `static_assert` under cl.exe, so a `.cpp` next to the side file of another build (a crash
/// between their renames, a partial copy) fails to compile instead of using other blobs.
fn msvc_id(l: &Layout) -> u32 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (symbol, bytes, _) in blobs(l) {
        h.update(symbol.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.digest() as u32
}

fn write_msvc(w: &mut dyn Write, l: &Layout) -> io::Result<()> {
    let mut buf = Vec::new();
    writeln!(buf, "// Generated by shrec {}. Do not edit.", env!("CARGO_PKG_VERSION"))?;
    buf.extend_from_slice(b"// The compressed blobs for cl.exe (string literals are capped at 64 KiB there); included by the .cpp.\n");
    writeln!(buf, "#define SHREC_MSVC_INC_ID 0x{:08X}u", msvc_id(l))?;
    for (symbol, bytes, _) in blobs(l) {
        if !bytes.is_empty() {
            write_byte_items(&mut buf, &symbol, bytes)?;
        }
    }
    w.write_all(&buf)
}

fn write_cpp(w: &mut dyn Write, l: &Layout, header_name: &str, msvc_name: &str, abi: CppAbi) -> io::Result<()> {
    let mut s = String::with_capacity(256 + l.rows.len() * 64);
    writeln!(s, "// Generated by shrec {}. Do not edit.", env!("CARGO_PKG_VERSION")).unwrap();
    writeln!(
        s,
        "// {} shaders. DXIL: {} bytes, {} compressed. SPIR-V ({}): {} bytes, {} compressed.",
        l.rows.len(),
        l.dxil.raw_len,
        l.dxil.compressed.len(),
        l.spirv_encoding.name(),
        l.spirv.raw_len,
        l.spirv.compressed.len()
    )
    .unwrap();
    writeln!(s, "#include \"{header_name}\"\n").unwrap();
    // cl.exe takes the blobs as byte items from the side file instead of the literals below.
    writeln!(
        s,
        "{IF_MSVC}#include \"{msvc_name}\"\nstatic_assert(SHREC_MSVC_INC_ID == 0x{:08X}u, \"{msvc_name} and this .cpp come from different shrec builds: run shrec again\");\n#endif\n",
        msvc_id(l)
    )
    .unwrap();
    if abi == CppAbi::Shrec {
        s.push_str("static_assert(SHREC_CACHE_LAYOUT_VERSION == 2, \"shader cache header and .cpp come from different shrec versions\");\n\n");
    } else {
        s.push_str(&layout_guard(abi));
    }
    if l.layout == CacheLayout::PerShader {
        s.push_str("#ifndef SHREC_CACHE_PER_SHADER_FRAMES\n#error \"this .cpp has per-shader frames but its header was written for another layout\"\n#endif\n\n");
    }

    s.push_str("ShaderCacheEntry g_shaderCacheEntries[] = {\n");
    for r in &l.rows {
        s.push('\t');
        s.push_str(&format_row(r, abi));
        s.push('\n');
    }
    if l.rows.is_empty() {
        let zero = Row {
            key: 0,
            family: 0,
            stage: 0,
            dxil_offset: 0,
            dxil_size: 0,
            spirv_offset: 0,
            spirv_size: 0,
            spec_constants_mask: 0,
            meta_offset: 0,
            meta_count: 0,
            flags: 0,
            dxil_frame: (0, 0),
            spirv_frame: (0, 0),
        };
        writeln!(s, "\t{} // placeholder: the table is empty", format_row(&zero, abi)).unwrap();
    }
    s.push_str("};\n");
    writeln!(s, "const size_t g_shaderCacheEntryCount = {};\n", l.rows.len()).unwrap();
    w.write_all(s.as_bytes())?;

    write_blob(w, "Dxil", &l.dxil.compressed, l.dxil.raw_len)?;
    if abi == CppAbi::XenosRecompMetal {
        // XenosRecomp writes the AIR symbols only when built with Metal; the Metal port's header
        // declares them always. shrec has no Metal backend: the blob is empty.
        write_blob(w, "Air", &[], 0)?;
    }
    write_blob(w, "Spirv", &l.spirv.compressed, l.spirv.raw_len)?;
    if abi.is_xenosrecomp() {
        return Ok(());
    }

    let mut s = String::with_capacity(64 + l.rows.len() * 32);
    s.push_str("const ShrecEntryInfo g_shrecEntryInfo[] = {\n");
    for r in &l.rows {
        writeln!(s, "\t{{ {}, {}, {}, {}, {} }},", r.family, r.stage, r.meta_offset, r.meta_count, r.flags).unwrap();
    }
    if l.rows.is_empty() {
        s.push_str("\t{ 0, 0, 0, 0, 0 }, // placeholder: the table is empty\n");
    }
    s.push_str("};\n");
    s.push_str("const uint32_t g_shrecMeta[] = {\n");
    for chunk in l.meta.chunks(WORDS_PER_LINE) {
        s.push('\t');
        for word in chunk {
            write!(s, "0x{word:X},").unwrap();
        }
        s.push('\n');
    }
    if l.meta.is_empty() {
        s.push_str("\t0, // placeholder: no metadata\n");
    }
    s.push_str("};\n");
    writeln!(s, "const size_t g_shrecMetaCount = {};", l.meta.len()).unwrap();
    writeln!(s, "const uint32_t g_shrecSpirvEncoding = {};", l.spirv_encoding.abi_id()).unwrap();
    w.write_all(s.as_bytes())?;
    if l.layout == CacheLayout::PerShader {
        write_per_shader(w, l)?;
    }
    Ok(())
}

/// The per-shader extras: `g_shrecCacheLayout`, `g_shrecEntryFrames[]`, the dictionaries.
fn write_per_shader(w: &mut dyn Write, l: &Layout) -> io::Result<()> {
    let mut s = String::with_capacity(128 + l.rows.len() * 48);
    writeln!(s, "\nconst uint32_t g_shrecCacheLayout = {};", l.layout.abi_id()).unwrap();
    s.push_str("const ShrecEntryFrames g_shrecEntryFrames[] = {\n");
    for r in &l.rows {
        writeln!(s, "\t{{ {}, {}, {}, {} }},", r.dxil_frame.0, r.dxil_frame.1, r.spirv_frame.0, r.spirv_frame.1).unwrap();
    }
    if l.rows.is_empty() {
        s.push_str("\t{ 0, 0, 0, 0 }, // placeholder: the table is empty\n");
    }
    s.push_str("};\n\n");
    w.write_all(s.as_bytes())?;
    for (name, dict) in [("Dxil", &l.dxil.dict), ("Spirv", &l.spirv.dict)] {
        let mut buf = Vec::new();
        write_bytes(&mut buf, &format!("g_shrec{name}Dict"), dict, "no dictionary")?;
        writeln!(buf, "const size_t g_shrec{name}DictSize = {};", dict.len())?;
        w.write_all(&buf)?;
    }
    Ok(())
}

/// `g_compressed<Name>Cache[]` and its two sizes.
fn write_blob(w: &mut dyn Write, name: &str, compressed: &[u8], raw_len: u64) -> io::Result<()> {
    let mut buf = Vec::with_capacity(compressed.len() * 7 + 512);
    write_bytes(&mut buf, &format!("g_compressed{name}Cache"), compressed, "this backend is empty")?;
    writeln!(buf, "const size_t g_{}CacheCompressedSize = {};", name.to_ascii_lowercase(), compressed.len())?;
    writeln!(buf, "const size_t g_{}CacheDecompressedSize = {};\n", name.to_ascii_lowercase(), raw_len)?;
    w.write_all(&buf)
}

/// `const uint8_t <symbol>[]`: an octal-escaped string literal for g++/clang (an order of
/// magnitude faster to compile than byte items); cl.exe gets the byte items of [`write_msvc`]
/// instead. A one-byte placeholder (for every compiler) when `compressed` is empty.
fn write_bytes(buf: &mut Vec<u8>, symbol: &str, compressed: &[u8], empty: &str) -> io::Result<()> {
    if compressed.is_empty() {
        writeln!(buf, "const uint8_t {symbol}[] = {{\n\t0, // placeholder: {empty}\n}};")?;
        return Ok(());
    }
    buf.reserve(compressed.len() * 2 + 512);
    // Under cl.exe the side file (write_msvc) defined it.
    buf.extend_from_slice(b"#if !(defined(_MSC_VER) && !defined(__clang__))\n");
    write_string_literal(buf, symbol, compressed)?;
    buf.extend_from_slice(b"#endif\n");
    Ok(())
}

/// `const uint8_t <symbol>[] = { 1,2,3, ... };`, [`BYTES_PER_LINE`] decimal items a line.
fn write_byte_items(buf: &mut Vec<u8>, symbol: &str, bytes: &[u8]) -> io::Result<()> {
    // "0," .. "255," without going through the formatter for every byte.
    const fn lut() -> [([u8; 4], u8); 256] {
        let mut t = [([0u8; 4], 0u8); 256];
        let mut i = 0;
        while i < 256 {
            let (h, te, o) = ((i / 100) as u8, ((i / 10) % 10) as u8, (i % 10) as u8);
            t[i] = if i >= 100 {
                ([b'0' + h, b'0' + te, b'0' + o, b','], 4)
            } else if i >= 10 {
                ([b'0' + te, b'0' + o, b',', 0], 3)
            } else {
                ([b'0' + o, b',', 0, 0], 2)
            };
            i += 1;
        }
        t
    }
    static LUT: [([u8; 4], u8); 256] = lut();

    writeln!(buf, "const uint8_t {symbol}[] = {{")?;
    for line in bytes.chunks(BYTES_PER_LINE) {
        buf.push(b'\t');
        for &b in line {
            let (digits, n) = &LUT[b as usize];
            buf.extend_from_slice(&digits[..*n as usize]);
        }
        buf.push(b'\n');
    }
    buf.extend_from_slice(b"};\n");
    Ok(())
}

/// Bytes per string-literal line.
pub const STRING_BYTES_PER_LINE: usize = 64;

/// `const uint8_t <symbol>[N + 1] = "..." "...";`: printable ASCII as itself, everything else
/// (and `\\`, `"`, `?` — no trigraphs) as a three-digit octal escape, which can never swallow
/// the digit after it. The array keeps the literal's terminating NUL: one byte past the data,
/// which the size constants do not count.
fn write_string_literal(buf: &mut Vec<u8>, symbol: &str, bytes: &[u8]) -> io::Result<()> {
    buf.extend_from_slice(b"#if defined(__clang__)\n#pragma clang diagnostic ignored \"-Woverlength-strings\"\n#endif\n");
    writeln!(buf, "const uint8_t {symbol}[{}] =", bytes.len() + 1)?;
    for line in bytes.chunks(STRING_BYTES_PER_LINE) {
        buf.extend_from_slice(b"\t\"");
        for &b in line {
            if (0x20..0x7F).contains(&b) && !matches!(b, b'\\' | b'"' | b'?') {
                buf.push(b);
            } else {
                buf.extend_from_slice(&[b'\\', b'0' + (b >> 6), b'0' + ((b >> 3) & 7), b'0' + (b & 7)]);
            }
        }
        buf.extend_from_slice(b"\"\n");
    }
    buf.extend_from_slice(b";\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_format_matches_xenosrecomp_plus_memo() {
        let r = Row {
            key: 0x05873A0E094914DE,
            family: 0,
            stage: 1,
            dxil_offset: 12,
            dxil_size: 34,
            spirv_offset: 56,
            spirv_size: 78,
            spec_constants_mask: 3,
            meta_offset: 0,
            meta_count: 0,
            flags: 0,
            dxil_frame: (0, 0),
            spirv_frame: (0, 0),
        };
        // XR prints the hash with fmt "0x{:X}": uppercase, no zero padding.
        assert_eq!(format_row(&r, CppAbi::XenosRecomp), "{ 0x5873A0E094914DE, 12, 34, 56, 78, 3, nullptr },");
    }

    /// Decodes the C string literals of `lines` (the subset `write_string_literal` emits).
    fn decode_literals(lines: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for l in lines {
            let body = l.trim().strip_prefix('"').and_then(|l| l.strip_suffix('"')).expect("one literal per line");
            let b = body.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'\\' {
                    let oct = std::str::from_utf8(&b[i + 1..i + 4]).unwrap();
                    out.push(u8::from_str_radix(oct, 8).unwrap());
                    i += 4;
                } else {
                    assert!(!matches!(b[i], b'"' | b'?') && (0x20..0x7F).contains(&b[i]), "unescaped {:?}", b[i] as char);
                    out.push(b[i]);
                    i += 1;
                }
            }
        }
        out
    }

    #[test]
    fn blob_is_a_string_literal_with_a_decimal_copy_for_msvc() {
        let data: Vec<u8> = (0..=255u8).chain(0..=255u8).chain(b"7\\0??=\"1".iter().copied()).collect();
        let mut out = Vec::new();
        write_blob(&mut out, "Dxil", &data, 999).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "#if !(defined(_MSC_VER) && !defined(__clang__))");
        assert!(!text.contains("= {"), "no byte items in the .cpp: {text}");
        let mut msvc = Vec::new();
        write_byte_items(&mut msvc, "g_compressedDxilCache", &data).unwrap();
        let msvc = String::from_utf8(msvc).unwrap();
        let msvc_lines: Vec<&str> = msvc.lines().collect();
        assert_eq!(msvc_lines[0], "const uint8_t g_compressedDxilCache[] = {");
        let items: Vec<u8> = msvc_lines[1..]
            .iter()
            .take_while(|l| l.starts_with('\t'))
            .inspect(|l| assert!(l.matches(',').count() <= BYTES_PER_LINE))
            .flat_map(|l| l.trim().trim_end_matches(',').split(','))
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(items, data);
        let decl = format!("const uint8_t g_compressedDxilCache[{}] =", data.len() + 1);
        let at = lines.iter().position(|l| *l == decl).expect("string-literal branch");
        assert_eq!(lines[at - 1], "#endif", "clang pragma precedes the declaration");
        let literal: Vec<&str> = lines[at + 1..].iter().take_while(|l| l.starts_with('\t')).copied().collect();
        assert_eq!(decode_literals(&literal), data);
        assert_eq!(lines[at + 1 + literal.len()], ";");
        assert_eq!(lines[at + 2 + literal.len()], "#endif");
        assert!(text.contains(&format!("const size_t g_dxilCacheCompressedSize = {};\n", data.len())));
        assert!(text.contains("const size_t g_dxilCacheDecompressedSize = 999;\n"));
    }

    #[test]
    fn empty_blob_is_a_one_byte_placeholder() {
        let mut out = Vec::new();
        write_blob(&mut out, "Spirv", &[], 0).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("const uint8_t g_compressedSpirvCache[] = {\n\t0, // placeholder"), "{text}");
        assert!(text.contains("const size_t g_spirvCacheCompressedSize = 0;\n"));
    }

    #[test]
    fn header_path_replaces_extension() {
        assert_eq!(header_path(Path::new("a/shader_cache.cpp")), Path::new("a/shader_cache.h"));
        assert_eq!(header_path(Path::new("cache")), Path::new("cache.h"));
    }
}
