//! Geometry shaders, as DXC writes the HLSL writer's geometry entry point and stream calls
//! (`hlsl::module`, `hlsl::stmt`): execution model `Geometry` with `Invocations 1`, the input
//! primitive, the output stream's kind and `OutputVertices`; per-vertex inputs as arrays of
//! the primitive's vertex count (only the fields the body reads, as DXC keeps); outputs as plain
//! stage variables written before each `OpEmitVertex` (a position with y negated,
//! `-fvk-invert-y`); `RestartStrip` as `OpEndPrimitive`.
//!
//! Two shapes (`ir::GeometryInfo`): PICA's triangle list (`Stmt::GsStore` into a three-slot
//! primitive buffer, `Stmt::GsEmitTriangle`), and GX2's strip mode (`Stmt::GsEmitVertex`,
//! `Stmt::GsCutStrip`, the primitive id as raw bits; its GSVS ring is the invocation-local array
//! of `local`). The count of vertices appended keeps every emission within
//! `max_vertices`, as the HLSL does.

use super::{ids, unsupported, Result, SpirvError, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{self, BuiltIn, Decoration, ExecutionMode, Op, SelectionControl, StorageClass, Word};

/// The module-scope state of a geometry shader.
pub(super) struct GeometryVars {
    /// Output stage variables, by `Module::outputs` index.
    outputs: Vec<Word>,
    /// Vertices appended so far (`int`).
    emitted: Word,
    /// PICA's primitive buffer: `outputs.len()` vec4s per slot, three slots.
    buffer: Option<Word>,
}

impl Writer<'_> {
    /// The body and entry point of a geometry shader: the entry point and its interface.
    pub(super) fn geometry_entry(&mut self, g: &GeometryInfo) -> Result<(Word, Vec<Word>)> {
        let m = self.m;
        // outputs first: the body's emissions store into them
        let mut interface = Vec::new();
        let mut outputs = Vec::new();
        for v in &m.outputs {
            let (var, _) = self.stage_variable(v, true)?;
            outputs.push(var);
        }
        let zero = self.i32_const(0);
        let emitted = self.global_variable(self.t.i32, StorageClass::Private, Some(zero));
        let buffer = match g.strip {
            None => {
                let len = self.u32_const(3 * m.outputs.len().max(1) as u32);
                let ty = self.b.type_array(self.t.v4f, len);
                let null = self.b.constant_null(ty);
                Some(self.global_variable(ty, StorageClass::Private, Some(null)))
            }
            Some(_) => None,
        };
        self.geometry = Some(GeometryVars { outputs: outputs.clone(), emitted, buffer });

        let body = self.body_function()?;

        // Per-vertex inputs: the vertex fields some register the body reads comes from.
        let vertices = g.primitive.vertices();
        let pid = g.strip.as_ref().and_then(|st| st.primitive_id);
        let mut fields: Vec<Option<(Word, Word)>> = vec![None; g.vertex_fields.len()];
        let mut loads = Vec::new();
        for (i, &(vertex, field)) in g.input_sources.iter().enumerate() {
            let Some(&reg) = self.io_regs.get(&(false, i as u32)) else { continue };
            let f = g.vertex_fields.get(field as usize).ok_or(SpirvError::Undeclared { what: "vertex field", index: field })?;
            if fields[field as usize].is_none() {
                fields[field as usize] = Some(self.stage_variable_arrayed(f, false, Some(vertices))?);
            }
            loads.push((reg, field, vertex, f.components));
        }
        // interface order: inputs in field order, then the outputs (as DXC lists them)
        interface.extend(fields.iter().flatten().map(|&(var, _)| var));
        let primitive_id = match pid.and_then(|i| self.io_regs.get(&(false, i)).copied()) {
            Some(reg) => {
                let var = self.global_variable(self.t.u32, StorageClass::Input, None);
                self.b.decorate(var, Decoration::BuiltIn, [Operand::BuiltIn(BuiltIn::PrimitiveId)]);
                interface.push(var);
                Some((var, reg))
            }
            None => None,
        };
        interface.extend(outputs.iter().copied());

        let main = self.b.begin_function(self.t.void, None, spirv::FunctionControl::NONE, self.t.fn_void)?;
        self.b.begin_block(None)?;
        for (reg, field, vertex, components) in loads {
            let (var, ty) = fields[field as usize].expect("declared above");
            let ptr_ty = self.b.type_pointer(None, StorageClass::Input, ty);
            let index = self.i32_const(vertex as i32);
            let ptr = self.inst(Op::AccessChain, ptr_ty, ids(&[var, index]))?;
            let loaded = self.inst(Op::Load, ty, ids(&[ptr]))?;
            let value = if components == 1 { self.lane_x_vector(loaded)? } else { loaded };
            self.b.store(reg, value, None, [])?;
        }
        if let Some((var, reg)) = primitive_id {
            // the primitive id as raw bits in lane x
            let id = self.inst(Op::Load, self.t.u32, ids(&[var]))?;
            let bits = self.inst(Op::Bitcast, self.t.f32, ids(&[id]))?;
            let value = self.lane_x_vector(bits)?;
            self.b.store(reg, value, None, [])?;
        }
        self.b.function_call(self.t.void, None, body, [])?;
        self.b.ret()?;
        self.b.end_function()?;
        Ok((main, interface))
    }

    pub(super) fn geometry_execution_modes(&mut self, main: Word, g: &GeometryInfo) {
        self.b.execution_mode(main, ExecutionMode::OutputVertices, [g.max_vertices]);
        self.b.execution_mode(main, ExecutionMode::Invocations, [1]);
        let input = match g.primitive {
            GsPrimitive::Point => ExecutionMode::InputPoints,
            GsPrimitive::Line => ExecutionMode::InputLines,
            GsPrimitive::Triangle => ExecutionMode::Triangles,
            GsPrimitive::LineAdj => ExecutionMode::InputLinesAdjacency,
            GsPrimitive::TriangleAdj => ExecutionMode::InputTrianglesAdjacency,
        };
        self.b.execution_mode(main, input, []);
        let output = match g.strip.as_ref().map(|st| st.output) {
            Some(GsOutput::Points) => ExecutionMode::OutputPoints,
            Some(GsOutput::LineStrip) => ExecutionMode::OutputLineStrip,
            _ => ExecutionMode::OutputTriangleStrip,
        };
        self.b.execution_mode(main, output, []);
    }

    fn geometry_vars(&self) -> Result<&GeometryVars> {
        self.geometry.as_ref().ok_or(SpirvError::Unsupported { construct: "a geometry statement outside a geometry shader" })
    }

    /// `if (<emitted> + count <= max_vertices) { then(); emitted += count; }`.
    fn within_max_vertices(&mut self, count: i32, then: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let emitted_var = self.geometry_vars()?.emitted;
        let max = self.m.ext.geometry.as_ref().map_or(0, |g| g.max_vertices) as i32;
        let emitted = self.inst(Op::Load, self.t.i32, ids(&[emitted_var]))?;
        let n = self.i32_const(count);
        let after = self.inst(Op::IAdd, self.t.i32, ids(&[emitted, n]))?;
        let max = self.i32_const(max);
        let fits = self.inst(Op::SLessThanEqual, self.t.bool, ids(&[after, max]))?;
        let (merge, body) = (self.b.id(), self.b.id());
        self.b.selection_merge(merge, SelectionControl::NONE)?;
        self.b.branch_conditional(fits, body, merge, [])?;
        self.b.begin_block(Some(body))?;
        then(self)?;
        let emitted = self.inst(Op::Load, self.t.i32, ids(&[emitted_var]))?;
        let after = self.inst(Op::IAdd, self.t.i32, ids(&[emitted, n]))?;
        self.b.store(emitted_var, after, None, [])?;
        self.b.branch(merge)?;
        self.b.begin_block(Some(merge))?;
        Ok(())
    }

    /// Stores one vertex (output values by `Module::outputs` index) and emits it.
    fn emit_vertex(&mut self, values: &[Word]) -> Result<()> {
        let outputs = self.geometry_vars()?.outputs.clone();
        for (k, (&var, &value)) in outputs.iter().zip(values).enumerate() {
            let v = &self.m.outputs[k];
            self.store_output(v, var, value)?;
        }
        self.b.emit_vertex()?;
        Ok(())
    }

    /// The current values of every output register.
    fn output_registers(&mut self) -> Result<Vec<Word>> {
        let mut values = Vec::with_capacity(self.m.outputs.len());
        for k in 0..self.m.outputs.len() as u32 {
            let reg = self.register_var(RegFile::Output, k)?;
            values.push(self.inst(Op::Load, self.t.v4f, ids(&[reg]))?);
        }
        Ok(values)
    }

    /// Pointer to output `k` of slot `slot` (an `int`) of PICA's primitive buffer.
    fn buffer_element(&mut self, slot: Word, k: usize) -> Result<Word> {
        let Some(buffer) = self.geometry_vars()?.buffer else {
            return unsupported("a primitive-buffer statement in a strip-mode geometry shader");
        };
        let n = self.i32_const(self.m.outputs.len() as i32);
        let base = self.inst(Op::IMul, self.t.i32, ids(&[slot, n]))?;
        let k = self.i32_const(k as i32);
        let index = self.inst(Op::IAdd, self.t.i32, ids(&[base, k]))?;
        self.inst(Op::AccessChain, self.t.ptr_private_v4f, ids(&[buffer, index]))
    }

    /// The geometry statements.
    pub(super) fn geometry_stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::GsStore(slot) => {
                let slot = self.iexpr(slot)?;
                let values = self.output_registers()?;
                for (k, value) in values.into_iter().enumerate() {
                    let ptr = self.buffer_element(slot, k)?;
                    self.b.store(ptr, value, None, [])?;
                }
            }
            Stmt::GsEmitTriangle { invert } => {
                self.within_max_vertices(3, |w| {
                    // first = invert ? 1 : 0; slots first, 1 - first, 2
                    let c = w.cond(invert)?;
                    let (one, zero, two) = (w.i32_const(1), w.i32_const(0), w.i32_const(2));
                    let first = w.inst(Op::Select, w.t.i32, ids(&[c, one, zero]))?;
                    let second = w.inst(Op::ISub, w.t.i32, ids(&[one, first]))?;
                    for slot in [first, second, two] {
                        let mut values = Vec::new();
                        for k in 0..w.m.outputs.len() {
                            let ptr = w.buffer_element(slot, k)?;
                            values.push(w.inst(Op::Load, w.t.v4f, ids(&[ptr]))?);
                        }
                        w.emit_vertex(&values)?;
                    }
                    w.b.end_primitive()?;
                    Ok(())
                })?;
            }
            Stmt::GsEmitVertex => {
                self.within_max_vertices(1, |w| {
                    let values = w.output_registers()?;
                    w.emit_vertex(&values)
                })?;
            }
            Stmt::GsCutStrip => self.b.end_primitive()?,
            _ => return Err(SpirvError::Builder(format!("not a geometry statement: {s:?}"))),
        }
        Ok(())
    }
}
