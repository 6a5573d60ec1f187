//! Xenos features the corpus lacks, on the libxenon cube pixel shader with its CF program edited:
//! jumps (pc-dispatch lowering through DXC), boolean conditions, and the explicit rejections.

use crate::common;

use common::{repo, spirv_val};
use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::xenos::error::XenosError;
use shrec::formats::xenos::ucode::FetchOp;
use shrec::formats::{self, ShaderError, TranslateOptions};
use shrec::Stage;

const PS: &str = "tests/corpus/xenos/Free60Project+libxenon/devkitxenon/examples/xenon/graphics/cube/files/ps.psu";

fn base() -> Vec<u8> {
    std::fs::read(repo().join(PS)).unwrap()
}

fn be(b: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn put(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_be_bytes());
}

fn microcode_offset(b: &[u8]) -> usize {
    let so = be(b, 0x18) as usize;
    be(b, 4) as usize + be(b, so) as usize
}

/// Replaces CF instruction 1 (the `alloc colors` of triple 0) by a 48-bit value.
fn set_cf1(b: &mut [u8], cf: u64) {
    let m = microcode_offset(b);
    let d1 = be(b, m + 4);
    put(b, m + 4, (d1 & 0xFFFF) | ((cf as u32 & 0xFFFF) << 16));
    put(b, m + 8, (cf >> 16) as u32);
}

fn compile(bytes: &[u8]) -> String {
    let t = formats::translate(ContainerKind::Xenos, bytes, 0, &TranslateOptions::default()).unwrap();
    let hlsl = shrec::hlsl::write(&t.module);
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    dxc::compile_with_spec_constants(&lib, &hlsl, Stage::Pixel, Target::Dxil, t.spec_constants_mask).unwrap_or_else(|e| panic!("{e}\n{hlsl}"));
    let s =
        dxc::compile_with_spec_constants(&lib, &hlsl, Stage::Pixel, Target::Spirv, t.spec_constants_mask).unwrap_or_else(|e| panic!("{e}\n{hlsl}"));
    spirv_val(&s, "synthetic").unwrap();
    hlsl
}

const JMP: u64 = 11 << 44;

#[test]
fn unconditional_jump_uses_pc_dispatch() {
    let mut b = base();
    set_cf1(&mut b, JMP | 1 << 13 | 2);
    let hlsl = compile(&b);
    assert!(hlsl.contains("while (true)"), "{hlsl}");
    let d = formats::disasm(ContainerKind::Xenos, &b, 0, &TranslateOptions::default()).unwrap();
    assert!(d.contains("jmp L2"), "{d}");
}

#[test]
fn boolean_conditional_jump_reads_g_booleans() {
    let mut b = base();
    // cjmp b3, L2 (condition true): pixel booleans are bits 16-31 of SharedConstants c16.x.
    set_cf1(&mut b, JMP | 3 << 34 | 1 << 42 | 2);
    let hlsl = compile(&b);
    assert!(hlsl.contains(">> 19u"), "{hlsl}");
    let d = formats::disasm(ContainerKind::Xenos, &b, 0, &TranslateOptions::default()).unwrap();
    assert!(d.contains("cjmp b3, L2"), "{d}");
}

#[test]
fn predicated_backward_jump_compiles() {
    let mut b = base();
    // (!p0) jmp L0: p0 starts false in the IR (all registers 0) — a real loop shape for DXC.
    set_cf1(&mut b, JMP | 1 << 14);
    compile(&b);
}

/// call / ret, a loop over a run-time integer constant and b16+ compile for DXIL and SPIR-V; the
/// last two read shrec's SharedConstants extension (only shaders that need it declare it).
#[test]
fn call_runtime_loop_and_high_booleans_compile() {
    // call L2 (unconditional): pc dispatch with a return-address stack.
    let mut b = base();
    set_cf1(&mut b, 9 << 44 | 1 << 13 | 2);
    let hlsl = compile(&b);
    assert!(hlsl.contains("while (true)") && !hlsl.contains("SHREC_XENOS_LOOP"), "{hlsl}");
    let d = formats::disasm(ContainerKind::Xenos, &b, 0, &TranslateOptions::default()).unwrap();
    assert!(d.contains("call L2"), "{d}");
    // loop i5 (no literal defi): the PS loop constants of the extension, word 32 + 5.
    let mut b = base();
    set_cf1(&mut b, 7 << 44 | 5 << 16 | 3);
    let hlsl = compile(&b);
    assert!(hlsl.contains("SharedConstants + 480 + (I) * 4") && hlsl.contains("shrec_XenosLoops[16] : packoffset(c22)"), "{hlsl}");
    // cjmp b200, L2: PS boolean word 6 of the extension, bit 8.
    let mut b = base();
    set_cf1(&mut b, JMP | 200 << 34 | 1 << 42 | 2);
    let hlsl = compile(&b);
    assert!(hlsl.contains("SharedConstants + 320 + (W) * 4") && hlsl.contains("SHREC_XENOS_BOOLS(6)"), "{hlsl}");
    assert!(!base_hlsl().contains("shrec_Xenos"), "a shader without them does not declare the extension");
}

fn base_hlsl() -> String {
    compile(&base())
}

/// tfetch3D / tfetchCube with texel offsets (x, y, z) or unnormalised coordinates, and
/// getCompTexLOD3D with unnormalised coordinates (slot 2 = the tfetch2D made 3D / cube), compile
/// for DXIL and SPIR-V (spirv-val) and read the texture's size (executed in `verify_xenos`
/// `tfetch3d_offsets_and_unnormalised_coordinates`, `tfetch_cube_offsets_and_unnormalised_coordinates`,
/// `comp_tex_lod`).
#[test]
fn tfetch3d_and_cube_offsets_and_unnormalised_coordinates_compile() {
    let m = microcode_offset(&base()) + 2 * 12;
    for (dim, heap) in [(2, "g_Texture3DDescriptorHeap["), (3, "g_TextureCubeDescriptorHeap[")] {
        // offset x +0.5, offset z −1 (5-bit field 0x1E = −2 half texels), unnormalised
        for (word, bits) in [(2, 1 << 16), (2, 0x1E << 26), (0, 1 << 25)] {
            let mut b = base();
            let d2 = be(&b, m + 8);
            put(&mut b, m + 8, (d2 & !(3 << 14)) | dim << 14);
            let v = be(&b, m + 4 * word);
            put(&mut b, m + 4 * word, v | bits);
            let hlsl = compile(&b);
            assert!(hlsl.contains(heap), "{hlsl}");
            // a cube's z offset moves the face (no size); everything else reads the size
            let sized = !(dim == 3 && word == 2 && bits == 0x1E << 26);
            assert_eq!(hlsl.contains(&format!("shrec_tex_size({heap}")), sized, "{hlsl}");
        }
    }
    let d0 = be(&base(), m);
    let mut b = base();
    put(&mut b, m, (d0 & !0x1F) | 17 | 1 << 25);
    let d2 = be(&b, m + 8);
    put(&mut b, m + 8, (d2 & !(3 << 14)) | 2 << 14);
    let hlsl = compile(&b);
    assert!(hlsl.contains("CalculateLevelOfDetailUnclamped(") && hlsl.contains("shrec_tex_size(g_Texture3DDescriptorHeap["), "{hlsl}");
}

#[test]
fn unsupported_features_are_rejected_with_the_instruction() {
    // the fetch opcode without lowering is named, with its reason
    let m = microcode_offset(&base()) + 2 * 12;
    let d0 = be(&base(), m);
    let mut b = base();
    put(&mut b, m, (d0 & !0x1F) | 16);
    let e = formats::translate(ContainerKind::Xenos, &b, 0, &TranslateOptions::default()).unwrap_err();
    let reason = FetchOp::GetTextureBorderColorFrac.info().status.reason();
    assert!(
        matches!(&e, ShaderError::Xenos(XenosError::Rejected { at, op: "getBCF", reason: r }) if at.ends_with("slot 2 (getBCF)") && Some(*r) == reason),
        "{e:?}"
    );
    // getCompTexLOD{2D,Cube} are translated (cube: `cube_lod_translations_compile`), also with
    // unnormalised cube-map coordinates (s, t divided by the face size)
    let mut b = base();
    put(&mut b, m, (d0 & !0x1F) | 17);
    assert!(compile(&b).contains("CalculateLevelOfDetailUnclamped("));
    let d2 = be(&b, m + 8);
    put(&mut b, m + 8, (d2 & !(3 << 14)) | 3 << 14);
    put(&mut b, m, (d0 & !0x1F) | 17 | 1 << 25);
    let hlsl = compile(&b);
    assert!(hlsl.contains("CalculateLevelOfDetailUnclamped(") && hlsl.contains("shrec_tex_size(g_TextureCubeDescriptorHeap["), "{hlsl}");
    // getWeights into W (the mip lerp factor; this fetch writes xyzw)
    let mut b = base();
    put(&mut b, m, (d0 & !0x1F) | 19);
    let e = formats::translate(ContainerKind::Xenos, &b, 0, &TranslateOptions::default()).unwrap_err();
    assert!(
        matches!(&e, ShaderError::Xenos(XenosError::Unsupported { at, what }) if at.ends_with("slot 2 (getWeights)") && what.contains("mip lerp factor")),
        "{e:?}"
    );
}

/// Slot 2 (the tfetch2D) as getCompTexLODCube (LOD query at the direction rebuilt from the face
/// coordinates), as getCompTexLOD2D without UseComputedLOD and with UseRegisterGradients (0, as
/// Xenia reads it), and as tfetchCube with UseComputedLOD and UseRegisterGradients (SampleGrad on
/// the TextureCube with the register gradients): each compiles for DXIL and SPIR-V (spirv-val);
/// executed in `verify_xenos` (`comp_tex_lod_cube`, `comp_tex_lod_without_derivatives`,
/// `cube_register_gradients`).
#[test]
fn cube_lod_translations_compile() {
    let m = microcode_offset(&base()) + 2 * 12;
    let [d0, d1, d2] = [0, 4, 8].map(|o| be(&base(), m + o));
    // (opcode, word 1 with UseComputedLOD (bit 28) set or cleared, word 2 with the dimension and
    // UseRegisterGradients (bit 0))
    let cube = (d2 & !(3 << 14)) | 3 << 14;
    let lod_query = |hlsl: &str| hlsl.contains("CalculateLevelOfDetailUnclamped(");
    let with = |op: u32, w1: u32, w2: u32| {
        let mut b = base();
        put(&mut b, m, (d0 & !0x1F) | op);
        put(&mut b, m + 4, w1);
        put(&mut b, m + 8, w2);
        compile(&b)
    };
    let hlsl = with(17, d1 | 1 << 28, cube);
    assert!(lod_query(&hlsl) && hlsl.contains("g_TextureCubeDescriptorHeap["), "{hlsl}");
    for (w1, w2) in [(d1 & !(1 << 28), d2), (d1 | 1 << 28, d2 | 1)] {
        let hlsl = with(17, w1, w2);
        assert!(!lod_query(&hlsl) && hlsl.contains("as Xenia's translators read it"), "{hlsl}");
    }
    let hlsl = with(1, d1 | 1 << 28, cube | 1);
    assert!(hlsl.contains(".SampleGrad(") && hlsl.contains("g_TextureCubeDescriptorHeap["), "{hlsl}");
}

/// Memory export from a pixel shader (Xenia exports from pixel shaders too): slot 4's export of
/// oC0 goes to eA (32), then to eM0 (33); both compile for DXIL and SPIR-V (spirv-val) with the
/// g_MemExport buffer (executed in `verify_xenos` `memexport` / `memexport_pixel`).
#[test]
fn pixel_shader_memory_export_compiles() {
    for reg in [32, 33] {
        let mut b = base();
        let a = microcode_offset(&b) + 4 * 12;
        let v = be(&b, a);
        put(&mut b, a, (v & !0x3F) | reg);
        let hlsl = compile(&b);
        assert!(hlsl.contains("#define SHREC_XENOS_MEMEXPORT 1") && hlsl.contains("shrec_xenos_memexport_format("), "{hlsl}");
        // what stores nothing, and whose rounding the 16-bit float formats use, is said in the output
        assert!(hlsl.contains("store NOTHING") && hlsl.contains("16-bit float formats round as the host's f32tof16"), "{hlsl}");
        // eM0 is stored at `alloc` and at the end (each behind its written flag)
        assert_eq!(hlsl.matches("shrec_xenos_memexport(asuint(").count(), if reg == 33 { 2 } else { 0 }, "{hlsl}");
    }
}

/// The cube vector op and a cube-dimension tfetch (translated since `formats::cube`) compile for
/// DXIL and SPIR-V and sample the TextureCube heap (executed in `verify_xenos` `cube_sample`).
#[test]
fn cube_op_and_cube_fetch_compile() {
    let mut b = base();
    // slot 2: tfetch2D → tfetchCube (dimension bits 14-15 of word 2)
    let m = microcode_offset(&b) + 2 * 12;
    let v = be(&b, m + 8);
    put(&mut b, m + 8, v | 3 << 14);
    // slot 3: dp3 → cube
    let a = microcode_offset(&b) + 3 * 12;
    let v = be(&b, a + 8);
    put(&mut b, a + 8, (v & !(0x1F << 24)) | 18 << 24);
    let d = formats::disasm(ContainerKind::Xenos, &b, 0, &TranslateOptions::default()).unwrap();
    assert!(d.contains("tfetchCube") && d.contains("cube "), "{d}");
    let hlsl = compile(&b);
    assert!(hlsl.contains("g_TextureCubeDescriptorHeap[") && hlsl.contains("_TextureCubeDescriptorIndex"), "{hlsl}");
}
