//! GX2 stream-out (MEM_STREAM0-3, docs/gx2.md "GX2 stream-out"): the IR table, the HLSL
//! signature (`SHREC_SO<n>` as `uint<k>`), the SPIR-V of both back ends (`TransformFeedback`,
//! `Xfb`, `XfbBuffer` / `XfbStride` / `Offset` on exactly the stream-out variables, spirv-val
//! clean, the same interface from DXC and from the direct back end), the cache metadata, and the
//! forms rejected by name. shrec-verify's `stream_out` runs them on lavapipe and compares the
//! captured buffers with its interpreter.

use crate::common;

use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, ExecutionMode, Op};
use shrec::dxc::{self, Target};
use shrec::formats::gx2::error::{Gx2Error, Opcode};
use shrec::formats::gx2::isa::ExpOp;
use shrec::formats::gx2::shader_struct::{Gx2Shader, ShaderKind};
use shrec::formats::ShaderError;
use shrec::ir::{Semantic, StreamOutEntry};

/// MEM_STREAMn word pair: TYPE `ty`, ARRAY_BASE `base` (dwords), RW_GPR `gpr`, ELEM_SIZE
/// `elem`, ARRAY_SIZE `size`, COMP_MASK `mask`, BURST_COUNT `burst`.
#[allow(clippy::too_many_arguments)]
fn stream(n: u32, ty: u32, base: u32, gpr: u32, elem: u32, size: u32, mask: u32, burst: u32) -> [u32; 2] {
    [base | ty << 13 | gpr << 15 | elem << 30, size | mask << 12 | burst << 17 | (0x20 + n) << 23 | 1 << 31]
}

/// EXP_DONE of R`gpr` to POS0, END_OF_PROGRAM.
fn pos_done(gpr: u32) -> [u32; 2] {
    [60 | 1 << 13 | gpr << 15, 1 << 3 | 2 << 6 | 3 << 9 | 1 << 21 | 0x28 << 23 | 1 << 31]
}

/// A GX2 VS running `cfs` (CF word pairs; the last ends the program), with stream-out strides
/// `strides` (bytes; `None`: hasStreamOut 0).
fn shader(cfs: &[[u32; 2]], strides: Option<[u32; 4]>) -> Gx2Shader {
    let mut words = vec![0u32; ShaderKind::Vertex.struct_size() / 4];
    words[0] = 8;
    words[0x10 / 4..0x10 / 4 + 10].fill(0xFFFF_FFFF);
    for k in 0..32 {
        words[0x44 / 4 + k] = 0xFF;
    }
    if let Some(s) = strides {
        words[0x110 / 4] = 1;
        words[0x114 / 4..0x114 / 4 + 4].copy_from_slice(&s);
    }
    let program = cfs.iter().flatten().flat_map(|w| w.to_le_bytes()).collect();
    Gx2Shader {
        kind: ShaderKind::Vertex,
        words,
        uniform_blocks: vec![],
        uniform_vars: vec![],
        initial_values: vec![],
        loop_vars: vec![],
        sampler_vars: vec![],
        attrib_vars: vec![],
        program,
        copy_program: vec![],
    }
}

/// (location, XfbBuffer, XfbStride, Offset) of every output variable with xfb decorations, and
/// whether the module declares the capability and the execution mode.
fn xfb_of(spirv: &[u8]) -> (Vec<(u32, u32, u32, u32)>, bool, bool) {
    let words: Vec<u32> = spirv.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let m = rspirv::dr::load_words(words).expect("rspirv parses the module");
    let dec = |target: u32, d: Decoration| {
        m.annotations.iter().find_map(|a| match (&a.operands[0], &a.operands[1], a.operands.get(2)) {
            (Operand::IdRef(t), Operand::Decoration(x), Some(Operand::LiteralBit32(v))) if *t == target && *x == d => Some(*v),
            _ => None,
        })
    };
    let mut out = Vec::new();
    for v in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let id = v.result_id.unwrap();
        if let Some(b) = dec(id, Decoration::XfbBuffer) {
            out.push((dec(id, Decoration::Location).unwrap(), b, dec(id, Decoration::XfbStride).unwrap(), dec(id, Decoration::Offset).unwrap()));
        }
    }
    out.sort();
    let cap = m.capabilities.iter().any(|c| matches!(c.operands[0], Operand::Capability(rspirv::spirv::Capability::TransformFeedback)));
    let mode = m.execution_modes.iter().any(|e| matches!(e.operands[1], Operand::ExecutionMode(ExecutionMode::Xfb)));
    (out, cap, mode)
}

/// Buffers 0-3, masks with gaps (xz → two outputs), a second buffer record: the table, the HLSL,
/// both SPIR-V back ends and the metadata agree on every placement.
#[test]
fn stream_out_placements_in_ir_hlsl_spirv_and_metadata() {
    let s = shader(
        &[
            stream(0, 0, 0, 0, 0, 0xFFF, 0xF, 0),
            stream(1, 2, 3, 0, 0, 0xFFF, 0b0101, 0),
            stream(3, 0, 1, 0, 0, 1, 0b0010, 0),
            stream(0, 0, 4, 0, 0, 2, 0b0110, 0),
            pos_done(0),
        ],
        Some([32, 24, 0, 12]),
    );
    let m = shrec::formats::gx2::lower::lower(&s).unwrap();
    shrec::ir::validate(&m).unwrap();
    let so = m.ext.stream_out.clone().expect("a stream-out table");
    assert_eq!(so.strides, [32, 24, 0, 12]);
    let placed: Vec<(u32, u32, u8)> =
        so.entries.iter().map(|e: &StreamOutEntry| (e.buffer, e.offset, m.outputs[e.output as usize].components)).collect();
    // buffer 0: xyzw at 0, yz at 5; buffer 1: x at 3, z at 5; buffer 3: y at 2
    assert_eq!(placed, [(0, 0, 4), (0, 5, 2), (1, 3, 1), (1, 5, 1), (3, 2, 1)]);
    let locations: Vec<u32> = m
        .outputs
        .iter()
        .filter_map(|o| match o.semantic {
            Semantic::StreamOut { location, .. } => Some(location),
            _ => None,
        })
        .collect();
    assert_eq!(locations, [31, 30, 29, 28, 27]);

    let hlsl = shrec::hlsl::write(&m);
    for line in
        ["uint4 so0_0 : SHREC_SO0;", "uint so1_3 : SHREC_SO1;", "uint so1_5 : SHREC_SO2;", "uint so3_2 : SHREC_SO3;", "uint2 so0_5 : SHREC_SO4;"]
    {
        assert!(hlsl.contains(line), "{line} missing:\n{hlsl}");
    }
    assert!(hlsl.contains("output.so0_5 = asuint(so0_5.xy);"), "{hlsl}");
    let decls = shrec::hlsl::declared_xfb(&hlsl).unwrap();
    assert_eq!(decls.len(), 5, "{hlsl}");

    let want = vec![(27, 0, 32, 20), (28, 3, 12, 8), (29, 1, 24, 20), (30, 1, 24, 12), (31, 0, 32, 0)];
    let direct = shrec::spirv::write(&m, &shrec::spirv::Options::default()).unwrap();
    let direct: Vec<u8> = direct.iter().flat_map(|w| w.to_le_bytes()).collect();
    common::spirv_val(&direct, "stream-out-direct").unwrap();
    assert_eq!(xfb_of(&direct), (want.clone(), true, true));
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let via_dxc = dxc::compile(&lib, &hlsl, m.stage, Target::Spirv).unwrap();
    common::spirv_val(&via_dxc, "stream-out-dxc").unwrap();
    assert_eq!(xfb_of(&via_dxc), (want, true, true));
    // the DXIL signature carries the SHREC_SO elements a D3D12 stream-output declaration names
    let dxil = dxc::compile(&lib, &hlsl, m.stage, Target::Dxil).unwrap();
    assert!(dxil.windows(8).any(|w| w == b"SHREC_SO"), "no SHREC_SO in the DXIL signature");

    let meta = shrec::formats::gx2::lower::meta(&s, &m);
    let tag = shrec::formats::gx2::lower::META_STREAM_OUT_TAG;
    assert_eq!(meta, [tag, 5, 32, 24, 0, 12, 0, 0, 4, 0, 0, 5, 2, 4, 1, 3, 1, 1, 1, 5, 1, 2, 3, 2, 1, 3]);
}

/// The forms shrec does not translate are refused with the export named.
#[test]
fn stream_out_forms_not_modelled_are_rejected_by_name() {
    let strides = Some([64, 64, 64, 64]);
    let cases: Vec<(Gx2Shader, &str)> = vec![
        (shader(&[stream(0, 1, 0, 0, 0, 0xFFF, 0xF, 0), pos_done(0)], strides), "TYPE 1"),
        (shader(&[stream(0, 0, 0, 0, 3, 0xFFF, 0xF, 0), pos_done(0)], strides), "ELEM_SIZE 3"),
        (shader(&[stream(0, 0, 0, 0, 0, 0xFFF, 0xF, 1), pos_done(0)], strides), "BURST_COUNT 1"),
        (shader(&[stream(0, 0, 0, 0, 0, 2, 0xF, 0), pos_done(0)], strides), "past ARRAY_SIZE 2"),
        (shader(&[stream(0, 0, 14, 0, 0, 0xFFF, 0xF, 0), pos_done(0)], strides), "reach the next vertex's record"),
        (shader(&[stream(2, 0, 0, 0, 0, 0xFFF, 0xF, 0), pos_done(0)], None), "hasStreamOut 0"),
        (shader(&[stream(1, 0, 0, 0, 0, 0xFFF, 0xF, 0), stream(1, 0, 3, 0, 0, 0xFFF, 0x1, 0), pos_done(0)], strides), "writes too"),
    ];
    for (s, why) in cases {
        let err = shrec::formats::gx2::lower::lower(&s).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(
                &err,
                ShaderError::Gx2(Gx2Error::Unsupported { op: Opcode::Exp(ExpOp::MEM_STREAM0 | ExpOp::MEM_STREAM1 | ExpOp::MEM_STREAM2), .. })
            ),
            "{why}: {err:?}"
        );
        assert!(text.contains(why) && text.contains("MEM_STREAM"), "{why}: {text}");
    }
    // under flow control: PUSH (depth 1), the export, POP
    let push = [3, 0x0B << 23 | 1 << 31];
    let pop = [0, 1 | 0x0E << 23 | 1 << 31];
    let s = shader(&[push, stream(0, 0, 0, 0, 0, 0xFFF, 0xF, 0), pop, pos_done(0)], strides);
    let text = shrec::formats::gx2::lower::lower(&s).unwrap_err().to_string();
    assert!(text.contains("under flow control (at mask-stack depth 1)"), "{text}");
    // in a pixel shader
    let mut ps = shader(&[stream(0, 0, 0, 0, 0, 0xFFF, 0xF, 0), pos_done(0)], strides);
    ps.kind = ShaderKind::Pixel;
    ps.words.truncate(ShaderKind::Pixel.struct_size() / 4);
    let text = shrec::formats::gx2::lower::lower(&ps).map(|_| ()).unwrap_err().to_string();
    assert!(text.contains("MEM_STREAM0 in a pixel shader"), "{text}");
}
