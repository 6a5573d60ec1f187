//! TEX clauses: resources and samplers, SAMPLE* / FETCH4 / LD / GET_TEXTURE_INFO / gradients and uniform-block VTX_FETCH.

use super::*;

impl Lowering<'_> {
    /// The texture declared for (RESOURCE_ID `res`, SAMPLER_ID `smp`), its dimension and kind
    /// from the resource's GX2SamplerVar (a resource without one is a 2D texture with a plain
    /// sampler, as the SDK's default).
    pub(super) fn texture(&mut self, res: u32, smp: u32, pc: u32, op: TexOp) -> Result<(u32, SamplerDecl), ShaderError> {
        let decl = match self.s.sampler_vars.iter().find(|v| v.location == res) {
            None => SamplerDecl { dim: TexDim::D2, compare: false },
            Some(v) => sampler_type(v.ty).map_err(|why| unsupported(op, format!("{op} on {why} (GX2SamplerType {})", v.ty), pc))?,
        };
        if let Some(x) = self.tex.iter().find(|x| x.0 == (res, smp)) {
            return Ok((x.1, decl));
        }
        let idx = self.m.textures.len() as u32;
        self.m.textures.push(Texture {
            tex_var: format!("t{res}_s{smp}"),
            smp_var: format!("s{smp}_t{res}"),
            dim: decl.dim,
            compare: decl.compare,
            texture_binding: self.binding(Layout::VK_TEXTURE_BASE + res, res),
            sampler_binding: self.binding(Layout::VK_SAMPLER_BASE + smp, smp),
        });
        self.tex.push(((res, smp), idx));
        Ok((idx, decl))
    }

    /// The texture of RESOURCE_ID `res` for an instruction that does not sample (LD,
    /// GET_TEXTURE_INFO): the sampler is not used, so any texture already declared for the
    /// resource serves; otherwise the pair (`res`, `smp`) is declared.
    pub(super) fn resource(&mut self, res: u32, smp: u32, pc: u32, op: TexOp) -> Result<(u32, TexDim), ShaderError> {
        match self.tex.iter().find(|x| x.0 .0 == res) {
            Some(x) => Ok((x.1, self.m.textures[x.1 as usize].dim)),
            None => self.texture(res, smp, pc, op).map(|(i, d)| (i, d.dim)),
        }
    }

    /// The coordinate of a sample of an array texture: src.z is the slice, an unnormalized
    /// coordinate the texture unit does not round (Mesa r600 `get_src_coords` marks the
    /// array lane unnormalized and rounds it in the shader before the fetch), so it selects
    /// slice floor(z), clamped to the slices; `floor` makes HLSL's round-to-nearest of the
    /// lane exact. Other dimensions: `coord` unchanged.
    pub(super) fn array_slice(&self, x: &TexInst, dim: TexDim, coord: Expr, pc: u32) -> Result<Expr, ShaderError> {
        if dim != TexDim::D2Array {
            return Ok(coord);
        }
        if x.coord_norm[2] {
            return Err(unsupported(x.op, format!("{} on a 2D array with a normalized slice coordinate (COORD_TYPE_Z)", x.name), pc));
        }
        let slice = un(UnOp::Floor, swz(coord.clone(), [2; 4]));
        Ok(Expr::Compose(Box::new([swz(coord.clone(), [0; 4]), swz(coord, [1; 4]), slice, lit(0.0)])))
    }

    /// The coordinate of a sample of a cube or cube-array resource: the direction rebuilt from
    /// the face coordinates (s, t, face) in src_sel x, y, z (see CUBE in docs/gx2.md), and for a
    /// cube array, in lane w, the cube index the resource's last SET_CUBEMAP_INDEX set (docs/gx2.md
    /// "Cube arrays": Mesa r600 on R600-R700 and Cemu both take the index from SET_CUBEMAP_INDEX's
    /// src.x). A cube-array sample with no SET_CUBEMAP_INDEX for its resource before it in the
    /// program is refused: what the unit holds then is not documented (Cemu: 0).
    fn cube_coord(&self, x: &TexInst, dim: TexDim, lanes: [Expr; 3], pc: u32) -> Result<Expr, ShaderError> {
        let [s, t, face] = lanes;
        if dim != TexDim::CubeArray {
            return Ok(cube::cube_direction(s, t, face));
        }
        if !self.cube_index_set.contains(&x.resource_id) {
            return Err(unsupported(
                x.op,
                format!(
                    "{} on cube-array resource {} with no SET_CUBEMAP_INDEX for it earlier in the program (the index the unit holds then is not documented)",
                    x.name, x.resource_id
                ),
                pc,
            ));
        }
        Ok(cube::cube_direction_and(s, t, face, rd(CUBE_INDEX + x.resource_id, 0)))
    }

    pub(super) fn tex(&mut self, x: &TexInst, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if x.src_rel || x.dst_rel {
            return Err(unsupported(x.op, format!("{} with relative GPR addressing", x.name), pc));
        }
        let sel = |s: u8| -> Expr {
            match s {
                0..=3 => rd(x.src_gpr, s),
                5 => lit(1.0),
                _ => lit(0.0),
            }
        };
        let coord = Expr::Compose(Box::new([sel(x.src_sel[0]), sel(x.src_sel[1]), sel(x.src_sel[2]), sel(x.src_sel[3])]));
        use TexOp::*;
        let value = match x.op {
            SAMPLE | SAMPLE_L | SAMPLE_LB | SAMPLE_LZ | SAMPLE_G | SAMPLE_G_L | SAMPLE_G_LB | SAMPLE_G_LZ => {
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, format!("{} with unnormalized coordinates", x.name), pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                if decl.compare {
                    return Err(unsupported(x.op, format!("{} on a shadow sampler (only SAMPLE_C* compare)", x.name), pc));
                }
                let dim = decl.dim;
                let offset = texel_offset(x, dim, pc)?;
                // a cube resource takes face coordinates (s, t, face id), as CUBE makes them
                let coord = if dim.is_cube() {
                    // The gradients of a cube SAMPLE_G / SAMPLE_G_LB are in an unknown space
                    // (face coordinates? the direction?) and no source translates them: Mesa r600
                    // lowers textureGrad on cube maps before the backend, Cemu leaves it
                    // unimplemented, decaf aborts on every gradient form. SAMPLE_G_L and
                    // SAMPLE_G_LZ do not choose their level from the gradients (below).
                    if matches!(x.op, SAMPLE_G | SAMPLE_G_LB) {
                        return Err(unsupported(
                            x.op,
                            format!("{} on a cube texture (the space of face-coordinate gradients is not documented)", x.name),
                            pc,
                        ));
                    }
                    self.cube_coord(x, dim, [sel(x.src_sel[0]), sel(x.src_sel[1]), sel(x.src_sel[2])], pc)?
                } else {
                    self.array_slice(x, dim, coord, pc)?
                };
                let bias = ((x.lod_bias << 25) as i32 >> 25) as f32 / 8.0;
                let w = sel(x.src_sel[3]);
                let mode = match x.op {
                    SAMPLE => SampleMode::Bias(bias),
                    SAMPLE_L => SampleMode::Lod(Box::new(bin(BinOp::Add, w, lit(bias)))),
                    SAMPLE_LB => SampleMode::BiasExpr(Box::new(bin(BinOp::Add, w, lit(bias)))),
                    SAMPLE_LZ => SampleMode::Lod(Box::new(lit(0.0))),
                    // The SAMPLE_G_* forms (docs/gx2.md "Gradient forms"): the suffix says what
                    // replaces or biases the LOD the SET_GRADIENTS_H/V gradients give, as the
                    // suffix does for SAMPLE_L / _LB / _LZ (decaf `translateTex_SAMPLE_G_L` =
                    // Gradient | Lod, `_G_LB` = Gradient | LodBias, `_G_LZ` = Gradient | LodZero;
                    // Mesa's r600 bytecode parser gives all three the gradient inputs). With an
                    // explicit LOD the gradients only shape an anisotropic footprint, which
                    // SampleLevel does not model (docs/gx2.md says so).
                    SAMPLE_G_L => SampleMode::Lod(Box::new(bin(BinOp::Add, w, lit(bias)))),
                    SAMPLE_G_LZ => SampleMode::Lod(Box::new(lit(0.0))),
                    SAMPLE_G_LB => {
                        // log2(ρ · 2^b) = log2(ρ) + b: scaling both gradients by 2^bias biases
                        // the LOD they give by exactly `bias` and keeps their ratio (anisotropy)
                        let scale = un(UnOp::Exp2, bin(BinOp::Add, w, lit(bias)));
                        SampleMode::Grad(Box::new(bin(BinOp::Mul, rd4(GRAD_H), scale.clone())), Box::new(bin(BinOp::Mul, rd4(GRAD_V), scale)))
                    }
                    _ => SampleMode::Grad(Box::new(rd4(GRAD_H)), Box::new(rd4(GRAD_V))),
                };
                Expr::Sample { tex: ti, coord: Box::new(coord), mode, offset }
            }
            SAMPLE_C | SAMPLE_C_LZ | SAMPLE_C_L | SAMPLE_C_LB | SAMPLE_C_G | SAMPLE_C_G_L | SAMPLE_C_G_LB | SAMPLE_C_G_LZ => {
                // Depth compare (docs/gx2.md "Depth compare"). The comparison function is
                // sampler state; the result is one value in lane x.
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, format!("{} with unnormalized coordinates", x.name), pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                if !decl.compare {
                    return Err(unsupported(x.op, format!("{} on a sampler not declared shadow", x.name), pc));
                }
                // only lane x of the result is defined in every source (decaf writes (c, 0, 0, 1),
                // Cemu asserts that only x is read)
                if x.dst_sel.iter().any(|&d| (1..=3).contains(&d)) {
                    return Err(unsupported(x.op, format!("{} reading lane y, z or w of its result (the sources define lane x only)", x.name), pc));
                }
                let dim = decl.dim;
                let offset = texel_offset(x, dim, pc)?;
                // The forms with an explicit LOD or bias (_L, _LB, _G_L, _G_LB) take it from
                // src.w and the reference from src.z (Mesa r600 `TexInstr::prepare_source`:
                // "With txl and txb shadow goes into z and lod or bias go into w"); the others
                // take the reference from src.w (Mesa: "Other ops have shadow in w"; decaf
                // `translateGenericSample` reads Dref from lane 3; Cemu passes srcSel[3]). On a
                // 2D array or cube, z holds the slice or face, and no source says where the
                // reference of a form with a LOD lane goes then: refused.
                let lod_lane = matches!(x.op, SAMPLE_C_L | SAMPLE_C_LB | SAMPLE_C_G_L | SAMPLE_C_G_LB);
                if lod_lane && dim != TexDim::D2 {
                    return Err(unsupported(
                        x.op,
                        format!(
                            "{} on a {:?} shadow texture (src.z holds the slice or face; where the reference goes is not documented)",
                            x.name, dim
                        ),
                        pc,
                    ));
                }
                let gradients = matches!(x.op, SAMPLE_C_G | SAMPLE_C_G_LB);
                if gradients && dim.is_cube() {
                    return Err(unsupported(
                        x.op,
                        format!("{} on a cube texture (the space of face-coordinate gradients is not documented)", x.name),
                        pc,
                    ));
                }
                let coord = if dim.is_cube() {
                    self.cube_coord(x, dim, [sel(x.src_sel[0]), sel(x.src_sel[1]), sel(x.src_sel[2])], pc)?
                } else {
                    self.array_slice(x, dim, coord, pc)?
                };
                let reference = Box::new(sel(x.src_sel[if lod_lane { 2 } else { 3 }]));
                // LOD_BIAS (s3.3, eighths) adds to the LOD as for SAMPLE_L / _LB
                let bias = ((x.lod_bias << 25) as i32 >> 25) as f32 / 8.0;
                let w_plus_bias = || bin(BinOp::Add, sel(x.src_sel[3]), lit(bias));
                // gradients scaled by 2^b give the gradient LOD + b (log2(ρ · 2^b) = log2(ρ) + b)
                let scaled_gradients = |b: Expr| {
                    let scale = un(UnOp::Exp2, b);
                    SampleMode::Grad(Box::new(bin(BinOp::Mul, rd4(GRAD_H), scale.clone())), Box::new(bin(BinOp::Mul, rd4(GRAD_V), scale)))
                };
                let pixel = self.s.kind == ShaderKind::Pixel;
                /// Where a compare takes its level from.
                enum Level {
                    /// Mip level 0 (`SampleCmpLevelZero`, shader model 6.0).
                    Zero,
                    /// Implicit derivatives (`SampleCmp`, 6.0).
                    Implicit,
                    /// An explicit LOD, bias or gradients (`SampleCmpLevel` / `Bias` / `Grad`, 6.7-6.8).
                    Mode(SampleMode),
                }
                let level = match x.op {
                    // a vertex or geometry shader has no implicit derivatives: the hardware
                    // samples level 0 there (decaf forces LOD zero outside pixel shaders)
                    SAMPLE_C if !pixel => Level::Zero,
                    SAMPLE_C if bias == 0.0 => Level::Implicit,
                    SAMPLE_C => Level::Mode(SampleMode::Bias(bias)),
                    SAMPLE_C_LZ | SAMPLE_C_G_LZ => Level::Zero,
                    // with an explicit LOD the gradients of _G_L only shape an anisotropic
                    // footprint, which point sampling does not have (as SAMPLE_G_L)
                    SAMPLE_C_L | SAMPLE_C_G_L => Level::Mode(SampleMode::Lod(Box::new(w_plus_bias()))),
                    SAMPLE_C_LB if !pixel => {
                        return Err(unsupported(x.op, format!("{} outside a pixel shader (no implicit LOD to bias)", x.name), pc));
                    }
                    SAMPLE_C_LB => Level::Mode(SampleMode::BiasExpr(Box::new(w_plus_bias()))),
                    SAMPLE_C_G if bias == 0.0 => Level::Mode(SampleMode::Grad(Box::new(rd4(GRAD_H)), Box::new(rd4(GRAD_V)))),
                    SAMPLE_C_G => Level::Mode(scaled_gradients(lit(bias))),
                    _ => Level::Mode(scaled_gradients(w_plus_bias())),
                };
                let coord = Box::new(coord);
                match level {
                    Level::Zero => Expr::SampleCmp { tex: ti, coord, reference, level_zero: true, offset },
                    Level::Implicit => Expr::SampleCmp { tex: ti, coord, reference, level_zero: false, offset },
                    Level::Mode(mode) => Expr::SampleCmpMode { tex: ti, coord, reference, mode, offset },
                }
            }
            FETCH4 => {
                // Gather: the red component of the four texels bilinear filtering would read
                // (docs/gx2.md "FETCH4"); the lane order is reordered after the fetch.
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, format!("{} with unnormalized coordinates", x.name), pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                if decl.compare || !matches!(decl.dim, TexDim::D2 | TexDim::D2Array) {
                    return Err(unsupported(
                        x.op,
                        format!("{} on a {:?}{} texture (2D and 2D-array only)", x.name, decl.dim, if decl.compare { " shadow" } else { "" }),
                        pc,
                    ));
                }
                let offset = texel_offset(x, decl.dim, pc)?;
                let coord = self.array_slice(x, decl.dim, coord, pc)?;
                let gather = Expr::Gather { tex: ti, coord: Box::new(coord), offset };
                // R700 lane k = HLSL Gather lane FETCH4_FROM_GATHER[k]
                swz(gather, FETCH4_FROM_GATHER)
            }
            LD => {
                // Texel fetch. Sources (docs/gx2.md "LD and GET_TEXTURE_INFO"): the coordinate
                // lanes are integer bit patterns (decaf `translateTex_LD` → OpImageFetch of the
                // source bitcast to uint; Cemu `_emitTEXSampleTextureCode` reads them as
                // SIGNED_INT for texelFetch; Mesa r600 emits nir `txf`, whose coordinates are
                // ints, as LD: `TexInstr::Inputs::get_opcode`); the mip level is the integer
                // in src.w (Mesa `LowerTexToBackend::lower_txf` puts the txf lod in lane 3; Cemu
                // and decaf fetch level 0, both marked to do). COORD_TYPE is not read (Mesa
                // leaves it normalized on its LDs).
                let (ti, dim) = self.resource(x.resource_id, x.sampler_id, pc, x.op)?;
                if dim.is_cube() {
                    return Err(unsupported(x.op, "LD on a cube texture (no texel fetch from a cube map in the sources or in HLSL)", pc));
                }
                // Mesa r600_shader.c `tgsi_tex`: "The texture offset feature doesn't work with
                // the TXF instruction and must be emulated by adding the offset to the texture
                // coordinates" (and nir is told `lower_txf_offset`); Cemu leaves LD offsets
                // unimplemented. What the hardware does with them is unknown: refused.
                if x.offset != [0, 0, 0] {
                    return Err(unsupported(x.op, "LD with texel offsets (Mesa r600: the offset fields do not work with LD)", pc));
                }
                Expr::Load { tex: ti, coord: Box::new(coord), lod: Box::new(sel(x.src_sel[3])) }
            }
            GET_TEXTURE_INFO => {
                // (width, height, depth, levels) of mip level asint(src.x) as integer bit
                // patterns (decaf `translateTex_GET_TEXTURE_INFO`: OpImageQuerySizeLod at the
                // bitcast src.x, 1 for a 2D resource's depth, OpImageQueryLevels in w; Mesa r600
                // `TexInstr::emit_tex_txs` emits nir txs as GET_TEXTURE_RESINFO with the lod in
                // the source and reads query_levels from lane w). Cemu writes level 0's size
                // and 1 in w (its mip input is a to do).
                let (ti, dim) = self.resource(x.resource_id, x.sampler_id, pc, x.op)?;
                if dim.is_cube() {
                    return Err(unsupported(x.op, "GET_TEXTURE_INFO on a cube texture (its z lane is not documented)", pc));
                }
                // A 1D array is bound as a 2D array one texel high (its slice in src.z, as Mesa
                // r600 samples it), so TexInfo would put the layer count in z, where the R600
                // resource holds it (Mesa `r600_state.c`: height 1, depth = array size). Cemu
                // returns (width, layers, 1, 1) and Mesa's `emit_tex_txs` reads a 1D array's
                // layer count from lane y: which lane the hardware fills is not settled.
                if self.s.sampler_vars.iter().any(|v| v.location == x.resource_id && matches!(v.ty, 9 | 11)) {
                    return Err(unsupported(
                        x.op,
                        "GET_TEXTURE_INFO on a 1D array texture (Cemu and Mesa's txs read the layer count from lane y, the R600 resource holds it in its depth: which lane the hardware fills is not settled)",
                        pc,
                    ));
                }
                Expr::TexInfo { tex: ti, lod: Box::new(sel(x.src_sel[0])) }
            }
            GET_COMP_TEX_LOD => {
                // The LOD an implicit-derivative sample at src would compute (docs/gx2.md "LOD
                // query"): lane x the computed LOD, not clamped, lane y the clamped level a sample
                // would access (Mesa r600 answers GLSL `textureQueryLod` with destination swizzle
                // (y, x): sfn `TexInstr::emit_tex_lod` {1, 0, 7, 7}, the TGSI `LODQ` path
                // likewise; Xenos getCompTexLOD, its predecessor, also puts the computed LOD in
                // x; Cemu writes textureQueryLod's pair unswapped in a path it marks with a debug
                // break). Lanes z and w are not defined (Mesa masks them).
                if self.s.kind != ShaderKind::Pixel {
                    return Err(unsupported(x.op, "GET_COMP_TEX_LOD outside a pixel shader (no implicit derivatives)", pc));
                }
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, "GET_COMP_TEX_LOD with unnormalized coordinates", pc));
                }
                if x.lod_bias != 0 || x.offset != [0, 0, 0] {
                    return Err(unsupported(
                        x.op,
                        "GET_COMP_TEX_LOD with a LOD_BIAS or texel offsets (whether the result includes them is not documented)",
                        pc,
                    ));
                }
                if x.dst_sel.iter().any(|&d| (2..=3).contains(&d)) {
                    return Err(unsupported(x.op, "GET_COMP_TEX_LOD reading lane z or w of its result (the sources define x and y only)", pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                // a cube's source would be face coordinates (Mesa) or the direction (Cemu): refused
                if decl.dim.is_cube() {
                    return Err(unsupported(x.op, "GET_COMP_TEX_LOD on a cube texture (the sources disagree on its coordinates)", pc));
                }
                let coord = self.array_slice(x, decl.dim, coord, pc)?;
                let query = |clamped| swz(Expr::QueryLod { tex: ti, coord: Box::new(coord.clone()), clamped }, [0; 4]);
                Expr::Compose(Box::new([query(false), query(true), lit(0.0), lit(0.0)]))
            }
            SET_CUBEMAP_INDEX => {
                // The cube index of later samples of this resource's cube array: src.x, a float
                // the unit rounds to the nearest cube (docs/gx2.md "Cube arrays"; Mesa r600
                // `tgsi_tex` on R600-R700 moves the GL layer unrounded into the x lane it names;
                // Cemu `_emitTEXSetCubemapIndexCode` keeps srcSel[0] per texture unit). It
                // writes no GPR.
                if x.resource_id >= CUBE_INDEX_SLOTS {
                    return Err(unsupported(
                        x.op,
                        format!("SET_CUBEMAP_INDEX of resource {} (texture units 0-{})", x.resource_id, CUBE_INDEX_SLOTS - 1),
                        pc,
                    ));
                }
                if !self.cube_index_set.contains(&x.resource_id) {
                    self.cube_index_set.push(x.resource_id);
                }
                out.push(assign(t(CUBE_INDEX + x.resource_id), 0x1, sel(x.src_sel[0])));
                return Ok(());
            }
            SET_GRADIENTS_H | SET_GRADIENTS_V => {
                let r = if x.op == SET_GRADIENTS_H { GRAD_H } else { GRAD_V };
                out.push(assign(t(r), 0xF, coord));
                return Ok(());
            }
            GET_GRADIENTS_H | GET_GRADIENTS_V => {
                if self.s.kind != ShaderKind::Pixel {
                    return Err(unsupported(x.op, format!("{} outside a pixel shader", x.name), pc));
                }
                un(if x.op == GET_GRADIENTS_H { UnOp::Ddx } else { UnOp::Ddy }, coord)
            }
            VTX_FETCH if x.resource_id >= 0x80 && x.resource_id < 0x80 + 15 => {
                // uniform block read with a dynamic index: element = asint(src.x) + offset/16
                let loc = x.resource_id - 0x80;
                let cb = self.const_buffer_for_block(loc);
                let w2 = x.raw[2];
                let off = (w2 & 0xFFFF) / 16;
                let src_x = (x.raw[0] >> 24) & 3;
                let idx = Expr::IntUnary(IntUnOp::IntToFloat, Box::new(rd(x.src_gpr, src_x as u8)));
                Expr::Read(Src {
                    reg: RegRef {
                        file: RegFile::Const(cb),
                        index: Index::Dynamic { base: off as i32, value: Box::new(idx), conv: IndexConv::Trunc },
                    },
                    swizzle: XYZW,
                    abs: false,
                    negate: false,
                })
            }
            VTX_FETCH => return Err(unsupported(x.op, format!("VTX_FETCH of resource {} (only uniform blocks 0x80-0x8E)", x.resource_id), pc)),
            MEM => {
                // a statement, not an expression: the load goes to TEX_TMP itself
                self.scratch_read(x, pc, out)?;
                return self.tex_select(x, out);
            }
            // rejected by the table (docs/opcodes/gx2.md)
            VTX_SEMANTIC | GET_SAMPLE_INFO | GET_LERP | KEEP_GRADIENTS | PASS | SET_TEXTURE_OFFSETS | GATHER4 | GATHER4_O | GATHER4_C
            | GATHER4_C_O | GET_BUFFER_RESINFO => return Err(rejected(x.op, pc)),
        };
        // fetch once into a scratch temp, then the destination select
        out.push(assign(t(TEX_TMP), 0xF, value));
        self.tex_select(x, out)
    }

    /// R\[DST_GPR\] = TEX_TMP through DST_SEL (0-3 a lane, 4 = 0, 5 = 1, 7 = not written).
    fn tex_select(&mut self, x: &TexInst, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let mut comps = [lit(0.0), lit(0.0), lit(0.0), lit(0.0)];
        let mut mask = 0;
        for k in 0..4 {
            comps[k] = match x.dst_sel[k] {
                0..=3 => rd(TEX_TMP, x.dst_sel[k]),
                4 => lit(0.0),
                5 => lit(1.0),
                _ => continue,
            };
            mask |= 1 << k;
        }
        if mask != 0 {
            out.push(assign(t(x.dst_gpr), mask, Expr::Compose(Box::new(comps))));
        }
        Ok(())
    }
}

/// The TEX word's OFFSET_X/Y/Z as whole texels of the sampled level. The fields are 5-bit
/// signed in half-texel units (docs/isa/gx2.md: s1.3.1; Cemu's LatteDecompiler halves the field
/// into the `textureOffset` offset; Mesa r600 `TexInstr::get_offset` doubles GL's whole texels
/// into it: docs/gx2.md "Texel offsets"). The hardware range is -8..7.5 texels; HLSL's
/// `Sample(s, uv, offset)` takes constant whole texels in -8..7, so a half-texel offset, an
/// offset on a cube resource, or one on a lane the resource lacks is rejected.
pub(super) fn texel_offset(x: &TexInst, dim: TexDim, pc: u32) -> Result<[i8; 3], ShaderError> {
    if x.offset == [0, 0, 0] {
        return Ok([0; 3]);
    }
    if dim.is_cube() {
        return Err(unsupported(x.op, format!("{} with texel offsets on a cube texture", x.name), pc));
    }
    let lanes = dim.texel_lanes();
    let mut out = [0i8; 3];
    for (k, &o) in x.offset.iter().enumerate() {
        if o % 2 != 0 {
            return Err(unsupported(x.op, format!("{} with a half-texel offset ({} texels)", x.name, o as f32 / 2.0), pc));
        }
        if k >= lanes && o != 0 {
            return Err(unsupported(x.op, format!("{} with a texel offset on lane {k} of a {lanes}-lane resource", x.name), pc));
        }
        out[k] = (o / 2) as i8;
    }
    Ok(out)
}

/// FETCH4's lane k is HLSL `Gather`'s lane `FETCH4_FROM_GATHER[k]`: the R700 returns the
/// footprint's texels as x = (i1, j0), y = (i0, j1), z = (i1, j1), w = (i0, j0) (Cemu
/// `_emitTEXSampleTextureCode`: fetch4 x/y/z/w ← textureGather z/x/y/w; Mesa r600
/// `LowerTexToBackend::lower_tg4`: destination swizzle (1, 2, 0, 3) on R600-Evergreen, the
/// same permutation read the other way).
pub const FETCH4_FROM_GATHER: [u8; 4] = [2, 0, 1, 3];
