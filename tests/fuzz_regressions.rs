//! Inputs the fuzz targets (`fuzz/`) found crashes with, kept as regression tests: each file is
//! named `<target>-<what it was>.bin` and goes through the same calls as its target. None may
//! panic; the expected outcome of each is asserted.

mod common;

use shrec::detect::ContainerKind;
use shrec::formats::{self, TranslateOptions};

fn input(name: &str) -> Vec<u8> {
    std::fs::read(common::repo().join("tests/fuzz-regressions").join(name)).unwrap()
}

/// What `fuzz/fuzz_targets/translate_<kind>.rs` does; returns each shader's translation result.
fn translate_all(kind: ContainerKind, data: &[u8]) -> Vec<Result<String, String>> {
    let entries = formats::entries(kind, data).map_err(|e| e.reason).expect("the container lists its shaders");
    entries
        .iter()
        .map(|e| {
            let opts = TranslateOptions::default();
            let _ = formats::disasm(kind, data, e.index, &opts);
            formats::translate(kind, data, e.index, &opts).map(|t| shrec::hlsl::write(&t.module)).map_err(|e| e.reason)
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
    let r = translate_all(ContainerKind::Agal, &input("translate_agal-m33-iid-matrix.bin"));
    let e = r[0].as_ref().expect_err("rejected");
    assert!(e.contains("m33 reads its matrix from iid0–iid2, past the register file"), "{e}");
}

/// `m44 op, v5.x, v7.x` in a vertex program: rows v7–v10, past AGAL1's 8 varyings (the HLSL
/// writer indexed a missing output). Now a decoding error naming the rows.
#[test]
fn agal_matrix_rows_past_the_register_file_are_an_error() {
    let r = translate_all(ContainerKind::Agal, &input("translate_agal-m44-rows-past-varyings.bin"));
    let e = r[0].as_ref().expect_err("rejected");
    assert!(e.contains("m44 reads its matrix from v7–v10, past the register file"), "{e}");
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
    let c = shrec::formats::xenos::container::parse(&data).expect("parses");
    let names: Vec<String> = shrec::formats::xenos::lower::sampler_names(&c).into_values().collect();
    assert!(names.iter().any(|n| n.starts_with("_shrec_re")) && !names.iter().any(|n| n.starts_with("shrec_")), "{names:?}");
}

/// ALU opcode fields are wider than the opcode tables: vector opcode 31 indexed past them.
#[test]
fn xenos_nonexistent_alu_opcode_is_an_error() {
    let r = translate_all(ContainerKind::Xenos, &input("translate_xenos-alu-opcode-31.bin"));
    let e = r[0].as_ref().expect_err("rejected");
    assert!(e.contains("ALU opcode vector 31") && e.contains("does not exist"), "{e}");
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
