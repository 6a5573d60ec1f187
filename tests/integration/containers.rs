//! Shaders inside containers (docs/containers.md): corpus shaders packed in the test as Yaz0
//! SARC, DARC, zip, gzip (also nested in a zip) and a zlib-compressed SWF (DefineBinaryData) give the
//! same keys and a byte-identical cache as the extracted files; every container cap fires with
//! its message; a corrupt member is one error and the rest of the archive is still scanned.

use crate::common;

use common::{repo, tmpdir};
use shrec::build::{self, BuildOptions};
use shrec::limits;
use shrec::scan::{self, scan_buffer};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

// ---- encoders (test side; independent of the decoders under test) ----

/// Yaz0 with every flag bit set (all literals): valid Yaz0 that any decoder must accept.
fn yaz0_store(data: &[u8]) -> Vec<u8> {
    let mut out = b"Yaz0".to_vec();
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    for group in data.chunks(8) {
        out.push(0xFF);
        out.extend_from_slice(group);
    }
    out
}

#[path = "../common/archive_writers.rs"]
mod archive_writers;
use archive_writers::{sarc, swf_body, zip};

#[path = "../common/xex2_writer.rs"]
mod xex2_writer;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A `CWS` SWF (zlib) holding `blobs` as DefineBinaryData tags with ids 1, 2, ...
fn swf_cws(blobs: &[&[u8]]) -> Vec<u8> {
    archive_writers::swf_cws(&swf_body(blobs))
}

/// A `ZWS` SWF (LZMA) holding `blobs`: the CWS body, LZMA-compressed by lzma-rs's encoder,
/// with the 8-byte size field of the `.lzma` header dropped (ZWS has its own lengths).
fn swf_zws(blobs: &[&[u8]]) -> Vec<u8> {
    let body = swf_body(blobs);
    let mut lz = Vec::new();
    lzma_rs::lzma_compress(&mut &body[..], &mut lz).unwrap();
    let mut out = b"ZWS".to_vec();
    out.push(13);
    out.extend_from_slice(&(8 + body.len() as u32).to_le_bytes());
    out.extend_from_slice(&((lz.len() - 13) as u32).to_le_bytes());
    out.extend_from_slice(&lz[..5]);
    out.extend_from_slice(&lz[13..]);
    out
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    lzma_rs::xz_compress(&mut &data[..], &mut out).unwrap();
    out
}

/// An XEX2 with basic compression: base file = `head` (data), 0x200 zeros, `body` (data),
/// 0x10 zeros. `encrypted` sets the file format info's encryption type to 1 (AES).
fn xex2(head: &[u8], body: &[u8], encrypted: bool) -> Vec<u8> {
    let be = |v: u32| v.to_be_bytes();
    let blocks = [(head.len() as u32, 0x200u32), (body.len() as u32, 0x10)];
    let info = 0x20usize;
    let info_size = 8 + 8 * blocks.len();
    let pe = (info + info_size).div_ceil(0x10) * 0x10;
    let mut x = b"XEX2".to_vec();
    for v in [1, pe as u32, 0, 0, 1, 0x3FF, info as u32] {
        x.extend_from_slice(&be(v));
    }
    x.extend_from_slice(&be(info_size as u32));
    x.extend_from_slice(&(encrypted as u16).to_be_bytes());
    x.extend_from_slice(&1u16.to_be_bytes());
    for (d, z) in blocks {
        x.extend_from_slice(&be(d));
        x.extend_from_slice(&be(z));
    }
    x.resize(pe, 0);
    x.extend_from_slice(head);
    x.extend_from_slice(body);
    x
}

/// Nintendo LZ11 (DSDecmp `LZ11.cs`; see src/scan/containers/lz.rs): a greedy encoder that looks
/// 0x1000 bytes back for the longest match and uses all three reference forms (2, 3 and 4
/// bytes), padded with zeros to a multiple of 4 bytes as GBATEK asks.
fn lz11(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x11];
    out.extend_from_slice(&(data.len() as u32).to_le_bytes()[..3]);
    assert!(data.len() < 1 << 24);
    let mut i = 0;
    while i < data.len() {
        let flag_at = out.len();
        out.push(0);
        for bit in (0..8).rev() {
            if i >= data.len() {
                break;
            }
            let (mut best, mut dist) = (0, 0);
            for d in 1..=i.min(0x1000) {
                let n = (0..(data.len() - i).min(0x10110)).take_while(|&k| data[i + k] == data[i + k - d]).count();
                if n > best {
                    (best, dist) = (n, d);
                }
            }
            if best < 3 {
                out.push(data[i]);
                i += 1;
                continue;
            }
            out[flag_at] |= 1 << bit;
            let d = dist - 1;
            if best <= 0x10 {
                out.extend_from_slice(&[((best - 1) << 4 | d >> 8) as u8, d as u8]);
            } else if best <= 0x110 {
                let l = best - 0x11;
                out.extend_from_slice(&[(l >> 4) as u8, ((l & 0xF) << 4 | d >> 8) as u8, d as u8]);
            } else {
                let l = best - 0x111;
                out.extend_from_slice(&[(0x10 | l >> 12) as u8, (l >> 4) as u8, ((l & 0xF) << 4 | d >> 8) as u8, d as u8]);
            }
            i += best;
        }
    }
    out.resize(out.len().div_ceil(4) * 4, 0);
    out
}

/// Nintendo LZ10 with literals only (GBATEK LZ77UnCompReadNormalWrite8bit): valid LZ10 that
/// any decoder must accept.
fn lz10_store(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x10];
    out.extend_from_slice(&(data.len() as u32).to_le_bytes()[..3]);
    for group in data.chunks(8) {
        out.push(0);
        out.extend_from_slice(group);
    }
    out.resize(out.len().div_ceil(4) * 4, 0);
    out
}

/// One LZX chunk (32 KiB of output, or the last, shorter one) as a single uncompressed block
/// (MS-PATCH "LZX DELTA Compression and Decompression" 2.3.1 / 2.3.2.1; lzxd's `block.rs`): the
/// bitstream is 16-bit little-endian words read from the most significant bit; the stream's
/// first chunk starts with the E8-translation bit (0: off); then block type 3 (3 bits), the
/// block size (24 bits), padding to the next 16-bit boundary (a whole word when already
/// aligned), R0 R1 R2 as u32 little endian (1, 1, 1: the initial values), the bytes, and a
/// padding byte after an odd count.
fn lzx_stored_chunk(data: &[u8], first: bool) -> Vec<u8> {
    let mut bits = Vec::new();
    if first {
        bits.push(0u8);
    }
    bits.extend([0, 1, 1]);
    bits.extend((0..24).rev().map(|b| (data.len() >> b & 1) as u8));
    let pad = if bits.len() % 16 == 0 { 16 } else { 16 - bits.len() % 16 };
    bits.extend(std::iter::repeat_n(0, pad));
    let mut out = Vec::new();
    for word in bits.chunks(16) {
        let w = word.iter().fold(0u16, |w, &b| w << 1 | b as u16);
        out.extend_from_slice(&w.to_le_bytes());
    }
    for _ in 0..3 {
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
    out
}

/// An unencrypted XEX2 whose base file `base` is LZX-compressed (Xenia `xex_module.cc`
/// ReadImageCompressed, `xex2_info.h`): file format info (compression 2, window 32 KiB, first
/// block size and SHA-1), security info (image size), and the PE data as a chain of blocks of
/// `chunks_per_block` chunks, each block headed by the next one's size and SHA-1.
fn xex2_lzx(base: &[u8], chunks_per_block: usize) -> Vec<u8> {
    let chunks: Vec<Vec<u8>> = base.chunks(0x8000).enumerate().map(|(i, c)| lzx_stored_chunk(c, i == 0)).collect();
    xex2_lzx_chunks(&chunks, base.len() as u32, chunks_per_block)
}

/// [`xex2_lzx`] from ready LZX chunks and the image size to declare (window 32 KiB).
fn xex2_lzx_chunks(chunks: &[Vec<u8>], image_size: u32, chunks_per_block: usize) -> Vec<u8> {
    let (first_block, pe_data) = xex2_writer::block_chain(chunks, chunks_per_block);
    xex2_writer::xex2_lzx(0x8000, first_block, image_size, &pe_data)
}

/// A base file for [`xex2_lzx`]: "MZ", then `shader` after two 32 KiB LZX chunks
/// (at 0x10100, in the third chunk: Xenos containers are found on 4-byte steps), then one byte, so that the last
/// chunk has an odd size (and its padding byte).
fn lzx_base(shader: &[u8]) -> Vec<u8> {
    let mut base = b"MZ".to_vec();
    base.resize(0x10100, 0x90);
    base.extend_from_slice(shader);
    base.push(0);
    assert!(base.len() % 2 == 1 && base.len() > 0x10000);
    base
}

// ---- the corpus, extracted and packed ----

/// Two corpus shaders per family: (family dir, path under tests/corpus).
const PICKED: [&str; 8] = [
    "gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/colorShader.gsh",
    "gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/textureShader.gsh",
    "pica/0x00002a+pican/test_cases/inputs/alias_swizzle.shbin",
    "pica/0x00002a+pican/test_cases/inputs/basic_ifc.shbin",
    "xenos/Free60Project+libxenon/devkitxenon/examples/xenon/graphics/cube/files/ps.psu",
    "xenos/Free60Project+libxenon/devkitxenon/examples/xenon/graphics/cube/files/vs.vsu",
    "agal/Gamua+Starling-Framework/starling/src/starling/filters/starling_blur_fs.agal",
    "agal/Gamua+Starling-Framework/starling/src/starling/filters/starling_blur_vs.agal",
];

/// A little-endian DARC (3dbrew "DARC"): root, ".", one directory `dir` holding `members`.
fn darc(dir: &str, members: &[(&str, &[u8])]) -> Vec<u8> {
    let utf16 = |s: &str| -> Vec<u8> { s.encode_utf16().chain([0]).flat_map(u16::to_le_bytes).collect() };
    let count = 3 + members.len();
    let mut names = Vec::new();
    let mut entries: Vec<(u32, u32, u32)> = Vec::new();
    let name = |n: &str, names: &mut Vec<u8>| {
        let at = names.len() as u32;
        names.extend_from_slice(&utf16(n));
        at
    };
    let root = name("", &mut names);
    entries.push((0x0100_0000 | root, 0, count as u32));
    let dot = name(".", &mut names);
    entries.push((0x0100_0000 | dot, 0, count as u32));
    let d = name(dir, &mut names);
    entries.push((0x0100_0000 | d, 1, count as u32));
    let table_len = 12 * count + names.len() + members.iter().map(|(n, _)| utf16(n).len()).sum::<usize>();
    let data_start = (0x1C + table_len).div_ceil(0x80) * 0x80;
    let mut data = Vec::new();
    for (n, bytes) in members {
        let at = name(n, &mut names);
        while data.len() % 0x80 != 0 {
            data.push(0);
        }
        entries.push((at, (data_start + data.len()) as u32, bytes.len() as u32));
        data.extend_from_slice(bytes);
    }
    let mut out = b"darc".to_vec();
    out.extend_from_slice(&[0xFF, 0xFE]);
    out.extend_from_slice(&0x1Cu16.to_le_bytes());
    out.extend_from_slice(&0x0100_0000u32.to_le_bytes());
    out.extend_from_slice(&((data_start + data.len()) as u32).to_le_bytes());
    out.extend_from_slice(&0x1Cu32.to_le_bytes());
    out.extend_from_slice(&(table_len as u32).to_le_bytes());
    out.extend_from_slice(&(data_start as u32).to_le_bytes());
    for (a, b, c) in entries {
        for v in [a, b, c] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.extend_from_slice(&names);
    out.resize(data_start, 0);
    out.extend_from_slice(&data);
    out
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(repo().join("tests/corpus").join(rel)).unwrap()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// `plain/`: the picked files as extracted; `packed/`: the same bytes in containers.
fn corpus_dirs(dir: &Path) -> (PathBuf, PathBuf) {
    let (plain, packed) = (dir.join("plain"), dir.join("packed"));
    for rel in PICKED {
        write(&plain.join(rel.rsplit('/').next().unwrap()), &read(rel));
    }
    let [g0, g1, p0, p1, x0, x1, a0, a1] = PICKED.map(read);
    write(&packed.join("Common/shaders.szs"), &yaz0_store(&sarc(&[("shaders/colorShader.gsh", &g0), ("shaders/textureShader.gsh", &g1)])));
    write(&packed.join("pica.zip"), &zip(&[("a/alias_swizzle.shbin", &p0), ("b/carry.shbin", &p1)], zip::CompressionMethod::Deflated));
    write(&packed.join("xenos/ps.psu.gz"), &gzip(&x0));
    // Nested: a gzip inside a stored zip.
    write(&packed.join("bundle.zip"), &zip(&[("vs.vsu.gz", &gzip(&x1))], zip::CompressionMethod::Stored));
    write(&packed.join("flash/game.swf"), &swf_cws(&[&a0, &a1]));
    // The same AGAL again in an LZMA SWF, and a Xenos shader in xz: same keys (duplicates).
    write(&packed.join("flash/game-lzma.swf"), &swf_zws(&[&a0, &a1]));
    write(&packed.join("xenos/vs.vsu.xz"), &xz(&x1));
    // A Xenos shader in the base file of an unencrypted, basic-compressed XEX2.
    let mut head = b"MZ".to_vec();
    head.resize(0x100, 0x90);
    write(&packed.join("default.xex"), &xex2(&head, &x0, false));
    // 3DS: an LZ11-compressed DARC holding both PICA shaders (the zip's twins).
    write(&packed.join("romfs/shaders.arc.lz"), &lz11(&darc("shaders", &[("a.shbin", &p0), ("b.shbin", &p1)])));
    // A Xenos shader in the LZX-compressed base file of an unencrypted XEX2 (3 chunks, 2 blocks).
    write(&packed.join("lzx/default.xex"), &xex2_lzx(&lzx_base(&x1), 2));
    (plain, packed)
}

fn keys(r: &scan::ScanResult) -> BTreeSet<u64> {
    r.shaders.iter().map(|s| s.key).collect()
}

fn labels(r: &scan::ScanResult, root: &Path) -> BTreeSet<String> {
    r.shaders.iter().map(|s| s.label().strip_prefix(root).unwrap().display().to_string()).collect()
}

#[test]
fn packed_corpus_has_the_keys_and_members_of_the_extracted_files() {
    let dir = tmpdir("containers-scan");
    let (plain, packed) = corpus_dirs(&dir);
    let (a, b) = (scan::scan_dir(&plain), scan::scan_dir(&packed));
    assert!(a.errors.is_empty() && b.errors.is_empty(), "{:?}\n{:?}", a.errors, b.errors);
    assert_eq!(a.shaders.len() + 7, b.shaders.len(), "seven duplicates in ZWS, xz, XEX2 (basic and LZX) and LZ11");
    assert_eq!(keys(&a), keys(&b));
    // Eight files, distinct shaders (a GFD file holds a vertex and a pixel shader).
    assert!(keys(&a).len() >= 8 && keys(&a).len() == a.shaders.len(), "{:?}", a.shaders);
    let expected: BTreeSet<String> = [
        "Common/shaders.szs!shaders/colorShader.gsh",
        "Common/shaders.szs!shaders/textureShader.gsh",
        "pica.zip!a/alias_swizzle.shbin",
        "pica.zip!b/carry.shbin",
        "xenos/ps.psu.gz!",
        "bundle.zip!vs.vsu.gz!",
        "flash/game.swf!DefineBinaryData#1",
        "flash/game.swf!DefineBinaryData#2",
        "flash/game-lzma.swf!DefineBinaryData#1",
        "flash/game-lzma.swf!DefineBinaryData#2",
        "xenos/vs.vsu.xz!",
        "default.xex!basefile",
        "romfs/shaders.arc.lz!shaders/a.shbin",
        "romfs/shaders.arc.lz!shaders/b.shbin",
        "lzx/default.xex!basefile",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(labels(&b, &packed), expected);
    let in_xex = b.shaders.iter().find(|s| s.member == ["basefile"] && s.path.ends_with("packed/default.xex")).unwrap();
    assert_eq!(in_xex.offset, 0x300, "after the 0x100 data bytes and 0x200 zeros of the base file");
    let in_lzx = b.shaders.iter().find(|s| s.member == ["basefile"] && s.path.ends_with("lzx/default.xex")).unwrap();
    assert_eq!(in_lzx.offset, 0x10100, "after the 0x10100 bytes before it in the LZX base file");
    // Every shader's bytes, read back through its member chain, are the extracted file's.
    for s in &b.shaders {
        let bytes = scan::read_container(s).unwrap();
        let twin = a.shaders.iter().find(|t| t.key == s.key).unwrap();
        assert_eq!(bytes, scan::read_container(twin).unwrap(), "{}", s.label().display());
    }
    // The table, JSON and --list-containers name members with their container path.
    let table = scan::render_table(&b);
    assert!(table.contains("Common/shaders.szs!shaders/colorShader.gsh"), "{table}");
    let json = shrec::report::scan_to_json(&b).to_string();
    assert!(json.contains("pica.zip!a/alias_swizzle.shbin"), "{json}");
    let list = scan::render_containers(&b);
    for line in ["Common/shaders.szs  [yaz0]", "Common/shaders.szs  [sarc]  2 members", "bundle.zip!vs.vsu.gz  [gzip]  1 members"] {
        assert!(list.contains(line), "{line:?} missing from\n{list}");
    }
    assert!(list.contains("flash/game.swf  [swf-cws]  2 members") && list.contains("2 shaders"), "{list}");
    for line in ["romfs/shaders.arc.lz  [lz11]  1 members", "romfs/shaders.arc.lz  [darc]  2 members", "lzx/default.xex  [xex2]  1 members"] {
        assert!(list.contains(line), "{line:?} missing from\n{list}");
    }
}

#[test]
fn packed_corpus_builds_a_byte_identical_cache() {
    let dir = tmpdir("containers-build");
    let (plain, packed) = corpus_dirs(&dir);
    let build = |input: &Path, name: &str| {
        let out = dir.join(name).join("shader_cache.cpp");
        let mut o = BuildOptions::new(input, &out);
        // No incremental cache: both builds run DXC on what they read.
        o.cache_dir = None;
        let r = build::run(&o).expect("build runs");
        assert_eq!(shrec::report::exit_code(&r.report), 0, "{}", shrec::report::summary_table(&r.report));
        assert_eq!(r.report.totals().compiled, r.entries.len());
        assert!(r.entries.len() >= 8);
        let header = shrec::cache::cpp::header_path(&out);
        (std::fs::read(&out).unwrap(), std::fs::read(header).unwrap(), r.entries)
    };
    let (a_cpp, a_h, a_entries) = build(&plain, "plain-out");
    let (b_cpp, b_h, b_entries) = build(&packed, "packed-out");
    assert_eq!(a_entries.iter().map(|e| e.key).collect::<Vec<_>>(), b_entries.iter().map(|e| e.key).collect::<Vec<_>>());
    assert!(a_cpp == b_cpp, "cache .cpp differs ({} vs {} bytes)", a_cpp.len(), b_cpp.len());
    assert!(a_h == b_h, "cache header differs");
}

// ---- caps and corruption ----

fn scan_one(name: &str, bytes: &[u8]) -> scan::FileScan {
    scan_buffer(Path::new(name), bytes)
}

fn one_error(f: &scan::FileScan) -> String {
    assert_eq!(f.errors.len(), 1, "{:?}", f.errors);
    f.errors[0].to_string()
}

#[test]
fn member_size_cap_is_checked_before_allocating() {
    // A Yaz0 header claiming 2 GiB; the ratio cap fires first on a tiny file, so make the
    // claim plausible for the ratio (a 300 MiB claim from a 1 MiB stream of literals).
    let mut y = b"Yaz0".to_vec();
    y.extend_from_slice(&((limits::MAX_MEMBER_BYTES + 1) as u32).to_be_bytes());
    y.extend_from_slice(&[0; 8]);
    y.resize(1 << 20, 0xFF);
    let e = one_error(&scan_one("big.szs", &y));
    assert!(e.starts_with("big.szs: yaz0: resource cap") && e.contains("limit per member"), "{e}");
}

#[test]
fn ratio_cap_stops_a_gzip_bomb() {
    let bomb = gzip(&vec![0u8; 4 << 20]);
    let f = scan_one("bomb.gz", &bomb);
    let e = one_error(&f);
    assert!(e.starts_with("bomb.gz: gzip: resource cap") && e.contains(&format!("ratio over the limit of {}", limits::MAX_RATIO)), "{e}");
    // The same bomb as one member of a zip, next to a good member: one error naming the
    // member, and the good member is still scanned.
    let shader = read(PICKED[2]);
    let z = zip(&[("bomb.bin", &vec![0u8; 4 << 20]), ("ok.shbin", &shader)], zip::CompressionMethod::Deflated);
    let f = scan_one("game.zip", &z);
    let e = one_error(&f);
    assert!(e.starts_with("game.zip!bomb.bin: zip member: resource cap") && e.contains("ratio"), "{e}");
    assert_eq!(f.shaders.len(), 1);
}

#[test]
fn archive_total_cap_counts_every_member() {
    // Members of 200 MiB (under the per-member and ratio caps) until the 1 GiB total (which
    // also counts the zip members' own bytes, every level together) is passed.
    let mut pattern = Vec::with_capacity(200 << 20);
    let mut x = 0x1234_5678u32;
    while pattern.len() < 200 << 20 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        // Mostly zeros with some noise: compresses well, but far under the ratio cap.
        pattern.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, (x & 0x0F) as u8]);
    }
    let member = gzip(&pattern);
    drop(pattern);
    let names: Vec<String> = (0..6).map(|i| format!("m{i}.gz")).collect();
    let z = zip(&names.iter().map(|n| (n.as_str(), member.as_slice())).collect::<Vec<_>>(), zip::CompressionMethod::Stored);
    let f = scan_one("huge.zip", &z);
    assert!(!f.errors.is_empty());
    for (i, e) in f.errors.iter().enumerate() {
        let e = e.to_string();
        // The first four (800 MiB and their compressed bytes) fit; each later one is refused.
        let n = 6 - f.errors.len() + i;
        assert!(n >= 4 && e.starts_with(&format!("huge.zip!m{n}.gz: gzip: resource cap")) && e.contains("limit per archive"), "{e}");
    }
}

#[test]
fn nesting_cap_names_the_depth() {
    let mut data = read(PICKED[2]);
    for _ in 0..=limits::MAX_CONTAINER_DEPTH {
        data = gzip(&data);
    }
    let f = scan_one("deep.gz", &data);
    let e = one_error(&f);
    assert!(e.contains(&format!("nest more than {} deep", limits::MAX_CONTAINER_DEPTH)), "{e}");
}

#[test]
fn member_count_cap() {
    let blobs: Vec<&[u8]> = vec![&[]; limits::MAX_MEMBERS + 1];
    let e = one_error(&scan_one("many.swf", &swf_cws(&blobs)));
    assert!(e.starts_with("many.swf: swf-cws: resource cap") && e.contains(&format!("exceed the limit of {}", limits::MAX_MEMBERS)), "{e}");
}

#[test]
fn corrupt_members_are_one_error_each_and_the_batch_goes_on() {
    let (g0, g1) = (read(PICKED[0]), read(PICKED[1]));
    // A SARC whose second member's range points past the end, Yaz0-compressed.
    let mut s = sarc(&[("a.gsh", &g0), ("b.gsh", &g1)]);
    let second_node_end = 0x14 + 0x0C + 16 + 12;
    s[second_node_end..second_node_end + 4].copy_from_slice(&0x00FF_FFFFu32.to_be_bytes());
    let f = scan_one("bad.szs", &yaz0_store(&s));
    let e = one_error(&f);
    assert!(e.contains("bad.szs!") && e.contains("sarc member: corrupt SARC: data"), "{e}");
    // The other member's shaders are still found.
    let broken = f.errors[0].path.display().to_string();
    assert!(!f.shaders.is_empty() && f.shaders.iter().all(|s| s.label().display().to_string() != broken), "{:?}", f.shaders);

    // Truncated Yaz0: one error naming the stream and how far it got.
    let y = yaz0_store(&g0);
    let e = one_error(&scan_one("cut.szs", &y[..y.len() / 2]));
    assert!(e.starts_with("cut.szs (at 0x") && e.contains("): yaz0: truncated Yaz0 stream"), "{e}");

    // Truncated gzip, truncated SWF.
    let e = one_error(&scan_one("cut.gz", &gzip(&g0)[..40]));
    assert!(e.starts_with("cut.gz: gzip: corrupt stream"), "{e}");
    let w = swf_cws(&[&g0]);
    let f = scan_one("cut.swf", &w[..w.len() - 10]);
    assert!(one_error(&f).starts_with("cut.swf: swf-cws: corrupt stream"), "{:?}", f.errors);

    // Every prefix and many byte flips of every container: no panic, and never a shader that
    // the intact container does not have.
    let x = read(PICKED[4]);
    let samples = [
        yaz0_store(&sarc(&[("a.gsh", &g0), ("b.gsh", &g1)])),
        zip(&[("a", &g0), ("b", &x)], zip::CompressionMethod::Deflated),
        gzip(&x),
        swf_cws(&[&g0, &g1]),
        swf_zws(&[&g0, &g1]),
        xz(&x),
        xex2(&g0, &x, false),
        lz11(&darc("d", &[("a.gsh", &g0), ("b.gsh", &g1)])),
        lz10_store(&g0),
        xex2_lzx(&lzx_base(&x), 2),
    ];
    for sample in &samples {
        let good = keys_of(&scan_one("s", sample));
        for cut in (0..sample.len()).step_by(7) {
            assert!(keys_of(&scan_one("s", &sample[..cut])).is_subset(&good));
        }
        for (i, at) in (0..sample.len()).step_by(3).enumerate() {
            let mut m = sample.clone();
            m[at] ^= 1 << (i % 8);
            scan_one("s", &m);
        }
    }
}

fn keys_of(f: &scan::FileScan) -> BTreeSet<u64> {
    f.shaders.iter().map(|s| s.key).collect()
}

#[test]
fn unopened_containers_warn_when_no_shader_was_found() {
    let dir = tmpdir("containers-unopened");
    write(&dir.join("level.szs"), b"Yaz1 a Yaz1 stream shrec does not open");
    let r = scan::scan_dir(&dir);
    assert!(r.shaders.is_empty() && r.errors.is_empty());
    let table = scan::render_table(&r);
    assert!(table.contains("warning: no shader found, but 1 container(s) could not be opened") && table.contains("level.szs"), "{table}");
    // `shrec build` says the same instead of a silent "0 shaders".
    let mut o = BuildOptions::new(&dir, dir.join("out/shader_cache.cpp"));
    o.cache_dir = None;
    let built = build::run(&o).expect("build runs");
    assert_eq!(built.report.outcomes.len(), 0);
    // Without --allow-empty the empty input is an error that carries the reason (exit code 2) ...
    let e = built.report.empty_input.clone().expect("an empty input is an error");
    assert!(e.contains("could not be opened") && e.contains("level.szs"), "{e}");
    assert_eq!(shrec::report::exit_code(&built.report), 2);
    // ... and with it, a warning.
    o.allow_empty = true;
    let built = build::run(&o).expect("build runs");
    let w = built.scan_warning.expect("a warning");
    assert!(w.contains("could not be opened") && w.contains("level.szs"), "{w}");
    assert_eq!(shrec::report::exit_code(&built.report), 0);
}

#[test]
fn darc_members_are_scanned_with_their_paths() {
    let (p0, p1) = (read(PICKED[2]), read(PICKED[3]));
    let a = darc("shaders", &[("a.shbin", &p0), ("b.shbin", &p1)]);
    let f = scan_one("layout.darc", &a);
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    let expected: BTreeSet<u64> = keys_of(&scan_one("a.shbin", &p0)).union(&keys_of(&scan_one("b.shbin", &p1))).copied().collect();
    assert!(!expected.is_empty());
    assert_eq!(keys_of(&f), expected);
    let labels: BTreeSet<String> = f.shaders.iter().map(|s| s.label().display().to_string()).collect();
    assert!(labels.iter().any(|l| l.starts_with("layout.darc!shaders/a.shbin")), "{labels:?}");
    assert!(labels.iter().any(|l| l.starts_with("layout.darc!shaders/b.shbin")), "{labels:?}");

    // Second member's data past the end: one error naming it; the first is still scanned.
    let mut bad = a.clone();
    let size_field = 0x1C + 12 * 4 + 8;
    bad[size_field..size_field + 4].copy_from_slice(&0x00FF_FFFFu32.to_le_bytes());
    let f = scan_one("bad.darc", &bad);
    let e = one_error(&f);
    assert!(e.contains("bad.darc!shaders/b.shbin") && e.contains("darc member: corrupt DARC: data"), "{e}");
    assert_eq!(keys_of(&f), keys_of(&scan_one("a.shbin", &p0)));

    // Every prefix and byte flip: no panic, no shader the intact archive lacks.
    let good = keys_of(&scan_one("s", &a));
    for cut in (0..a.len()).step_by(5) {
        assert!(keys_of(&scan_one("s", &a[..cut])).is_subset(&good));
    }
    for (i, at) in (0..a.len()).step_by(3).enumerate() {
        let mut m = a.clone();
        m[at] ^= 1 << (i % 8);
        scan_one("s", &m);
    }
}

#[test]
fn encrypted_xex_says_to_decrypt_it_first() {
    let x = xex2(b"MZ", &read(PICKED[4]), true);
    let e = one_error(&scan_one("default.xex", &x));
    assert!(e.contains("default.xex (at 0x24): xex2: encrypted XEX2") && e.contains("decrypted first") && e.contains("xextool"), "{e}");
}

#[test]
fn unchanged_archives_are_not_read_again() {
    let dir = tmpdir("containers-incremental");
    let (_, packed) = corpus_dirs(&dir);
    write(&packed.join("cut.szs"), &yaz0_store(&read(PICKED[0]))[..100]);
    let index = dir.join("index.json");
    let (first, read_first) = scan::scan_dir_incremental(&packed, &index);
    let (second, read_second) = scan::scan_dir_incremental(&packed, &index);
    assert_eq!((read_first, read_second), (11, 0));
    // Member chains, errors inside containers and the container list come back from the index.
    assert_eq!(first, second);
    assert_eq!(second.errors.len(), 1);
    assert!(second.errors[0].to_string().contains("cut.szs (at 0x"), "{:?}", second.errors);
    assert_eq!(second.containers.len(), 13);
    for s in &second.shaders {
        scan::read_container(s).unwrap();
    }
}

#[test]
fn control_characters_in_member_names_are_escaped() {
    let z = zip(&[("evil\nerror: fake.gsh", &read(PICKED[0]))], zip::CompressionMethod::Stored);
    let f = scan_one("x.zip", &z);
    assert!(!f.shaders.is_empty());
    for s in &f.shaders {
        assert_eq!(s.label().display().to_string(), "x.zip!evil\\nerror: fake.gsh");
        // The escaped name still finds the member.
        assert_eq!(shrec::scan::containers::extract(&z, &s.member).unwrap(), read(PICKED[0]));
    }
}

/// Member names that used to show the same: a real newline and the two characters `\n` (zip);
/// two bytes that are not UTF-8, both shown as U+FFFD (SARC); one name stored twice (SARC). Each
/// member gets a label of its own, and the build reads each one back: the second of each pair
/// used to fail with "file changed since the scan" on every build.
#[test]
fn members_whose_names_looked_the_same_each_build() {
    let dir = tmpdir("containers-same-label");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let [g0, g1, p0, p1, x0, x1, ..] = PICKED.map(read);
    write(&input.join("a.zip"), &zip(&[("m\nx.gsh", &g0), ("m\\nx.gsh", &g1)], zip::CompressionMethod::Stored));
    let mut s = sarc(&[("sA.shbin", &p0), ("sB.shbin", &p1)]);
    for (from, to) in [(b"sA.shbin", 0xFF), (b"sB.shbin", 0xFE)] {
        let at = s.windows(8).position(|w| w == from).unwrap();
        s[at + 1] = to;
    }
    write(&input.join("b.sarc"), &s);
    write(&input.join("c.sarc"), &sarc(&[("dup.psu", &x0), ("dup.psu", &x1)]));
    let r = scan::scan_dir(&input);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let labels: BTreeSet<String> = r.shaders.iter().map(|s| s.label().display().to_string()).collect();
    for want in ["a.zip!m\\nx.gsh", "a.zip!m\\\\nx.gsh", "b.sarc!s\\xFF.shbin", "b.sarc!s\\xFE.shbin", "c.sarc!dup.psu", "c.sarc!dup.psu\\#2"] {
        assert!(labels.iter().any(|l| l.ends_with(want)), "no label ends with {want}: {labels:?}");
    }
    for s in &r.shaders {
        let file = std::fs::read(&s.path).unwrap();
        let member = shrec::scan::containers::extract(&file, &s.member).unwrap();
        assert!(scan_one("m", &member).shaders.iter().any(|m| m.key == s.key), "{} reads back another member", s.label().display());
    }
    let mut o = BuildOptions::new(&input, dir.join("out/shader_cache.cpp"));
    o.cache_dir = None;
    let b = build::run(&o).expect("build runs");
    assert_eq!(shrec::report::exit_code(&b.report), 0, "{}", shrec::report::summary_table(&b.report));
    assert_eq!(b.entries.len(), keys(&r).len());
    assert_eq!(b.report.totals().compiled, b.entries.len());
}

/// A build opens each archive once for all of its shaders (it used to extract the archive again
/// for every member holding a shader: 800 members, 800 decompressions of the whole `.zip.gz`).
/// Seen from outside: once the first shader of an archive has been read, the other shaders'
/// bytes come from that one reading, even after the file on disk was replaced.
#[test]
fn a_build_reads_each_archive_once() {
    let dir = tmpdir("containers-read-once");
    let [g0, g1, p0, p1, ..] = PICKED.map(read);
    let members: Vec<(String, &[u8])> =
        (0..40).map(|i| (format!("m{i:02}.{}", if i % 2 == 0 { "gsh" } else { "shbin" }), if i % 4 < 2 { &g0[..] } else { &p0[..] })).collect();
    let mut members: Vec<(&str, &[u8])> = members.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    members.push(("other.gsh", &g1));
    members.push(("other.shbin", &p1));
    let archive = dir.join("a.zip.gz");
    write(&archive, &gzip(&zip(&members, zip::CompressionMethod::Deflated)));
    let r = scan::scan_dir(&dir);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let reader = scan::MemberReader::default();
    let all: Vec<&scan::FoundShader> = r.shaders.iter().collect();
    reader.expect(&all);
    let first = scan::read_container_with(all[0], &reader).unwrap();
    std::fs::write(&archive, b"replaced since the scan").unwrap();
    assert!(!first.is_empty());
    assert!(scan::read_container(all[0]).is_err(), "read on its own, the replaced file fails");
    for s in &all[1..] {
        scan::read_container_with(s, &reader).unwrap_or_else(|e| panic!("{}: read the archive again: {e}", s.label().display()));
    }
}

/// xz is decompressed as a stream, the caps checked as bytes come out: an xz of 600 MiB of
/// zeros stops at the member cap (256 MiB) with the scan's address space limited to 1 GiB
/// (lzma-rs decoded each block whole into memory first, and ran out of it here).
#[test]
fn an_xz_bomb_stops_at_the_cap_in_bounded_memory() {
    use std::os::unix::process::CommandExt;
    let dir = tmpdir("containers-xz-bomb");
    let mut xz = Vec::new();
    {
        let mut w = lzma_rust2::XzWriter::new(&mut xz, lzma_rust2::XzOptions::with_preset(1)).unwrap();
        std::io::copy(&mut std::io::Read::take(std::io::repeat(0), 600 << 20), &mut w).unwrap();
        w.finish().unwrap();
    }
    write(&dir.join("zeros.xz"), &xz);
    write(&dir.join("inside.zip"), &zip(&[("zeros.xz", &xz)], zip::CompressionMethod::Stored));
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_shrec"));
    c.arg("scan").arg(&dir);
    // SAFETY: the closure only calls setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let l = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
            if libc::setrlimit(libc::RLIMIT_AS, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.code().is_some(), "killed by a signal: {}", String::from_utf8_lossy(&o.stderr));
    let caps = stdout.lines().filter(|l| l.contains("resource cap")).count();
    assert_eq!(caps, 2, "the file and the zip member each stop at a cap:\n{stdout}");
}

// ---- Nintendo LZ10 / LZ11 ----

/// The shaders `bytes` holds as a plain file.
fn plain_keys(bytes: &[u8]) -> BTreeSet<u64> {
    keys_of(&scan_one("plain", bytes))
}

#[test]
fn lz10_and_lz11_streams_are_opened_with_the_keys_of_their_contents() {
    let g0 = read(PICKED[0]);
    for (name, packed) in [("lz11", lz11(&g0)), ("lz10", lz10_store(&g0))] {
        let f = scan_one("shader.lz", &packed);
        assert!(f.errors.is_empty(), "{name}: {:?}", f.errors);
        assert_eq!(keys_of(&f), plain_keys(&g0), "{name}");
        assert!(f.shaders.iter().all(|s| s.label().display().to_string() == "shader.lz!"), "{name}: {:?}", f.shaders);
        assert_eq!(f.containers.len(), 1);
        assert_eq!(f.containers[0].format, name);
        assert_eq!(shrec::scan::containers::extract(&packed, &f.shaders[0].member).unwrap(), g0);
    }
    // The LZ11 encoder's references (all three forms) really are used on this data.
    assert!(lz11(&g0).len() < g0.len() / 2, "{} of {}", lz11(&g0).len(), g0.len());
    // The DSDecmp 32-bit size form: a 24-bit size of 0, then the size in the next 4 bytes.
    let short = lz11(&g0);
    let mut long = vec![0x11, 0, 0, 0];
    long.extend_from_slice(&(g0.len() as u32).to_le_bytes());
    long.extend_from_slice(&short[4..]);
    let f = scan_one("long.lz", &long);
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(keys_of(&f), plain_keys(&g0));
}

#[test]
fn lz_streams_without_shaders_and_xenos_files_stay_plain_bytes() {
    // A valid LZ11 stream of text: nothing for shrec inside, so not opened, no error.
    let text = lz11(&b"no shader in here, just text; ".repeat(40));
    let f = scan_one("text.lz", &text);
    assert!(f.errors.is_empty() && f.containers.is_empty() && f.shaders.is_empty(), "{:?}", f.errors);
    // Every Xenos container starts with 0x10 (LZ10's type byte): still scanned as itself.
    for rel in [PICKED[4], PICKED[5]] {
        let x = read(rel);
        assert_eq!(x[0], 0x10);
        let f = scan_one("x.vsu", &x);
        assert!(f.errors.is_empty() && f.containers.is_empty() && !f.shaders.is_empty(), "{rel}: {:?}", f.errors);
    }
}

#[test]
fn lz_corruption_and_caps_are_one_error_each() {
    let g0 = read(PICKED[0]);
    let mut data = g0.clone();
    data.extend_from_slice(&[0; 0x400]);
    data.extend_from_slice(b"tail: literals after the run 0123456789");
    let s = lz11(&data);

    // Truncated input: the file ends inside the stream.
    let e = one_error(&scan_one("cut.lz", &s[..s.len() - 44]));
    assert!(e.starts_with("cut.lz (at 0x") && e.contains("): lz11: truncated LZ11 stream: "), "{e}");
    assert!(e.contains(&format!(" of {} bytes decoded", data.len())), "{e}");

    // Bad lengths: a declared size past the stream's end, and one that ends the stream early.
    let mut long = s.clone();
    long[1..4].copy_from_slice(&(data.len() as u32 + 0x100).to_le_bytes()[..3]);
    let e = one_error(&scan_one("long.lz", &long));
    // (The zero padding after the stream decodes as literals before the input ends.)
    assert!(e.contains("lz11: truncated LZ11 stream: ") && e.contains(&format!(" of {} bytes decoded", data.len() + 0x100)), "{e}");
    let mut short = s.clone();
    let declared = g0.len() + 0x100;
    short[1..4].copy_from_slice(&(declared as u32).to_le_bytes()[..3]);
    let e = one_error(&scan_one("short.lz", &short));
    assert!(
        e.contains(&format!("lz11: corrupt LZ11 stream: the declared {declared} bytes end here")) && e.contains("wrong size in the header?"),
        "{e}"
    );

    // A back reference before the start of the output (LZ10, literal groups of 9 bytes): the
    // first group after the shader becomes a reference 0x1000 bytes back.
    let mut lz10 = lz10_store(&data);
    let group = 4 + 9 * g0.len().div_ceil(8);
    lz10[group] = 0x80;
    lz10[group + 1..group + 3].copy_from_slice(&[0xFF, 0xFF]);
    let e = one_error(&scan_one("ref.lz", &lz10));
    let out = g0.len().div_ceil(8) * 8;
    assert!(
        e.starts_with(&format!("ref.lz (at 0x{:X}): lz10: corrupt LZ10 stream: back reference 4096 bytes before output position {out}", group + 1)),
        "{e}"
    );

    // Every error above still scans the file's raw bytes; none of them holds a shader as is.
    assert!(scan_one("cut.lz", &s[..s.len() - 44]).shaders.is_empty());

    // Ratio bomb: the shader as literals, then 128 references of 0x10110 bytes (LZ11's longest)
    // one byte back: 8.4 MB from 2 KB.
    let mut bomb = vec![0x11];
    let size = g0.len() + 128 * 0x10110;
    bomb.extend_from_slice(&(size as u32).to_le_bytes()[..3]);
    for chunk in g0.chunks(8) {
        bomb.push(0);
        bomb.extend_from_slice(chunk);
    }
    // 16 groups: a flag byte of eight references, each 1F FF F0 00.
    let group = [vec![0xFF], [0x1F, 0xFF, 0xF0, 0x00].repeat(8)].concat();
    bomb.extend_from_slice(&group.repeat(16));
    let e = one_error(&scan_one("bomb.lz", &bomb));
    assert!(
        e.starts_with("bomb.lz: lz11: resource cap")
            && e.contains(&format!("member decompresses {size} bytes from {} (ratio over the limit of {})", bomb.len(), limits::MAX_RATIO)),
        "{e}"
    );

    // Member cap: the 32-bit size form claiming more than MAX_MEMBER_BYTES, from enough input
    // (literals) that the ratio allows it; checked before anything is allocated.
    let mut big = vec![0x11, 0, 0, 0];
    big.extend_from_slice(&((limits::MAX_MEMBER_BYTES + 1) as u32).to_le_bytes());
    for chunk in g0.chunks(8).chain(std::iter::repeat_n(&[0x5Au8; 8][..], 80_000)) {
        big.push(0);
        big.extend_from_slice(chunk);
    }
    let e = one_error(&scan_one("big.lz", &big));
    assert!(e.starts_with("big.lz: lz11: resource cap") && e.contains("limit per member"), "{e}");
}

// ---- XEX2 with an LZX-compressed base file ----

#[test]
fn lzx_xex_corruption_and_caps_are_one_error_each() {
    let x = read(PICKED[4]);
    let base = lzx_base(&x);
    let good = xex2_lzx(&base, 2);
    let f = scan_one("default.xex", &good);
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(keys_of(&f), plain_keys(&x));
    // One block or one per chunk: the same base file.
    for per_block in [1, 3] {
        let f = scan_one("default.xex", &xex2_lzx(&base, per_block));
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        assert_eq!(keys_of(&f), plain_keys(&x));
    }

    // A changed byte in the second block: its SHA-1 (in the first block's header) differs.
    let pe = 0x200;
    let first_block = u32::from_be_bytes(good[0x2C..0x30].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    bad[pe + first_block + 100] ^= 1;
    let e = one_error(&scan_one("bad.xex", &bad));
    assert_eq!(
        e,
        format!(
            "bad.xex!basefile (at 0x{:X}): xex2 member: corrupt XEX2: LZX block 1 does not match its SHA-1 (in the previous block header)",
            pe + first_block
        )
    );

    // Truncated: the second block does not fit.
    let e = one_error(&scan_one("cut.xex", &good[..good.len() - 10]));
    assert!(e.contains("xex2 member: corrupt XEX2: LZX block 1 of 0x") && e.contains("does not fit the PE data"), "{e}");

    // A chunk lzxd rejects (block type 7), behind a valid hash.
    let junk = vec![0xFFu8; 64];
    let e = one_error(&scan_one("junk.xex", &xex2_lzx_chunks(&[junk], 0x8000, 1)));
    assert!(e.contains("xex2 member: corrupt XEX2: LZX chunk 0: block type 7 is invalid"), "{e}");

    // Bad lengths: an image size the chunks do not reach, and one they pass.
    let chunks: Vec<Vec<u8>> = base.chunks(0x8000).enumerate().map(|(i, c)| lzx_stored_chunk(c, i == 0)).collect();
    let e = one_error(&scan_one("long.xex", &xex2_lzx_chunks(&chunks[..2], base.len() as u32, 2)));
    assert!(e.contains(&format!("truncated XEX2: the LZX blocks end after 0x10000 of 0x{:X} image bytes", base.len())), "{e}");
    // (A last chunk asked for more than it holds is lzxd's error.)
    let e = one_error(&scan_one("long.xex", &xex2_lzx_chunks(&chunks, base.len() as u32 + 0x10, 2)));
    assert!(e.contains("corrupt XEX2: LZX chunk 2: reached end of chunk without fully decoding it"), "{e}");
    let e = one_error(&scan_one("short.xex", &xex2_lzx_chunks(&chunks, 0x10000, 2)));
    assert!(e.contains("corrupt XEX2: LZX chunk 2 is past the image size of 0x10000 bytes"), "{e}");

    // A window size that is no power of two.
    let mut w = good.clone();
    w[0x28..0x2C].copy_from_slice(&0x9000u32.to_be_bytes());
    let e = one_error(&scan_one("window.xex", &w));
    assert_eq!(e, "window.xex!basefile (at 0x28): xex2 member: corrupt XEX2: LZX window size 0x9000 is not a power of two from 32 KiB to 32 MiB");

    // Caps on the declared image size, before anything is allocated: the ratio (64 MiB from
    // the 64 KiB of PE data) and the member size.
    let mut r = good.clone();
    r[0x54..0x58].copy_from_slice(&(64u32 << 20).to_be_bytes());
    let e = one_error(&scan_one("ratio.xex", &r));
    assert!(e.contains("xex2 member: resource cap: member decompresses 67108864 bytes from") && e.contains("ratio over the limit"), "{e}");
    r[0x54..0x58].copy_from_slice(&((limits::MAX_MEMBER_BYTES + 1) as u32).to_be_bytes());
    let e = one_error(&scan_one("huge.xex", &r));
    assert!(e.contains("xex2 member: resource cap") && e.contains("limit per member"), "{e}");
}
