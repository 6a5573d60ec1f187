//! Xenos container parsing: every corpus container, a container without a constant table, and
//! damaged inputs (errors with offsets, never panics).

use shrec::formats::xenos::container::{self, RegisterSet};
use shrec::formats::xenos::error::{ContainerError, XenosError};
use shrec::formats::ShaderError;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "bin" || e == "psu" || e == "vsu") {
            out.push(p);
        }
    }
}

fn corpus() -> Vec<PathBuf> {
    let mut v = Vec::new();
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/xenos"), &mut v);
    v.sort();
    v
}

#[test]
fn every_corpus_container_parses() {
    let all = corpus();
    assert_eq!(all.len(), 33);
    for p in &all {
        let b = std::fs::read(p).unwrap();
        let c = container::parse(&b).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
        let ct = c.constant_table.as_ref().expect("corpus containers have constant tables");
        assert!(ct.target.ends_with("_3_0"), "{}: {}", p.display(), ct.target);
        assert!(!c.microcode.is_empty());
        if c.is_vertex() {
            assert!(!c.vertex_elements.is_empty(), "{}", p.display());
        } else {
            assert_eq!(c.ps_outputs & 1, 1, "{}: COLOR0", p.display());
        }
    }
}

#[test]
fn s2xsal_details() {
    let p = corpus().into_iter().find(|p| p.to_string_lossy().contains("s2xsal.ps")).unwrap();
    let c = container::parse(&std::fs::read(p).unwrap()).unwrap();
    let ct = c.constant_table.unwrap();
    let dec = ct.constants.iter().find(|k| k.name == "$decal").unwrap();
    assert_eq!(dec.register_set, RegisterSet::Sampler);
    assert_eq!(dec.register_index, 0);
    // def c254, 0, 0.25, 3, 0.5 and def c255, 65536, 255, -1, 1
    let mut regs = std::collections::BTreeMap::new();
    for d in &c.float_defs {
        for (k, v) in d.values.chunks(4).enumerate() {
            regs.insert(d.register + k as u32, v.to_vec());
        }
    }
    assert_eq!(regs[&254], vec![0.0, 0.25, 3.0, 0.5]);
    assert_eq!(regs[&255], vec![65536.0, 255.0, -1.0, 1.0]);
    assert_eq!(c.interpolators.len(), 9);
}

#[test]
fn container_without_constant_table_parses() {
    let p = corpus().into_iter().find(|p| p.ends_with("ps.psu")).unwrap();
    let mut b = std::fs::read(p).unwrap();
    b[0x10..0x14].copy_from_slice(&[0; 4]);
    let c = container::parse(&b).unwrap();
    assert!(c.constant_table.is_none());
}

#[test]
fn damaged_containers_give_errors_not_panics() {
    for p in corpus() {
        let b = std::fs::read(&p).unwrap();
        // Every truncation and every single-dword corruption of the metadata part.
        for n in (0..b.len()).step_by(7) {
            let _ = container::parse(&b[..n]);
        }
        let vsize = u32::from_be_bytes([b[4], b[5], b[6], b[7]]) as usize;
        for off in (0..vsize.min(b.len())).step_by(4) {
            for v in [0u32, 0xFFFF_FFFF, 0x8000_0000, 0x0000_FFFF] {
                let mut m = b.clone();
                m[off..off + 4].copy_from_slice(&v.to_be_bytes());
                if let Ok(c) = container::parse(&m) {
                    let _ = shrec::formats::xenos::ucode::decode(&c.microcode);
                }
            }
        }
    }
    let e = container::parse(&[0x10, 0x2A, 0x11, 0x00]).unwrap_err();
    assert_eq!(e, XenosError::Container { offset: 0, reason: ContainerError::HeaderTruncated { need: container::HEADER_SIZE, available: 4 } });
    assert_eq!(ShaderError::from(e).offset(), Some(0));
}

/// Container errors are typed: each names the field's offset and the reason with its values.
#[test]
fn container_errors_name_the_field_and_offset() {
    let b = std::fs::read(&corpus()[0]).unwrap();
    let mut bad_magic = b.clone();
    bad_magic[0..4].copy_from_slice(&0x1234_5678u32.to_be_bytes());
    assert_eq!(
        container::check(&bad_magic).unwrap_err(),
        XenosError::Container { offset: 0, reason: ContainerError::BadMagic { flags: 0x1234_5678 } }
    );
    let size = container::check(&b).unwrap().size;
    let short = &b[..size - 1];
    assert_eq!(
        container::check(short).unwrap_err(),
        XenosError::Container { offset: 4, reason: ContainerError::Truncated { size: size as u64, available: size - 1 } }
    );
    let mut past = b.clone();
    past[0x18..0x1C].copy_from_slice(&0xFFFF_FFF0u32.to_be_bytes());
    assert!(
        matches!(
            container::check(&past).unwrap_err(),
            XenosError::Container { offset: 0x18, reason: ContainerError::ShaderHeaderOutside { shader_offset: 0xFFFF_FFF0, .. } }
        ),
        "shaderOffset past virtualSize"
    );
}
