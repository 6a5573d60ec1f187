//! Every DVLE of the bundled PICA corpus (66: 63 vertex, 3 geometry) translates to HLSL that the
//! real DXC compiles to DXIL and SPIR-V, and spirv-val accepts the SPIR-V.

use crate::common;

use common::{repo, spirv_val};
use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::{self, TranslateOptions};
use shrec::{hlsl, Stage};
use std::path::PathBuf;

/// Every bundled .shbin, sorted.
fn shbins() -> Vec<PathBuf> {
    common::files_with_extension(&repo().join("tests/corpus/pica"), "shbin")
}

#[test]
fn every_corpus_dvle_compiles_to_dxil_and_valid_spirv() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).expect("DXC");
    let mut count = 0;
    let mut stages = [0usize; 3];
    let mut failures = vec![];
    let mut structured = 0;
    let mut dispatch = vec![];
    for f in shbins() {
        let bytes = std::fs::read(&f).unwrap();
        let len = shrec::formats::pica::dvlb::probe(&bytes).unwrap();
        let entries = formats::entries(ContainerKind::Dvlb, &bytes[..len]).unwrap();
        for e in entries {
            count += 1;
            let name = format!("{}#{}", f.strip_prefix(repo()).unwrap().display(), e.index);
            let t = match formats::translate(ContainerKind::Dvlb, &bytes[..len], e.index, &TranslateOptions::default()) {
                Ok(t) => t,
                Err(err) => {
                    failures.push(format!("{name}: translate: {err}"));
                    continue;
                }
            };
            assert_eq!(t.module.stage, e.stage);
            if shrec::formats::pica::lower::is_structured(&t.module) {
                structured += 1;
            } else {
                let why = t.module.header_comments.iter().find(|c| c.starts_with("pc-dispatch because")).cloned().unwrap_or_default();
                dispatch.push(format!("{name}: {why}"));
            }
            stages[e.stage.abi_id() as usize] += 1;
            let text = hlsl::write(&t.module);
            for target in [Target::Dxil, Target::Spirv] {
                match dxc::compile(&lib, &text, e.stage, target) {
                    Ok(bin) => {
                        if target == Target::Spirv {
                            if let Err(m) = spirv_val(&bin, &name.replace(['/', '#', '+'], "_")) {
                                failures.push(format!("{name}: spirv-val: {m}"));
                            }
                        }
                    }
                    Err(m) => failures.push(format!("{name}: {}: {m}\n{text}", target.name())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    common::log_uncaptured(&format!(
        "pica corpus control flow: {structured} of {count} DVLEs structured, {} pc-dispatch\n{}",
        dispatch.len(),
        dispatch.join("\n")
    ));
    assert_eq!(structured + dispatch.len(), count);
    // Real shaders nest their scopes (picasso only assembles nested ifc/ifu/for/call forms).
    assert!(structured * 10 >= count * 9, "only {structured} of {count} corpus DVLEs structured");
    assert_eq!(count, 66);
    assert_eq!((stages[Stage::Vertex.abi_id() as usize], stages[Stage::Geometry.abi_id() as usize]), (63, 3));
}

/// DVOJ (unlinked shader object): detected at the start of a file and reported as unsupported
/// with the reason; no shader is listed; the parser refuses it with the same reason.
#[test]
fn dvoj_is_reported_unsupported() {
    let mut bytes = b"DVOJ".to_vec();
    bytes.extend([1, 0, 0, 0, 0x20, 0, 0, 0]);
    bytes.resize(64, 0);
    let (shaders, errors) = shrec::scan::scan_bytes(std::path::Path::new("x.shbin"), &bytes);
    assert!(shaders.is_empty());
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.kind, Some(shrec::detect::ContainerKind::Dvlb));
    assert!(e.reason.contains("DVOJ") && e.reason.contains("not supported"), "{}", e.reason);
    let p = shrec::formats::pica::dvlb::parse_program(&bytes).expect_err("DVOJ must be refused");
    assert!(
        matches!(
            &p,
            formats::ShaderError::Pica(formats::pica::error::PicaError::Container {
                offset: Some(0),
                fault: formats::container_fault::ContainerFault::Unsupported(_)
            })
        ),
        "{p:?}"
    );
    // A DVOJ magic inside a file (not at its start) is not reported.
    let mut later = vec![0u8; 16];
    later.extend(&bytes);
    assert!(shrec::scan::scan_bytes(std::path::Path::new("y.bin"), &later).1.is_empty());
}
