//! Inputs the fuzz targets (`fuzz/`) found crashes with, kept as regression tests: each file is
//! named `<target>-<what it was>.bin` and goes through the same calls as its target. None may
//! panic; the expected outcome of each is asserted.

use crate::common;

use shrec::detect::ContainerKind;
use shrec::formats::agal::decode::Op;
use shrec::formats::agal::error::{AgalError, TokenError};
use shrec::formats::xenos::error::XenosError;
use shrec::formats::{self, ShaderError, TranslateOptions};

fn input(name: &str) -> Vec<u8> {
    std::fs::read(common::repo().join("tests/fuzz-regressions").join(name)).unwrap()
}

/// What `fuzz/fuzz_targets/translate_<kind>.rs` does; returns each shader's translation result.
fn translate_all(kind: ContainerKind, data: &[u8]) -> Vec<Result<String, String>> {
    let entries = formats::entries(kind, data).map_err(|e| e.reason()).expect("the container lists its shaders");
    entries
        .iter()
        .map(|e| {
            let opts = TranslateOptions::default();
            let _ = formats::disasm(kind, data, e.index, &opts);
            formats::translate(kind, data, e.index, &opts).map(|t| shrec::hlsl::write(&t.module)).map_err(|e| e.reason())
        })
        .collect()
}

/// `m44 op, vt0, va0` reads va0–va3: all four must be declared inputs (the HLSL writer indexed
/// a missing va1).
#[test]
fn agal_matrix_from_attributes_declares_every_row() {
    let r = translate_all(ContainerKind::Agal, &input("translate_agal-m44-attribute-matrix.bin"));
    let hlsl = r[0].as_ref().expect("translates");
    for row in ["va1", "va2", "va3"] {
        assert!(hlsl.contains(&format!("float4 {row} : TEXCOORD")), "{row} not declared");
    }
}

/// `m33 vt4, vc0, iid` read a matrix from iid, iid+1, iid+2, but the instance id is one
/// register (the HLSL writer indexed a missing input). Now a decoding error naming it.
#[test]
fn agal_matrix_from_the_instance_id_is_an_error() {
    let data = input("translate_agal-m33-iid-matrix.bin");
    assert!(translate_all(ContainerKind::Agal, &data)[0].is_err());
    let e = formats::translate(ContainerKind::Agal, &data, 0, &TranslateOptions::default()).expect_err("rejected");
    assert!(
        matches!(
            e,
            ShaderError::Agal(AgalError::Token { reason: TokenError::MatrixPastRegisterFile { op: Op::M33, reg: "iid", first: 0, last: 2, .. }, .. })
        ),
        "{e:?}"
    );
}

/// `m44 op, v5.x, v7.x` in a vertex program: rows v7–v10, past AGAL1's 8 varyings (the HLSL
/// writer indexed a missing output). Now a decoding error naming the rows.
#[test]
fn agal_matrix_rows_past_the_register_file_are_an_error() {
    let data = input("translate_agal-m44-rows-past-varyings.bin");
    assert!(translate_all(ContainerKind::Agal, &data)[0].is_err());
    let e = formats::translate(ContainerKind::Agal, &data, 0, &TranslateOptions::default()).expect_err("rejected");
    assert!(
        matches!(
            e,
            ShaderError::Agal(AgalError::Token {
                reason: TokenError::MatrixPastRegisterFile { op: Op::M44, reg: "v", first: 7, last: 10, limit: 8, .. },
                ..
            })
        ),
        "{e:?}"
    );
}

/// A sampler named `shrec_re` in the constant table: the renaming of reserved names only added
/// suffixes, so the name kept its reserved prefix and the loop never ended (a hang, found by
/// `translate_xenos`). Run on a thread with a deadline so that a regression fails, not hangs.
#[test]
fn xenos_sampler_with_a_reserved_name_is_renamed() {
    let data = input("translate_xenos-sampler-named-shrec.bin");
    let (tx, rx) = std::sync::mpsc::channel();
    let d = data.clone();
    std::thread::spawn(move || {
        let _ = tx.send(translate_all(ContainerKind::Xenos, &d));
    });
    let r = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("translation finishes (it hung)");
    // (its fuzzed microcode is invalid further on)
    assert_eq!(r[0].as_ref().expect_err("rejected"), "CF 10 (jmp): jump target 256 outside the 20 CF instructions");
    let e = formats::translate(ContainerKind::Xenos, &data, 0, &TranslateOptions::default()).expect_err("rejected");
    assert!(matches!(&e, ShaderError::Xenos(XenosError::Unsupported { at, .. }) if at == "CF 10 (jmp)"), "{e:?}");
    let c = shrec::formats::xenos::container::parse(&data).expect("parses");
    let names: Vec<String> = shrec::formats::xenos::lower::sampler_names(&c).into_values().collect();
    assert!(names.iter().any(|n| n.starts_with("_shrec_re")) && !names.iter().any(|n| n.starts_with("shrec_")), "{names:?}");
}

/// ALU opcode fields are wider than the opcode tables: vector opcode 31 indexed past them.
#[test]
fn xenos_nonexistent_alu_opcode_is_an_error() {
    let data = input("translate_xenos-alu-opcode-31.bin");
    assert!(translate_all(ContainerKind::Xenos, &data)[0].is_err());
    let e = formats::translate(ContainerKind::Xenos, &data, 0, &TranslateOptions::default()).expect_err("rejected");
    assert!(matches!(e, ShaderError::Xenos(XenosError::UnknownAluOpcode { vector: 31, .. })), "{e:?}");
    // the offset is the slot's, from the start of the container
    let ShaderError::Xenos(XenosError::UnknownAluOpcode { slot, .. }) = e else { unreachable!() };
    let base = shrec::formats::xenos::container::parse(&data).expect("parses").info.microcode_offset as u64;
    assert_eq!(e.offset(), Some(base + u64::from(slot) * 12), "{e:?}");
}

/// A 247-byte DARC whose entries point at overlapping ranges of the archive's own bytes, so
/// each member is again such a DARC (found by `archive_darc` as a 5 s CPU timeout): nothing is
/// compressed, so the per-member ratio never fires, and the scan walked gigabytes of copies down
/// to the nesting cap. The file's own ratio cap (512 times its size, at least 1 MiB) bounds the
/// walk; asserted on the work done (bytes listed by every container opened), not on time.
#[test]
fn overlapping_nested_darc_members_hit_the_file_ratio_cap() {
    let data = input("archive_darc-overlapping-nested-members.bin");
    let f = shrec::scan::scan_buffer(std::path::Path::new("self.darc"), &data);
    let listed: u64 = f.containers.iter().map(|c| c.bytes).sum();
    let limit = shrec::limits::RATIO_FLOOR.max(data.len() as u64 * shrec::limits::MAX_RATIO);
    assert!(listed <= limit, "{listed} bytes listed by {} containers", f.containers.len());
    let capped = f.errors.iter().map(|e| e.to_string()).find(|e| e.contains("limit per archive"));
    let e = capped.expect("the file's cap is reported");
    assert!(e.starts_with("self.darc!") && e.contains("darc member: resource cap") && e.contains(&format!("more than {limit} bytes")), "{e}");
}

/// Every regression input, through every container kind's listing and translation: no panic.
#[test]
fn no_regression_input_panics_anywhere() {
    let dir = common::repo().join("tests/fuzz-regressions");
    for f in std::fs::read_dir(dir).unwrap().flatten() {
        let data = std::fs::read(f.path()).unwrap();
        let _ = shrec::scan::scan_bytes(&f.path(), &data);
        for kind in [ContainerKind::Xenos, ContainerKind::Gfd, ContainerKind::Sharcfb, ContainerKind::Dvlb, ContainerKind::Agal] {
            if let Ok(entries) = formats::entries(kind, &data) {
                for e in entries {
                    let _ = formats::translate(kind, &data, e.index, &TranslateOptions::default());
                }
            }
        }
    }
}

/// GFD detection was quadratic (issue 23, B6): every `Gfx2` magic was probed by walking its
/// block chain to the end, so a 4 MiB file holding a GFD file header in the data of each of its
/// 65 535 padding blocks (every header's chain is the rest of the file) took 34 s to scan. Built
/// here; the scan must find the one outer GFD and finish well inside a deadline (it takes
/// milliseconds; the quadratic walk about 2·10⁹ block reads).
#[test]
fn nested_gfd_headers_are_detected_in_linear_time() {
    fn gfd_header(out: &mut Vec<u8>) {
        for w in [u32::from_be_bytes(*b"Gfx2"), 0x20, 7, 1, 2, 0, 0, 0] {
            out.extend_from_slice(&w.to_be_bytes());
        }
    }
    fn block(out: &mut Vec<u8>, block_type: u32, data_size: u32) {
        for w in [u32::from_be_bytes(*b"BLK{"), 0x20, 1, 0, block_type, data_size, 0, 0] {
            out.extend_from_slice(&w.to_be_bytes());
        }
    }
    let nested = |size: usize| {
        let mut data = Vec::with_capacity(size);
        gfd_header(&mut data);
        while data.len() + 0x40 + 0x20 <= size {
            block(&mut data, 2, 0x20); // padding, holding another file header
            gfd_header(&mut data);
        }
        block(&mut data, 1, 0); // end of file
        data
    };
    // The shared-chain probe answers exactly what a walk from each header answers, also when
    // the chain is broken or a header is damaged.
    let mut small = nested(64 << 10);
    // blocks start at 0x20 + 0x40·k, the file headers in their data at 0x40 + 0x40·k
    small[0x8020 + 4..0x8020 + 8].copy_from_slice(&0x10u32.to_be_bytes()); // a block's header size
    small[0x4000 + 8..0x4000 + 0xC].copy_from_slice(&5u32.to_be_bytes()); // a file header's major version
    assert!(shrec::formats::gx2::gfd::probe(&small[0x7FC0..]).is_none() && shrec::formats::gx2::gfd::probe(&small[0x8040..]).is_some());
    let mut chains = shrec::formats::gx2::gfd::ChainEnds::default();
    for offset in (0..small.len()).rev().chain(0..small.len()) {
        let walked = shrec::formats::gx2::gfd::probe(&small[offset..]);
        assert_eq!(shrec::formats::gx2::gfd::probe_at(&small, offset, &mut chains), walked, "offset 0x{offset:X}");
    }
    let data = nested(4 << 20);
    assert_eq!(data.len(), 4 << 20);
    let (tx, rx) = std::sync::mpsc::channel();
    let d = data.clone();
    std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let found = shrec::detect::detect(&d);
        let _ = tx.send((found, shrec::scan::scan_bytes(std::path::Path::new("nested.gsh"), &d), start.elapsed()));
    });
    let (found, (shaders, errors), took) =
        rx.recv_timeout(std::time::Duration::from_secs(10)).expect("detection finishes within 10 s (it was quadratic)");
    eprintln!("detect + scan of 4 MiB of nested GFD headers: {took:?}");
    assert_eq!(found, [shrec::detect::Candidate { kind: ContainerKind::Gfd, offset: 0, len: data.len() }], "the outer file only");
    assert!(shaders.is_empty() && errors.is_empty(), "{shaders:?} {errors:?}");
}
