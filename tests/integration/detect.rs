//! Detection on synthetic buffers: containers embedded in random filler at odd and aligned
//! offsets, XenosRecomp's scan rule and its drift, truncated containers, degenerate Xenos
//! headers, garbage, overlapping candidates; plus GFD / SHARCFB entries built from parts.

use shrec::detect::{detect, Candidate, ContainerKind};
use shrec::formats::container_fault::ContainerFault;
use shrec::formats::gx2::error::Gx2Error;
use shrec::formats::pica::error::PicaError;
use shrec::formats::{entries, ShaderError, Stage};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// A corpus file, from `tests/corpus` or (for the files shrec rejects) `tests/corpus-invalid`.
fn corpus(rel: &str) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = root.join("tests/corpus").join(rel);
    let p = if p.exists() { p } else { root.join("tests/corpus-invalid").join(rel) };
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const XENOS_PS: &str = "xenos/Free60Project+libxenon/devkitxenon/examples/xenon/graphics/cube/files/ps.psu";
const XENOS_VS: &str = "xenos/Free60Project+libxenon/devkitxenon/examples/xenon/graphics/cube/files/vs.vsu";
const GSH: &str = "gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/colorShader.gsh";
const SHBIN_GS: &str = "pica/devkitPro+3ds-examples/graphics/gpu/geoshader/source/program.shbin";
const SHBIN_NIH: &str = "pica/neobrain+nihstro/examples/assembler/cube_lighting/data/test.shbin";

/// xorshift64*: deterministic filler without a rand dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn be(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn le(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// A synthetic Xenos container: header, a constant-table stub at 0x24, a shader header at 0x30
/// whose microcode is the whole physical part.
fn xenos(vertex: bool, physical: &[u8]) -> Vec<u8> {
    let vsize = 0x60u32;
    let mut v = Vec::new();
    for w in [0x102A_1100 | vertex as u32, vsize, physical.len() as u32, 0, 0x24, 0, 0x30, 0, 0] {
        be(&mut v, w);
    }
    v.resize(0x30, 0);
    be(&mut v, 0); // physicalOffset
    be(&mut v, physical.len() as u32); // microcode size
    v.resize(vsize as usize, 0);
    v.extend_from_slice(physical);
    v
}

/// A GFD file from (block type, data) pairs, plus the end-of-file block.
fn gfd(blocks: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut v = b"Gfx2".to_vec();
    for w in [0x20, 7, 1, 2, 0, 0, 0] {
        be(&mut v, w);
    }
    for (i, (ty, data)) in blocks.iter().chain(std::iter::once(&(1, Vec::new()))).enumerate() {
        v.extend_from_slice(b"BLK{");
        for w in [0x20, 1, 0, *ty, data.len() as u32, 0, i as u32] {
            be(&mut v, w);
        }
        v.extend_from_slice(data);
    }
    v
}

/// A zeroed big-endian GX2 struct of `size` bytes with the program size at `size_off`.
fn gx2_struct(size: usize, size_off: usize, program_len: usize) -> Vec<u8> {
    let mut s = vec![0u8; size];
    s[size_off..size_off + 4].copy_from_slice(&(program_len as u32).to_be_bytes());
    s
}

/// A minimal SHARCFB (little- or big-endian) with one binary per (type, GX2 struct size,
/// program-size field offset, program); the program pointer (struct size + 4) sits at
/// size_off + 4.
fn sharcfb(little: bool, shaders: &[(u32, usize, usize, &[u8])]) -> Vec<u8> {
    let w = |v: &mut Vec<u8>, x: u32| if little { le(v, x) } else { be(v, x) };
    let put = |v: &mut Vec<u8>, at: usize, x: u32| {
        let b = if little { x.to_le_bytes() } else { x.to_be_bytes() };
        v[at..at + 4].copy_from_slice(&b);
    };
    let mut f = if little { b"BAHS".to_vec() } else { b"SHAB".to_vec() };
    w(&mut f, 8);
    w(&mut f, 0);
    w(&mut f, little as u32);
    w(&mut f, 0);
    w(&mut f, 3);
    f.extend_from_slice(b"ab\0");
    let arr = f.len();
    w(&mut f, 0);
    w(&mut f, shaders.len() as u32);
    for &(ty, ssize, size_off, prog) in shaders {
        let entry = f.len();
        f.extend_from_slice(&[0; 16]);
        let data = f.len();
        f.resize(data + ssize + 4, 0);
        f.extend_from_slice(prog);
        put(&mut f, data + size_off, prog.len() as u32);
        put(&mut f, data + size_off + 4, (ssize + 4) as u32);
        let n = f.len();
        put(&mut f, entry, (n - entry) as u32);
        put(&mut f, entry + 4, ty);
        put(&mut f, entry + 12, (n - data) as u32);
    }
    let n = f.len();
    put(&mut f, arr, (n - arr) as u32);
    w(&mut f, 8); // empty program array
    w(&mut f, 0);
    let n = f.len();
    put(&mut f, 8, n as u32);
    f
}

fn kinds(c: &[Candidate]) -> Vec<(ContainerKind, usize, usize)> {
    c.iter().map(|c| (c.kind, c.offset, c.len)).collect()
}

fn keys(kind: ContainerKind, bytes: &[u8]) -> Vec<(Stage, u64)> {
    entries(kind, bytes).unwrap().into_iter().map(|e| (e.stage, e.key)).collect()
}

#[test]
fn embedded_at_odd_and_aligned_offsets() {
    let ps = corpus(XENOS_PS);
    let vs = corpus(XENOS_VS);
    let gsh = corpus(GSH);
    let shbin = corpus(SHBIN_GS);
    let shbin_len = shrec::formats::pica::dvlb::probe(&shbin).unwrap();
    let sharc = sharcfb(true, &[(0, 0x134, 0xD0, &[1, 2, 3, 4, 5, 6, 7, 8]), (1, 0xE8, 0xA4, &[9; 8])]);
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    let mut buf = rng.bytes(100_003);
    // (offset, bytes, kind, len)
    let place: Vec<(usize, &[u8], ContainerKind, usize)> = vec![
        (8, &ps, ContainerKind::Xenos, ps.len()),
        (1_001, &gsh, ContainerKind::Gfd, gsh.len()),
        (7_777, &shbin[..shbin_len], ContainerKind::Dvlb, shbin_len),
        (20_480, &vs, ContainerKind::Xenos, vs.len()),
        (33_333, &sharc, ContainerKind::Sharcfb, sharc.len()),
        (65_536, &gsh, ContainerKind::Gfd, gsh.len()),
        (99_000, &ps, ContainerKind::Xenos, ps.len()),
    ];
    for (off, b, _, _) in &place {
        buf[*off..*off + b.len()].copy_from_slice(b);
    }
    let found = detect(&buf);
    let want: Vec<_> = place.iter().map(|(o, _, k, l)| (*k, *o, *l)).collect();
    assert_eq!(kinds(&found), want);
    // the same shaders and keys as the standalone files
    for c in &found {
        let inner = &buf[c.offset..c.offset + c.len];
        let standalone: &[u8] = place.iter().find(|p| p.0 == c.offset).unwrap().1;
        assert_eq!(keys(c.kind, inner), keys(c.kind, standalone));
    }
    // scan_bytes agrees and orders by offset then index
    let (shaders, errors) = shrec::scan::scan_bytes(Path::new("mem"), &buf);
    assert!(errors.is_empty());
    assert_eq!(shaders.len(), 1 + 2 + 2 + 1 + 2 + 2 + 1);
    assert!(shaders.windows(2).all(|w| (w[0].offset, w[0].index) < (w[1].offset, w[1].index)));
}

#[test]
fn xenos_only_on_xr_probe_positions() {
    let ps = corpus(XENOS_PS);
    for off in [1usize, 2, 3, 5, 6, 7] {
        let mut buf = vec![0u8; 64];
        buf.splice(off..off, ps.iter().copied());
        buf.resize(buf.len() + 64, 0);
        assert!(detect(&buf).is_empty(), "offset {off}: XR only probes 4-aligned offsets");
    }
    for off in [0usize, 4, 12, 400] {
        let mut buf = vec![0u8; off];
        buf.extend_from_slice(&ps);
        assert_eq!(kinds(&detect(&buf)), vec![(ContainerKind::Xenos, off, ps.len())], "offset {off}");
    }
    // XR's loop bound: the probe needs more than 37 bytes left; the container ends the file.
    assert_eq!(detect(&ps).len(), 1);
}

#[test]
fn xenos_drift_after_unaligned_size() {
    // first container: 0x60 + 0x0E = 110 bytes (not a multiple of 4)
    let a = xenos(false, &[0xAA; 0x0E]);
    assert_eq!(a.len() % 4, 2);
    let b = xenos(true, &[0xBB; 0x20]);
    // b right after a (offset 110): XR's probes drifted to 110, 114, ... → found
    let mut buf = a.clone();
    buf.extend_from_slice(&[0; 8]);
    buf.extend_from_slice(&b); // at 118 = 110 + 8
    buf.extend_from_slice(&[0; 4]);
    assert_eq!(kinds(&detect(&buf)), vec![(ContainerKind::Xenos, 0, 110), (ContainerKind::Xenos, 118, b.len())]);
    // b at a 4-aligned offset (120) after a: off XR's drifted phase → not found (kept for
    // compatibility with XenosRecomp)
    let mut buf = a.clone();
    buf.extend_from_slice(&[0; 10]);
    buf.extend_from_slice(&b);
    buf.extend_from_slice(&[0; 4]);
    assert_eq!(kinds(&detect(&buf)), vec![(ContainerKind::Xenos, 0, 110)]);
    // without the first container the same b at 120 is found
    buf[..4].copy_from_slice(&[0; 4]);
    assert_eq!(kinds(&detect(&buf)), vec![(ContainerKind::Xenos, 120, b.len())]);
}

#[test]
fn xenos_degenerate_headers_terminate() {
    let mut zero = Vec::new();
    for w in [0x102A_1100u32, 0, 0, 0, 0, 0, 0, 0, 0] {
        be(&mut zero, w);
    }
    // size 0: XR would loop forever
    let mut buf = zero.repeat(50);
    buf.extend_from_slice(&[0; 64]);
    assert!(detect(&buf).is_empty());
    // sizes below the header, and a 32-bit wrap-around (0xFFFFFFF0 + 0x40 = 0x30)
    for (v, p) in [(4u32, 4u32), (0, 35), (0xFFFF_FFF0, 0x40), (0x8000_0000, 0x8000_0000)] {
        let mut h = zero.clone();
        h[4..8].copy_from_slice(&v.to_be_bytes());
        h[8..12].copy_from_slice(&p.to_be_bytes());
        let mut buf = h.repeat(20);
        buf.extend_from_slice(&[0; 64]);
        assert!(detect(&buf).is_empty(), "{v:#x} + {p:#x}");
    }
    // a whole buffer of magic words
    let buf: Vec<u8> = [0x10, 0x2A, 0x11, 0x01].repeat(10_000);
    assert!(detect(&buf).is_empty());
}

#[test]
fn xenos_insane_hit_is_dropped_but_skipped_like_xr() {
    let ps = corpus(XENOS_PS);
    // a header XR accepts (sizes fit, 0x1C/0x20 zero) but whose shaderOffset lies outside
    // virtualSize: not reported, yet the scan skips its 0x200 bytes exactly as XR does, so the
    // real container at 0x100 (inside that range) is not found either.
    let mut bad = Vec::new();
    for w in [0x102A_1100u32, 0x100, 0x100, 0, 0x24, 0, 0x400, 0, 0] {
        be(&mut bad, w);
    }
    let mut buf = bad.clone();
    buf.resize(0x100, 0);
    buf.extend_from_slice(&ps);
    buf.resize(0x300, 0);
    buf.extend_from_slice(&ps); // at 0x300: found
    assert_eq!(kinds(&detect(&buf)), vec![(ContainerKind::Xenos, 0x300, ps.len())]);
    // the sanity checks, one by one, on the entry parser
    let mut c = ps.clone();
    c[0x10..0x14].copy_from_slice(&0x1000u32.to_be_bytes()); // constantTableOffset
    assert!(entries(ContainerKind::Xenos, &c).unwrap_err().reason().contains("constantTableOffset"));
    let mut c = ps.clone();
    let so = u32::from_be_bytes(c[0x18..0x1C].try_into().unwrap()) as usize;
    c[so + 4..so + 8].copy_from_slice(&0x1000u32.to_be_bytes()); // microcode size
    let e = entries(ContainerKind::Xenos, &c).unwrap_err();
    assert!(e.reason().contains("microcode") && e.offset() == Some(so as u64), "{e:?}");
}

#[test]
fn truncated_containers_are_not_detected() {
    let gsh = corpus(GSH);
    let shbin = corpus(SHBIN_NIH);
    let ps = corpus(XENOS_PS);
    let sharc = sharcfb(false, &[(0, 0x134, 0xD0, &[1; 16])]);
    for (name, b) in [("gsh", &gsh), ("shbin", &shbin), ("xenos", &ps), ("sharcfb", &sharc)] {
        let full = detect(b);
        assert_eq!(full.len(), 1, "{name}");
        for cut in 0..full[0].len {
            let got = detect(&b[..cut]);
            assert!(got.is_empty(), "{name} cut at {cut}: {got:?}");
        }
    }
}

#[test]
fn garbage_is_not_detected_and_never_panics() {
    let mut rng = Rng(42);
    for n in [0usize, 1, 3, 7, 35, 36, 37, 38, 100, 4096, 1 << 20] {
        let buf = rng.bytes(n);
        assert!(detect(&buf).is_empty(), "random {n}");
    }
    // magic soup: every magic repeated, with random counts/sizes after it
    let magics: [&[u8]; 7] = [b"Gfx2", b"BLK{", b"DVLB", b"DVLP", b"DVLE", b"BAHS", b"SHAB"];
    for m in magics {
        let mut buf = Vec::new();
        for _ in 0..2000 {
            buf.extend_from_slice(m);
            let n = rng.next() as usize % 12;
            let r = rng.bytes(n);
            buf.extend_from_slice(&r);
        }
        let _ = detect(&buf);
        assert!(detect(&m.repeat(5000)).is_empty());
    }
    let agal_like: Vec<u8> = [0xA0, 1, 0, 0, 0, 0xA1, 0].repeat(3000);
    let _ = detect(&agal_like);
    // every prefix-corruption of real containers: no panic, entries never panic
    let gsh = corpus(GSH);
    let shbin = corpus(SHBIN_GS);
    for base in [&gsh, &shbin] {
        for i in 0..base.len() {
            let mut b = base.clone();
            b[i] ^= 0xFF;
            for c in detect(&b) {
                let _ = entries(c.kind, &b[c.offset..c.offset + c.len]);
            }
        }
    }
    // count fields that ask for absurd amounts
    let mut d = b"DVLB".to_vec();
    le(&mut d, 0x3FFF_FFFF);
    d.extend_from_slice(&[0; 64]);
    assert!(detect(&d).is_empty());
}

#[test]
fn overlapping_candidates_outer_wins() {
    let shbin = corpus(SHBIN_NIH);
    let ps = corpus(XENOS_PS);
    // a GFD whose padding block carries a DVLB and a Xenos container: the DVLB lies inside the
    // GFD and is dropped; Xenos follows its own pass and is kept.
    let mut pad = vec![0u8; 12]; // GFD data starts at 0x40; +12 → 0x4C, 4-aligned
    pad.extend_from_slice(&shbin);
    while !pad.len().is_multiple_of(4) {
        pad.push(0);
    }
    let xoff_in_pad = pad.len();
    pad.extend_from_slice(&ps);
    let f = gfd(&[(2, pad)]);
    let found = detect(&f);
    assert_eq!(kinds(&found), vec![(ContainerKind::Gfd, 0, f.len()), (ContainerKind::Xenos, 0x40 + xoff_in_pad, ps.len())]);
    assert_eq!(entries(ContainerKind::Gfd, &f).unwrap(), vec![]);
    // a DVLB whose symbol table happens to contain "Gfx2..." does not lose to the inner GFD
    let header_only = corpus("gx2/rust-wiiu+gfd/tests/header-only.gsh");
    let mut outer = shbin.clone();
    let start = outer.len() - header_only.len() - 8;
    outer[start..start + header_only.len()].copy_from_slice(&header_only);
    assert_eq!(kinds(&detect(&outer)), vec![(ContainerKind::Dvlb, 0, shbin.len())]);
    // two back-to-back GFDs: both found
    let mut two = header_only.clone();
    two.extend_from_slice(&header_only);
    assert_eq!(kinds(&detect(&two)), vec![(ContainerKind::Gfd, 0, 64), (ContainerKind::Gfd, 64, 64)]);
}

#[test]
fn gfd_entries_from_parts() {
    let vs_prog = vec![0x13u8; 24];
    let ps_prog = vec![0x27u8; 8];
    let gs_prog = vec![0x55u8; 16];
    let copy = vec![0x66u8; 12];
    let f = gfd(&[
        (3, gx2_struct(0x134, 0xD0, vs_prog.len())),
        (5, vs_prog.clone()),
        (6, gx2_struct(0xE8, 0xA4, ps_prog.len())),
        (8, gx2_struct(0xC0, 0x4C, gs_prog.len())),
        (7, ps_prog.clone()),
        (9, gs_prog.clone()),
        (10, copy.clone()),
        (11, vec![0; 0x9C]), // texture header: ignored
    ]);
    let es = entries(ContainerKind::Gfd, &f).unwrap();
    let got: Vec<_> = es.iter().map(|e| (e.index, e.stage, e.key)).collect();
    assert_eq!(
        got,
        vec![
            (0, Stage::Vertex, xxh3_64(&vs_prog)),
            (1, Stage::Pixel, xxh3_64(&ps_prog)),
            // a geometry shader's key covers its copy program (the translation inlines it)
            (2, Stage::Geometry, shrec::formats::gx2::shader_struct::key_geometry(&gs_prog, &copy)),
        ]
    );
    assert_ne!(got[2].2, xxh3_64(&gs_prog));
    // the same programs in a SHARCFB (either byte order) get the same keys; this archive has no
    // copy program, so its GS key is that of the GS program alone
    let mut without_copy = got.clone();
    without_copy[2].2 = shrec::formats::gx2::shader_struct::key_geometry(&gs_prog, &[]);
    assert_eq!(without_copy[2].2, xxh3_64(&gs_prog));
    for little in [true, false] {
        let s = sharcfb(little, &[(0, 0x134, 0xD0, &vs_prog), (1, 0xE8, 0xA4, &ps_prog), (2, 0xC0, 0x4C, &gs_prog)]);
        assert_eq!(kinds(&detect(&s)), vec![(ContainerKind::Sharcfb, 0, s.len())]);
        let se = entries(ContainerKind::Sharcfb, &s).unwrap();
        assert_eq!(se.iter().map(|e| (e.index, e.stage, e.key)).collect::<Vec<_>>(), without_copy);
    }
    // program size differs from the header's
    let bad = gfd(&[(3, gx2_struct(0x134, 0xD0, 20)), (5, vec![0; 24])]);
    let e = entries(ContainerKind::Gfd, &bad).unwrap_err();
    assert!(matches!(e, ShaderError::Gx2(Gx2Error::Container { offset: Some(_), fault: ContainerFault::BadValue(_) })), "{e:?}");
    // header block too small for its struct
    let bad = gfd(&[(6, vec![0; 0x40]), (7, vec![0; 8])]);
    let e = entries(ContainerKind::Gfd, &bad).unwrap_err();
    assert!(matches!(e, ShaderError::Gx2(Gx2Error::Container { offset: Some(0x20), fault: ContainerFault::OutOfBounds(_) })), "{e:?}");
    // a GFD without an end-of-file block is not a container
    let mut no_eof = gfd(&[(2, vec![0; 8])]);
    no_eof.truncate(no_eof.len() - 0x20);
    assert!(detect(&no_eof).is_empty());
}

#[test]
fn dvlb_stages_and_keys() {
    let b = corpus(SHBIN_GS);
    let len = shrec::formats::pica::dvlb::probe(&b).unwrap();
    let es = entries(ContainerKind::Dvlb, &b[..len]).unwrap();
    assert_eq!(es.iter().map(|e| e.stage).collect::<Vec<_>>(), vec![Stage::Vertex, Stage::Geometry]);
    assert_eq!(es[1].key, xxhash_rust::xxh3::xxh3_64_with_seed(&b[..len], 1));
    // unknown DVLE type byte: the DVLB is no longer accepted
    let d0 = u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize;
    let mut bad = b.clone();
    bad[d0 + 6] = 7;
    assert!(detect(&bad).is_empty());
    let e = entries(ContainerKind::Dvlb, &bad).unwrap_err();
    assert_eq!(e.offset(), Some(d0 as u64 + 6));
    assert!(matches!(e, ShaderError::Pica(PicaError::Container { fault: ContainerFault::BadValue(_), .. })), "{e:?}");
}

#[test]
fn scan_dir_walks_and_reports() {
    let dir = std::env::temp_dir().join(format!("shrec-detect-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::write(dir.join("empty.bin"), b"").unwrap();
    std::fs::write(dir.join("a/ps.psu"), corpus(XENOS_PS)).unwrap();
    let mut blob = Rng(7).bytes(999);
    blob.extend_from_slice(&corpus(GSH));
    std::fs::write(dir.join("a/b/blob.dat"), &blob).unwrap();
    std::fs::write(dir.join("a/b/bad.gsh"), corpus("gx2/rust-wiiu+gfd/tests/vertex-program.gsh")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&dir, dir.join("a/loop")).unwrap();

    let r = shrec::scan::scan_dir(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let rows: Vec<(PathBuf, u64, Stage)> = r.shaders.iter().map(|s| (s.path.strip_prefix(&dir).unwrap().to_path_buf(), s.offset, s.stage)).collect();
    assert_eq!(
        rows,
        vec![
            (PathBuf::from("a/b/blob.dat"), 999, Stage::Vertex),
            (PathBuf::from("a/b/blob.dat"), 999, Stage::Pixel),
            (PathBuf::from("a/ps.psu"), 0, Stage::Pixel),
        ]
    );
    let bad: Vec<_> = r.errors.iter().filter(|e| e.kind.is_some()).collect();
    assert_eq!(bad.len(), 1);
    assert!(bad[0].path.ends_with("a/b/bad.gsh") && bad[0].offset == Some(0));
    // the link back to the root is not followed (each folder is walked under its own path),
    // only counted
    #[cfg(unix)]
    assert_eq!(r.links_skipped, 1, "{:?}", r.errors);

    let table = shrec::scan::render_table(&r);
    assert!(table.contains("0x3E7") && table.contains("0x5873A0E094914DE6") && table.contains("pixel"), "{table}");
    assert!(table.contains("error:"));
    let j = shrec::report::scan_to_json(&r);
    let s = &j["shaders"][2];
    assert_eq!(s["key"], "0x5873A0E094914DE6");
    assert_eq!(s["offset"], 0);
    assert_eq!(s["family"], "xenos");
    assert_eq!(j["shaders"][0]["offset"], 999);
    assert_eq!(j["errors"].as_array().unwrap().len(), r.errors.len());
}
