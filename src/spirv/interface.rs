//! The module's interface, as DXC builds it from the HLSL writer's text: stage variables with
//! their `Location` / `BuiltIn`, uniform blocks in D3D layout, separate images and samplers
//! with their set and binding, the entry point and its execution modes, and the register
//! variables the body reads and writes.

use super::{unsupported, Options, Result, SpirvError, Writer};
use crate::ir::*;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{self, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel, Op, StorageClass, Word};

/// The variables of one texture and its sampler, and the image type sampled through them.
#[derive(Clone, Copy)]
pub(super) struct TextureVars {
    pub(super) image: Word,
    pub(super) sampler: Word,
    pub(super) image_type: Word,
    pub(super) sampler_type: Word,
}

/// Where a stage variable goes: a built-in or a location.
enum Place {
    BuiltIn(BuiltIn),
    Location(u32),
}

/// How a stage variable of `semantic` is declared: its place and its scalar type (`None`:
/// `vec4`, `Some(f32)`, `Some(u32)`): the types and built-ins DXC gives the HLSL writer's
/// signature structs (`hlsl::module::io_struct`).
fn place(stage: Stage, semantic: &Semantic, output: bool) -> Result<Place> {
    Ok(match semantic {
        Semantic::Texcoord(n) => Place::Location(*n),
        Semantic::Target(n) => Place::Location(*n),
        Semantic::Usage { location, .. } => Place::Location(*location),
        // DXC: SV_Position is FragCoord in a pixel shader's inputs, Position elsewhere.
        Semantic::Position if stage == Stage::Pixel && !output => Place::BuiltIn(BuiltIn::FragCoord),
        Semantic::Position => Place::BuiltIn(BuiltIn::Position),
        Semantic::Depth => Place::BuiltIn(BuiltIn::FragDepth),
        Semantic::InstanceId => Place::BuiltIn(BuiltIn::InstanceIndex),
        Semantic::VertexId => Place::BuiltIn(BuiltIn::VertexIndex),
        Semantic::UsageUint { location, .. } => Place::Location(*location),
        // `[[vk::builtin("PointSize")]]` (the HLSL writer's SPIR-V-only field)
        Semantic::PointSize => Place::BuiltIn(BuiltIn::PointSize),
        // an array of one float (`gl_CullDistance[1]`), as DXC declares `SV_CullDistance`
        Semantic::CullDistance => Place::BuiltIn(BuiltIn::CullDistance),
        Semantic::StreamOut { location, .. } => Place::Location(*location),
    })
}

impl Writer<'_> {
    /// The whole module: body, entry point, interface.
    pub(super) fn module(&mut self, opts: &Options) -> Result<()> {
        let m = self.m;
        let (model, (main, interface)) = match (m.stage, &m.ext.geometry) {
            (Stage::Vertex, None) => (ExecutionModel::Vertex, self.vertex_or_pixel_entry()?),
            (Stage::Pixel, None) => (ExecutionModel::Fragment, self.vertex_or_pixel_entry()?),
            (Stage::Geometry, Some(g)) => (ExecutionModel::Geometry, self.geometry_entry(g)?),
            _ => return unsupported("a geometry shape on a vertex or pixel stage, or a geometry stage without one"),
        };
        // a geometry shader declares `Geometry` (which implies `Shader`), as DXC does
        self.b.capability(if model == ExecutionModel::Geometry { Capability::Geometry } else { Capability::Shader });
        for c in std::mem::take(&mut self.capabilities) {
            self.b.capability(c);
        }
        if opts.float_controls {
            self.b.capability(Capability::SignedZeroInfNanPreserve);
            self.need_extension("SPV_KHR_float_controls");
        }
        for e in std::mem::take(&mut self.extensions) {
            self.b.extension(e);
        }
        // buffer device addresses (the XenosRecomp ABI) need the 64-bit physical addressing
        let addressing = if self.xenos_uses_addresses() { spirv::AddressingModel::PhysicalStorageBuffer64 } else { spirv::AddressingModel::Logical };
        self.b.memory_model(addressing, spirv::MemoryModel::GLSL450);
        self.b.entry_point(model, main, opts.entry_point.clone(), interface);
        if model == ExecutionModel::Fragment {
            self.b.execution_mode(main, ExecutionMode::OriginUpperLeft, []);
            if m.outputs.iter().any(|v| v.semantic == Semantic::Depth) {
                self.b.execution_mode(main, ExecutionMode::DepthReplacing, []);
            }
        }
        if let Some(g) = m.ext.geometry.as_ref().filter(|_| model == ExecutionModel::Geometry) {
            self.geometry_execution_modes(main, g);
        }
        if m.ext.stream_out.as_ref().is_some_and(|so| !so.entries.is_empty()) {
            // what `dxc::xfb` adds to DXC's module
            self.b.capability(Capability::TransformFeedback);
            self.b.execution_mode(main, ExecutionMode::Xfb, []);
        }
        if opts.float_controls {
            self.b.execution_mode(main, ExecutionMode::SignedZeroInfNanPreserve, [32]);
        }
        Ok(())
    }

    /// The function `shrec_body`: the module's statements (the IR's `Return` a plain
    /// `OpReturn`); its id.
    pub(super) fn body_function(&mut self) -> Result<Word> {
        let body = self.b.begin_function(self.t.void, None, spirv::FunctionControl::NONE, self.t.fn_void)?;
        self.b.begin_block(None)?;
        self.block(&self.m.body)?;
        if self.b.selected_block().is_some() {
            self.b.ret()?;
        }
        self.b.end_function()?;
        Ok(body)
    }

    /// A vertex or pixel shader's body and entry point (`main` copies the inputs the body reads
    /// in, calls it, and copies every output out): the entry point and its interface.
    fn vertex_or_pixel_entry(&mut self) -> Result<(Word, Vec<Word>)> {
        let m = self.m;
        // the body first: it decides which registers and resources exist
        let body = self.body_function()?;

        // Stage variables: the inputs the body reads (DXC's optimizer removes the others from
        // the signature struct it declares) and every output (all are stored, 0 when unnamed).
        let mut interface = Vec::new();
        let mut inputs = Vec::new();
        for (i, v) in m.inputs.iter().enumerate() {
            if !self.io_regs.contains_key(&(false, i as u32)) {
                continue;
            }
            let (var, ty) = self.stage_variable(v, false)?;
            interface.push(var);
            inputs.push((i as u32, v, var, ty));
        }
        let mut outputs = Vec::new();
        for (i, v) in m.outputs.iter().enumerate() {
            let (var, ty) = self.stage_variable(v, true)?;
            interface.push(var);
            outputs.push((i as u32, v, var, ty));
        }

        let main = self.b.begin_function(self.t.void, None, spirv::FunctionControl::NONE, self.t.fn_void)?;
        self.b.begin_block(None)?;
        for (i, v, var, ty) in inputs {
            let reg = self.io_regs[&(false, i)];
            let loaded = self.inst(Op::Load, ty, vec![Operand::IdRef(var)])?;
            let value = match v.semantic {
                Semantic::InstanceId => {
                    let f = self.inst(Op::ConvertUToF, self.t.f32, vec![Operand::IdRef(loaded)])?;
                    self.lane_x_vector(f)?
                }
                Semantic::VertexId => {
                    let f = self.inst(Op::Bitcast, self.t.f32, vec![Operand::IdRef(loaded)])?;
                    self.lane_x_vector(f)?
                }
                // `asfloat(input.x)`: the uint4's bits
                Semantic::UsageUint { .. } => self.inst(Op::Bitcast, self.t.v4f, vec![Operand::IdRef(loaded)])?,
                _ if v.components == 1 => self.lane_x_vector(loaded)?,
                _ => loaded,
            };
            self.b.store(reg, value, None, [])?;
        }
        self.b.function_call(self.t.void, None, body, [])?;
        for (i, v, var, _) in outputs {
            // an output the body never names is 0, as its register was
            let value = match self.io_regs.get(&(true, i)).copied() {
                Some(reg) => self.inst(Op::Load, self.t.v4f, vec![Operand::IdRef(reg)])?,
                None => self.v4f_splat(0.0),
            };
            self.store_output(v, var, value)?;
        }
        self.b.ret()?;
        self.b.end_function()?;
        Ok((main, interface))
    }

    /// Stores the register value `value` of output `v` into its stage variable `var`: lane x
    /// of a one-component output; a vertex or geometry stage's position with y negated
    /// (`-fvk-invert-y`: DXC negates y of the position it stores in both).
    pub(super) fn store_output(&mut self, v: &IoVar, var: Word, value: Word) -> Result<()> {
        let value = if v.semantic == Semantic::CullDistance {
            let x = self.inst(Op::CompositeExtract, self.t.f32, vec![Operand::IdRef(value), Operand::LiteralBit32(0)])?;
            let ptr_ty = self.b.type_pointer(None, StorageClass::Output, self.t.f32);
            let zero = self.u32_const(0);
            let element = self.inst(Op::AccessChain, ptr_ty, vec![Operand::IdRef(var), Operand::IdRef(zero)])?;
            self.b.store(element, x, None, [])?;
            return Ok(());
        } else if let Semantic::StreamOut { .. } = v.semantic {
            // `asuint(reg.x..)`: the first `components` lanes, their bits unchanged
            let n = v.components.clamp(1, 4) as u32;
            let (fty, uty) = (self.float_vec(n as usize), self.uint_vec(n));
            let lanes = if n == 4 {
                value
            } else if n == 1 {
                self.inst(Op::CompositeExtract, fty, vec![Operand::IdRef(value), Operand::LiteralBit32(0)])?
            } else {
                let mut ops = vec![Operand::IdRef(value), Operand::IdRef(value)];
                ops.extend((0..n).map(Operand::LiteralBit32));
                self.inst(Op::VectorShuffle, fty, ops)?
            };
            self.inst(Op::Bitcast, uty, vec![Operand::IdRef(lanes)])?
        } else if v.components == 1 || v.semantic == Semantic::PointSize {
            self.inst(Op::CompositeExtract, self.t.f32, vec![Operand::IdRef(value), Operand::LiteralBit32(0)])?
        } else if v.semantic == Semantic::Position && self.m.stage != Stage::Pixel {
            let y = self.inst(Op::CompositeExtract, self.t.f32, vec![Operand::IdRef(value), Operand::LiteralBit32(1)])?;
            let ny = self.arith(Op::FNegate, self.t.f32, vec![Operand::IdRef(y)])?;
            self.inst(Op::CompositeInsert, self.t.v4f, vec![Operand::IdRef(ny), Operand::IdRef(value), Operand::LiteralBit32(1)])?
        } else {
            value
        };
        self.b.store(var, value, None, [])?;
        Ok(())
    }

    /// `vec4(x, 0, 0, 0)`.
    pub(super) fn lane_x_vector(&mut self, x: Word) -> Result<Word> {
        let zero = self.f32_const(0.0);
        self.inst(Op::CompositeConstruct, self.t.v4f, [x, zero, zero, zero].map(Operand::IdRef).to_vec())
    }

    /// A stage variable for `v` and the type it holds.
    pub(super) fn stage_variable(&mut self, v: &IoVar, output: bool) -> Result<(Word, Word)> {
        self.stage_variable_arrayed(v, output, None)
    }

    /// [`Self::stage_variable`], as an array of `vertices` elements when given (a geometry
    /// shader's per-vertex inputs); the type returned is the element's.
    pub(super) fn stage_variable_arrayed(&mut self, v: &IoVar, output: bool, vertices: Option<u32>) -> Result<(Word, Word)> {
        let ty = match v.semantic {
            Semantic::InstanceId | Semantic::VertexId => self.t.u32,
            Semantic::UsageUint { .. } => self.t.v4u,
            Semantic::PointSize | Semantic::CullDistance => self.t.f32,
            Semantic::StreamOut { .. } => self.uint_vec(v.components.clamp(1, 4) as u32),
            _ if v.components == 1 => self.t.f32,
            _ => self.t.v4f,
        };
        let class = if output { StorageClass::Output } else { StorageClass::Input };
        let var_ty = match (vertices, &v.semantic) {
            (Some(n), _) => {
                let len = self.u32_const(n);
                self.b.type_array(ty, len)
            }
            (None, Semantic::CullDistance) => {
                self.need_capability(Capability::CullDistance);
                let one = self.u32_const(1);
                self.b.type_array(self.t.f32, one)
            }
            (None, _) => ty,
        };
        let var = self.global_variable(var_ty, class, None);
        match place(self.m.stage, &v.semantic, output)? {
            Place::BuiltIn(b) => self.b.decorate(var, Decoration::BuiltIn, [Operand::BuiltIn(b)]),
            Place::Location(l) => self.b.decorate(var, Decoration::Location, [Operand::LiteralBit32(l)]),
        }
        if let (Semantic::StreamOut { .. }, Some(so)) = (&v.semantic, &self.m.ext.stream_out) {
            // the transform-feedback placement (`ir::StreamOut`; the same decorations as `dxc::xfb`)
            let index = self.m.outputs.iter().position(|o| o.name == v.name).map(|i| i as u32);
            let e = so
                .entries
                .iter()
                .find(|e| Some(e.output) == index)
                .ok_or(SpirvError::Unsupported { construct: "a stream-out output without an entry" })?;
            for (d, value) in
                [(Decoration::XfbBuffer, e.buffer), (Decoration::XfbStride, so.strides[e.buffer as usize]), (Decoration::Offset, e.offset * 4)]
            {
                self.b.decorate(var, d, [Operand::LiteralBit32(value)]);
            }
        }
        Ok((var, ty))
    }

    /// A module-scope `OpVariable` of `ty` in `class`.
    pub(super) fn global_variable(&mut self, ty: Word, class: StorageClass, initializer: Option<Word>) -> Word {
        let ptr = self.b.type_pointer(None, class, ty);
        let id = self.b.id();
        let mut operands = vec![Operand::StorageClass(class)];
        operands.extend(initializer.map(Operand::IdRef));
        self.b.insert_types_global_values(rspirv::dr::InsertPoint::End, Instruction::new(Op::Variable, Some(ptr), Some(id), operands));
        id
    }

    /// The `Private` variable of a register at a fixed index (declared on first use, 0).
    pub(super) fn register_var(&mut self, file: RegFile, index: u32) -> Result<Word> {
        let zero = self.v4f_splat(0.0);
        let (map_key, declared) = match file {
            RegFile::Temp => {
                if index >= self.m.temps.count {
                    return Err(SpirvError::Undeclared { what: "temp", index });
                }
                if let Some(&v) = self.temps.get(&index) {
                    return Ok(v);
                }
                let v = self.global_variable(self.t.v4f, StorageClass::Private, Some(zero));
                self.temps.insert(index, v);
                return Ok(v);
            }
            RegFile::Input => ((false, index), self.m.inputs.len()),
            RegFile::Output => ((true, index), self.m.outputs.len()),
            RegFile::Const(_) => unreachable!("constant files are read through uniform blocks"),
        };
        if index as usize >= declared {
            return Err(SpirvError::Undeclared { what: if map_key.0 { "output" } else { "input" }, index });
        }
        if let Some(&v) = self.io_regs.get(&map_key) {
            return Ok(v);
        }
        let v = self.global_variable(self.t.v4f, StorageClass::Private, Some(zero));
        self.io_regs.insert(map_key, v);
        Ok(v)
    }

    /// The `Private` array of an indexable temp file.
    pub(super) fn temp_array(&mut self) -> Result<Word> {
        if let Some(v) = self.temp_array {
            return Ok(v);
        }
        let len = self.u32_const(self.m.temps.count);
        let ty = self.b.type_array(self.t.v4f, len);
        let null = self.b.constant_null(ty);
        let v = self.global_variable(ty, StorageClass::Private, Some(null));
        self.temp_array = Some(v);
        Ok(v)
    }

    /// The uniform block of constant file `file`: `struct { float4 var[len]; }`.
    pub(super) fn const_var(&mut self, file: u32) -> Result<Word> {
        if let Some(&v) = self.const_vars.get(&file) {
            return Ok(v);
        }
        let cb = self.m.const_buffers.get(file as usize).ok_or(SpirvError::Undeclared { what: "constant buffer", index: file })?;
        let var = self.uniform_block(self.t.v4f, cb.len, cb.binding);
        self.const_vars.insert(file, var);
        Ok(var)
    }

    /// The uniform block of integer constant buffer `buffer` (`ModuleExt::uint_buffers`):
    /// `struct { uint4 var[len]; }`.
    pub(super) fn uint_block(&mut self, buffer: u32) -> Result<Word> {
        if let Some(&v) = self.uint_blocks.get(&buffer) {
            return Ok(v);
        }
        let cb = self.m.ext.uint_buffers.get(buffer as usize).ok_or(SpirvError::Undeclared { what: "integer constant buffer", index: buffer })?;
        let var = self.uniform_block(self.t.v4u, cb.len, cb.binding);
        self.uint_blocks.insert(buffer, var);
        Ok(var)
    }

    /// A uniform block of one array of `len` vectors `elem` with the D3D layout
    /// (`-fvk-use-dx-layout`; for an array of 4-lane 32-bit vectors the same as std140: stride
    /// 16), bound at `binding`.
    fn uniform_block(&mut self, elem: Word, len: u32, binding: Binding) -> Word {
        let len_id = self.u32_const(len.max(1));
        // Types of their own per block (rspirv dedups types, and layout decorations must not
        // reach the register arrays of the same length).
        let (array, strukt) = (self.b.id(), self.b.id());
        for inst in [
            Instruction::new(Op::TypeArray, None, Some(array), vec![Operand::IdRef(elem), Operand::IdRef(len_id)]),
            Instruction::new(Op::TypeStruct, None, Some(strukt), vec![Operand::IdRef(array)]),
        ] {
            self.b.insert_types_global_values(rspirv::dr::InsertPoint::End, inst);
        }
        self.b.decorate(array, Decoration::ArrayStride, [Operand::LiteralBit32(16)]);
        self.b.member_decorate(strukt, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.b.decorate(strukt, Decoration::Block, []);
        let var = self.global_variable(strukt, StorageClass::Uniform, None);
        self.bind(var, binding);
        var
    }

    fn bind(&mut self, var: Word, b: Binding) {
        self.b.decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(b.vk_set)]);
        self.b.decorate(var, Decoration::Binding, [Operand::LiteralBit32(b.vk_binding)]);
    }

    /// The image type of a texture of dimension `dim` (sampled type f32, depth 2 "not known"
    /// as DXC declares every HLSL texture, format Unknown), with the capability it needs.
    pub(super) fn image_type(&mut self, dim: TexDim) -> Word {
        let (d, arrayed) = match dim {
            TexDim::D1 => (spirv::Dim::Dim1D, 0),
            TexDim::D2 => (spirv::Dim::Dim2D, 0),
            TexDim::D3 => (spirv::Dim::Dim3D, 0),
            TexDim::Cube => (spirv::Dim::DimCube, 0),
            TexDim::D1Array => (spirv::Dim::Dim1D, 1),
            TexDim::D2Array => (spirv::Dim::Dim2D, 1),
            TexDim::CubeArray => (spirv::Dim::DimCube, 1),
        };
        match dim {
            TexDim::D1 | TexDim::D1Array => self.need_capability(Capability::Sampled1D),
            TexDim::CubeArray => self.need_capability(Capability::SampledCubeArray),
            _ => {}
        }
        self.b.type_image(self.t.f32, d, 2, arrayed, 0, 1, spirv::ImageFormat::Unknown, None)
    }

    /// The image and sampler variables of texture `tex`.
    pub(super) fn texture_vars(&mut self, tex: u32) -> Result<TextureVars> {
        if let Some(&t) = self.textures.get(&tex) {
            return Ok(t);
        }
        let t = self.m.textures.get(tex as usize).ok_or(SpirvError::Undeclared { what: "texture", index: tex })?;
        // a comparison sampler is an `OpTypeSampler` as any other (the comparison is the
        // sampling instruction's), and DXC declares its texture with depth 2 as well
        let (tb, sb) = (t.texture_binding, t.sampler_binding);
        let image_type = self.image_type(t.dim);
        let sampler_type = self.b.type_sampler();
        let image = self.global_variable(image_type, StorageClass::UniformConstant, None);
        self.bind(image, tb);
        let sampler = self.global_variable(sampler_type, StorageClass::UniformConstant, None);
        self.bind(sampler, sb);
        let vars = TextureVars { image, sampler, image_type, sampler_type };
        self.textures.insert(tex, vars);
        Ok(vars)
    }
}
