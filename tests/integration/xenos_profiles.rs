//! `--profile unleashed`: the Xenos translation reproduces XenosRecomp built with
//! `UNLEASHED_RECOMP` (UnleashedRecomp's mode; docs/profiles.md lists every difference).
//!
//! - every corpus shader translates and compiles (DXIL and SPIR-V) in the profile;
//! - the spec-constant masks follow XenosRecomp's UNLEASHED rule, re-derived here from its
//!   shader_recompiler.cpp (not from shrec's lowering), on the corpus and on synthetic shaders
//!   that take each branch: alpha test / alpha to coverage (every pixel shader), bicubic GI
//!   (tf10), reverse-Z (`g_MtxProjection`), R11G11B10 normals, and none of them;
//! - the SPIR-V interface (rspirv, `shrec_verify::xenosrecomp::reflect`) differs from the generic
//!   profile exactly where XenosRecomp's does: SV_VertexID / SV_InstanceID with `g_IndexCount`,
//!   `uint4` POSITION1 and (with `g_InstanceTypes`) TEXCOORD2; nothing else.

use crate::common;

use common::{repo, spirv_val, xenos_corpus as corpus};
use shrec::detect::ContainerKind;
use shrec::dxc::{self, Target};
use shrec::formats::xenos::container::{self as xc, RegisterSet};
use shrec::formats::xenos::error::XenosError;
use shrec::formats::xenos::lower::Profile;
use shrec::formats::xenos::ucode::{self, Instr};
use shrec::formats::{self, TranslateOptions, Translation};
use shrec_verify::xenos::container;
use shrec_verify::xenos::synthetic::{pixel_shader, vertex_shader};
use shrec_verify::xenosrecomp::{reflect, Interface};

const R11G11B10_NORMAL: u32 = 1;
const ALPHA_TEST: u32 = 2;
const BICUBIC_GI_FILTER: u32 = 4;
const ALPHA_TO_COVERAGE: u32 = 8;
const REVERSE_Z: u32 = 16;

fn translate(bytes: &[u8], profile: Profile) -> Translation {
    let opts = TranslateOptions { xenos_profile: profile, ..Default::default() };
    formats::translate(ContainerKind::Xenos, bytes, 0, &opts).unwrap_or_else(|e| panic!("{profile:?}: {}", e.reason()))
}

/// Compiles to DXIL and SPIR-V (validated); returns the SPIR-V's interface.
fn compile(t: &Translation, what: &str) -> Interface {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let hlsl = shrec::hlsl::write(&t.module);
    let stage = t.module.stage;
    dxc::compile_with_spec_constants(&lib, &hlsl, stage, Target::Dxil, t.spec_constants_mask).unwrap_or_else(|e| panic!("{what} DXIL: {e}\n{hlsl}"));
    let spirv = dxc::compile_with_spec_constants(&lib, &hlsl, stage, Target::Spirv, t.spec_constants_mask)
        .unwrap_or_else(|e| panic!("{what} SPIR-V: {e}\n{hlsl}"));
    spirv_val(&spirv, what).unwrap();
    reflect(&spirv).unwrap()
}

/// XenosRecomp 990d03b's `specConstantsMask` with UNLEASHED_RECOMP defined, from its
/// shader_recompiler.cpp:
/// - a vfetch of a NORMAL / TANGENT / BINORMAL element: R11G11B10_NORMAL (as generic);
/// - any other instruction of a fetch clause (tfetch, getWeights, setTexLOD, …) on fetch
///   constant 10: BICUBIC_GI_FILTER (the `textureFetch.constIndex == 10 // g_GISampler` test runs
///   before the opcode is looked at);
/// - each exec that ends the shader, in a pixel shader: ALPHA_TEST | ALPHA_TO_COVERAGE;
/// - a vertex shader whose constant table names `g_MtxProjection`: REVERSE_Z.
fn xenosrecomp_unleashed_mask(bytes: &[u8]) -> u32 {
    let c = xc::parse(bytes).unwrap();
    let p = ucode::decode(&c.microcode).unwrap();
    let mut mask = 0;
    for s in p.clauses.iter().flatten() {
        if let Instr::Fetch(f) = &s.instr {
            if f.opcode() == 0 {
                let e = c.vertex_elements.iter().find(|e| e.address == s.address).unwrap();
                if matches!(e.usage, 3 | 6 | 7) {
                    mask |= R11G11B10_NORMAL;
                }
            } else if f.const_index() == 10 {
                mask |= BICUBIC_GI_FILTER;
            }
        }
    }
    let ends = p.cf.iter().any(|cf| cf.is_exec() && cf.ends_shader());
    if !c.is_vertex() && ends {
        mask |= ALPHA_TEST | ALPHA_TO_COVERAGE;
    }
    let named = |n: &str| c.constant_table.as_ref().is_some_and(|t| t.constants.iter().any(|k| k.name == n));
    if c.is_vertex() && named("g_MtxProjection") {
        mask |= REVERSE_Z;
    }
    mask
}

#[test]
fn every_corpus_shader_builds_with_the_unleashed_profile_and_xenosrecomps_masks() {
    let mut pixel = 0;
    for (key, (name, bytes)) in corpus() {
        let what = format!("{key:016X} {name}");
        let generic = translate(&bytes, Profile::Generic);
        let t = translate(&bytes, Profile::Unleashed);
        assert_eq!(t.spec_constants_mask, xenosrecomp_unleashed_mask(&bytes), "{what}");
        let ul = compile(&t, &format!("unleashed-{key:016X}"));
        let gen = compile(&generic, &format!("generic-{key:016X}"));
        if t.module.stage == shrec::Stage::Pixel {
            pixel += 1;
            // 2 → 10, as XenosRecomp's two builds give on this corpus (docs/xenosrecomp-oracle.md §7)
            assert_eq!((generic.spec_constants_mask, t.spec_constants_mask), (ALPHA_TEST, ALPHA_TEST | ALPHA_TO_COVERAGE), "{what}");
        } else {
            // no corpus vertex shader names g_MtxProjection, g_IndexCount or g_InstanceTypes
            assert_eq!(t.spec_constants_mask, generic.spec_constants_mask, "{what}");
        }
        // none of the interface-changing names occur in the corpus: same SPIR-V interface
        assert_eq!(gen.diff(&ul), vec![], "{what}");
        // [[vk::constant_id(0)]] g_SpecConstants exists when the shader reads a bit
        let spec = (t.spec_constants_mask != 0).then_some("u32 = 0");
        assert_eq!(ul.items.get("spec_id 0").map(String::as_str), spec, "{what}");
    }
    assert_eq!(pixel, 17);
}

const FLOAT4: u16 = 2;
const SAMPLER: u16 = 3;

#[test]
fn synthetic_shaders_take_every_branch_of_the_mask_rule() {
    // (name, shader, expected mask in the unleashed profile, in the generic one)
    let projection: &[container::Constant] = &[("g_MtxProjection", FLOAT4, 0, 4)];
    let world: &[container::Constant] = &[("g_MtxWorld", FLOAT4, 0, 4)];
    let gi: &[container::Constant] = &[("g_MtxPrevInvViewProjection", FLOAT4, 0, 4), ("sampZBuffer", SAMPLER, 1, 1), ("g_GISampler", SAMPLER, 10, 1)];
    let cases: Vec<(&str, Vec<u8>, u32, u32)> = vec![
        ("vertex, g_MtxProjection (reverse-Z)", vertex_shader(projection, &[]), REVERSE_Z, 0),
        ("vertex, no projection", vertex_shader(world, &[]), 0, 0),
        ("vertex, g_MtxProjection + NORMAL", vertex_shader(projection, &[(3, 0)]), REVERSE_Z | R11G11B10_NORMAL, R11G11B10_NORMAL),
        ("vertex, no constant table", vertex_shader(&[], &[]), 0, 0),
        ("pixel, tf10 (bicubic GI)", pixel_shader(gi, 10), ALPHA_TEST | ALPHA_TO_COVERAGE | BICUBIC_GI_FILTER, ALPHA_TEST),
        ("pixel, no tf10", pixel_shader(gi, 2), ALPHA_TEST | ALPHA_TO_COVERAGE, ALPHA_TEST),
    ];
    for (what, bytes, unleashed, generic) in cases {
        assert_eq!(xenosrecomp_unleashed_mask(&bytes), unleashed, "{what}: the rule");
        let t = translate(&bytes, Profile::Unleashed);
        assert_eq!(t.spec_constants_mask, unleashed, "{what}");
        assert_eq!(translate(&bytes, Profile::Generic).spec_constants_mask, generic, "{what}: generic profile");
        let i = compile(&t, &format!("mask-{what}"));
        let spec = (unleashed != 0).then_some("u32 = 0");
        assert_eq!(i.items.get("spec_id 0").map(String::as_str), spec, "{what}");
    }
}

#[test]
fn instancing_inputs_are_xenosrecomps() {
    // g_IndexCount: SV_VertexID and SV_InstanceID inputs; g_InstanceTypes: TEXCOORD2 is uint4;
    // POSITION1 is uint4 in every UNLEASHED vertex shader.
    let names: &[container::Constant] = &[("g_MtxWorld", FLOAT4, 0, 4), ("g_IndexCount", FLOAT4, 4, 1), ("g_InstanceTypes", FLOAT4, 5, 1)];
    let bytes = vertex_shader(names, &[]);
    let generic = compile(&translate(&bytes, Profile::Generic), "instancing-generic");
    let ul = compile(&translate(&bytes, Profile::Unleashed), "instancing-unleashed");
    let diff: Vec<(String, Option<String>, Option<String>)> = generic.diff(&ul).into_iter().map(|d| (d.item, d.left, d.right)).collect();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        diff,
        vec![
            ("input builtin=InstanceIndex".into(), None, s("u32")),
            ("input builtin=VertexIndex".into(), None, s("u32")),
            // TEXCOORD2 (XenosRecomp location 6) and POSITION1 (location 15)
            ("input location=06".into(), s("vec4<f32>"), s("vec4<u32>")),
            ("input location=15".into(), s("vec4<f32>"), s("vec4<u32>")),
        ],
        "{diff:#?}"
    );
    // without g_InstanceTypes TEXCOORD2 stays float4; without g_IndexCount no built-ins
    let plain = vertex_shader(&[("g_MtxWorld", FLOAT4, 0, 4)], &[]);
    let d = compile(&translate(&plain, Profile::Generic), "plain-generic").diff(&compile(&translate(&plain, Profile::Unleashed), "plain-unleashed"));
    assert_eq!(d.iter().map(|d| d.item.as_str()).collect::<Vec<_>>(), ["input location=15"], "{d:#?}");
}

#[test]
fn g_index_count_that_is_not_one_float4_register_is_a_typed_error() {
    let bytes = vertex_shader(&[("g_IndexCount", FLOAT4, 4, 2)], &[]);
    let opts = TranslateOptions { xenos_profile: Profile::Unleashed, ..Default::default() };
    let e = formats::translate(ContainerKind::Xenos, &bytes, 0, &opts).unwrap_err();
    assert!(matches!(&e, formats::ShaderError::Xenos(XenosError::Shader { what }) if what.contains("g_IndexCount")), "{e:?}");
    // the generic profile does not read it
    translate(&bytes, Profile::Generic);
}

#[test]
fn reverse_z_gi_and_depth_shaders_compile_in_both_profiles() {
    let projection: &[container::Constant] = &[("g_MtxProjection", FLOAT4, 0, 4), ("g_IndexCount", FLOAT4, 4, 1)];
    let bytes = vertex_shader(projection, &[]);
    let generic = compile(&translate(&bytes, Profile::Generic), "rz-generic");
    let ul = compile(&translate(&bytes, Profile::Unleashed), "rz-unleashed");
    let d: Vec<String> = generic.diff(&ul).into_iter().map(|d| d.item).collect();
    // + the spec constant: REVERSE_Z is read
    assert_eq!(d, ["input builtin=InstanceIndex", "input builtin=VertexIndex", "input location=15", "spec_id 0"]);
    let gi: &[container::Constant] = &[("g_MtxPrevInvViewProjection", FLOAT4, 0, 4), ("sampZBuffer", SAMPLER, 1, 1)];
    let bytes = pixel_shader(gi, 10);
    let generic = compile(&translate(&bytes, Profile::Generic), "gi-generic");
    let ul = compile(&translate(&bytes, Profile::Unleashed), "gi-unleashed");
    assert_eq!(generic.diff(&ul), vec![]);
    // the constant-table reader sees what the writer wrote
    let c = xc::parse(&bytes).unwrap();
    let ct = c.constant_table.unwrap();
    assert_eq!(ct.constants[1].name, "sampZBuffer");
    assert_eq!((ct.constants[1].register_set, ct.constants[1].register_index), (RegisterSet::Sampler, 1));
}

#[test]
fn the_cli_takes_the_profile() {
    use std::process::Command;
    let f = repo().join("tests/corpus/xenos/LibXenonProject+xmplayer/source/shader/ps.t__g_xps_psT.bin");
    let hlsl = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_shrec")).arg("hlsl").args(extra).arg(&f).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (generic, ul) = (hlsl(&[]), hlsl(&["--profile", "unleashed"]));
    assert_eq!(hlsl(&["--profile", "generic"]), generic);
    assert!(!generic.contains("UNLEASHED_RECOMP") && ul.contains("#define UNLEASHED_RECOMP 1"));
    assert!(ul.contains("SPEC_CONSTANT_ALPHA_TO_COVERAGE") && !generic.contains("SPEC_CONSTANT_ALPHA_TO_COVERAGE"));
    let bad = Command::new(env!("CARGO_BIN_EXE_shrec")).args(["hlsl", "--profile", "nonsense"]).arg(&f).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "clap usage error");
    // `build` takes it too, and the masks in the cache are the profile's
    let dir = common::tmpdir("profile-cli");
    let out = Command::new(env!("CARGO_BIN_EXE_shrec"))
        .args(["build", "--profile", "unleashed", "--no-cache", "--targets", "spirv", "-q", "--abi", "xenosrecomp"])
        .arg(&f)
        .arg("-o")
        .arg(dir.join("c.cpp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cpp = std::fs::read_to_string(dir.join("c.cpp")).unwrap();
    // `{ hash, dxilOffset, dxilSize, spirvOffset, spirvSize, specConstantsMask, … }` (cache-abi.md)
    let entries: Vec<u32> =
        cpp.lines().filter_map(|l| l.trim().strip_prefix("{ 0x")).map(|l| l.split(',').nth(5).unwrap().trim().parse().unwrap()).collect();
    assert_eq!(entries, [ALPHA_TEST | ALPHA_TO_COVERAGE], "{cpp}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spec_constant_patching_sets_the_default() {
    // the harness specialises XenosRecomp's g_SpecConstants (spec id 0) by rewriting its default
    let t = translate(&pixel_shader(&[], 10), Profile::Unleashed);
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let spirv = dxc::compile_with_spec_constants(&lib, &shrec::hlsl::write(&t.module), t.module.stage, Target::Spirv, t.spec_constants_mask).unwrap();
    let patched = shrec_verify::xenos::with_spec_constant(&spirv, 0, 12).unwrap();
    spirv_val(&patched, "spec-patched").unwrap();
    assert_eq!(reflect(&patched).unwrap().items["spec_id 0"], "u32 = 12");
    assert!(shrec_verify::xenos::with_spec_constant(&spirv, 1, 12).unwrap_err().contains("SpecId 1"));
}
