//! The Xenos runtime ABI is XenosRecomp's (shader_common.h, Xenos section): every corpus shader's
//! SPIR-V is reflected with rspirv (push-constant block of three buffer device addresses, no
//! uniform buffers, bindless heaps at set N binding 0, spec constant id 0), its HLSL declares
//! XenosRecomp's DXIL cbuffers / packoffsets / descriptor-index names, and the DXIL of a shader
//! with a non-zero mask is a lib_6_3 library that only links with `g_SpecConstants()`.

use crate::common;

use common::{repo, spirv_val, xenos_corpus as corpus};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass};
use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::{self, Stage, TranslateOptions, Translation};
use shrec::ir::{Index, RegFile};
use std::collections::BTreeSet;

fn translate(bytes: &[u8]) -> Translation {
    formats::translate(ContainerKind::Xenos, bytes, 0, &TranslateOptions::default()).unwrap()
}

fn words(spirv: &[u8]) -> Vec<u32> {
    spirv.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn lit(o: &Operand) -> u32 {
    match o {
        Operand::LiteralBit32(v) => *v,
        o => panic!("expected a literal, got {o:?}"),
    }
}

fn id(o: &Operand) -> u32 {
    match o {
        Operand::IdRef(v) => *v,
        o => panic!("expected an id, got {o:?}"),
    }
}

fn decorations(m: &Module, target: u32, d: Decoration) -> Vec<&Instruction> {
    m.annotations
        .iter()
        .filter(|i| i.class.opcode == Op::Decorate && id(&i.operands[0]) == target && i.operands[1] == Operand::Decoration(d))
        .collect()
}

fn def(m: &Module, target: u32) -> &Instruction {
    m.types_global_values.iter().find(|i| i.result_id == Some(target)).unwrap_or_else(|| panic!("%{target} not defined"))
}

/// Pointee type of a pointer type id, skipping runtime/fixed arrays.
fn pointee(m: &Module, ptr_type: u32) -> &Instruction {
    let p = def(m, ptr_type);
    assert_eq!(p.class.opcode, Op::TypePointer);
    let mut t = def(m, id(&p.operands[1]));
    while matches!(t.class.opcode, Op::TypeRuntimeArray | Op::TypeArray) {
        t = def(m, id(&t.operands[0]));
    }
    t
}

struct Interface {
    /// (set, binding, pointee opcode) of every descriptor.
    descriptors: BTreeSet<(u32, u32, Op)>,
    push_constant_members: Vec<(u32, u32)>, // (bit width, offset)
    spec_ids: Vec<u32>,
}

fn reflect(spirv: &[u8]) -> Interface {
    let m = rspirv::dr::load_words(words(spirv)).expect("rspirv parses the module");
    let mut descriptors = BTreeSet::new();
    let mut push = Vec::new();
    for v in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let var = v.result_id.unwrap();
        let class = match v.operands[0] {
            Operand::StorageClass(c) => c,
            _ => unreachable!(),
        };
        match class {
            StorageClass::PushConstant => {
                let block = pointee(&m, v.result_type.unwrap());
                assert_eq!(block.class.opcode, Op::TypeStruct);
                let sid = block.result_id.unwrap();
                for (k, member) in block.operands.iter().enumerate() {
                    let mt = def(&m, id(member));
                    assert_eq!(mt.class.opcode, Op::TypeInt, "push-constant member {k} is an integer");
                    let offset = m
                        .annotations
                        .iter()
                        .find(|i| {
                            i.class.opcode == Op::MemberDecorate
                                && id(&i.operands[0]) == sid
                                && lit(&i.operands[1]) == k as u32
                                && i.operands[2] == Operand::Decoration(Decoration::Offset)
                        })
                        .map(|i| lit(&i.operands[3]))
                        .expect("member offset");
                    push.push((lit(&mt.operands[0]), offset));
                }
            }
            StorageClass::Uniform | StorageClass::UniformConstant | StorageClass::StorageBuffer => {
                let set = decorations(&m, var, Decoration::DescriptorSet);
                let binding = decorations(&m, var, Decoration::Binding);
                assert_eq!((set.len(), binding.len()), (1, 1), "descriptor %{var} has one set and one binding");
                let ty = pointee(&m, v.result_type.unwrap()).class.opcode;
                descriptors.insert((lit(&set[0].operands[2]), lit(&binding[0].operands[2]), ty));
            }
            _ => {}
        }
    }
    let spec_ids = m
        .types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse))
        .flat_map(|i| decorations(&m, i.result_id.unwrap(), Decoration::SpecId).into_iter().map(|d| lit(&d.operands[2])))
        .collect();
    Interface { descriptors, push_constant_members: push, spec_ids }
}

#[test]
fn spirv_interface_is_xenosrecomps() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let mut with_textures = 0;
    for (key, (name, bytes)) in corpus() {
        let t = translate(&bytes);
        let hlsl = shrec::hlsl::write(&t.module);
        let spirv = dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Spirv, t.spec_constants_mask)
            .unwrap_or_else(|e| panic!("{key:016X} {name}: {e}"));
        spirv_val(&spirv, &format!("abi-{key:016X}")).unwrap();
        let i = reflect(&spirv);
        // PushConstants { uint64_t VertexShaderConstants, PixelShaderConstants, SharedConstants; }
        assert_eq!(i.push_constant_members, vec![(64, 0), (64, 8), (64, 16)], "{key:016X} {name}: push-constant block");
        // No uniform buffers at all: constants come through the device addresses. Descriptors are
        // only the heaps: Texture2D[] set 0, Texture3D[] set 1, TextureCube[] set 2, SamplerState[] set 3.
        for &(set, binding, ty) in &i.descriptors {
            let expected = match set {
                0..=2 => Op::TypeImage,
                3 => Op::TypeSampler,
                _ => panic!("{key:016X} {name}: descriptor set {set}"),
            };
            assert_eq!((binding, ty), (0, expected), "{key:016X} {name}: set {set}");
        }
        if !t.module.textures.is_empty() {
            with_textures += 1;
            assert!(i.descriptors.contains(&(3, 0, Op::TypeSampler)), "{key:016X} {name}: sampler heap");
            assert!(i.descriptors.iter().any(|d| d.0 <= 2), "{key:016X} {name}: texture heap");
        }
        // Spec constants: every pixel shader has the alpha test; the mask is exported.
        match t.module.stage {
            Stage::Pixel => assert_ne!(t.spec_constants_mask & 2, 0, "{key:016X} {name}: alpha-test bit"),
            _ => assert_eq!(t.spec_constants_mask & 2, 0),
        }
        if t.spec_constants_mask != 0 {
            assert_eq!(i.spec_ids, vec![0], "{key:016X} {name}: [[vk::constant_id(0)]] g_SpecConstants");
        }
    }
    assert!(with_textures > 0);
}

#[test]
fn dxil_interface_is_xenosrecomps() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    for (key, (name, bytes)) in corpus() {
        let t = translate(&bytes);
        let hlsl = shrec::hlsl::write(&t.module);
        let vertex = t.module.stage == Stage::Vertex;
        let (stage, count, reg) = if vertex { ("Vertex", 256, 0) } else { ("Pixel", 224, 1) };
        assert!(hlsl.contains(&format!("cbuffer {stage}ShaderConstants : register(b{reg}, space4)")), "{key:016X}");
        assert!(hlsl.contains(&format!("float4 shrec_{stage}ShaderConstants[{count}] : packoffset(c0);")), "{key:016X}");
        assert!(hlsl.contains("cbuffer SharedConstants : register(b2, space4)"));
        assert!(hlsl.contains("DEFINE_SHARED_CONSTANTS();"));
        assert!(!hlsl.contains("vk::binding"), "{key:016X}: no per-slot bindings");
        let dxil = dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Dxil, t.spec_constants_mask)
            .unwrap_or_else(|e| panic!("{key:016X} {name}: {e}"));
        assert_eq!(&dxil[..4], b"DXBC");
        assert_eq!(dxc::target_profile(t.module.stage, Target::Dxil, t.spec_constants_mask) == "lib_6_3", t.spec_constants_mask != 0);
        if t.spec_constants_mask != 0 {
            // Not a complete shader on its own: g_SpecConstants() is left for the runtime's linker.
            let e = dxc::compile(&lib, &hlsl, t.module.stage, Target::Dxil).expect_err("stage profile needs g_SpecConstants");
            assert!(matches!(&e, dxc::CompileError::Rejected(d) if d.contains("g_SpecConstants")), "{key:016X}: {e}");
        }
    }
}

#[test]
fn descriptor_indices_follow_the_constant_table() {
    // Every sampler of a corpus constant table gets XenosRecomp's SharedConstants offsets.
    let mut seen = 0;
    for (key, (_, bytes)) in corpus() {
        let c = shrec::formats::xenos::container::parse(&bytes).unwrap();
        let t = translate(&bytes);
        let hlsl = shrec::hlsl::write(&t.module);
        let names = shrec::formats::xenos::lower::sampler_names(&c);
        for (slot, name) in &names {
            seen += 1;
            assert!(name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_'), "{name}");
            for (j, dim) in ["2D", "3D", "Cube"].iter().enumerate() {
                let spirv = format!(
                    "#define {name}_Texture{dim}DescriptorIndex vk::RawBufferLoad<uint>(g_PushConstants.SharedConstants + {})",
                    j as u32 * 64 + slot * 4
                );
                assert!(hlsl.contains(&spirv), "{key:016X}: {spirv}");
                let lane = ['x', 'y', 'z', 'w'][*slot as usize % 4];
                let dxil = format!("uint {name}_Texture{dim}DescriptorIndex : packoffset(c{}.{lane});", j as u32 * 4 + slot / 4);
                assert!(hlsl.contains(&dxil), "{key:016X}: {dxil}");
            }
            let lane = ['x', 'y', 'z', 'w'][*slot as usize % 4];
            assert!(hlsl.contains(&format!("uint {name}_SamplerDescriptorIndex : packoffset(c{}.{lane});", 12 + slot / 4)));
            assert!(hlsl.contains(&format!(
                "#define {name}_SamplerDescriptorIndex vk::RawBufferLoad<uint>(g_PushConstants.SharedConstants + {})",
                192 + slot * 4
            )));
        }
        // Every texture sampled is read through the heaps with those indices.
        for tex in &t.module.textures {
            assert!(tex.tex_var.starts_with("g_Texture") && tex.tex_var.contains("DescriptorIndex]"), "{}", tex.tex_var);
            assert!(tex.smp_var.starts_with("g_SamplerDescriptorHeap["), "{}", tex.smp_var);
        }
    }
    assert!(seen > 0, "the corpus has named samplers");
}

#[test]
fn constant_table_names_are_sanitized_to_identifiers() {
    use shrec::formats::xenos::lower::sanitize;
    assert_eq!(sanitize("$decal"), "_decal");
    assert_eq!(sanitize("@@@@"), "____");
    assert_eq!(sanitize("2tex"), "_2tex");
    assert_eq!(sanitize("g_Sampler"), "g_Sampler");
}

#[test]
fn normals_are_uint4_with_the_r11g11b10_spec_constant_and_texcoords_swap() {
    // A corpus vertex shader whose TEXCOORD0 element is relabelled NORMAL0.
    let path = repo().join("tests/corpus/xenos/LibXenonProject+snes9x-gx/source/xenon/shaders/simple.vs__VSSimple.bin");
    let mut bytes = std::fs::read(&path).unwrap();
    let c = shrec::formats::xenos::container::parse(&bytes).unwrap();
    let e = *c.vertex_elements.iter().find(|e| e.usage == 5 && e.usage_index == 0).expect("TEXCOORD0 element");
    let t = translate(&bytes);
    assert_eq!(t.spec_constants_mask, 0, "texcoords need no spec constant");
    let hlsl = shrec::hlsl::write(&t.module);
    assert!(hlsl.contains(".yxwz"), "tfetchTexcoord swap by g_SwappedTexcoords");
    let at = (0..bytes.len() / 4)
        .map(|i| i * 4)
        .find(|&o| {
            let w = u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
            o >= 0x20 && w & 0xFFF == e.address && (w >> 12) & 0xF == 5 && (w >> 16) & 0xF == 0
        })
        .expect("element word");
    let w = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    bytes[at..at + 4].copy_from_slice(&((w & !0xF000) | (3 << 12)).to_be_bytes());
    let c = shrec::formats::xenos::container::parse(&bytes).unwrap();
    assert!(c.vertex_elements.iter().any(|e| e.usage == 3), "patched to NORMAL");

    let t = translate(&bytes);
    assert_eq!(t.spec_constants_mask, 1, "SPEC_CONSTANT_R11G11B10_NORMAL");
    let hlsl = shrec::hlsl::write(&t.module);
    assert!(hlsl.lines().any(|l| l.contains("uint4 ") && l.contains(": NORMAL0;")), "NORMAL0 is uint4 as in XenosRecomp\n{hlsl}");
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let spirv = dxc::compile_with_spec_constants(&lib, &hlsl, Stage::Vertex, Target::Spirv, 1).unwrap_or_else(|e| panic!("{e}\n{hlsl}"));
    spirv_val(&spirv, "abi-normal").unwrap();
    assert_eq!(reflect(&spirv).spec_ids, vec![0]);
    let dxil = dxc::compile_with_spec_constants(&lib, &hlsl, Stage::Vertex, Target::Dxil, 1).unwrap_or_else(|e| panic!("{e}\n{hlsl}"));
    assert_eq!(&dxil[..4], b"DXBC");
    assert_eq!(dxc::target_profile(Stage::Vertex, Target::Dxil, 1), "lib_6_3");
}

#[test]
fn vertex_inputs_use_xenosrecomps_locations() {
    use shrec::ir::Semantic;
    let mut checked = 0;
    for (key, (_, bytes)) in corpus() {
        let t = translate(&bytes);
        for v in &t.module.inputs {
            let (name, index, location) = match v.semantic {
                Semantic::Usage { name, index, location } | Semantic::UsageUint { name, index, location } => (name, index, location),
                _ => continue,
            };
            let want = match (name, index) {
                ("POSITION", 0) => 0,
                ("NORMAL", 0) => 1,
                ("TANGENT", 0) => 2,
                ("BINORMAL", 0) => 3,
                ("TEXCOORD", i @ 0..=3) => 4 + i,
                ("COLOR", 0) => 8,
                ("BLENDINDICES", 0) => 9,
                ("BLENDWEIGHT", 0) => 10,
                ("COLOR", 1) => 11,
                ("TEXCOORD", i @ 4..=7) => 8 + i,
                _ => continue,
            };
            assert_eq!(location, want, "{key:016X}: {name}{index}");
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// XenosRecomp's vertex shaders declare all 18 interpolator outputs, TEXCOORD0-15 and COLOR0-1
/// at locations 0-17, each 0.0 unless written (its shader_recompiler.cpp `INTERPOLATORS`), so any
/// vertex shader links with any pixel shader: shrec's SPIR-V declares the same Output locations
/// (found by the XenosRecomp oracle, docs/xenosrecomp-oracle.md).
#[test]
fn vertex_shaders_declare_every_interpolator_output() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let mut vertex = 0;
    for (key, (name, bytes)) in corpus() {
        let t = translate(&bytes);
        if t.module.stage != Stage::Vertex {
            continue;
        }
        vertex += 1;
        let hlsl = shrec::hlsl::write(&t.module);
        let spirv = dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Spirv, t.spec_constants_mask).unwrap();
        let m = rspirv::dr::load_words(words(&spirv)).unwrap();
        let locations = interface_locations(&m, StorageClass::Output);
        let missing: Vec<u32> = (0..18).filter(|l| !locations.contains(l)).collect();
        assert!(missing.is_empty(), "{key:016X} {name}: Output locations {missing:?} not declared (has {locations:?})");
    }
    assert!(vertex >= 9, "{vertex} vertex shaders");
}

/// The `Location` decorations of a SPIR-V module's interface variables of one storage class.
fn interface_locations(m: &Module, class: StorageClass) -> BTreeSet<u32> {
    m.types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable && i.operands.first() == Some(&Operand::StorageClass(class)))
        .flat_map(|i| decorations(m, i.result_id.unwrap(), Decoration::Location).into_iter().map(|d| lit(&d.operands[2])))
        .collect()
}

/// XenosRecomp's pixel-shader inputs on SPIR-V: every interpolator whose register the program
/// reads (after the preload) stays in the entry point's interface, even when every lane of the
/// register is overwritten before that read (vo_xenon ps_osd: COLOR0 in r1); one whose register
/// is never read is dropped (ps.c: TEXCOORD0 in r0). Found by the XenosRecomp oracle
/// (`interfaces_match_xenosrecomp`), checked here without it.
#[test]
fn pixel_shader_inputs_follow_xenosrecomps_rule() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let (mut pixel, mut overwritten) = (0, 0);
    for (key, (name, bytes)) in corpus() {
        let t = translate(&bytes);
        if t.module.stage != Stage::Pixel {
            continue;
        }
        pixel += 1;
        let c = shrec::formats::xenos::container::parse(&bytes).unwrap();
        let body = &t.module.body[c.interpolators.len()..];
        let reads = |reg: u32| {
            let mut hit = false;
            for s in body {
                shrec::ir::visit::stmt_reads(s, &mut |r| hit |= r.file == RegFile::Temp && r.index == Index::Fixed(reg));
            }
            hit
        };
        let expected: BTreeSet<u32> = c
            .interpolators
            .iter()
            .filter(|ip| reads(ip.reg))
            .map(|ip| shrec::formats::xenos::lower::interpolator_location(ip.usage, ip.usage_index))
            .collect();
        let hlsl = shrec::hlsl::write(&t.module);
        let spirv = dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Spirv, t.spec_constants_mask).unwrap();
        let m = rspirv::dr::load_words(words(&spirv)).unwrap();
        let locations = interface_locations(&m, StorageClass::Input);
        assert_eq!(locations, expected, "{key:016X} {name}: Input locations");
        if key == 0x8D66_75C6_3F03_F76E {
            overwritten += 1;
            assert!(locations.contains(&16), "{name}: COLOR0 (r1, overwritten before it is read) stays declared");
        }
    }
    assert!(pixel >= 9, "{pixel} pixel shaders");
    assert_eq!(overwritten, 1, "the corpus holds vo_xenon ps_osd");
}
