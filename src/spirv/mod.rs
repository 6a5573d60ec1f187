//! IR → SPIR-V directly (no HLSL, no DXC): the second back end beside [`crate::hlsl`].
//!
//! The module it writes has the interface DXC gives the HLSL writer's text for the same shader
//! (`dxc::args` for SPIR-V: `-fvk-use-dx-layout`, `-fvk-invert-y` on vertex stages), so a cache
//! built with either back end is a drop-in for the other (docs/spirv-direct.md lists the rules
//! and what is not covered yet). Shape, as the HLSL writer's:
//! - every register the program names is a `Private` `vec4` (initialised to 0), the program is
//!   the function `shrec_body` (so the IR's `Return` is a plain `OpReturn`), and `main` copies
//!   the stage inputs the body reads in, calls it and copies every output out;
//! - every float arithmetic instruction is decorated `NoContraction` (the HLSL writer's
//!   `precise`: each operation rounded on its own, nothing fused or reassociated);
//! - resources are declared only when the body reads them (DXC's optimizer drops the others).
//!
//! Submodules: `types` (types and constants, cached), `interface` (stage variables, resources,
//! the entry point), `expr` (float4 values), `clamped` (the Xenos / R600 reciprocal, square-root
//! and logarithm variants), `int` (integer state and operators), `tex` (texture operations),
//! `stmt` (statements, conditions, control flow).
//! A construct not covered yet is [`SpirvError::Unsupported`], never a gap or a panic.

use crate::ir::Module;
use rspirv::dr::{Builder, Instruction, Operand};
use rspirv::spirv::{self, Word};
use std::collections::HashMap;

mod clamped;
mod expr;
mod geometry;
mod int;
mod interface;
mod local;
mod memexport;
mod stmt;
mod tex;
mod types;
mod xenos;

/// How the module is written.
#[derive(Clone, Debug)]
pub struct Options {
    /// Name of the entry point (`main`, as DXC's).
    pub entry_point: String,
    /// Declare `SPV_KHR_float_controls` and the execution mode `SignedZeroInfNanPreserve` for
    /// 32-bit floats, so that a driver may not assume away NaN, infinities or the sign of zero
    /// (DXC has no option for it; docs/semantics-audit.md, "host evaluation", item 1).
    pub float_controls: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { entry_point: "main".into(), float_controls: false }
    }
}

/// Why a module could not be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpirvError {
    /// An IR construct the direct back end does not translate yet.
    #[error("the direct SPIR-V back end does not cover {construct} yet (build this shader with --spirv-backend dxc)")]
    Unsupported { construct: &'static str },
    /// The module refers to a register, texture or buffer it does not declare (a module that did
    /// not pass `ir::validate`).
    #[error("the module names {what} {index}, which it does not declare")]
    Undeclared { what: &'static str, index: u32 },
    /// rspirv refused an instruction (a bug of this writer: a block left open or closed twice).
    #[error("SPIR-V builder: {0}")]
    Builder(String),
}

impl From<rspirv::dr::Error> for SpirvError {
    fn from(e: rspirv::dr::Error) -> Self {
        SpirvError::Builder(e.to_string())
    }
}

pub(crate) type Result<T> = std::result::Result<T, SpirvError>;

/// Id operands.
fn ids(words: &[Word]) -> Vec<Operand> {
    words.iter().map(|&w| Operand::IdRef(w)).collect()
}

fn unsupported<T>(construct: &'static str) -> Result<T> {
    Err(SpirvError::Unsupported { construct })
}

/// Writes the SPIR-V words of a module that passed [`crate::ir::validate()`], after the IR's
/// optimizing passes (as [`crate::hlsl::write`]).
pub fn write(module: &Module, opts: &Options) -> Result<Vec<u32>> {
    let mut m = module.clone();
    crate::ir::opt::optimize(&mut m);
    write_as_is(&m, opts)
}

/// [`write()`] without the optimizing passes.
pub fn write_as_is(m: &Module, opts: &Options) -> Result<Vec<u32>> {
    let mut w = Writer::new(m);
    if let crate::ir::ResourceAbi::XenosRecomp(_) = &m.ext.resource_abi {
        // DXC declares the bindless heaps' capability in every module of this ABI, whether the
        // shader samples or not (shader_common.h declares the heaps)
        w.need_capability(spirv::Capability::RuntimeDescriptorArray);
        w.need_extension("SPV_EXT_descriptor_indexing");
    }
    w.module(opts)?;
    use rspirv::binary::Assemble;
    Ok(w.b.module().assemble())
}

/// The state of one module being written.
pub(crate) struct Writer<'m> {
    m: &'m Module,
    b: Builder,
    glsl: Word,
    t: types::Types,
    /// Scalar and composite constants by (type, bits or constituents).
    scalars: HashMap<(Word, u32), Word>,
    composites: HashMap<(Word, Vec<Word>), Word>,
    /// `Private` register variables: fixed temps, the indexable temp array, stage registers
    /// (`(true, i)` output `i`, `(false, i)` input `i`).
    temps: HashMap<u32, Word>,
    temp_array: Option<Word>,
    io_regs: HashMap<(bool, u32), Word>,
    /// Uniform blocks by `RegFile::Const` index; textures by `Module::textures` index.
    const_vars: HashMap<u32, Word>,
    /// Integer uniform blocks by `ModuleExt::uint_buffers` index; integer variables by
    /// `ModuleExt::int_vars` index.
    uint_blocks: HashMap<u32, Word>,
    int_vars: HashMap<u32, Word>,
    textures: HashMap<u32, interface::TextureVars>,
    /// A geometry shader's output variables, vertex count and primitive buffer.
    geometry: Option<geometry::GeometryVars>,
    /// Innermost loop last: (merge block, continue target).
    loops: Vec<(Word, Word)>,
    /// Capabilities the module needs besides `Shader`, and extensions.
    capabilities: Vec<spirv::Capability>,
    extensions: Vec<&'static str>,
    /// 64-bit integer constants by value (the XenosRecomp ABI's buffer offsets).
    u64_constants: HashMap<u64, Word>,
    /// The XenosRecomp ABI's push constants, heaps and specialization constant.
    xenos: xenos::XenosVars,
    /// `g_MemExport` (Xenos memory export).
    memexport_var: Option<Word>,
    /// The invocation-local array (`local`), declared on first use.
    local_var: Option<Word>,
}

impl<'m> Writer<'m> {
    fn new(m: &'m Module) -> Self {
        let mut b = Builder::new();
        b.set_version(1, 0);
        let glsl = b.ext_inst_import("GLSL.std.450");
        let t = types::Types::new(&mut b);
        Writer {
            m,
            b,
            glsl,
            t,
            scalars: HashMap::new(),
            composites: HashMap::new(),
            temps: HashMap::new(),
            temp_array: None,
            io_regs: HashMap::new(),
            const_vars: HashMap::new(),
            uint_blocks: HashMap::new(),
            int_vars: HashMap::new(),
            textures: HashMap::new(),
            geometry: None,
            loops: Vec::new(),
            capabilities: Vec::new(),
            extensions: Vec::new(),
            u64_constants: HashMap::new(),
            xenos: xenos::XenosVars::default(),
            memexport_var: None,
            local_var: None,
        }
    }

    /// Appends instruction `op` with a result of type `ty` to the current block (opening an
    /// unreachable one after a terminator) and returns its id.
    fn inst(&mut self, op: spirv::Op, ty: Word, operands: Vec<Operand>) -> Result<Word> {
        self.ensure_block()?;
        let id = self.b.id();
        self.b.insert_into_block(rspirv::dr::InsertPoint::End, Instruction::new(op, Some(ty), Some(id), operands))?;
        Ok(id)
    }

    /// [`Self::inst`] for a float arithmetic instruction: decorated `NoContraction`.
    fn arith(&mut self, op: spirv::Op, ty: Word, operands: Vec<Operand>) -> Result<Word> {
        let id = self.inst(op, ty, operands)?;
        self.b.decorate(id, spirv::Decoration::NoContraction, []);
        Ok(id)
    }

    /// A GLSL.std.450 instruction.
    fn glsl(&mut self, op: spirv::GLOp, ty: Word, args: &[Word]) -> Result<Word> {
        let mut operands = vec![Operand::IdRef(self.glsl), Operand::LiteralExtInstInteger(op as u32)];
        operands.extend(args.iter().map(|&a| Operand::IdRef(a)));
        self.inst(spirv::Op::ExtInst, ty, operands)
    }

    /// Statements after a terminator (`Break`, `Return`, a discard's `OpKill`) go to a block of
    /// their own, which nothing branches to.
    fn ensure_block(&mut self) -> Result<()> {
        if self.b.selected_block().is_none() {
            self.b.begin_block(None)?;
        }
        Ok(())
    }

    fn need_capability(&mut self, c: spirv::Capability) {
        if !self.capabilities.contains(&c) {
            self.capabilities.push(c);
        }
    }

    fn need_extension(&mut self, e: &'static str) {
        if !self.extensions.contains(&e) {
            self.extensions.push(e);
        }
    }
}
