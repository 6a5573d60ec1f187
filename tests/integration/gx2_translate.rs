//! Every bundled .gsh shader and every shader of the test-written SHARCFB archives (both byte
//! orders) translates to HLSL that the real DXC compiles to DXIL and SPIR-V, and spirv-val
//! accepts the SPIR-V. Also: unsupported instructions are rejected with their mnemonic.

use crate::common;
// the SHARCFB writer of the gx2_containers tests (one binary: its tests run once, there)
use crate::gx2_containers as containers;

use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::gx2::error::{Gx2Error, Opcode};
use shrec::formats::gx2::isa::{AluOp, CfOp};
use shrec::formats::{self, ShaderError, TranslateOptions};
use std::collections::BTreeSet;

fn compile_all(lib: &dxc::DxcLib, kind: ContainerKind, bytes: &[u8], name: &str, seen: &mut BTreeSet<String>) -> usize {
    let entries = formats::entries(kind, bytes).unwrap();
    let mut n = 0;
    for e in &entries {
        let tr = formats::translate(kind, bytes, e.index, &TranslateOptions::default()).unwrap_or_else(|err| panic!("{name} #{}: {err}", e.index));
        let hlsl = shrec::hlsl::write(&tr.module);
        n += 1;
        if !seen.insert(hlsl.clone()) {
            continue; // identical HLSL already compiled
        }
        for target in [Target::Dxil, Target::Spirv] {
            let out = dxc::compile(lib, &hlsl, e.stage, target).unwrap_or_else(|err| panic!("{name} #{} {target:?}: {err}\n{hlsl}", e.index));
            if target == Target::Spirv {
                common::spirv_val(&out, &format!("gx2_{}_{}", name.replace('/', "_"), e.index))
                    .unwrap_or_else(|err| panic!("{name} #{}: {err}", e.index));
            }
        }
    }
    n
}

#[test]
fn every_corpus_shader_and_sharcfb_compiles() {
    let lib = dxc::locate(&Default::default()).expect("DXC");
    let mut seen = BTreeSet::new();
    let mut gsh = 0;
    for f in walkdir::WalkDir::new(common::repo().join("tests/corpus/gx2")).sort_by_file_name() {
        let p = f.unwrap().into_path();
        if p.extension().is_some_and(|x| x == "gsh") {
            let bytes = std::fs::read(&p).unwrap();
            gsh += compile_all(&lib, ContainerKind::Gfd, &bytes, &p.display().to_string(), &mut seen);
        }
    }
    assert_eq!(gsh, 30, "15 VS + 15 PS in the corpus .gsh files");
    let mut sharc = 0;
    for (name, e, bytes, _, _) in containers::archives_from_corpus() {
        sharc += compile_all(&lib, ContainerKind::Sharcfb, &bytes, &format!("{name}-{e:?}"), &mut seen);
    }
    assert_eq!(sharc, 240, "SHARCFB binaries (30 archives × 8)");
    // Same program, same HLSL whichever container carried it.
    // (several corpus files share identical shaders: 27 distinct HLSL texts for 30 shaders)
    assert_eq!(seen.len(), 27, "distinct HLSL texts");
}

#[test]
fn unsupported_instructions_are_rejected_by_name() {
    // A VS whose first ALU group uses MUL_INT24 (not translated) and then EXP_DONE.
    let f = common::repo().join("tests/corpus/gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/textureShader.gsh");
    let bytes = std::fs::read(f).unwrap();
    let mut s = shrec::formats::gx2::gfd::load(&bytes, 0).unwrap();
    // patch ALU group 0 (4 MULs at slot 32) to MUL_INT24 (OP2 0x5B)
    for k in 0..4 {
        let at = 32 * 8 + k * 8 + 4;
        let mut w1 = u32::from_le_bytes(s.program[at..at + 4].try_into().unwrap());
        w1 = (w1 & !(0x7FF << 7)) | (0x5B << 7);
        s.program[at..at + 4].copy_from_slice(&w1.to_le_bytes());
    }
    let err = shrec::formats::gx2::lower::lower(&s).unwrap_err();
    assert!(
        matches!(err, ShaderError::Gx2(Gx2Error::Rejected { op: Opcode::Alu(AluOp::MUL_INT24), pc: 1, reason }) if reason == AluOp::MUL_INT24.status().reason().unwrap()),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("unsupported Latte ALU instruction MUL_INT24 (CF 01): "), "{err}");
    // a CF KILL in a vertex shader
    let mut s2 = shrec::formats::gx2::gfd::load(&bytes, 0).unwrap();
    let w1 = u32::from_le_bytes(s2.program[4..8].try_into().unwrap());
    let w1 = (w1 & !(0x7F << 23)) | (0x18 << 23);
    s2.program[4..8].copy_from_slice(&w1.to_le_bytes());
    let err = shrec::formats::gx2::lower::lower(&s2).unwrap_err();
    assert!(matches!(err, ShaderError::Gx2(Gx2Error::Unsupported { op: Opcode::Cf(CfOp::KILL), pc: 0, .. })), "{err:?}");
}

/// A TEX-clause `MEM` (MEM_RD) outside the scratch model is refused by name with the reason, and
/// the disassembly says which memory it reads: its MEM_OP field (word 0 bits 8-10) tells scratch
/// (0) from the scatter buffer (2). A sample's words read as MEM_RD are not a direct scratch read
/// of the shape compilers write (here: ELEM_SIZE 0); the scatter buffer is refused outright.
/// (Scratch reads of that shape are translated and run: verify_gx2 `scratch_spills`.)
#[test]
fn tex_clause_memory_reads_outside_the_scratch_model_are_refused_and_disassembled() {
    use shrec::formats::gx2::disasm::tex_inst_text;
    use shrec::formats::gx2::isa::{decode, Cf, Clause, TexOp};
    let f = common::repo().join("tests/corpus/gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/textureShader.gsh");
    let bytes = std::fs::read(f).unwrap();
    // the pixel shader samples its texture in a TEX clause
    let pixel = shrec::formats::gx2::gfd::load(&bytes, 1).unwrap();
    let program = decode(&pixel.program).unwrap();
    let tex_at = program
        .cfs
        .iter()
        .find_map(|(cf, clause)| match (&cf.cf, clause) {
            (Cf::Normal { addr, .. }, Clause::Tex(_)) => Some(*addr as usize * 8),
            _ => None,
        })
        .expect("a TEX clause");
    for (mem_op, memory, why) in
        [(2u32, "scatter buffer", "MEM read with MEM_OP 2 (the scatter buffer"), (0, "scratch", "scratch read with ELEM_SIZE 0")]
    {
        let mut s = pixel.clone();
        let w0 = u32::from_le_bytes(s.program[tex_at..tex_at + 4].try_into().unwrap());
        // TEX_INST 2 (MEM), MEM_OP in bits 8-10 (where a sample keeps its resource id)
        let w0 = (w0 & !0x1F & !(0xFF << 8)) | 2 | (mem_op << 8);
        s.program[tex_at..tex_at + 4].copy_from_slice(&w0.to_le_bytes());
        let err = shrec::formats::gx2::lower::lower(&s).unwrap_err();
        assert!(
            matches!(&err, ShaderError::Gx2(Gx2Error::Unsupported { op: Opcode::Tex(TexOp::MEM), what, .. }) if what.starts_with(why)),
            "{err:?}"
        );
        let text = decode(&s.program)
            .unwrap()
            .cfs
            .iter()
            .find_map(|(_, clause)| match clause {
                Clause::Tex(insts) => insts.first().map(tex_inst_text),
                _ => None,
            })
            .unwrap();
        assert!(text.starts_with("MEM ") && text.contains(&format!("MEM_OP({mem_op}: {memory})")), "{text}");
    }
}

/// Decoder errors are typed and carry the byte offset in the program: an unknown OP2 opcode,
/// an unknown CF instruction, a clause past the end of the program, a CF stream without
/// END_OF_PROGRAM.
#[test]
fn decoder_errors_are_typed_with_offsets() {
    use shrec::formats::gx2::error::{ClauseKind, Table};
    use shrec::formats::gx2::isa::decode;
    let f = common::repo().join("tests/corpus/gx2/GaryOderNichts+MultiDRCSpaceDemo/shaders/textureShader.gsh");
    let s = shrec::formats::gx2::gfd::load(&std::fs::read(f).unwrap(), 0).unwrap();
    let w = |p: &[u8], at: usize| u32::from_le_bytes(p[at..at + 4].try_into().unwrap());
    // OP2 0x7F has no row (the table ends at 0x7E)
    let mut p = s.program.clone();
    let at = 32 * 8 + 4;
    let w1 = (w(&p, at) & !(0x7FF << 7)) | (0x7F << 7);
    p[at..at + 4].copy_from_slice(&w1.to_le_bytes());
    assert_eq!(decode(&p), Err(Gx2Error::UnknownOpcode { offset: 32 * 8, pc: None, table: Table::AluOp2, code: 0x7F }));
    // CF_INST 0x1E (past VTX_TC_ACK) in the first CF
    let mut p = s.program.clone();
    let w1 = (w(&p, 4) & !(0x7F << 23)) | (0x1E << 23);
    p[4..8].copy_from_slice(&w1.to_le_bytes());
    assert_eq!(decode(&p), Err(Gx2Error::UnknownOpcode { offset: 0, pc: Some(0), table: Table::Cf, code: 0x1E }));
    // the program cut before its clauses / before END_OF_PROGRAM
    let e = decode(&s.program[..32 * 8]).unwrap_err();
    assert!(matches!(e, Gx2Error::ClausePastEnd { kind: ClauseKind::Alu, addr: 32, offset: 256, .. }), "{e:?}");
    let e = decode(&s.program[..8]).unwrap_err();
    assert!(matches!(e, Gx2Error::NoEnd { offset: 8, len: 8, subroutine: false }), "{e:?}");
    assert_eq!(ShaderError::from(e).offset(), Some(8));
}
