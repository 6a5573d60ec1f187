//! Texture operations, as DXC writes the HLSL writer's methods for SPIR-V (checked against
//! DXC's output for each: `OpSampledImage` of the separate image and sampler, the coordinate
//! lanes the HLSL writer passes, scalar results broadcast with `OpCompositeConstruct`):
//!
//! | IR | HLSL | SPIR-V |
//! |---|---|---|
//! | `Sample` | `Sample` / `SampleBias` / `SampleLevel` / `SampleGrad` | `OpImageSample{Implicit,Explicit}Lod` |
//! | `SampleCmp`, `SampleCmpMode` | `SampleCmp` / `SampleCmpLevelZero` / `…Level` / `…Bias` / `…Grad` | `OpImageSampleDref{Implicit,Explicit}Lod` |
//! | `Gather` | `GatherRed` | `OpImageGather`, component 0 |
//! | `QueryLod` | `CalculateLevelOfDetailUnclamped` | `OpImageQueryLod`, lane 1 |
//! | `TexSize` | `GetDimensions(w, h[, d])` | `OpImageQuerySizeLod` at level 0, `OpConvertUToF` |
//! | `Load` | `Load(intN(coord, lod))` | `OpImageFetch` with `Lod` |
//! | `TexInfo` | `GetDimensions(lod, w, h[, d], levels)` | `OpImageQuerySizeLod`, `OpImageQueryLevels` |

use super::{ids, Result, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{Capability, ImageOperands, Op, Word};

/// Image operands in the order of their bits (Bias, Lod, Grad, ConstOffset).
struct ImageArgs {
    flags: ImageOperands,
    params: Vec<Word>,
}

impl Default for ImageArgs {
    fn default() -> Self {
        ImageArgs { flags: ImageOperands::NONE, params: Vec::new() }
    }
}

impl ImageArgs {
    fn push(&mut self, flag: ImageOperands, values: &[Word]) {
        self.flags |= flag;
        self.params.extend_from_slice(values);
    }

    /// `base` followed by the image-operand mask and its parameters (nothing when empty).
    fn operands(self, base: &[Word]) -> Vec<Operand> {
        let mut operands = ids(base);
        if self.flags != ImageOperands::NONE {
            operands.push(Operand::ImageOperands(self.flags));
            operands.extend(ids(&self.params));
        }
        operands
    }
}

impl Writer<'_> {
    /// The texture's image and sampler combined (`OpSampledImage`) and its dimension.
    fn sampled_image(&mut self, tex: u32) -> Result<(Word, TexDim)> {
        let (img, image_type) = self.load_image(tex)?;
        let smp = self.load_sampler(tex)?;
        let si_ty = self.b.type_sampled_image(image_type);
        let si = self.inst(Op::SampledImage, si_ty, ids(&[img, smp]))?;
        Ok((si, self.m.textures[tex as usize].dim))
    }

    /// The texture's image alone (for fetches and size queries).
    fn image(&mut self, tex: u32) -> Result<(Word, TexDim)> {
        let (img, _) = self.load_image(tex)?;
        Ok((img, self.m.textures[tex as usize].dim))
    }

    /// The image of texture `tex` and its type: its own variable, or under the XenosRecomp
    /// ABI the element of its heap its descriptor index names.
    fn load_image(&mut self, tex: u32) -> Result<(Word, Word)> {
        if let ResourceAbi::XenosRecomp(_) = self.m.ext.resource_abi {
            return self.xenos_image(tex);
        }
        let vars = self.texture_vars(tex)?;
        Ok((self.inst(Op::Load, vars.image_type, ids(&[vars.image]))?, vars.image_type))
    }

    /// The sampler of texture `tex` (see [`Self::load_image`]).
    fn load_sampler(&mut self, tex: u32) -> Result<Word> {
        if let ResourceAbi::XenosRecomp(_) = self.m.ext.resource_abi {
            return self.xenos_sampler(tex);
        }
        let vars = self.texture_vars(tex)?;
        self.inst(Op::Load, vars.sampler_type, ids(&[vars.sampler]))
    }

    /// The coordinate lanes `dim` samples with (slice and cube face included).
    fn coordinate(&mut self, coord: &Expr, dim: TexDim) -> Result<Word> {
        let c = self.expr(coord)?;
        self.first_lanes(c, dim.coord_lanes())
    }

    /// The level-of-detail operands of `mode` (none for a zero bias: plain `Sample`); whether
    /// they make the sample explicit-LOD.
    fn lod_operands(&mut self, mode: &SampleMode, dim: TexDim, args: &mut ImageArgs) -> Result<bool> {
        Ok(match mode {
            SampleMode::Bias(b) if *b == 0.0 => false,
            SampleMode::Bias(b) => {
                let b = self.f32_const(*b);
                args.push(ImageOperands::BIAS, &[b]);
                false
            }
            SampleMode::BiasExpr(b) => {
                let b = self.lane_x(b)?;
                args.push(ImageOperands::BIAS, &[b]);
                false
            }
            SampleMode::Lod(l) => {
                let l = self.lane_x(l)?;
                args.push(ImageOperands::LOD, &[l]);
                true
            }
            SampleMode::Grad(dx, dy) => {
                // gradients have the texel lanes (no slice)
                let n = dim.texel_lanes();
                let dx = self.expr(dx)?;
                let dx = self.first_lanes(dx, n)?;
                let dy = self.expr(dy)?;
                let dy = self.first_lanes(dy, n)?;
                args.push(ImageOperands::GRAD, &[dx, dy]);
                true
            }
        })
    }

    /// A constant texel offset (`ConstOffset`, the texel lanes), unless it is 0.
    fn offset_operand(&mut self, offset: &[i8; 3], dim: TexDim, args: &mut ImageArgs) {
        if *offset == [0, 0, 0] {
            return;
        }
        let n = dim.texel_lanes();
        let lanes: Vec<Word> = offset[..n].iter().map(|&o| self.i32_const(i32::from(o))).collect();
        let value = if n == 1 {
            lanes[0]
        } else {
            let ty = self.b.type_vector(self.t.i32, n as u32);
            self.composite_const(ty, lanes)
        };
        args.push(ImageOperands::CONST_OFFSET, &[value]);
    }

    /// `Expr::Sample`.
    pub(super) fn sample(&mut self, tex: u32, coord: &Expr, mode: &SampleMode, offset: &[i8; 3]) -> Result<Word> {
        let (si, dim) = self.sampled_image(tex)?;
        let c = self.coordinate(coord, dim)?;
        let mut args = ImageArgs::default();
        let explicit = self.lod_operands(mode, dim, &mut args)?;
        self.offset_operand(offset, dim, &mut args);
        let op = if explicit { Op::ImageSampleExplicitLod } else { Op::ImageSampleImplicitLod };
        self.inst(op, self.t.v4f, args.operands(&[si, c]))
    }

    /// `Expr::SampleCmp` (`mode` `None`: the implicit LOD; level zero is `Lod(0)`) and
    /// `Expr::SampleCmpMode`: the comparison result (0 or 1, or between when filtered),
    /// broadcast.
    pub(super) fn sample_compare(&mut self, tex: u32, coord: &Expr, reference: &Expr, mode: Option<&SampleMode>, offset: &[i8; 3]) -> Result<Word> {
        let (si, dim) = self.sampled_image(tex)?;
        let c = self.coordinate(coord, dim)?;
        let dref = self.lane_x(reference)?;
        let mut args = ImageArgs::default();
        let explicit = match mode {
            Some(m) => self.lod_operands(m, dim, &mut args)?,
            None => false,
        };
        self.offset_operand(offset, dim, &mut args);
        let op = if explicit { Op::ImageSampleDrefExplicitLod } else { Op::ImageSampleDrefImplicitLod };
        let r = self.inst(op, self.t.f32, args.operands(&[si, c, dref]))?;
        self.splat(self.t.v4f, r, 4)
    }

    /// `Expr::Gather`: the red components of the four texels (`GatherRed`).
    pub(super) fn gather(&mut self, tex: u32, coord: &Expr, offset: &[i8; 3]) -> Result<Word> {
        let (si, dim) = self.sampled_image(tex)?;
        let c = self.coordinate(coord, dim)?;
        let component = self.i32_const(0);
        let mut args = ImageArgs::default();
        self.offset_operand(offset, dim, &mut args);
        self.inst(Op::ImageGather, self.t.v4f, args.operands(&[si, c, component]))
    }

    /// `Expr::QueryLod`: the unclamped LOD (lane 1 of `OpImageQueryLod`) or, `clamped`, the
    /// level a sample would access (lane 0), from the texel lanes only (an array's slice does
    /// not change the LOD), broadcast.
    pub(super) fn query_lod(&mut self, tex: u32, coord: &Expr, clamped: bool) -> Result<Word> {
        self.need_capability(Capability::ImageQuery);
        let (si, dim) = self.sampled_image(tex)?;
        let c = self.expr(coord)?;
        let lanes = if dim.is_array() { dim.texel_lanes() } else { dim.coord_lanes() };
        let c = self.first_lanes(c, lanes)?;
        let pair = self.inst(Op::ImageQueryLod, self.t.v2f, ids(&[si, c]))?;
        let lane = if clamped { 0 } else { 1 };
        let lod = self.inst(Op::CompositeExtract, self.t.f32, vec![Operand::IdRef(pair), Operand::LiteralBit32(lane)])?;
        self.splat(self.t.v4f, lod, 4)
    }

    /// The lanes `OpImageQuerySizeLod` returns for `dim`: the texel lanes of the level (a
    /// cube's two), then an array's slice count.
    fn size_lanes(dim: TexDim) -> usize {
        match dim {
            TexDim::D1 => 1,
            TexDim::D2 | TexDim::Cube | TexDim::D1Array => 2,
            TexDim::D3 | TexDim::D2Array | TexDim::CubeArray => 3,
        }
    }

    /// The size lanes of level `lod` of texture `tex` as `u32` scalars, padded with 1 to three.
    fn level_size(&mut self, tex: u32, lod: Word) -> Result<[Word; 3]> {
        self.need_capability(Capability::ImageQuery);
        let (img, dim) = self.image(tex)?;
        let n = Self::size_lanes(dim);
        let ty = if n == 1 { self.t.u32 } else { self.b.type_vector(self.t.u32, n as u32) };
        let size = self.inst(Op::ImageQuerySizeLod, ty, ids(&[img, lod]))?;
        let one = self.u32_const(1);
        let mut lanes = [one; 3];
        for (k, lane) in lanes.iter_mut().enumerate().take(n) {
            *lane =
                if n == 1 { size } else { self.inst(Op::CompositeExtract, self.t.u32, vec![Operand::IdRef(size), Operand::LiteralBit32(k as u32)])? };
        }
        Ok(lanes)
    }

    /// `Expr::TexSize`: the base level's size as floats, (w, h, d, 0) with 1 for the missing.
    pub(super) fn tex_size(&mut self, tex: u32) -> Result<Word> {
        let level0 = self.i32_const(0);
        let lanes = self.level_size(tex, level0)?;
        let mut out = Vec::with_capacity(4);
        for l in lanes {
            out.push(self.inst(Op::ConvertUToF, self.t.f32, ids(&[l]))?);
        }
        out.push(self.f32_const(0.0));
        self.inst(Op::CompositeConstruct, self.t.v4f, ids(&out))
    }

    /// `Expr::TexInfo`: level `lod`'s size and the level count, as `u32` patterns.
    pub(super) fn tex_info(&mut self, tex: u32, lod: &Expr) -> Result<Word> {
        let lod = self.lane_x(lod)?;
        let lod = self.inst(Op::Bitcast, self.t.u32, ids(&[lod]))?;
        let [w, h, d] = self.level_size(tex, lod)?;
        let (img, _) = self.image(tex)?;
        let levels = self.inst(Op::ImageQueryLevels, self.t.u32, ids(&[img]))?;
        let v = self.inst(Op::CompositeConstruct, self.t.v4u, ids(&[w, h, d, levels]))?;
        self.inst(Op::Bitcast, self.t.v4f, ids(&[v]))
    }

    /// `Expr::Load`: the texel at integer coordinates (the lanes' bit patterns) of level `lod`.
    pub(super) fn load_texel(&mut self, tex: u32, coord: &Expr, lod: &Expr) -> Result<Word> {
        let (img, dim) = self.image(tex)?;
        let n = dim.coord_lanes();
        let c = self.coordinate(coord, dim)?;
        let ity = if n == 1 { self.t.i32 } else { self.b.type_vector(self.t.i32, n as u32) };
        let c = self.inst(Op::Bitcast, ity, ids(&[c]))?;
        let lod = self.lane_x(lod)?;
        let lod = self.inst(Op::Bitcast, self.t.i32, ids(&[lod]))?;
        let mut args = ImageArgs::default();
        args.push(ImageOperands::LOD, &[lod]);
        self.inst(Op::ImageFetch, self.t.v4f, args.operands(&[img, c]))
    }
}
