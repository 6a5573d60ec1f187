//! Texture and vertex fetches: `tfetch*` sampling modes, `getWeights`, `getCompTexLOD`, gradients, cube faces, and `vfetch` into the XenosRecomp input layout.

use super::*;

impl Ctx<'_> {
    /// A texture of the bindless heaps: `g_Texture{2D,3D,Cube}DescriptorHeap[NAME_Texture…DescriptorIndex]`
    /// sampled with `g_SamplerDescriptorHeap[NAME_SamplerDescriptorIndex]` (XenosRecomp's names
    /// and SharedConstants offsets; 1D textures live in the 2D heap, see `fetch`).
    pub(super) fn texture(&mut self, slot: u32, dim: TexDim) -> Result<u32, ShaderError> {
        let dim = if dim == TexDim::D1 { TexDim::D2 } else { dim };
        let key = (slot, dim as u32);
        if let Some(&i) = self.tex_by_slot.get(&key) {
            return Ok(i);
        }
        if slot >= SAMPLER_SLOTS {
            return Err(self.err(format!(
                "texture fetch constant tf{slot}: XenosRecomp's SharedConstants hold descriptor indices for tf0-tf{} only",
                SAMPLER_SLOTS - 1
            )));
        }
        let name = self.sampler_name(slot);
        let suffix = heap_suffix(dim);
        let none = Binding { dx_register: 0, dx_space: 0, vk_set: 0, vk_binding: 0 };
        self.textures.push(Texture {
            tex_var: format!("g_Texture{suffix}DescriptorHeap[{name}_Texture{suffix}DescriptorIndex]"),
            smp_var: format!("g_SamplerDescriptorHeap[{name}_SamplerDescriptorIndex]"),
            dim,
            compare: false,
            texture_binding: none,
            sampler_binding: none,
        });
        let i = self.textures.len() as u32 - 1;
        self.tex_by_slot.insert(key, i);
        Ok(i)
    }

    pub(super) fn sampler_name(&mut self, slot: u32) -> String {
        self.sampler_names.entry(slot).or_insert_with(|| format!("s{slot}")).clone()
    }

    /// Writes `value` (a float4 in `FRES`) through a fetch destination swizzle.
    pub(super) fn fetch_store(&mut self, f: &Fetch, out: &mut Vec<Stmt>) {
        let s = f.dst_swizzle();
        let mut mask = 0u8;
        let mut parts: Vec<Expr> = Vec::new();
        for (l, &c) in s.iter().enumerate() {
            match c {
                0..=3 => {
                    mask |= 1 << l;
                    parts.push(read(RegFile::Temp, FRES, [c; 4]));
                }
                4 => {
                    mask |= 1 << l;
                    parts.push(lit(0.0));
                }
                5 | 6 => {
                    mask |= 1 << l;
                    parts.push(lit(1.0));
                }
                _ => parts.push(lit(0.0)),
            }
        }
        if mask == 0 {
            return;
        }
        let value = if s == [0, 1, 2, 3] {
            t(FRES)
        } else {
            let p: [Expr; 4] = parts.try_into().unwrap();
            Expr::Compose(Box::new(p))
        };
        self.temp_write(f.dst_reg(), f.dst_rel(), mask, value, false, out);
    }

    /// The texture fetch's source coordinates: three lanes by the fetch's source swizzle (W
    /// repeats Z; no fetch reads a fourth coordinate).
    pub(super) fn fetch_source_xyz(&self, f: &Fetch) -> Expr {
        let sw = f.tfetch_src_swizzle();
        self.temp_read(f.src_reg(), f.src_rel(), [sw[0], sw[1], sw[2], sw[2]], false, false)
    }

    /// One source lane of a texture fetch, broadcast to all four lanes.
    pub(super) fn fetch_source_lane(&self, f: &Fetch, l: usize) -> Expr {
        self.temp_read(f.src_reg(), f.src_rel(), [f.tfetch_src_swizzle()[l]; 4], false, false)
    }

    pub(super) fn fetch(&mut self, f: &Fetch, address: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let mut body = Vec::new();
        if self.ul.is_some() && f.op() != Some(FetchOp::VertexFetch) && f.const_index() == 10 {
            // XenosRecomp UNLEASHED_RECOMP: any texture-clause instruction on tf10 (g_GISampler)
            // sets the bit, whether or not it samples (see `unleashed_sample`).
            self.spec_constants_mask |= SPEC_CONSTANT_BICUBIC_GI_FILTER;
        }
        let overrides = f.filter_overrides();
        if matches!(f.op(), Some(FetchOp::TextureFetch | FetchOp::GetTextureComputedLod | FetchOp::GetTextureWeights)) && !overrides.is_empty() {
            // XenosRecomp's ABI binds one sampler per texture, made by the runtime from the fetch
            // constant: the instruction's own filters cannot pick another one.
            out.push(Stmt::Comment(format!(
                "fetch filter overrides {}: not applied, the runtime's sampler (from the fetch constant) filters, as in XenosRecomp",
                overrides.join(", ")
            )));
        }
        let Some(op) = f.op() else {
            return Err(self.err(format!("fetch opcode {} (unknown) is not supported", f.opcode())));
        };
        match op {
            FetchOp::VertexFetch => {
                if f.is_mini() {
                    // A mini fetch reads the next dwords of the same vertex from the stream of the
                    // preceding full fetch; its element is the container's entry for this slot.
                }
                let i = self.input(address)?;
                let usage = self.c.vertex_elements.iter().find(|e| e.address == address).map(|e| (e.usage, e.usage_index));
                let value = read(RegFile::Input, i, XYZW);
                let value = match usage {
                    Some((u, index)) if self.unleashed_uint_input(u, index) => Expr::IntUnary(IntUnOp::UintToFloat, Box::new(value)),
                    _ => value,
                };
                let value = match usage {
                    // XenosRecomp's vfetch conversions (tfetchR11G11B10 / tfetchTexcoord).
                    Some((3 | 6 | 7, _)) => {
                        self.spec_constants_mask |= SPEC_CONSTANT_R11G11B10_NORMAL;
                        let on = Cond::Compare(CmpOp::Ne, read(RegFile::Const(CB_SHARED), STATE_SPEC, [1; 4]), lit(0.0));
                        Expr::SelectIf(Box::new(on), Box::new(r11g11b10(value.clone())), Box::new(value))
                    }
                    Some((2, _)) => Expr::IntUnary(IntUnOp::UintToFloat, Box::new(value)),
                    Some((5, index)) if index < 32 => {
                        let swapped = Cond::BitSet { value: read(RegFile::Const(CB_SHARED), 16, [1; 4]), bit: index };
                        Expr::SelectIf(Box::new(swapped), Box::new(swz(value.clone(), [1, 0, 3, 2])), Box::new(value))
                    }
                    _ => value,
                };
                // ExpAdjust (Xenia's translators): the fetched value times 2^n, after the
                // format's conversion (which the host input layout does). Not part of a vertex
                // declaration, so the shader applies it.
                let value = if f.exp_adjust() != 0 { bin(BinOp::Mul, value, lit(2f32.powi(f.exp_adjust()))) } else { value };
                body.push(assign(FRES, 0xF, value));
                self.fetch_store(f, &mut body);
            }
            FetchOp::TextureFetch => {
                self.unleashed_pixel_coord(f, &mut body)?;
                let raw = self.fetch_source_xyz(f);
                let dim = fetch_dim(f);
                let offsets = f.offsets();
                let shifted = offsets != [0.0; 3];
                let mut coord = self.fetch_source_xyz(f);
                // tfetchCube's face coordinate, before the s / t offsets touch the vector
                let face = lane(coord.clone(), 2);
                let tex = self.texture(f.const_index(), dim)?;
                // a cube fetch's z offset moves the face (below), not s or t
                let moved = if dim == TexDim::Cube { offsets[0] != 0.0 || offsets[1] != 0.0 } else { shifted };
                if moved || f.coord_denorm() {
                    // To normalised coordinates in texels of the base level: (c + offset) / size
                    // for unnormalised c, c + offset / size otherwise (Xenia's translators). A 3D
                    // fetch offsets and normalises x, y and z (XenosRecomp's 3D heap holds 3D
                    // textures only, no stacked 2D ones, so z is never a layer index); a cube
                    // fetch s and t by the face's width and height (the face coordinate, lane z,
                    // is taken below).
                    let oz = if dim == TexDim::D3 { offsets[2] } else { 0.0 };
                    let off = Expr::Literal([offsets[0], offsets[1], oz, 0.0]);
                    let size = Expr::TexSize { tex };
                    coord = if f.coord_denorm() {
                        bin(BinOp::Div, bin(BinOp::Add, coord, off), size)
                    } else {
                        bin(BinOp::Add, coord, bin(BinOp::Div, off, size))
                    };
                    if moved {
                        body.push(Stmt::Comment(
                            "tfetch texel offsets are applied in texels of the base level (a fetch from a smaller mip level shifts by that level's texels on the hardware)".into(),
                        ));
                    }
                }
                if dim == TexDim::D1 {
                    // XenosRecomp's heaps have no 1D textures: a 1D texture is a one-texel-high
                    // texture of the 2D heap, sampled at its vertical centre.
                    coord = Expr::Compose(Box::new([lane(coord, 0), lit(0.5), lit(0.0), lit(0.0)]));
                }
                let mode = self.sample_mode(f, dim, tex);
                if dim == TexDim::Cube {
                    // tfetchCube takes face coordinates (s, t, face) as `cube`, rcp and mad 1.5
                    // make them; Xenia's fetch translators add the z offset to the face (a whole
                    // or half face, not divided by a size), clamp the face to [0, 5] and
                    // truncate it, then rebuild the direction (`formats::cube::cube_direction`)
                    // from s and t moved and normalised above.
                    let face = if offsets[2] != 0.0 { bin(BinOp::Add, face, lit(offsets[2])) } else { face };
                    coord = face_direction(coord, face);
                }
                let sample = Expr::Sample { tex, coord: Box::new(coord), mode: mode.clone(), offset: [0; 3] };
                self.unleashed_sample(f, dim, tex, raw, mode, sample, &mut body);
                self.fetch_store(f, &mut body);
            }
            FetchOp::GetTextureGradients => {
                // getGradients (Xenia's translators): (ddx(s.x), ddy(s.x), ddx(s.y), ddy(s.y)) of
                // the source; vertex shaders have no derivatives: 0. Computed outside the
                // predicate (derivatives need the whole quad), stored under it.
                let value = if self.vertex {
                    lit(0.0)
                } else {
                    let x = self.fetch_source_lane(f, 0);
                    let y = self.fetch_source_lane(f, 1);
                    let d = |op: UnOp, v: &Expr| lane(un(op, v.clone()), 0);
                    Expr::Compose(Box::new([d(UnOp::Ddx, &x), d(UnOp::Ddy, &x), d(UnOp::Ddx, &y), d(UnOp::Ddy, &y)]))
                };
                out.push(assign(FRES, 0xF, value));
                self.fetch_store(f, &mut body);
            }
            FetchOp::GetTextureComputedLod => {
                // getCompTexLOD (Xenia's translators): the LOD an implicit-derivative fetch at the
                // source would compute, relative to the base level, not clamped and without any
                // bias (Xenia: the `lod` instruction's unclamped result; texel offsets are not
                // getCompTexLOD operands), in x; y, z, w = 0. Computed outside the predicate
                // (derivatives need the whole quad), stored under it.
                if self.vertex || !f.use_comp_lod() || f.use_reg_gradients() {
                    // Xenia's translators store 0 where the fetch would not compute a LOD from
                    // derivatives: in a vertex shader (no implicit derivatives), without
                    // UseComputedLOD, or with UseRegisterGradients ("getCompTexLOD used with
                    // explicit LOD or gradients - contradicts MSDN").
                    body.push(Stmt::Comment(
                        "getCompTexLOD without implicit derivatives (vertex shader, no UseComputedLOD, or UseRegisterGradients): 0, as Xenia's translators read it".into(),
                    ));
                    body.push(assign(FRES, 0xF, lit(0.0)));
                } else {
                    let lod = self.comp_tex_lod(f)?;
                    out.push(assign(FRES, 0xF, Expr::Compose(Box::new([lod, lit(0.0), lit(0.0), lit(0.0)]))));
                }
                self.fetch_store(f, &mut body);
            }
            FetchOp::GetTextureWeights => {
                self.unleashed_pixel_coord(f, &mut body)?;
                self.get_weights(f, &mut body)?;
                self.fetch_store(f, &mut body);
            }
            // setTexLOD (source x → the register LOD), setGradientsH / V (source xyz): state
            // for later fetches with UseRegisterLOD / UseRegisterGradients (Xenia).
            FetchOp::SetTextureLod => body.push(assign(GRAD_H_LOD, 0x8, self.fetch_source_lane(f, 0))),
            FetchOp::SetTextureGradientsHorz => body.push(assign(GRAD_H_LOD, 0x7, self.fetch_source_xyz(f))),
            FetchOp::SetTextureGradientsVert => body.push(assign(GRAD_V, 0x7, self.fetch_source_xyz(f))),
            FetchOp::GetTextureBorderColorFrac => {
                // What fraction of the filter footprint falls on border texels depends on the
                // fetch constant's clamp modes and border colour, which XenosRecomp's binding
                // model does not give the shader (the runtime's sampler decides); Xenia does not
                // translate it either.
                return Err(self.rejected(op.name(), op.info().status));
            }
        }
        if f.is_predicated() {
            out.push(Stmt::If { cond: pred_cond(f.pred_condition()), then_body: body, else_body: vec![] });
        } else {
            out.extend(body);
        }
        Ok(())
    }

    /// getCompTexLOD's LOD (pixel shaders, UseComputedLOD): the unclamped LOD query
    /// (`CalculateLevelOfDetailUnclamped`) at the source, normalised (unnormalised coordinates
    /// divided by the size: x, y and z of a 3D texture by width, height, depth; s and t of a cube
    /// map by the face's width and height); 1D on the 2D heap's one-texel-high texture; a
    /// cube map at the direction rebuilt from the face coordinates as tfetchCube does (face
    /// clamped to [0, 5] and truncated, sc = 2s − 3, tc = 2t − 3; Xenia's translators).
    pub(super) fn comp_tex_lod(&mut self, f: &Fetch) -> Result<Expr, ShaderError> {
        let dim = fetch_dim(f);
        let tex = self.texture(f.const_index(), dim)?;
        let mut coord = self.fetch_source_xyz(f);
        if f.coord_denorm() {
            coord = bin(BinOp::Div, coord, Expr::TexSize { tex });
        }
        match dim {
            // the 2D heap's one-texel-high texture (as tfetch1D): no vertical change
            TexDim::D1 => coord = Expr::Compose(Box::new([lane(coord, 0), lit(0.5), lit(0.0), lit(0.0)])),
            TexDim::Cube => coord = face_direction(coord.clone(), lane(coord, 2)),
            // (`fetch_dim` never gives an array: Xenos fetch constants have no array kind)
            TexDim::D2 | TexDim::D3 | TexDim::D1Array | TexDim::D2Array | TexDim::CubeArray => {}
        }
        Ok(lane(Expr::QueryLod { tex, coord: Box::new(coord), clamped: false }, 0))
    }

    /// How a tfetch picks its LOD (Xenia's translators): the LOD bias is the instruction's plus,
    /// with UseRegisterLOD, the register LOD (setTexLOD). A computed LOD (UseComputedLOD in a
    /// pixel shader, or with UseRegisterGradients in any shader) applies the bias to the
    /// derivatives, or to the register gradients (setGradientsH / V, scaled by 2^bias;
    /// unnormalised coordinates' gradients are in texels; a cube map's are the derivatives of the
    /// cube-space direction, passed as the TextureCube's gradients, and Xenia does not normalise
    /// them for unnormalised coordinates — its TODO —, nor does this); otherwise the LOD is the
    /// bias itself.
    /// The fetch constant's own LOD bias is not part of XenosRecomp's ABI and is not applied.
    pub(super) fn sample_mode(&self, f: &Fetch, dim: TexDim, tex: u32) -> SampleMode {
        let bias = if f.use_reg_lod() { bin(BinOp::Add, lane(t(GRAD_H_LOD), 3), lit(f.lod_bias())) } else { lit(f.lod_bias()) };
        let computed = f.use_comp_lod() && (!self.vertex || f.use_reg_gradients());
        if !computed {
            return SampleMode::Lod(Box::new(bias));
        }
        if !f.use_reg_gradients() {
            return if f.use_reg_lod() { SampleMode::BiasExpr(Box::new(bias)) } else { SampleMode::Bias(f.lod_bias()) };
        }
        let scale = un(UnOp::Exp2, bias);
        let gradient = |reg: u32| {
            let mut g = bin(BinOp::Mul, swz(t(reg), [0, 1, 2, 2]), scale.clone());
            if f.coord_denorm() && dim != TexDim::Cube {
                g = bin(BinOp::Div, g, Expr::TexSize { tex });
            }
            if dim == TexDim::D1 {
                // the 2D heap's one-texel-high texture: no vertical change
                g = Expr::Compose(Box::new([lane(g, 0), lit(0.0), lit(0.0), lit(0.0)]));
            }
            Box::new(g)
        };
        SampleMode::Grad(gradient(GRAD_H_LOD), gradient(GRAD_V))
    }

    /// getWeights{1D,2D,3D,Cube}: the bilinear lerp factors a fetch at the source coordinates
    /// would use, `frac(coord × size + offset − 0.5)` per filtered axis (XenosRecomp's
    /// `getWeights2D`, Xenia's translators; unnormalised coordinates skip the `× size`), 0 for a
    /// NaN coordinate (XenosRecomp) and for the axes the dimension lacks (a cube map filters s
    /// and t only, not the face). The size is the base level's. W, the mip lerp factor, is 0 for
    /// the instruction's MipFilter=point / BASEMAP; otherwise it depends on the sampler's mip
    /// filter and the LOD, neither known here: a destination that reads it is rejected.
    pub(super) fn get_weights(&mut self, f: &Fetch, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        // W is the mip lerp factor: 0 when the instruction's own MipFilter is point or BASEMAP
        // (no blend between levels); with a linear mip filter it needs the LOD, and with the
        // fetch constant's filter ("keep") the runtime's sampler, which the shader does not see.
        if f.dst_swizzle().contains(&3) && !matches!(f.mip_filter(), 0 | 2) {
            return Err(self.err(format!(
                "getWeights: the destination reads W, the mip lerp factor, with MipFilter={} (it needs the sampler's mip filter and the LOD; W is translated for MipFilter=point / BASEMAP)",
                ["point", "linear", "BASEMAP", "keep"][f.mip_filter() as usize]
            )));
        }
        let dim = fetch_dim(f);
        // the axes the texture filters: a cube map filters s and t only, not the face
        let axes = match dim {
            TexDim::D1 | TexDim::D1Array => 1,
            TexDim::D3 => 3,
            TexDim::D2 | TexDim::Cube | TexDim::D2Array | TexDim::CubeArray => 2,
        };
        let tex = self.texture(f.const_index(), dim)?;
        let coord = self.fetch_source_xyz(f);
        let texels = if f.coord_denorm() { coord.clone() } else { bin(BinOp::Mul, coord.clone(), Expr::TexSize { tex }) };
        let off = f.offsets();
        let shift = Expr::Literal([off[0] - 0.5, off[1] - 0.5, off[2] - 0.5, 0.0]);
        let w = un(UnOp::Fract, bin(BinOp::Add, texels, shift));
        out.push(Stmt::Comment(
            "getWeights: lerp factors at the texture's base level (a fetch that samples a smaller mip level filters with that level's size)".into(),
        ));
        out.push(assign(FRES, 0xF, sel(CmpOp::Eq, coord.clone(), coord, w, lit(0.0))));
        out.push(assign(FRES, 0xF & !((1 << axes) - 1), lit(0.0)));
        Ok(())
    }
}

/// The texture dimension a texture fetch (tfetch, getWeights) names.
pub(super) fn fetch_dim(f: &Fetch) -> TexDim {
    match f.dimension() {
        0 => TexDim::D1,
        1 => TexDim::D2,
        2 => TexDim::D3,
        _ => TexDim::Cube,
    }
}

pub(super) fn heap_suffix(dim: TexDim) -> &'static str {
    match dim {
        TexDim::D1 | TexDim::D2 => "2D",
        TexDim::D3 => "3D",
        TexDim::Cube => "Cube",
        // not produced by `fetch_dim` (Xenos has no array fetch); named for completeness
        TexDim::D1Array | TexDim::D2Array => "2DArray",
        TexDim::CubeArray => "CubeArray",
    }
}

/// The cube-space direction of face coordinates (s, t in lanes x, y; `face`) as tfetchCube and
/// getCompTexLODCube read them (Xenia's fetch translators): the face clamped to [0, 5] and
/// truncated, the direction rebuilt from sc = 2s − 3, tc = 2t − 3 (`formats::cube`).
pub(super) fn face_direction(st: Expr, face: Expr) -> Expr {
    let face = bin(BinOp::Max, bin(BinOp::Min, face, lit(5.0)), lit(0.0));
    cube::cube_direction(lane(st.clone(), 0), lane(st, 1), un(UnOp::Floor, face))
}

/// XenosRecomp's `tfetchR11G11B10` with SPEC_CONSTANT_R11G11B10_NORMAL set, on the raw bits of
/// lane x: (sign bit 10 ? -1 : 0) + bits 0-9 / 1024, (bit 21 ? -1 : 0) + bits 11-20 / 1024,
/// (bit 31 ? -1 : 0) + bits 22-30 / 512, 0.
pub(super) fn r11g11b10(raw: Expr) -> Expr {
    let x = swz(raw, [0; 4]);
    let ib = |op, a, b| Expr::IntBinary(op, Box::new(a), Box::new(b));
    let fields = ib(IntBinOp::And, ib(IntBinOp::ShrU, x.clone(), Expr::Bits([0, 11, 22, 0])), Expr::Bits([0x3FF, 0x3FF, 0x1FF, 0]));
    let magnitude =
        bin(BinOp::Mul, Expr::IntUnary(IntUnOp::UintToFloat, Box::new(fields)), Expr::Literal([1.0 / 1024.0, 1.0 / 1024.0, 1.0 / 512.0, 0.0]));
    let signs = Expr::IntUnary(IntUnOp::UintToFloat, Box::new(ib(IntBinOp::And, x, Expr::Bits([0x400, 0x20_0000, 0x8000_0000, 0]))));
    let sign = sel(CmpOp::Gt, signs, lit(0.0), lit(-1.0), lit(0.0));
    bin(BinOp::Add, sign, magnitude)
}
