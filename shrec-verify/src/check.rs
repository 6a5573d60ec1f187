//! Family-agnostic driver: compile a translated [`Module`] exactly as the build does, run it on
//! the GPU for a set of invocations, and compare every output lane with a reference.
//!
//! A family adapter supplies the module, the invocations (attributes / varyings by location, one
//! data vector per constant buffer of the module) and a reference callback; the interface
//! (locations, bindings, targets, depth) is read from the module itself. Output lanes are named
//! after the module's I/O variables (`op`, `v3`, `oc1`, `od`, ...).

use super::vk::{FragmentJob, FragmentQuad, Gpu, Slot, TextureSpec, UniformSpec, VertexInvocation, VertexJob};
use super::{Comparison, Expect, TextureShape};
use shrec::build::SpirvBackend;
use shrec::dxc::{self, Target};
use shrec::ir::{Module, Semantic};
use std::fmt::Write;

/// Reference outputs of one vertex invocation.
#[derive(Clone, Debug)]
pub struct VertexExpect {
    /// Clip-space position in the source convention (D3D, +y up).
    pub position: [Expect; 4],
    /// By location (missing locations are not compared).
    pub varyings: Vec<[Expect; 4]>,
}

/// Reference outputs of one pixel.
#[derive(Clone, Debug)]
pub struct PixelExpect {
    /// Whether the pixel is written (not discarded); `None` = undetermined (nothing compared).
    pub written: Option<bool>,
    /// By render-target number.
    pub colors: Vec<[Expect; 4]>,
    /// Depth after the depth test's clamp to [0, 1] (compared when the module writes depth).
    pub depth: Expect,
}

/// Lane counts plus, for the first mismatching invocation, a description of its lanes.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub cmp: Comparison,
    /// (invocation index, mismatching lanes and both outputs) of the first mismatch.
    pub first_mismatch: Option<(usize, String)>,
}

const XYZW: [char; 4] = ['x', 'y', 'z', 'w'];

/// The SPIR-V back end a run uses when its options name none: `SHREC_VERIFY_SPIRV_BACKEND`
/// (`dxc`, the default, or `direct`), so that a whole suite runs through either:
/// `SHREC_VERIFY_SPIRV_BACKEND=direct cargo test --release -p shrec-verify --test verify_agal`.
pub fn backend_from_env() -> SpirvBackend {
    match std::env::var("SHREC_VERIFY_SPIRV_BACKEND").as_deref() {
        Ok("direct") => SpirvBackend::Direct,
        _ => SpirvBackend::Dxc,
    }
}

/// Whether the run's modules declare `SignedZeroInfNanPreserve` (`--spirv-float-controls`):
/// `SHREC_VERIFY_FLOAT_CONTROLS=1` with the direct back end (DXC cannot emit the mode). The
/// interpreters then compare the lanes they leave "not determined" only because a driver may
/// fold IEEE specials away (a constant zero times inf / NaN): with the mode, it may not.
pub fn float_controls() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| backend_from_env() == SpirvBackend::Direct && std::env::var("SHREC_VERIFY_FLOAT_CONTROLS").as_deref() == Ok("1"))
}

/// Whether the driver may turn a product with a compile-time `+0.0` operand into `+0` although
/// the module declares `SignedZeroInfNanPreserve`: lavapipe does (Mesa 22.3.6). Its gallivm
/// multiply (`lp_build_mul`, `gallivm/lp_bld_arit.c`) returns its zero constant when either
/// operand *is* that constant, before any IEEE rule: `x · +0` gives `+0` for a negative `x`,
/// for ±inf and for NaN. `−0.0` is another constant and is multiplied (verify_gx2
/// `ieee_multiply_by_a_literal_zero`: a literal +0 times −2, ±inf, NaN gives +0 on every lane,
/// a literal −0 the IEEE result). The interpreters leave such lanes undetermined, as they do
/// without float controls; a `−0` operand is compared.
pub fn plus_zero_products_fold() -> bool {
    true
}

/// The module's SPIR-V as the build makes it, through [`backend_from_env`]'s back end.
pub fn spirv(gpu: &Gpu, module: &Module) -> Result<Vec<u8>, String> {
    spirv_with(gpu, module, backend_from_env())
}

/// The module's SPIR-V as the build makes it with `backend`: HLSL → DXC with the build's own
/// arguments, or `shrec::spirv` from the IR (`--spirv-backend direct`).
pub fn spirv_with(gpu: &Gpu, module: &Module, backend: SpirvBackend) -> Result<Vec<u8>, String> {
    // A test may have turned on a deliberate mistranslation (crate::mutation). Every module the
    // harness runs passes the IR validator first, as in a build.
    let module = crate::mutation::applied(module);
    shrec::ir::validate(&module).map_err(|e| format!("IR validation: {e}"))?;
    if backend == SpirvBackend::Direct {
        let opts = shrec::spirv::Options { float_controls: float_controls(), ..Default::default() };
        let words = shrec::spirv::write(&module, &opts).map_err(|e| format!("direct SPIR-V: {e}"))?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        // lavapipe runs modules spirv-val refuses (a vector select with a scalar condition, a
        // branch to a continue target from outside its loop): validate what runs
        shrec_testkit::spirv_val(&bytes, "verify-direct").map_err(|e| format!("direct SPIR-V fails spirv-val: {e}"))?;
        return Ok(bytes);
    }
    let hlsl = shrec::hlsl::write(&module);
    dxc::compile(&gpu.dxc, &hlsl, module.stage, Target::Spirv).map_err(|e| format!("DXC: {e}\n{hlsl}"))
}

fn uniform_specs(module: &Module) -> Vec<UniformSpec> {
    // Float constant buffers first, then the integer ones (`ModuleExt::uint_buffers`, uploaded as
    // raw 32-bit words: pass `f32::from_bits(u)` lanes).
    module
        .const_buffers
        .iter()
        .chain(&module.ext.uint_buffers)
        .map(|cb| UniformSpec { slot: Slot { set: cb.binding.vk_set, binding: cb.binding.vk_binding }, len: cb.len })
        .collect()
}

/// Binds texture `i` of the module to the contents `data(i)` returns: (size, texels), as the
/// kind of image the module declares (2D, 3D or cube).
pub fn texture_specs(module: &Module, mut data: impl FnMut(usize) -> (u32, Vec<[f32; 4]>)) -> Vec<TextureSpec> {
    module
        .textures
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (size, texels) = data(i);
            TextureSpec {
                texture: Slot { set: t.texture_binding.vk_set, binding: t.texture_binding.vk_binding },
                sampler: Slot { set: t.sampler_binding.vk_set, binding: t.sampler_binding.vk_binding },
                shape: TextureShape::of(t.dim),
                size,
                height: size,
                texels,
                mips: vec![],
                layers: 1,
                compare: t.compare,
            }
        })
        .collect()
}

fn texcoords<'a>(vars: impl Iterator<Item = &'a shrec::ir::IoVar>) -> Vec<(u32, &'a str)> {
    vars.filter_map(|v| match v.semantic {
        Semantic::Texcoord(n) => Some((n, v.name.as_str())),
        _ => None,
    })
    .collect()
}

fn lanes(cmp: &mut Comparison, bad: &mut String, name: &str, got: &[f32; 4], want: &[Expect; 4]) {
    for k in 0..4 {
        if !cmp.lane(got[k], want[k]) {
            let _ = writeln!(bad, "  {name}.{}: gpu {:?} (0x{:08X}), reference {}", XYZW[k], got[k], got[k].to_bits(), want[k]);
        }
    }
}

fn show(v: &[f32; 4]) -> String {
    format!("({:?}, {:?}, {:?}, {:?})", v[0], v[1], v[2], v[3])
}

fn show_expect(v: &[Expect; 4]) -> String {
    format!("({})", v.map(|e| e.to_string()).join(", "))
}

/// Runs a vertex module for every invocation and compares with `reference(i)`.
pub fn vertex(
    gpu: &Gpu,
    module: &Module,
    spirv: &[u8],
    textures: Vec<TextureSpec>,
    invocations: Vec<VertexInvocation>,
    reference: &mut dyn FnMut(usize) -> VertexExpect,
) -> Result<Outcome, String> {
    let inputs = texcoords(module.inputs.iter());
    let outputs = texcoords(module.outputs.iter());
    let position_name = module.outputs.iter().find(|v| v.semantic == Semantic::Position).map_or("position", |v| v.name.as_str());
    let job = VertexJob {
        spirv,
        attribute_locations: inputs.iter().map(|&(l, _)| l).collect(),
        varyings: outputs.iter().map(|&(l, _)| l + 1).max().unwrap_or(0),
        extras: false,
        uniforms: uniform_specs(module),
        textures,
        invocations,
    };
    let got = gpu.run_vertex(&job)?;
    let mut out = Outcome::default();
    for (i, g) in got.iter().enumerate() {
        let want = reference(i);
        // DXC's -fvk-invert-y negated y on the way out: undo it (exact).
        let mut pos = g.position;
        pos[1] = -pos[1];
        let mut bad = String::new();
        lanes(&mut out.cmp, &mut bad, position_name, &pos, &want.position);
        for &(l, name) in &outputs {
            if let Some(w) = want.varyings.get(l as usize) {
                lanes(&mut out.cmp, &mut bad, name, &g.varyings[l as usize], w);
            }
        }
        if !bad.is_empty() && out.first_mismatch.is_none() {
            let _ = writeln!(bad, "outputs (gpu | reference):\n  {position_name} = {} | {}", show(&pos), show_expect(&want.position));
            for &(l, name) in &outputs {
                if let Some(w) = want.varyings.get(l as usize) {
                    let _ = writeln!(bad, "  {name} = {} | {}", show(&g.varyings[l as usize]), show_expect(w));
                }
            }
            out.first_mismatch = Some((i, bad));
        }
    }
    Ok(out)
}

/// Runs a fragment module over 2×2 quads and compares every pixel with `reference(i, quad)`.
pub fn fragment(
    gpu: &Gpu,
    module: &Module,
    spirv: &[u8],
    textures: Vec<TextureSpec>,
    quads: Vec<FragmentQuad>,
    reference: &mut dyn FnMut(usize, &FragmentQuad) -> [PixelExpect; 4],
) -> Result<Outcome, String> {
    let inputs = texcoords(module.inputs.iter());
    let targets: Vec<(u32, &str)> = module
        .outputs
        .iter()
        .filter_map(|v| match v.semantic {
            Semantic::Target(n) => Some((n, v.name.as_str())),
            _ => None,
        })
        .collect();
    let depth = module.outputs.iter().find(|v| v.semantic == Semantic::Depth).map(|v| v.name.as_str());
    let job = FragmentJob {
        spirv,
        varyings: inputs.iter().map(|&(l, _)| l + 1).max().unwrap_or(0),
        targets: targets.iter().map(|&(n, _)| n).collect(),
        depth: depth.is_some(),
        uniforms: uniform_specs(module),
        textures,
        quads,
    };
    let got = gpu.run_fragment(&job)?;
    let mut out = Outcome::default();
    for (i, g) in got.iter().enumerate() {
        let want = reference(i, &job.quads[i]);
        let mut bad = String::new();
        for (px, (gp, wp)) in g.iter().zip(&want).enumerate() {
            if !out.cmp.flag(gp.written, wp.written) {
                let _ = writeln!(bad, "  pixel {px}: gpu written={}, reference written={:?}", gp.written, wp.written);
            }
            if !(gp.written && wp.written == Some(true)) {
                continue;
            }
            for (ti, &(n, name)) in targets.iter().enumerate() {
                let w = wp.colors.get(n as usize).copied().unwrap_or([Expect::UNKNOWN; 4]);
                lanes(&mut out.cmp, &mut bad, &format!("pixel {px} {name}"), &gp.colors[ti], &w);
            }
            if let Some(name) = depth {
                if !out.cmp.lane(gp.depth, wp.depth) {
                    let _ = writeln!(bad, "  pixel {px} {name}: gpu {:?}, reference {}", gp.depth, wp.depth);
                }
            }
        }
        if !bad.is_empty() && out.first_mismatch.is_none() {
            let _ = writeln!(bad, "outputs (gpu | reference):");
            for (px, (gp, wp)) in g.iter().zip(&want).enumerate() {
                let _ = writeln!(bad, "  pixel {px}: written {} | {:?}", gp.written, wp.written);
                for (ti, &(n, name)) in targets.iter().enumerate() {
                    let w = wp.colors.get(n as usize).copied().unwrap_or([Expect::UNKNOWN; 4]);
                    let _ = writeln!(bad, "    {name} = {} | {}", show(&gp.colors[ti]), show_expect(&w));
                }
                if let Some(name) = depth {
                    let _ = writeln!(bad, "    {name} = {:?} | {}", gp.depth, wp.depth);
                }
            }
            out.first_mismatch = Some((i, bad));
        }
    }
    Ok(out)
}
