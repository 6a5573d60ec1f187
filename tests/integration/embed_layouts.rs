//! The per-shader layout (`--layout per-shader`, `--zstd-dict`) from the runtime's side, and the
//! `--summary` comparison: every layout gives the same bytes back through `shrec-runtime`, and
//! the default layout's files do not mention the per-shader extras.

use crate::common;

use common::tmpdir;
use shrec::cache::{self, CacheEntry, CacheLayout, SpirvEncoding, WriteOptions};
use shrec::{Family, Stage};
use shrec_runtime::{Backend, Slice};

/// Entries that look like shaders: a shared prologue (what a dictionary learns) plus noise.
fn entries(n: usize) -> Vec<CacheEntry> {
    let mut x = 0x2545F4914F6CDD1Du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let prologue: Vec<u8> = (0..600u32).map(|i| (i * 7 % 251) as u8).collect();
    (0..n)
        .map(|i| {
            let mut blob = prologue.clone();
            let extra = 200 + (rnd() % 800) as usize;
            blob.extend((0..extra).map(|_| b"ABCDEFGH"[(rnd() % 8) as usize]));
            let mut spirv = blob.clone();
            spirv.truncate(spirv.len() / 4 * 4);
            CacheEntry {
                key: rnd(),
                family: Family::Agal,
                stage: if i % 2 == 0 { Stage::Vertex } else { Stage::Pixel },
                dxil: (i % 5 != 3).then_some(blob),
                spirv: Some(spirv),
                spec_constants_mask: 0,
                meta: vec![i as u32],
            }
        })
        .collect()
}

fn opts(layout: CacheLayout, dict: Option<usize>) -> WriteOptions {
    WriteOptions { zstd_level: 19, spirv_encoding: SpirvEncoding::Raw, layout, zstd_dict: dict, ..WriteOptions::default() }
}

/// `(key, dxil (offset, size, frame offset, frame size), spirv (...))` parsed from the .rs module.
fn rust_rows(text: &str) -> Vec<(u64, [u32; 4], [u32; 4])> {
    let num = |line: &str, field: &str| -> u64 {
        let at = line.find(&format!("{field}: ")).unwrap_or_else(|| panic!("{field} in {line}")) + field.len() + 2;
        let v: String = line[at..].chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None => v.parse().unwrap(),
        }
    };
    text.lines()
        .filter(|l| l.trim_start().starts_with("Entry { key:"))
        .map(|l| {
            let f = |n| num(l, n) as u32;
            (
                num(l, "key"),
                [f("dxil_offset"), f("dxil_size"), f("dxil_frame_offset"), f("dxil_frame_size")],
                [f("spirv_offset"), f("spirv_size"), f("spirv_frame_offset"), f("spirv_frame_size")],
            )
        })
        .collect()
}

fn dict_of(text: &str, name: &str) -> Vec<u8> {
    let prefix = format!("pub static {name}: &[u8] = &[");
    let start = text.find(&prefix).unwrap() + prefix.len();
    let end = start + text[start..].find("];").unwrap();
    text[start..end].split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect()
}

#[test]
fn per_shader_frames_decode_to_the_same_bytes_lazily() {
    let dir = tmpdir("embed-layouts");
    let es = entries(40);
    let mut sorted = es.clone();
    sorted.sort_by_key(|e| e.key);

    let single_out = dir.join("single.rs");
    let single = cache::rust::write(&single_out, &es, &opts(CacheLayout::Single, None)).unwrap();
    let single_text = std::fs::read_to_string(&single_out).unwrap();
    assert!(!single_text.contains("LAYOUT") && !single_text.contains("frame_offset"), "single layout output changed");
    let single_dxil = std::fs::read(dir.join("single.dxil.zst")).unwrap();
    let whole = zstd::decode_all(&single_dxil[..]).unwrap();

    for dict in [None, Some(2048)] {
        let name = if dict.is_some() { "dict" } else { "plain" };
        let out = dir.join(format!("{name}.rs"));
        let sizes = cache::rust::write(&out, &es, &opts(CacheLayout::PerShader, dict)).unwrap();
        assert_eq!(sizes.layout, CacheLayout::PerShader);
        assert_eq!((sizes.dxil.raw, sizes.spirv.raw), (single.dxil.raw, single.spirv.raw));
        assert_eq!(sizes.dxil_dict > 0, dict.is_some(), "{sizes:?}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("pub const LAYOUT: u32 = 1;"));
        let dxil_blob = std::fs::read(dir.join(format!("{name}.dxil.zst"))).unwrap();
        let spirv_blob = std::fs::read(dir.join(format!("{name}.spirv.zst"))).unwrap();
        let (dxil_dict, spirv_dict) = (dict_of(&text, "DXIL_DICT"), dict_of(&text, "SPIRV_DICT"));
        assert_eq!(dxil_dict.len() as u64, sizes.dxil_dict);
        if dict.is_none() {
            // Without a dictionary the concatenated frames decompress to the single layout's blob.
            assert_eq!(zstd::decode_all(&dxil_blob[..]).unwrap(), whole);
        }
        let dxil = Backend::per_shader(&dxil_blob, sizes.dxil.raw as usize, &dxil_dict);
        let spirv = Backend::per_shader(&spirv_blob, sizes.spirv.raw as usize, &spirv_dict);
        let rows = rust_rows(&text);
        assert_eq!(rows.len(), sorted.len());
        for (e, (key, d, s)) in sorted.iter().zip(&rows) {
            assert_eq!(e.key, *key);
            let got = dxil.get(Slice::per_shader(d[0], d[1], d[2], d[3])).unwrap();
            assert_eq!(&*got, e.dxil.as_deref().unwrap_or(&[]), "{key:016X} DXIL ({name})");
            assert_eq!(d[3] == 0, e.dxil.is_none());
            let got = spirv.get(Slice::per_shader(s[0], s[1], s[2], s[3])).unwrap();
            assert_eq!(&*got, e.spirv.as_deref().unwrap(), "{key:016X} SPIR-V ({name})");
            // The single layout's offsets are the same.
            assert_eq!(&whole[d[0] as usize..(d[0] + d[1]) as usize], e.dxil.as_deref().unwrap_or(&[]));
        }
        assert!(!dxil.is_fully_decompressed(), "per-shader lookups decompress only their frames");
        assert_eq!(dxil.decompress_all().unwrap(), &whole[..]);
    }
}

#[test]
fn summary_comparison_matches_what_the_writers_produce() {
    let dir = tmpdir("embed-summary");
    let es = entries(40);
    let c = cache::compare_layouts(&dir.join("x.cpp"), &es, &opts(CacheLayout::Single, Some(2048))).unwrap();
    let single = cache::cpp::write(&dir.join("a.cpp"), &es, &opts(CacheLayout::Single, None)).unwrap();
    let per = cache::cpp::write(&dir.join("b.cpp"), &es, &opts(CacheLayout::PerShader, None)).unwrap();
    let dict = cache::cpp::write(&dir.join("c.cpp"), &es, &opts(CacheLayout::PerShader, Some(2048))).unwrap();
    assert_eq!((c.single.dxil, c.single.spirv), (single.dxil.compressed, single.spirv.compressed));
    assert_eq!((c.per_shader.dxil, c.per_shader.spirv), (per.dxil.compressed, per.spirv.compressed));
    assert_eq!(
        (c.per_shader_dict.dxil, c.per_shader_dict.spirv, c.per_shader_dict.dxil_dict, c.per_shader_dict.spirv_dict),
        (dict.dxil.compressed, dict.spirv.compressed, dict.dxil_dict, dict.spirv_dict)
    );
    assert!(c.per_shader.total() > c.single.total(), "{c}");
    let text = c.to_string();
    assert!(text.contains("single frame") && text.contains("per-shader + 2 KiB dict"), "{text}");

    // The headers: the default is exactly the fixed header; per-shader appends its section.
    assert_eq!(std::fs::read_to_string(dir.join("a.h")).unwrap(), cache::cpp::HEADER);
    let b = std::fs::read_to_string(dir.join("b.h")).unwrap();
    assert!(b.starts_with(cache::cpp::HEADER) && b.contains("#define SHREC_CACHE_PER_SHADER_FRAMES 1"));
    assert!(!std::fs::read_to_string(dir.join("a.cpp")).unwrap().contains("g_shrecEntryFrames"));
    assert!(std::fs::read_to_string(dir.join("c.cpp")).unwrap().contains("const size_t g_shrecDxilDictSize = "));
}

#[test]
fn cli_rejects_a_dictionary_without_per_shader_frames() {
    let dir = tmpdir("embed-cli");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shrec"))
        .args(["build", "tests/corpus/agal", "--zstd-dict", "-o"])
        .arg(dir.join("c.cpp"))
        .current_dir(common::repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--zstd-dict needs --layout per-shader"));
}
