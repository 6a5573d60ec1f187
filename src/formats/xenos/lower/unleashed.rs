//! The `--profile unleashed` differences (docs/profiles.md): reverse-Z projection rows, `uint` inputs, pixel coordinates, bicubic GI sampling on tf10, alpha to coverage.

use super::*;

impl Ctx<'_> {
    /// Unleashed profile, first run of a reverse-Z vertex shader: row `index` of XenosRecomp's
    /// `mtxProjectionReverseZ = mul(mtxProjection, float4x4(1,0,0,0, 0,1,0,0, 0,0,-1,0, 0,0,1,1))`,
    /// i.e. the row (x, y, w − z, w) of `g_MtxProjection` (z/w becomes 1 − z/w). Static reads
    /// only: XenosRecomp drops a relative offset there, shrec keeps relative reads as they are.
    pub(super) fn reverse_z_row(&self, index: u32) -> Option<Expr> {
        let u = self.ul.as_ref().filter(|u| u.reverse_pass)?;
        let (first, count) = u.projection?;
        if !(first..first + count).contains(&index) {
            return None;
        }
        let r = read(RegFile::Const(CB_FLOAT), index, XYZW);
        Some(Expr::Compose(Box::new([lane(r.clone(), 0), lane(r.clone(), 1), bin(BinOp::Sub, lane(r.clone(), 3), lane(r.clone(), 2)), lane(r, 3)])))
    }

    /// Whether vertex element (usage, index) is a `uint4` input only in the Unleashed profile
    /// (XenosRecomp `UNLEASHED_RECOMP`: POSITION1 always, TEXCOORD2 with `g_InstanceTypes`);
    /// vfetch converts it by value, as HLSL's uint4 → float4 assignment does.
    pub(super) fn unleashed_uint_input(&self, usage: u32, index: u32) -> bool {
        self.ul.as_ref().is_some_and(|u| (usage == 0 && index == 1) || (usage == 5 && index == 2 && u.meta_instancer))
    }

    /// Unleashed profile, pixel shader, tfetch2D / getWeights2D on tf0: XenosRecomp's
    /// `pixelCoord = getPixelCoord(…_Texture2DDescriptorIndex, src.xy)` (texture size × the
    /// source coordinates, before the fetch), which alpha to coverage reads. Vertex shaders have
    /// no pixelCoord (XenosRecomp's HLSL names an undeclared variable there).
    pub(super) fn unleashed_pixel_coord(&mut self, f: &Fetch, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if self.ul.is_none() || self.vertex || f.const_index() != 0 || f.dimension() != 1 {
            return Ok(());
        }
        let tex = self.texture(0, TexDim::D2)?;
        let coord = self.fetch_source_xyz(f);
        out.push(assign(UL_PIXEL_COORD, 0x3, bin(BinOp::Mul, Expr::TexSize { tex }, coord)));
        Ok(())
    }

    /// Stores a tfetch's texel in FRES: `sample`, or in the Unleashed profile
    /// - on tf10 (2D): XenosRecomp's `tfetch2DBicubic` when SPEC_CONSTANT_BICUBIC_GI_FILTER is set;
    /// - on `sampZBuffer` in a pixel shader naming `g_MtxPrevInvViewProjection`: 1.0 − the texel.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn unleashed_sample(&self, f: &Fetch, dim: TexDim, tex: u32, raw: Expr, mode: SampleMode, sample: Expr, body: &mut Vec<Stmt>) {
        let Some(u) = &self.ul else {
            body.push(assign(FRES, 0xF, sample));
            return;
        };
        if f.const_index() != 10 {
            body.push(assign(FRES, 0xF, sample));
        } else if dim == TexDim::D2 {
            let then_body = bicubic(f, tex, raw, mode);
            body.push(Stmt::If { cond: spec_bit_set(STATE_SPEC_UNLEASHED, 0), then_body, else_body: vec![assign(FRES, 0xF, sample)] });
        } else {
            body.push(Stmt::Comment(
                "tf10 (g_GISampler) is not 2D: XenosRecomp UNLEASHED_RECOMP has no bicubic form of this fetch (its HLSL names an undefined tfetch…Bicubic); sampled as usual".into(),
            ));
            body.push(assign(FRES, 0xF, sample));
        }
        if u.z_buffer_slot == Some(f.const_index()) {
            body.push(Stmt::Comment(
                "sampZBuffer with g_MtxPrevInvViewProjection: 1.0 - texel (XenosRecomp UNLEASHED_RECOMP, reverse-Z depth)".into(),
            ));
            body.push(assign(FRES, 0xF, bin(BinOp::Sub, lit(1.0), t(FRES))));
        }
    }
}

/// What XenosRecomp's `UNLEASHED_RECOMP` code reads from the constant table (its
/// shader_recompiler.cpp keys every difference on these names).
pub(super) fn unleashed_state(c: &Container, vertex: bool) -> Result<Unleashed, ShaderError> {
    use crate::formats::xenos::container::RegisterSet;
    let consts = c.constant_table.as_ref().map(|ct| ct.constants.as_slice()).unwrap_or(&[]);
    let named = |n: &str| consts.iter().any(|k| k.name == n);
    let float4 = |n: &str| consts.iter().find(|k| k.name == n && k.register_set == RegisterSet::Float4);
    let mut u = Unleashed::default();
    if vertex {
        u.reverse_z = named("g_MtxProjection");
        u.projection = float4("g_MtxProjection").filter(|k| k.register_count > 1).map(|k| (k.register_index as u32, k.register_count as u32));
        u.meta_instancer = named("g_InstanceTypes");
        if named("g_IndexCount") {
            // XenosRecomp reads `g_IndexCount.x`, which only compiles for a one-register float4
            let k = float4("g_IndexCount").filter(|k| k.register_count == 1).ok_or_else(|| {
                XenosError::Shader {
                    what: "--profile unleashed: g_IndexCount is not a one-register float4 constant (XenosRecomp's UNLEASHED_RECOMP code reads g_IndexCount.x)".into(),
                }
            })?;
            u.index_count = Some(k.register_index as u32);
        }
    } else if named("g_MtxPrevInvViewProjection") {
        // XenosRecomp's sampler map keeps the first sampler constant of each register
        let samplers: Vec<_> = consts.iter().filter(|k| k.register_set == RegisterSet::Sampler).collect();
        u.z_buffer_slot = samplers
            .iter()
            .enumerate()
            .find(|(i, k)| k.name == "sampZBuffer" && !samplers[..*i].iter().any(|e| e.register_index == k.register_index))
            .map(|(_, k)| k.register_index as u32);
    }
    Ok(u)
}

/// XenosRecomp's `tfetch2DBicubic` (its shader_common.h, UNLEASHED_RECOMP; the fast bicubic
/// B-spline filter from four bilinear samples, GPU Gems 2 ch. 20): at texel position
/// x = coord × size + offset − 0.5 (unnormalised coordinates: coord + offset − 0.5),
/// p = floor(x), f = x − p, weights w0-w3 of f, g0 = w0 + w1, g1 = w2 + w3,
/// h0 = −1 + w1 / g0 + 0.5, h1 = 1 + w3 / g1 + 0.5, and
/// g0(fy)·(g0(fx)·S(p + h0x, p + h0y) + g1(fx)·S(p + h1x, p + h0y)) + g1(fy)·(… h1y …),
/// each S a sample at (p + h) / size with the fetch's own LOD mode. Same operation order as
/// XenosRecomp's HLSL. Scratch: UL_BICUBIC (x, p), +1 (g0x, g0y, g1x, g1y), +2 (p + h0, p + h1).
pub(super) fn bicubic(f: &Fetch, tex: u32, raw: Expr, mode: SampleMode) -> Vec<Stmt> {
    let (a, g, h) = (UL_BICUBIC, UL_BICUBIC + 1, UL_BICUBIC + 2);
    let size = || Expr::TexSize { tex };
    let o = f.offsets();
    let off = Expr::Literal([o[0], o[1], 0.0, 0.0]);
    let texels = if f.coord_denorm() { bin(BinOp::Add, raw, off) } else { bin(BinOp::Add, bin(BinOp::Mul, raw, size()), off) };
    let mul = |x: Expr, y: Expr| bin(BinOp::Mul, x, y);
    let add = |x: Expr, y: Expr| bin(BinOp::Add, x, y);
    let sixth = || lit(1.0 / 6.0);
    let w0 =
        |x: &Expr| mul(sixth(), add(mul(x.clone(), bin(BinOp::Sub, mul(x.clone(), add(un(UnOp::Neg, x.clone()), lit(3.0))), lit(3.0))), lit(1.0)));
    let w1 = |x: &Expr| mul(sixth(), add(mul(mul(x.clone(), x.clone()), bin(BinOp::Sub, mul(lit(3.0), x.clone()), lit(6.0))), lit(4.0)));
    let w2 = |x: &Expr| mul(sixth(), add(mul(x.clone(), add(mul(x.clone(), add(mul(lit(-3.0), x.clone()), lit(3.0))), lit(3.0))), lit(1.0)));
    let w3 = |x: &Expr| mul(sixth(), mul(mul(x.clone(), x.clone()), x.clone()));
    let fr = swz(t(a), [0, 1, 0, 1]);
    let p = swz(t(a), [2, 3, 2, 3]);
    let h0 = add(add(lit(-1.0), bin(BinOp::Div, w1(&fr), add(w0(&fr), w1(&fr)))), lit(0.5));
    let h1 = add(add(lit(1.0), bin(BinOp::Div, w3(&fr), add(w2(&fr), w3(&fr)))), lit(0.5));
    let s = |i: u8, j: u8| Expr::Sample {
        tex,
        coord: Box::new(bin(BinOp::Div, Expr::Compose(Box::new([lane(t(h), i), lane(t(h), j), lit(0.0), lit(0.0)])), size())),
        mode: mode.clone(),
        offset: [0; 3],
    };
    let gl = |l: u8| lane(t(g), l);
    let row = |j: u8| add(mul(gl(0), s(0, j)), mul(gl(2), s(2, j)));
    vec![
        Stmt::Comment("bicubic GI filter (XenosRecomp UNLEASHED_RECOMP tfetch2DBicubic)".into()),
        assign(a, 0x3, bin(BinOp::Sub, texels, lit(0.5))),
        assign(a, 0xC, un(UnOp::Floor, swz(t(a), [0, 1, 0, 1]))),
        assign(a, 0x3, bin(BinOp::Sub, t(a), swz(t(a), [2, 3, 2, 3]))),
        assign(g, 0x3, add(w0(&fr), w1(&fr))),
        assign(g, 0xC, add(w2(&fr), w3(&fr))),
        assign(h, 0x3, add(p.clone(), h0)),
        assign(h, 0xC, add(p, h1)),
        assign(FRES, 0xF, add(mul(gl(1), row(1)), mul(gl(3), row(3)))),
    ]
}

/// XenosRecomp UNLEASHED_RECOMP alpha to coverage (pixel shaders, when SPEC_CONSTANT_ALPHA_TEST
/// is clear and SPEC_CONSTANT_ALPHA_TO_COVERAGE set):
/// `oC0.w *= 1.0 + computeMipLevel(pixelCoord) * 0.25;`
/// `oC0.w = 0.5 + (oC0.w - g_AlphaThreshold) / max(fwidth(oC0.w), 1e-6);`
/// with computeMipLevel(c) = max(0, 0.5 · log2(max(dot(ddx(c), ddx(c)), dot(ddy(c), ddy(c))))).
pub(super) fn alpha_to_coverage(oc0: u32) -> Vec<Stmt> {
    let w = || read(RegFile::Output, oc0, [3; 4]);
    let pc = swz(t(UL_PIXEL_COORD), [0, 1, 0, 1]);
    let (dx, dy) = (un(UnOp::Ddx, pc.clone()), un(UnOp::Ddy, pc));
    let delta = bin(BinOp::Max, dot(2, dx.clone(), dx), dot(2, dy.clone(), dy));
    let mip = bin(BinOp::Max, lit(0.0), bin(BinOp::Mul, lit(0.5), un(UnOp::Log2, delta)));
    let fwidth = bin(BinOp::Add, un(UnOp::Abs, un(UnOp::Ddx, w())), un(UnOp::Abs, un(UnOp::Ddy, w())));
    let threshold = read(RegFile::Const(CB_SHARED), 17, [0; 4]);
    let set = |value: Expr| Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, oc0), mask: 0b1000 }, value, saturate: false };
    vec![
        set(bin(BinOp::Mul, w(), bin(BinOp::Add, lit(1.0), bin(BinOp::Mul, mip, lit(0.25))))),
        set(bin(BinOp::Add, lit(0.5), bin(BinOp::Div, bin(BinOp::Sub, w(), threshold), bin(BinOp::Max, fwidth, lit(1e-6))))),
    ]
}
