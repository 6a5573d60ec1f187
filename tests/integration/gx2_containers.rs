//! GX2 containers: every corpus .gsh decodes fully (structs, variables, programs), and a SHARCFB
//! writer (test-only, following docs/isa/gx2.md §4) packs the same shaders into archives of both
//! byte orders — odd name lengths, variation macros, symbols — that shrec reads back identically.

use shrec::formats::container_fault::ContainerFault;
use shrec::formats::gx2::error::Gx2Error;
use shrec::formats::gx2::shader_struct::{Endian, Gx2Shader, ShaderKind};
use shrec::formats::gx2::{gfd, sharc};
use shrec::formats::ShaderError;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gsh_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "gsh") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every shader of every valid corpus .gsh, fully decoded.
pub fn corpus_shaders() -> Vec<(PathBuf, Gx2Shader)> {
    let mut out = Vec::new();
    for f in gsh_files(&repo().join("tests/corpus/gx2")) {
        let bytes = std::fs::read(&f).unwrap();
        let n = gfd::pairs(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display())).len();
        for i in 0..n {
            out.push((f.clone(), gfd::load(&bytes, i as u32).unwrap_or_else(|e| panic!("{} #{i}: {e}", f.display()))));
        }
    }
    out
}

// ------------------------------------------------------------------------------------------
// SHARCFB writer
// ------------------------------------------------------------------------------------------

struct W {
    e: Endian,
    b: Vec<u8>,
}

impl W {
    fn u32(&mut self, x: u32) {
        match self.e {
            Endian::Big => self.b.extend_from_slice(&x.to_be_bytes()),
            Endian::Little => self.b.extend_from_slice(&x.to_le_bytes()),
        }
    }
    fn put(&mut self, at: usize, x: u32) {
        let v = match self.e {
            Endian::Big => x.to_be_bytes(),
            Endian::Little => x.to_le_bytes(),
        };
        self.b[at..at + 4].copy_from_slice(&v);
    }
    fn cstr(&mut self, s: &str) {
        self.b.extend_from_slice(s.as_bytes());
        self.b.push(0);
    }
}

pub struct ProgramSpec {
    pub name: String,
    pub kind: u32,
    pub base_index: i32,
    pub macros: Vec<sharc::Macro>,
    pub defaults: Vec<sharc::Macro>,
    pub symbols: [Vec<sharc::Symbol>; 4],
}

/// Serializes one GX2 shader as SHARCFB shader data starting at file offset `file_at`: struct,
/// uniform blocks, uniform vars, initial values, sampler vars, attrib vars, string table, loop
/// vars, zero padding to a 0x100-aligned file offset, program.
fn shader_data(e: Endian, s: &Gx2Shader, file_at: usize) -> Vec<u8> {
    let kind = s.kind;
    let f = kind.var_fields();
    let mut w = W { e, b: Vec::new() };
    let mut words = s.words.clone();
    let n_struct = kind.struct_size();
    w.b.resize(n_struct, 0);
    let mut strings: Vec<(usize, String)> = Vec::new(); // (patch position, string)
    let arr_start = |w: &W| w.b.len() as u32;
    // uniform blocks
    let p = arr_start(&w);
    for ub in &s.uniform_blocks {
        strings.push((w.b.len(), ub.name.clone()));
        w.u32(0);
        w.u32(ub.offset);
        w.u32(ub.size);
    }
    words[f.uniform_blocks / 4] = s.uniform_blocks.len() as u32;
    words[f.uniform_blocks / 4 + 1] = if s.uniform_blocks.is_empty() { 0 } else { p };
    let p = arr_start(&w);
    for v in &s.uniform_vars {
        strings.push((w.b.len(), v.name.clone()));
        w.u32(0);
        w.u32(v.ty);
        w.u32(v.count);
        w.u32(v.offset);
        w.u32(v.block as u32);
    }
    words[f.uniform_vars / 4] = s.uniform_vars.len() as u32;
    words[f.uniform_vars / 4 + 1] = if s.uniform_vars.is_empty() { 0 } else { p };
    let p = arr_start(&w);
    for v in &s.initial_values {
        for x in v.value {
            w.u32(x);
        }
        w.u32(v.offset);
    }
    words[f.initial_values / 4] = s.initial_values.len() as u32;
    words[f.initial_values / 4 + 1] = if s.initial_values.is_empty() { 0 } else { p };
    let p = arr_start(&w);
    for v in &s.sampler_vars {
        strings.push((w.b.len(), v.name.clone()));
        w.u32(0);
        w.u32(v.ty);
        w.u32(v.location);
    }
    words[f.sampler_vars / 4] = s.sampler_vars.len() as u32;
    words[f.sampler_vars / 4 + 1] = if s.sampler_vars.is_empty() { 0 } else { p };
    if let Some(af) = f.attrib_vars {
        let p = arr_start(&w);
        for v in &s.attrib_vars {
            strings.push((w.b.len(), v.name.clone()));
            w.u32(0);
            w.u32(v.ty);
            w.u32(v.count);
            w.u32(v.location);
        }
        words[af / 4] = s.attrib_vars.len() as u32;
        words[af / 4 + 1] = if s.attrib_vars.is_empty() { 0 } else { p };
    }
    // packed string table (like real files: not aligned)
    for (at, name) in strings {
        let off = w.b.len() as u32;
        w.put(at, off);
        w.cstr(&name);
    }
    // loop vars after the strings (odd relative offset, as in real files)
    let p = arr_start(&w);
    for v in &s.loop_vars {
        w.u32(v.offset);
        w.u32(v.value);
    }
    words[f.loop_vars / 4] = s.loop_vars.len() as u32;
    words[f.loop_vars / 4 + 1] = if s.loop_vars.is_empty() { 0 } else { p };
    // program at a 0x100-aligned file offset
    let prog_file = (file_at + w.b.len() + 0xFF) & !0xFF;
    w.b.resize(prog_file - file_at, 0);
    let (so, po) = kind.program_fields();
    words[so / 4] = s.program.len() as u32;
    words[po / 4] = (prog_file - file_at) as u32;
    w.b.extend_from_slice(&s.program);
    for (i, x) in words.iter().enumerate() {
        w.put(i * 4, *x);
    }
    w.b
}

/// Builds a SHARCFB archive holding `shaders` (binary index = position) and `programs`.
pub fn write_sharcfb(e: Endian, name: &str, shaders: &[Gx2Shader], programs: &[ProgramSpec]) -> Vec<u8> {
    let mut w = W { e, b: Vec::new() };
    w.b.extend_from_slice(if e == Endian::Little { b"BAHS" } else { b"SHAB" });
    w.u32(8);
    w.u32(0);
    w.u32(if e == Endian::Little { 1 } else { 0 });
    w.u32(0);
    w.u32(name.len() as u32 + 1);
    w.cstr(name);
    let arr = w.b.len();
    w.u32(0);
    w.u32(shaders.len() as u32);
    for s in shaders {
        let entry = w.b.len();
        for _ in 0..4 {
            w.u32(0);
        }
        let data = shader_data(e, s, w.b.len());
        w.b.extend_from_slice(&data);
        let size = w.b.len() - entry;
        w.put(entry, size as u32);
        w.put(
            entry + 4,
            match s.kind {
                ShaderKind::Vertex => 0,
                ShaderKind::Pixel => 1,
                ShaderKind::Geometry => 2,
            },
        );
        w.put(entry + 8, 0);
        w.put(entry + 12, data.len() as u32);
    }
    let sz = w.b.len() - arr;
    w.put(arr, sz as u32);
    // program array
    let parr = w.b.len();
    w.u32(0);
    w.u32(programs.len() as u32);
    for p in programs {
        let at = w.b.len();
        w.u32(0);
        w.u32(p.name.len() as u32 + 1);
        w.u32(p.kind);
        w.u32(p.base_index as u32);
        w.cstr(&p.name);
        for list in [&p.macros, &p.defaults] {
            let a = w.b.len();
            w.u32(0);
            w.u32(list.len() as u32);
            for m in list {
                let r = w.b.len();
                w.u32(0);
                w.u32(m.name.len() as u32 + 1);
                w.u32(m.id.len() as u32 + 1);
                w.u32(m.values.len() as u32);
                w.cstr(&m.name);
                w.cstr(&m.id);
                for v in &m.values {
                    w.u32(v.len() as u32 + 1);
                    w.cstr(v);
                }
                let rs = w.b.len() - r;
                w.put(r, rs as u32);
            }
            let asz = w.b.len() - a;
            w.put(a, asz as u32);
        }
        for list in &p.symbols {
            let a = w.b.len();
            w.u32(0);
            w.u32(list.len() as u32);
            for s in list {
                let r = w.b.len();
                w.u32(0);
                w.u32(s.offset as u32);
                w.u32(s.name.len() as u32 + 1);
                w.u32(s.id.len() as u32 + 1);
                w.u32(s.default_value.len() as u32);
                w.u32(s.enabled.len() as u32);
                w.cstr(&s.name);
                w.cstr(&s.id);
                w.b.extend_from_slice(&s.default_value);
                w.b.extend_from_slice(&s.enabled);
                let rs = w.b.len() - r;
                w.put(r, rs as u32);
            }
            let asz = w.b.len() - a;
            w.put(a, asz as u32);
        }
        let psz = w.b.len() - at;
        w.put(at, psz as u32);
    }
    let pasz = w.b.len() - parr;
    w.put(parr, pasz as u32);
    let total = w.b.len() as u32;
    w.put(8, total);
    w.b
}

/// The struct words with pointer fields and program fields zeroed (they are container-specific).
fn comparable(s: &Gx2Shader) -> Gx2Shader {
    let mut c = s.clone();
    let f = s.kind.var_fields();
    let mut ptrs = vec![f.uniform_blocks + 4, f.uniform_vars + 4, f.initial_values + 4, f.loop_vars + 4, f.sampler_vars + 4];
    if let Some(a) = f.attrib_vars {
        ptrs.push(a + 4);
    }
    ptrs.push(s.kind.program_fields().1);
    for p in ptrs {
        c.words[p / 4] = 0;
    }
    c
}

/// One archive per corpus file: its shaders, one program per (VS, PS) pair with two variation
/// macros (2 × 2 = 4 variations, each pointing at the same binaries through repeated copies).
pub fn archives_from_corpus() -> Vec<(String, Endian, Vec<u8>, Vec<Gx2Shader>, Vec<ProgramSpec>)> {
    let all = corpus_shaders();
    let mut files: Vec<PathBuf> = all.iter().map(|(p, _)| p.clone()).collect();
    files.dedup();
    let mut out = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        let shaders: Vec<Gx2Shader> = all.iter().filter(|(p, _)| p == f).map(|(_, s)| s.clone()).collect();
        let vs: Vec<&Gx2Shader> = shaders.iter().filter(|s| s.kind == ShaderKind::Vertex).collect();
        let ps: Vec<&Gx2Shader> = shaders.iter().filter(|s| s.kind == ShaderKind::Pixel).collect();
        // binaries laid out as agl expects: variation i, stage t at base + t + 2 i
        let mut bins = Vec::new();
        let mut programs = Vec::new();
        for (pi, (v, p)) in vs.iter().zip(&ps).enumerate() {
            let base = bins.len() as i32;
            let macros = vec![
                sharc::Macro { name: "USE_FOG".into(), id: "use_fog".into(), values: vec!["0".into(), "1".into()] },
                sharc::Macro { name: "QUALITY".into(), id: "quality".into(), values: vec!["LOW".into(), "HIGH".into()] },
            ];
            let nvar = 4;
            for _ in 0..nvar {
                bins.push((*v).clone());
                bins.push((*p).clone());
            }
            let sym = |name: &str, off: i32| sharc::Symbol {
                offset: off,
                name: name.into(),
                id: format!("{name}_id"),
                default_value: vec![0, 0, 0x80, 0x3F],
                enabled: vec![1, 0, 1, 1],
            };
            let uv: Vec<_> = v.uniform_vars.iter().map(|u| sym(&u.name, u.offset as i32)).collect();
            let ub: Vec<_> = v.uniform_blocks.iter().map(|u| sym(&u.name, u.offset as i32)).collect();
            let sv: Vec<_> = p.sampler_vars.iter().map(|u| sym(&u.name, u.location as i32)).collect();
            let av: Vec<_> = v.attrib_vars.iter().map(|u| sym(&u.name, u.location as i32)).collect();
            programs.push(ProgramSpec {
                name: format!("prog{pi}"),
                kind: 3,
                base_index: base,
                defaults: vec![sharc::Macro { name: "USE_FOG".into(), id: "1".into(), values: vec![] }],
                macros,
                symbols: [uv, ub, sv, av],
            });
        }
        if bins.is_empty() {
            bins = shaders.clone();
        }
        for e in [Endian::Little, Endian::Big] {
            // odd and even name lengths: the GX2 structs land at unaligned offsets
            let name = if fi % 2 == 0 { format!("arc{fi}.sharcfb") } else { format!("archive_{fi}") };
            let bytes = write_sharcfb(e, &name, &bins, &programs);
            out.push((name, e, bytes, bins.clone(), clone_specs(&programs)));
        }
    }
    out
}

fn clone_specs(p: &[ProgramSpec]) -> Vec<ProgramSpec> {
    p.iter()
        .map(|p| ProgramSpec {
            name: p.name.clone(),
            kind: p.kind,
            base_index: p.base_index,
            macros: p.macros.clone(),
            defaults: p.defaults.clone(),
            symbols: p.symbols.clone(),
        })
        .collect()
}

#[test]
fn corpus_gsh_decode_fully() {
    let all = corpus_shaders();
    let vs = all.iter().filter(|(_, s)| s.kind == ShaderKind::Vertex).count();
    let ps = all.iter().filter(|(_, s)| s.kind == ShaderKind::Pixel).count();
    assert_eq!((vs, ps), (15, 15), "vertex / pixel shaders in the 15 corpus .gsh that hold shaders (header-only.gsh holds none)");
    for (f, s) in &all {
        assert!(!s.program.is_empty(), "{}", f.display());
        // every real VS starts with CALL_FS
        if s.kind == ShaderKind::Vertex {
            let w1 = u32::from_le_bytes(s.program[4..8].try_into().unwrap());
            assert_eq!((w1 >> 23) & 0x7F, 0x13, "{}", f.display());
        }
        if s.kind == ShaderKind::Vertex {
            assert!(!s.attrib_vars.is_empty(), "{}: attribs", f.display());
        }
    }
    // spot checks against the latte-assembler sources
    let tex = all.iter().find(|(f, s)| f.ends_with("textureShader.gsh") && s.kind == ShaderKind::Vertex).unwrap();
    assert_eq!(tex.1.uniform_vars[0].name, "uProjection");
    assert_eq!(tex.1.attrib_vars.iter().map(|a| (a.name.as_str(), a.location)).collect::<Vec<_>>(), [("aPosition", 0), ("aTexCoord", 1)]);
    let texp = all.iter().find(|(f, s)| f.ends_with("textureShader.gsh") && s.kind == ShaderKind::Pixel).unwrap();
    assert_eq!(texp.1.sampler_vars[0].name, "uTexture");
    assert_eq!(texp.1.uniform_vars[1].offset, 4);
}

#[test]
fn rejected_gsh_stay_rejected() {
    for f in gsh_files(&repo().join("tests/corpus-invalid/gx2")) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(gfd::pairs(&bytes).is_err() && gfd::load(&bytes, 0).is_err(), "{}", f.display());
    }
}

#[test]
fn damaged_relocations_are_rejected() {
    let f = repo().join("tests/corpus/gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/textureShader.gsh");
    let bytes = std::fs::read(f).unwrap();
    let (_, hdr, _) = gfd::pairs(&bytes).unwrap()[0];
    let trailer = hdr.data_offset + hdr.data_size - 0x28;
    let mut g = bytes.clone();
    g[trailer] = b'X';
    let e = gfd::load(&g, 0).unwrap_err();
    assert!(matches!(e, ShaderError::Gx2(Gx2Error::Container { fault: ContainerFault::Signature(_), .. })), "{e:?}");
    // a tagged pointer pointing past the block
    let mut g = bytes.clone();
    let uv_ptr = hdr.data_offset + 0xE8;
    g[uv_ptr..uv_ptr + 4].copy_from_slice(&0xD06F_FFF0u32.to_be_bytes());
    assert!(gfd::load(&g, 0).is_err());
}

#[test]
fn sharcfb_writer_round_trips_every_corpus_shader() {
    let archives = archives_from_corpus();
    let mut binaries = 0;
    for (name, e, bytes, bins, specs) in &archives {
        assert_eq!(sharc::endian_of(bytes), Some(*e));
        let es = sharc::entries(bytes).unwrap_or_else(|err| panic!("{name} {e:?}: {err}"));
        assert_eq!(es.len(), bins.len());
        for (i, s) in bins.iter().enumerate() {
            let back = sharc::load(bytes, i as u32).unwrap_or_else(|err| panic!("{name} {e:?} #{i}: {err}"));
            assert_eq!(comparable(&back), comparable(s), "{name} {e:?} binary {i}");
            assert_eq!(es[i].key, shrec::formats::gx2::shader_struct::key(&s.program), "same key as in the .gsh");
            binaries += 1;
        }
        let progs = sharc::programs(bytes).unwrap();
        assert_eq!(progs.len(), specs.len());
        for (p, s) in progs.iter().zip(specs) {
            assert_eq!(p.name, s.name);
            assert_eq!(p.base_index, s.base_index);
            assert_eq!(p.macros, s.macros);
            assert_eq!(p.defaults, s.defaults);
            assert_eq!(
                [&p.uniform_vars, &p.uniform_blocks, &p.sampler_vars, &p.attrib_vars],
                [&s.symbols[0], &s.symbols[1], &s.symbols[2], &s.symbols[3]]
            );
            assert_eq!(p.variation_count(), 4);
            for v in 0..4 {
                let vi = p.binary_index(v, 0) as usize;
                assert_eq!(es[vi].stage, shrec::Stage::Vertex);
                assert_eq!(es[vi + 1].stage, shrec::Stage::Pixel);
                assert_eq!(es[vi].name.as_deref(), Some(p.name.as_str()));
            }
        }
    }
    assert_eq!(archives.len(), 30, "15 corpus .gsh with shaders × 2 byte orders");
    assert_eq!(binaries, 2 * 15 * 8, "binaries across all archives: 15 (VS, PS) pairs × 4 variations × 2 byte orders");
}
