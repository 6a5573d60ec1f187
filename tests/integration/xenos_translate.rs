//! Every Xenos corpus container → IR → HLSL → DXC (DXIL and SPIR-V), SPIR-V through spirv-val.

use crate::common;

use common::{repo, spirv_val};
use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::{self, TranslateOptions};
use std::collections::BTreeMap;

fn corpus() -> BTreeMap<u64, (String, Vec<u8>)> {
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus/xenos"));
    let mut m = BTreeMap::new();
    let mut found = 0;
    for s in scan.shaders {
        found += 1;
        m.entry(s.key).or_insert_with(|| (format!("{:?}", s), shrec::scan::read_container(&s).unwrap()));
    }
    assert_eq!(found, 33, "containers found in tests/corpus/xenos");
    m
}

#[test]
fn every_corpus_shader_compiles_to_dxil_and_valid_spirv() {
    let shaders = corpus();
    assert_eq!(shaders.len(), 28, "distinct keys");
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let mut ok = 0;
    let mut failures = Vec::new();
    for (key, (name, bytes)) in &shaders {
        let t = match formats::translate(ContainerKind::Xenos, bytes, 0, &TranslateOptions::default()) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{key:016X} {name}: translate: {e}"));
                continue;
            }
        };
        let hlsl = shrec::hlsl::write(&t.module);
        let stage = t.module.stage;
        match dxc::compile_with_spec_constants(&lib, &hlsl, stage, Target::Dxil, t.spec_constants_mask) {
            Ok(d) => assert_eq!(&d[..4], b"DXBC"),
            Err(e) => {
                failures.push(format!("{key:016X}: DXIL: {e}\n{hlsl}"));
                continue;
            }
        }
        match dxc::compile_with_spec_constants(&lib, &hlsl, stage, Target::Spirv, t.spec_constants_mask) {
            Ok(s) => {
                if let Err(d) = spirv_val(&s, &format!("{key:016X}")) {
                    failures.push(format!("{key:016X}: spirv-val: {d}"));
                    continue;
                }
            }
            Err(e) => {
                failures.push(format!("{key:016X}: SPIR-V: {e}"));
                continue;
            }
        }
        ok += 1;
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(ok, 28);
}
