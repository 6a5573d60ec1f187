//! The IR validator: the contract between the front ends and the back ends.
//!
//! Every lowered [`Module`] passes through [`validate`] before the HLSL writer sees it (naga's
//! `valid` module plays the same role). It checks what the writer would otherwise assume and
//! index blindly — register indices within their files, textures and integer variables that
//! exist, lane numbers and write masks in range, `Break` / `Continue` inside a loop, stage-only
//! statements in their stage, names that are HLSL identifiers and comments that stay on their
//! line — and the IR resource caps ([`MAX_IR_STATEMENTS`], [`MAX_NESTING`]). A module that
//! passes cannot make the writer panic or emit text an input file chose; a module that fails
//! gets a typed [`ValidationError`], reported like any other per-shader failure.
//!
//! Caps are checked first and without recursion, so that the rest of the walk (recursive, like
//! the writer) only runs on bodies whose depth is bounded.

use super::{Cond, Dst, Expr, IExpr, Index, Module, RegFile, RegRef, SampleMode, Semantic, Stage, Stmt, StreamOutEntry};

/// The most IR statements (counted through every block) one shader may lower to.
pub const MAX_IR_STATEMENTS: usize = 1 << 20;

/// The deepest nesting of IR blocks (`If`, `Loop`) one shader may have. The HLSL writer and
/// DXC recurse over it; 64 is far beyond any real shader and far below any stack's limit.
pub const MAX_NESTING: usize = 64;

/// Why a lowered module is not valid IR. The cap variants are properties of the input (a
/// shader too large to translate); every other variant is a front-end bug, named so that the
/// report says which rule the front end broke.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    #[error("resource cap: the shader lowers to {count} IR statements, over the limit of {limit}")]
    TooManyStatements { count: usize, limit: usize },
    #[error("resource cap: control flow nests {depth} blocks deep, over the limit of {limit}")]
    TooDeep { depth: usize, limit: usize },
    #[error("invalid IR: {file} register {index} is outside its file of {len}")]
    RegisterOutOfRange { file: String, index: u32, len: u32 },
    #[error("invalid IR: {file} registers cannot be indexed at run time")]
    DynamicStageIndex { file: String },
    #[error("invalid IR: constant file {0} does not exist")]
    NoSuchConstFile(u32),
    #[error("invalid IR: texture {tex} does not exist ({len} declared)")]
    NoSuchTexture { tex: u32, len: usize },
    #[error("invalid IR: integer variable {var} does not exist or is used as the wrong shape ({what})")]
    BadIntVar { var: u32, what: &'static str },
    #[error("invalid IR: uint constant {buffer}[{reg}].{lane} is outside the declared buffers")]
    BadUniform { buffer: u32, reg: u32, lane: u8 },
    #[error("invalid IR: texel offset {0:?} (whole texels -8..7 on the texture's own axes, none on cubes)")]
    BadTexelOffset([i8; 3]),
    #[error("invalid IR: texel fetch (Load) from cube texture {0}")]
    LoadFromCube(u32),
    #[error("invalid IR: texture {tex} is read by {what}, which needs {need}")]
    WrongSampler { tex: u32, what: &'static str, need: &'static str },
    #[error("invalid IR: lane {0} in a swizzle (lanes are 0-3)")]
    BadLane(u8),
    #[error("invalid IR: write mask {0:#x} (must be 1-15)")]
    BadMask(u8),
    #[error("invalid IR: dot product over {0} lanes (2, 3 or 4)")]
    BadDotWidth(u8),
    #[error("invalid IR: bit {0} of a 32-bit word")]
    BadBit(u32),
    #[error("invalid IR: {0} outside a loop")]
    OutsideLoop(&'static str),
    #[error("invalid IR: {what} in a {stage:?} shader")]
    WrongStage { what: &'static str, stage: Stage },
    #[error("invalid IR: {0} needs a strip-mode geometry shader")]
    NeedsStrip(&'static str),
    #[error("invalid IR: {0} without an invocation-local array (ModuleExt::local_array 0)")]
    NoLocalArray(&'static str),
    #[error("invalid IR: memory export element {0} (eM0-eM4)")]
    BadExportElement(u32),
    #[error("invalid IR: {what} {name:?} is not an HLSL identifier (or, for resources, an access path)")]
    BadName { what: &'static str, name: String },
    #[error("invalid IR: a comment or header line contains a line break")]
    MultiLineComment,
    #[error("invalid IR: geometry input {input} reads field {field} of vertex {vertex}, outside the input primitive")]
    BadGeometryInput { input: usize, vertex: u32, field: u32 },
    #[error("invalid IR: stream-out: {0}")]
    BadStreamOut(String),
}

/// Statement count and deepest block nesting of a body, walked without recursion so that
/// the check itself cannot overflow the stack on the input it exists to refuse.
pub fn measure(body: &[Stmt]) -> (usize, usize) {
    let mut statements = 0;
    let mut deepest = 0;
    let mut stack: Vec<(&[Stmt], usize)> = vec![(body, 0)];
    while let Some((block, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        for s in block {
            statements += 1;
            match s {
                Stmt::If { then_body, else_body, .. } => {
                    stack.push((then_body, depth + 1));
                    stack.push((else_body, depth + 1));
                }
                Stmt::Loop { body } => stack.push((body, depth + 1)),
                _ => {}
            }
        }
    }
    (statements, deepest)
}

/// Checks a lowered module (see the module documentation for what is checked).
pub fn validate(m: &Module) -> Result<(), ValidationError> {
    let (count, depth) = measure(&m.body);
    if count > MAX_IR_STATEMENTS {
        return Err(ValidationError::TooManyStatements { count, limit: MAX_IR_STATEMENTS });
    }
    if depth > MAX_NESTING {
        return Err(ValidationError::TooDeep { depth, limit: MAX_NESTING });
    }
    check_declarations(m)?;
    check_stream_out(m)?;
    let v = Validator { m };
    v.block(&m.body, false)
}

/// The stream-out table ([`StreamOut`]): a vertex stage; every entry names a distinct
/// `Semantic::StreamOut` output of 1-4 components and every such output has an entry; buffers
/// 0-3 with a stride (a multiple of 4) that holds the entry; entries sorted by (buffer, offset)
/// without overlap; two outputs never share a `SHREC_SO` index or a location with another output.
fn check_stream_out(m: &Module) -> Result<(), ValidationError> {
    let bad = |why: String| Err(ValidationError::BadStreamOut(why));
    let so_outputs: Vec<usize> = (0..m.outputs.len()).filter(|&i| matches!(m.outputs[i].semantic, Semantic::StreamOut { .. })).collect();
    let Some(so) = &m.ext.stream_out else {
        return if let Some(&i) = so_outputs.first() {
            bad(format!("output {i} is a stream-out output but the module has no stream-out table"))
        } else {
            Ok(())
        };
    };
    if m.stage != Stage::Vertex {
        return Err(ValidationError::WrongStage { what: "stream-out", stage: m.stage });
    }
    for (b, &stride) in so.strides.iter().enumerate() {
        if !stride.is_multiple_of(4) {
            return bad(format!("buffer {b} has a stride of {stride} bytes, not a multiple of 4"));
        }
    }
    let mut previous: Option<&StreamOutEntry> = None;
    for e in &so.entries {
        let Some(v) = m.outputs.get(e.output as usize) else {
            return bad(format!("entry for output {} of {}", e.output, m.outputs.len()));
        };
        if !matches!(v.semantic, Semantic::StreamOut { .. }) || !(1..=4).contains(&v.components) {
            return bad(format!("output {} ({}) is not a stream-out output of 1-4 components", e.output, v.name));
        }
        if e.buffer >= 4 {
            return bad(format!("output {} goes to buffer {} (0-3)", e.output, e.buffer));
        }
        let end = u64::from(e.offset) + u64::from(v.components);
        if end * 4 > u64::from(so.strides[e.buffer as usize]) {
            return bad(format!(
                "output {} ends at dword {end} of buffer {}, past its {}-byte record",
                e.output, e.buffer, so.strides[e.buffer as usize]
            ));
        }
        if let Some(p) = previous {
            let p_end = p.offset + m.outputs[p.output as usize].components as u32;
            if (p.buffer, p.offset) >= (e.buffer, e.offset) || (p.buffer == e.buffer && p_end > e.offset) {
                return bad(format!("entries for outputs {} and {} are not sorted by (buffer, offset) or overlap", p.output, e.output));
            }
        }
        previous = Some(e);
    }
    for &i in &so_outputs {
        if so.entries.iter().filter(|e| e.output as usize == i).count() != 1 {
            return bad(format!("stream-out output {i} has no entry or more than one"));
        }
    }
    for (k, &i) in so_outputs.iter().enumerate() {
        let Semantic::StreamOut { index, location } = m.outputs[i].semantic else { unreachable!() };
        for &j in &so_outputs[k + 1..] {
            if matches!(m.outputs[j].semantic, Semantic::StreamOut { index: other, .. } if other == index) {
                return bad(format!("outputs {i} and {j} are both SHREC_SO{index}"));
            }
        }
        let clash = m.outputs.iter().enumerate().any(|(j, o)| {
            j != i
                && match o.semantic {
                    Semantic::Texcoord(l) | Semantic::Usage { location: l, .. } | Semantic::UsageUint { location: l, .. } => l == location,
                    Semantic::StreamOut { location: l, .. } => l == location,
                    _ => false,
                }
        });
        if clash {
            return bad(format!("output {i} takes location {location}, which another output has"));
        }
    }
    Ok(())
}

/// Names the writer prints and the header lines it writes as comments.
fn check_declarations(m: &Module) -> Result<(), ValidationError> {
    let name = |what: &'static str, name: &str| -> Result<(), ValidationError> {
        let mut chars = name.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ok {
            Ok(())
        } else {
            Err(ValidationError::BadName { what, name: name.to_string() })
        }
    };
    for v in m.inputs.iter().chain(&m.outputs) {
        name("stage variable", &v.name)?;
    }
    // Resource names may be access paths into declarations the writer derives from
    // (`ModuleExt::resource_abi`, e.g. Xenos' `g_Texture2DDescriptorHeap[s0_Texture2DDescriptorIndex]`):
    // identifiers joined by `[`, `]` and `.`, still nothing that could end an expression.
    let path = |what: &'static str, p: &str| -> Result<(), ValidationError> {
        let ok = p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '[' | ']' | '.'))
            && p.chars().filter(|&c| c == '[').count() == p.chars().filter(|&c| c == ']').count();
        if ok {
            Ok(())
        } else {
            Err(ValidationError::BadName { what, name: p.to_string() })
        }
    };
    for b in m.const_buffers.iter().chain(&m.ext.uint_buffers) {
        name("constant block", &b.block)?;
        path("constant array", &b.var)?;
    }
    for t in &m.textures {
        path("texture", &t.tex_var)?;
        path("sampler", &t.smp_var)?;
    }
    for v in &m.ext.int_vars {
        name("integer variable", &v.name)?;
    }
    name("temporary prefix", &m.temps.prefix)?;
    if let Some(g) = &m.ext.geometry {
        for v in &g.vertex_fields {
            name("geometry vertex field", &v.name)?;
        }
        for (input, &(vertex, field)) in g.input_sources.iter().enumerate() {
            if vertex >= g.primitive.vertices() || field as usize >= g.vertex_fields.len() || input >= m.inputs.len() {
                return Err(ValidationError::BadGeometryInput { input, vertex, field });
            }
        }
        if let Some(i) = g.strip.as_ref().and_then(|st| st.primitive_id) {
            if i as usize >= m.inputs.len() {
                return Err(ValidationError::RegisterOutOfRange { file: "input".into(), index: i, len: m.inputs.len() as u32 });
            }
        }
    }
    if m.header_comments.iter().any(|c| c.contains(['\n', '\r'])) {
        return Err(ValidationError::MultiLineComment);
    }
    Ok(())
}

struct Validator<'a> {
    m: &'a Module,
}

impl Validator<'_> {
    fn block(&self, body: &[Stmt], in_loop: bool) -> Result<(), ValidationError> {
        body.iter().try_for_each(|s| self.stmt(s, in_loop))
    }

    fn stage_only(&self, what: &'static str, stage: Stage) -> Result<(), ValidationError> {
        if self.m.stage == stage {
            Ok(())
        } else {
            Err(ValidationError::WrongStage { what, stage: self.m.stage })
        }
    }

    fn strip(&self, what: &'static str) -> Result<(), ValidationError> {
        let strip = self.m.ext.geometry.as_ref().and_then(|g| g.strip.as_ref());
        strip.map(drop).ok_or(ValidationError::NeedsStrip(what))
    }

    fn local_array(&self, what: &'static str) -> Result<(), ValidationError> {
        if self.m.ext.local_array == 0 {
            return Err(ValidationError::NoLocalArray(what));
        }
        Ok(())
    }

    fn stmt(&self, s: &Stmt, in_loop: bool) -> Result<(), ValidationError> {
        match s {
            Stmt::Assign { dst, value, .. } => {
                self.dst(dst)?;
                self.expr(value)
            }
            Stmt::If { cond, then_body, else_body } => {
                self.cond(cond)?;
                self.block(then_body, in_loop)?;
                self.block(else_body, in_loop)
            }
            Stmt::Loop { body } => self.block(body, true),
            Stmt::Break if !in_loop => Err(ValidationError::OutsideLoop("break")),
            Stmt::Continue if !in_loop => Err(ValidationError::OutsideLoop("continue")),
            Stmt::Break | Stmt::Continue | Stmt::Return => Ok(()),
            Stmt::Discard(c) => {
                self.stage_only("discard", Stage::Pixel)?;
                self.cond(c)
            }
            Stmt::Comment(c) if c.contains(['\n', '\r']) => Err(ValidationError::MultiLineComment),
            Stmt::Comment(_) => Ok(()),
            Stmt::SetInt { var, index, value } => {
                self.int_var(*var, index.is_some())?;
                if let Some(i) = index {
                    self.iexpr(i)?;
                }
                self.iexpr(value)
            }
            Stmt::GsStore(slot) => {
                self.stage_only("GsStore", Stage::Geometry)?;
                self.iexpr(slot)
            }
            Stmt::GsEmitTriangle { invert } => {
                self.stage_only("GsEmitTriangle", Stage::Geometry)?;
                self.cond(invert)
            }
            Stmt::GsEmitVertex => self.strip("GsEmitVertex"),
            Stmt::GsCutStrip => self.strip("GsCutStrip"),
            Stmt::LocalStore { index, mask, value } => {
                self.local_array("LocalStore")?;
                self.mask(*mask)?;
                self.index(index)?;
                self.expr(value)
            }
            Stmt::LocalLoad { dst, index } => {
                self.local_array("LocalLoad")?;
                self.dst(dst)?;
                self.index(index)
            }
            Stmt::XenosMemExport { address, value, element } => {
                if *element > 4 {
                    return Err(ValidationError::BadExportElement(*element));
                }
                self.expr(address)?;
                self.expr(value)
            }
        }
    }

    fn mask(&self, mask: u8) -> Result<(), ValidationError> {
        if (1..=15).contains(&mask) {
            Ok(())
        } else {
            Err(ValidationError::BadMask(mask))
        }
    }

    fn dst(&self, d: &Dst) -> Result<(), ValidationError> {
        self.mask(d.mask)?;
        self.reg(&d.reg)
    }

    fn lanes(&self, s: &[u8; 4]) -> Result<(), ValidationError> {
        match s.iter().find(|&&l| l > 3) {
            Some(&l) => Err(ValidationError::BadLane(l)),
            None => Ok(()),
        }
    }

    fn reg(&self, r: &RegRef) -> Result<(), ValidationError> {
        let m = self.m;
        let (file, len) = match r.file {
            RegFile::Temp => {
                if !matches!(r.index, Index::Fixed(_)) && !m.temps.indexable {
                    // The writer declares non-indexable temps as separate variables.
                    return Err(ValidationError::DynamicStageIndex { file: "non-indexable temporary".into() });
                }
                ("temporary".to_string(), m.temps.count)
            }
            RegFile::Input | RegFile::Output => {
                let (file, len) = if r.file == RegFile::Input { ("input", m.inputs.len()) } else { ("output", m.outputs.len()) };
                if !matches!(r.index, Index::Fixed(_)) {
                    return Err(ValidationError::DynamicStageIndex { file: file.into() });
                }
                (file.to_string(), len as u32)
            }
            RegFile::Const(b) => {
                let buffer = m.const_buffers.get(b as usize).ok_or(ValidationError::NoSuchConstFile(b))?;
                (format!("constant file {b} ({})", buffer.var), buffer.len)
            }
        };
        match &r.index {
            Index::Fixed(i) if *i >= len => Err(ValidationError::RegisterOutOfRange { file, index: *i, len }),
            idx => self.index(idx),
        }
    }

    fn index(&self, idx: &Index) -> Result<(), ValidationError> {
        match idx {
            Index::Fixed(_) => Ok(()),
            Index::Dynamic { value, .. } => self.expr(value),
            Index::Int(e) => self.iexpr(e),
        }
    }

    fn texture(&self, tex: u32) -> Result<(), ValidationError> {
        if (tex as usize) < self.m.textures.len() {
            Ok(())
        } else {
            Err(ValidationError::NoSuchTexture { tex, len: self.m.textures.len() })
        }
    }

    /// `tex` exists and its sampler is a comparison sampler exactly when `compare` (HLSL has
    /// no comparison sample through a `SamplerState`, and `SampleCmp` needs one).
    fn sampler_kind(&self, tex: u32, compare: bool, what: &'static str) -> Result<(), ValidationError> {
        self.texture(tex)?;
        match (self.m.textures[tex as usize].compare, compare) {
            (false, true) => Err(ValidationError::WrongSampler { tex, what, need: "a comparison sampler" }),
            (true, false) => Err(ValidationError::WrongSampler { tex, what, need: "a plain sampler" }),
            _ => Ok(()),
        }
    }

    /// HLSL's constant offset operand: whole texels in -8..7, none on cubes, none on a lane
    /// the texture lacks (an array's slice lane included).
    /// A sample's level operands: an implicit-derivative one only in pixel shaders.
    fn sample_mode(&self, mode: &SampleMode) -> Result<(), ValidationError> {
        match mode {
            SampleMode::Bias(_) => self.stage_only("an implicit-derivative sample", Stage::Pixel),
            SampleMode::BiasExpr(b) => {
                self.stage_only("an implicit-derivative sample", Stage::Pixel)?;
                self.expr(b)
            }
            SampleMode::Lod(l) => self.expr(l),
            SampleMode::Grad(x, y) => {
                self.expr(x)?;
                self.expr(y)
            }
        }
    }

    fn texel_offset(&self, tex: u32, offset: &[i8; 3]) -> Result<(), ValidationError> {
        let dim = self.m.textures[tex as usize].dim;
        let lanes = if dim.is_cube() { 0 } else { dim.texel_lanes() };
        if offset.iter().enumerate().any(|(i, &o)| !(-8..=7).contains(&o) || (i >= lanes && o != 0)) {
            return Err(ValidationError::BadTexelOffset(*offset));
        }
        Ok(())
    }

    fn int_var(&self, var: u32, indexed: bool) -> Result<(), ValidationError> {
        match self.m.ext.int_vars.get(var as usize) {
            None => Err(ValidationError::BadIntVar { var, what: "not declared" }),
            Some(v) if indexed && v.len == 0 => Err(ValidationError::BadIntVar { var, what: "a scalar indexed as an array" }),
            Some(v) if !indexed && v.len != 0 => Err(ValidationError::BadIntVar { var, what: "an array used as a scalar" }),
            Some(_) => Ok(()),
        }
    }

    fn expr(&self, e: &Expr) -> Result<(), ValidationError> {
        match e {
            Expr::Read(src) => {
                self.lanes(&src.swizzle)?;
                self.reg(&src.reg)
            }
            Expr::Literal(_) | Expr::Bits(_) => Ok(()),
            Expr::Swizzle(a, s) => {
                self.lanes(s)?;
                self.expr(a)
            }
            Expr::Compose(parts) => parts.iter().try_for_each(|p| self.expr(p)),
            Expr::Unary(op, a) => {
                if matches!(op, super::UnOp::Ddx | super::UnOp::Ddy) {
                    self.stage_only("a screen-space derivative", Stage::Pixel)?;
                }
                self.expr(a)
            }
            Expr::IntUnary(_, a) => self.expr(a),
            Expr::Binary(_, a, b) | Expr::IntBinary(_, a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            Expr::Dot(n, a, b) | Expr::DotPica(n, a, b) => {
                if !(2..=4).contains(n) {
                    return Err(ValidationError::BadDotWidth(*n));
                }
                self.expr(a)?;
                self.expr(b)
            }
            Expr::Mad(a, b, c) | Expr::IntTernary(_, a, b, c) => {
                self.expr(a)?;
                self.expr(b)?;
                self.expr(c)
            }
            Expr::Sample { tex, coord, mode, offset } => {
                self.sampler_kind(*tex, false, "Sample")?;
                self.texel_offset(*tex, offset)?;
                self.expr(coord)?;
                self.sample_mode(mode)
            }
            Expr::SampleCmp { tex, coord, reference, level_zero, offset } => {
                self.sampler_kind(*tex, true, "SampleCmp")?;
                self.texel_offset(*tex, offset)?;
                if !level_zero {
                    self.stage_only("an implicit-derivative sample", Stage::Pixel)?;
                }
                self.expr(coord)?;
                self.expr(reference)
            }
            Expr::SampleCmpMode { tex, coord, reference, mode, offset } => {
                self.sampler_kind(*tex, true, "SampleCmpMode")?;
                self.texel_offset(*tex, offset)?;
                self.expr(coord)?;
                self.expr(reference)?;
                self.sample_mode(mode)
            }
            Expr::Gather { tex, coord, offset } => {
                self.sampler_kind(*tex, false, "Gather")?;
                self.texel_offset(*tex, offset)?;
                // HLSL `Gather` exists on 2D, 2D-array and cube textures only
                if matches!(self.m.textures[*tex as usize].dim, super::TexDim::D1 | super::TexDim::D1Array | super::TexDim::D3) {
                    return Err(ValidationError::WrongSampler { tex: *tex, what: "Gather", need: "a 2D, 2D-array or cube texture" });
                }
                self.expr(coord)
            }
            Expr::QueryLod { tex, coord, .. } => {
                self.stage_only("a LOD query", Stage::Pixel)?;
                self.texture(*tex)?;
                self.expr(coord)
            }
            Expr::TexSize { tex } => self.texture(*tex),
            Expr::Load { tex, coord, lod } => {
                self.texture(*tex)?;
                // HLSL has no `Load` on a `TextureCube` / `TextureCubeArray`
                if self.m.textures[*tex as usize].dim.is_cube() {
                    return Err(ValidationError::LoadFromCube(*tex));
                }
                self.expr(coord)?;
                self.expr(lod)
            }
            Expr::TexInfo { tex, lod } => {
                self.texture(*tex)?;
                self.expr(lod)
            }
            Expr::Select { a, b, if_true, if_false, .. } => {
                self.expr(a)?;
                self.expr(b)?;
                self.expr(if_true)?;
                self.expr(if_false)
            }
            Expr::SelectIf(c, a, b) => {
                self.cond(c)?;
                self.expr(a)?;
                self.expr(b)
            }
        }
    }

    fn cond(&self, c: &Cond) -> Result<(), ValidationError> {
        match c {
            Cond::Compare(_, a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            Cond::AnyNegative(a) => self.expr(a),
            Cond::Not(c) => self.cond(c),
            Cond::BitSet { value, bit } => {
                if *bit > 31 {
                    return Err(ValidationError::BadBit(*bit));
                }
                self.expr(value)
            }
            Cond::IntCmp(_, a, b) => {
                self.iexpr(a)?;
                self.iexpr(b)
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.cond(a)?;
                self.cond(b)
            }
        }
    }

    fn iexpr(&self, e: &IExpr) -> Result<(), ValidationError> {
        match e {
            IExpr::Const(_) => Ok(()),
            IExpr::Var(v) => self.int_var(*v, false),
            IExpr::Elem(v, i) => {
                self.int_var(*v, true)?;
                self.iexpr(i)
            }
            IExpr::Add(a, b) | IExpr::Sub(a, b) | IExpr::And(a, b) | IExpr::Min(a, b) => {
                self.iexpr(a)?;
                self.iexpr(b)
            }
            IExpr::Select(c, a, b) => {
                self.cond(c)?;
                self.iexpr(a)?;
                self.iexpr(b)
            }
            IExpr::TruncX86(x) => self.expr(x),
            IExpr::Uniform { buffer, reg, lane } => {
                let ok = *lane < 4 && self.m.ext.uint_buffers.get(*buffer as usize).is_some_and(|b| *reg < b.len);
                if ok {
                    Ok(())
                } else {
                    Err(ValidationError::BadUniform { buffer: *buffer, reg: *reg, lane: *lane })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::build::read;
    use crate::ir::{Binding, CmpOp, ConstBuffer, Family, IoVar, ModuleExt, TempFile, TexDim, Texture, XYZW};

    fn nested(depth: usize) -> Vec<Stmt> {
        let mut body = vec![Stmt::Break];
        for _ in 0..depth {
            body = vec![Stmt::Loop { body }];
        }
        body
    }

    /// A small valid pixel shader: one input, one output, 4 temps, a 4-entry constant file and
    /// one 2D texture.
    fn module(body: Vec<Stmt>) -> Module {
        let binding = Binding { dx_register: 0, dx_space: 0, vk_set: 0, vk_binding: 0 };
        Module {
            family: Family::Agal,
            stage: Stage::Pixel,
            inputs: vec![IoVar { name: "v0".into(), semantic: Semantic::Texcoord(0), components: 4 }],
            outputs: vec![IoVar { name: "oc".into(), semantic: Semantic::Target(0), components: 4 }],
            const_buffers: vec![ConstBuffer { block: "Consts".into(), var: "fc".into(), len: 4, binding }],
            textures: vec![Texture {
                tex_var: "t0".into(),
                smp_var: "s0".into(),
                dim: TexDim::D2,
                compare: false,
                texture_binding: binding,
                sampler_binding: binding,
            }],
            temps: TempFile { count: 4, prefix: "ft".into(), indexable: false },
            body,
            header_comments: vec![],
            ext: ModuleExt::default(),
        }
    }

    fn assign(file: RegFile, index: u32, value: Expr) -> Stmt {
        Stmt::Assign { dst: Dst { reg: RegRef::fixed(file, index), mask: 0xF }, value, saturate: false }
    }

    fn check(body: Vec<Stmt>) -> Result<(), ValidationError> {
        validate(&module(body))
    }

    #[test]
    fn measures_statements_and_depth_of_both_branches() {
        let body = vec![
            Stmt::If {
                cond: Cond::IntCmp(CmpOp::Eq, IExpr::Const(0), IExpr::Const(0)),
                then_body: nested(3),
                else_body: vec![Stmt::Return, Stmt::Return],
            },
            Stmt::Return,
        ];
        // If + its 3 loops and break + 2 returns in else + the final return.
        assert_eq!(measure(&body), (1 + 4 + 2 + 1, 4));
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        // Deep enough to overflow a recursive walk on a small stack; dropped iteratively below.
        let mut m = module(nested(MAX_NESTING * 1000));
        assert_eq!(validate(&m), Err(ValidationError::TooDeep { depth: MAX_NESTING * 1000, limit: MAX_NESTING }));
        let mut body = std::mem::take(&mut m.body);
        while let Some(Stmt::Loop { body: inner }) = body.pop() {
            body = inner;
        }
        assert_eq!(check(nested(MAX_NESTING)), Ok(()));
    }

    /// The stream-out table: a valid one passes; each broken invariant is refused.
    #[test]
    fn stream_out_table() {
        use crate::ir::{StreamOut, StreamOutEntry};
        let so_module = || {
            let mut m = module(vec![]);
            m.stage = Stage::Vertex;
            m.outputs = vec![
                IoVar { name: "o0".into(), semantic: Semantic::Texcoord(0), components: 4 },
                IoVar { name: "so0".into(), semantic: Semantic::StreamOut { index: 0, location: 31 }, components: 2 },
                IoVar { name: "so1".into(), semantic: Semantic::StreamOut { index: 1, location: 30 }, components: 1 },
            ];
            m.ext.stream_out = Some(StreamOut {
                strides: [16, 0, 0, 8],
                entries: vec![StreamOutEntry { output: 1, buffer: 0, offset: 1 }, StreamOutEntry { output: 2, buffer: 3, offset: 1 }],
            });
            m
        };
        assert_eq!(validate(&so_module()), Ok(()));
        let refused = |f: &dyn Fn(&mut Module), why: &str| {
            let mut m = so_module();
            f(&mut m);
            match validate(&m) {
                Err(ValidationError::BadStreamOut(w)) => assert!(w.contains(why), "{why}: {w}"),
                other => panic!("{why}: {other:?}"),
            }
        };
        refused(&|m| m.ext.stream_out.as_mut().unwrap().entries[1].offset = 2, "past its 8-byte record");
        refused(&|m| m.ext.stream_out.as_mut().unwrap().entries[1].buffer = 0, "overlap");
        refused(&|m| m.ext.stream_out.as_mut().unwrap().entries.pop().map(|_| ()).unwrap(), "no entry");
        refused(&|m| m.ext.stream_out.as_mut().unwrap().entries[0].output = 0, "not a stream-out output");
        refused(&|m| m.outputs[2].semantic = Semantic::StreamOut { index: 1, location: 0 }, "location 0");
        refused(&|m| m.outputs[2].semantic = Semantic::StreamOut { index: 0, location: 29 }, "both SHREC_SO0");
        refused(&|m| m.ext.stream_out.as_mut().unwrap().strides[3] = 6, "not a multiple of 4");
        refused(&|m| m.ext.stream_out = None, "no stream-out table");
        let mut m = so_module();
        m.stage = Stage::Pixel;
        assert_eq!(validate(&m), Err(ValidationError::WrongStage { what: "stream-out", stage: Stage::Pixel }));
    }

    #[test]
    fn statement_cap() {
        let over = vec![Stmt::Return; MAX_IR_STATEMENTS + 1];
        assert_eq!(check(over), Err(ValidationError::TooManyStatements { count: MAX_IR_STATEMENTS + 1, limit: MAX_IR_STATEMENTS }));
        let e = ValidationError::TooManyStatements { count: 5, limit: 4 }.to_string();
        assert!(e.starts_with("resource cap:"), "{e}");
    }

    #[test]
    fn a_valid_module_passes() {
        let sample = Expr::Sample { tex: 0, coord: Box::new(read(RegFile::Input, 0, XYZW)), mode: SampleMode::Bias(0.0), offset: [-8, 7, 0] };
        let body = vec![
            assign(RegFile::Temp, 3, sample),
            Stmt::Loop {
                body: vec![Stmt::If {
                    cond: Cond::AnyNegative(read(RegFile::Const(0), 3, XYZW)),
                    then_body: vec![Stmt::Break],
                    else_body: vec![Stmt::Continue],
                }],
            },
            assign(RegFile::Output, 0, read(RegFile::Temp, 3, [3, 2, 1, 0])),
            Stmt::Discard(Cond::BitSet { value: read(RegFile::Const(0), 0, XYZW), bit: 31 }),
            assign(
                RegFile::Temp,
                1,
                Expr::Load { tex: 0, coord: Box::new(read(RegFile::Temp, 3, XYZW)), lod: Box::new(read(RegFile::Temp, 3, [3; 4])) },
            ),
            assign(RegFile::Temp, 2, Expr::TexInfo { tex: 0, lod: Box::new(read(RegFile::Temp, 1, XYZW)) }),
        ];
        assert_eq!(check(body), Ok(()));
    }

    #[test]
    fn load_is_refused_on_a_cube_and_info_is_not() {
        let load = Expr::Load { tex: 0, coord: Box::new(read(RegFile::Temp, 1, XYZW)), lod: Box::new(read(RegFile::Temp, 1, XYZW)) };
        let mut m = module(vec![assign(RegFile::Temp, 0, load.clone())]);
        for dim in [TexDim::D1, TexDim::D2, TexDim::D3] {
            m.textures[0].dim = dim;
            assert_eq!(validate(&m), Ok(()), "{dim:?}");
        }
        m.textures[0].dim = TexDim::Cube;
        assert_eq!(validate(&m), Err(ValidationError::LoadFromCube(0)));
        m.body = vec![assign(RegFile::Temp, 0, Expr::TexInfo { tex: 0, lod: Box::new(read(RegFile::Temp, 1, XYZW)) })];
        assert_eq!(validate(&m), Ok(()));
    }

    #[test]
    fn comparison_samplers_and_gather_are_checked() {
        let coord = || Box::new(read(RegFile::Temp, 1, XYZW));
        let cmp = Expr::SampleCmp { tex: 0, coord: coord(), reference: coord(), level_zero: true, offset: [0; 3] };
        let mut m = module(vec![assign(RegFile::Temp, 0, cmp.clone())]);
        assert_eq!(validate(&m), Err(ValidationError::WrongSampler { tex: 0, what: "SampleCmp", need: "a comparison sampler" }));
        m.textures[0].compare = true;
        assert_eq!(validate(&m), Ok(()));
        // a comparison sampler is read by SampleCmp only
        let sample = Expr::Sample { tex: 0, coord: coord(), mode: SampleMode::Lod(coord()), offset: [0; 3] };
        m.body = vec![assign(RegFile::Temp, 0, sample)];
        assert_eq!(validate(&m), Err(ValidationError::WrongSampler { tex: 0, what: "Sample", need: "a plain sampler" }));
        // offsets: texel lanes only (an array's slice lane has none)
        m.textures[0].dim = TexDim::D2Array;
        m.body = vec![assign(RegFile::Temp, 0, Expr::SampleCmp { tex: 0, coord: coord(), reference: coord(), level_zero: true, offset: [1, -2, 0] })];
        assert_eq!(validate(&m), Ok(()));
        m.body = vec![assign(RegFile::Temp, 0, Expr::SampleCmp { tex: 0, coord: coord(), reference: coord(), level_zero: true, offset: [0, 0, 1] })];
        assert_eq!(validate(&m), Err(ValidationError::BadTexelOffset([0, 0, 1])));
        // gather: 2D, 2D-array and cube textures with a plain sampler
        m.textures[0].compare = false;
        m.body = vec![assign(RegFile::Temp, 0, Expr::Gather { tex: 0, coord: coord(), offset: [0; 3] })];
        assert_eq!(validate(&m), Ok(()));
        m.textures[0].dim = TexDim::D3;
        assert_eq!(validate(&m), Err(ValidationError::WrongSampler { tex: 0, what: "Gather", need: "a 2D, 2D-array or cube texture" }));
        // Load on a cube array is refused like on a cube
        m.textures[0].dim = TexDim::CubeArray;
        m.body = vec![assign(RegFile::Temp, 0, Expr::Load { tex: 0, coord: coord(), lod: coord() })];
        assert_eq!(validate(&m), Err(ValidationError::LoadFromCube(0)));
    }

    #[test]
    fn each_rule_is_enforced() {
        let r = |f, i| read(f, i, XYZW);
        let dynamic = RegRef {
            file: RegFile::Input,
            index: Index::Dynamic { base: 0, value: Box::new(r(RegFile::Temp, 0)), conv: super::super::IndexConv::Floor },
        };
        let cases: Vec<(Vec<Stmt>, ValidationError)> = vec![
            (vec![assign(RegFile::Temp, 4, r(RegFile::Temp, 0))], ValidationError::RegisterOutOfRange { file: "temporary".into(), index: 4, len: 4 }),
            (vec![assign(RegFile::Temp, 0, r(RegFile::Output, 1))], ValidationError::RegisterOutOfRange { file: "output".into(), index: 1, len: 1 }),
            (
                vec![assign(RegFile::Temp, 0, r(RegFile::Const(0), 4))],
                ValidationError::RegisterOutOfRange { file: "constant file 0 (fc)".into(), index: 4, len: 4 },
            ),
            (vec![assign(RegFile::Temp, 0, r(RegFile::Const(1), 0))], ValidationError::NoSuchConstFile(1)),
            (
                vec![assign(RegFile::Temp, 0, Expr::Read(super::super::Src { reg: dynamic, swizzle: XYZW, abs: false, negate: false }))],
                ValidationError::DynamicStageIndex { file: "input".into() },
            ),
            (vec![assign(RegFile::Temp, 0, Expr::TexSize { tex: 1 })], ValidationError::NoSuchTexture { tex: 1, len: 1 }),
            (
                vec![assign(RegFile::Temp, 0, Expr::Load { tex: 1, coord: Box::new(r(RegFile::Temp, 1)), lod: Box::new(r(RegFile::Temp, 1)) })],
                ValidationError::NoSuchTexture { tex: 1, len: 1 },
            ),
            (
                vec![assign(RegFile::Temp, 0, Expr::TexInfo { tex: 2, lod: Box::new(r(RegFile::Temp, 1)) })],
                ValidationError::NoSuchTexture { tex: 2, len: 1 },
            ),
            // the coordinate and level operands are walked like any other
            (
                vec![assign(RegFile::Temp, 0, Expr::Load { tex: 0, coord: Box::new(r(RegFile::Temp, 1)), lod: Box::new(r(RegFile::Temp, 5)) })],
                ValidationError::RegisterOutOfRange { file: "temporary".into(), index: 5, len: 4 },
            ),
            (vec![assign(RegFile::Temp, 0, Expr::TexInfo { tex: 0, lod: Box::new(r(RegFile::Const(2), 0)) })], ValidationError::NoSuchConstFile(2)),
            (
                vec![assign(
                    RegFile::Temp,
                    0,
                    Expr::Sample { tex: 0, coord: Box::new(r(RegFile::Temp, 1)), mode: SampleMode::Bias(0.0), offset: [0, 8, 0] },
                )],
                ValidationError::BadTexelOffset([0, 8, 0]),
            ),
            (
                vec![assign(
                    RegFile::Temp,
                    0,
                    Expr::Sample { tex: 0, coord: Box::new(r(RegFile::Temp, 1)), mode: SampleMode::Bias(0.0), offset: [0, 0, 1] },
                )],
                ValidationError::BadTexelOffset([0, 0, 1]),
            ),
            (vec![assign(RegFile::Temp, 0, read(RegFile::Temp, 1, [0, 1, 2, 4]))], ValidationError::BadLane(4)),
            (
                vec![Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, 0), mask: 0 }, value: r(RegFile::Temp, 1), saturate: false }],
                ValidationError::BadMask(0),
            ),
            (
                vec![assign(RegFile::Temp, 0, Expr::Dot(5, Box::new(r(RegFile::Temp, 1)), Box::new(r(RegFile::Temp, 1))))],
                ValidationError::BadDotWidth(5),
            ),
            (vec![Stmt::Discard(Cond::BitSet { value: r(RegFile::Temp, 0), bit: 32 })], ValidationError::BadBit(32)),
            (
                vec![Stmt::If { cond: Cond::AnyNegative(r(RegFile::Temp, 0)), then_body: vec![Stmt::Break], else_body: vec![] }],
                ValidationError::OutsideLoop("break"),
            ),
            (vec![Stmt::Continue], ValidationError::OutsideLoop("continue")),
            (vec![Stmt::GsEmitVertex], ValidationError::NeedsStrip("GsEmitVertex")),
            (
                vec![Stmt::LocalLoad { dst: Dst { reg: RegRef::fixed(RegFile::Temp, 0), mask: 0xF }, index: Index::Fixed(0) }],
                ValidationError::NoLocalArray("LocalLoad"),
            ),
            (vec![Stmt::GsStore(IExpr::Const(0))], ValidationError::WrongStage { what: "GsStore", stage: Stage::Pixel }),
            (vec![Stmt::SetInt { var: 0, index: None, value: IExpr::Const(1) }], ValidationError::BadIntVar { var: 0, what: "not declared" }),
            (
                vec![Stmt::XenosMemExport { address: r(RegFile::Temp, 0), value: r(RegFile::Temp, 1), element: 5 }],
                ValidationError::BadExportElement(5),
            ),
            (vec![Stmt::Comment("ok\n} evil();".into())], ValidationError::MultiLineComment),
        ];
        for (body, want) in cases {
            assert_eq!(check(body.clone()), Err(want), "{body:?}");
        }
    }

    #[test]
    fn stage_rules_and_names() {
        let mut m = module(vec![Stmt::Discard(Cond::AnyNegative(read(RegFile::Temp, 0, XYZW)))]);
        m.stage = Stage::Vertex;
        assert_eq!(validate(&m), Err(ValidationError::WrongStage { what: "discard", stage: Stage::Vertex }));
        m.body = vec![assign(RegFile::Temp, 0, Expr::Unary(crate::ir::UnOp::Ddx, Box::new(read(RegFile::Temp, 1, XYZW))))];
        assert_eq!(validate(&m), Err(ValidationError::WrongStage { what: "a screen-space derivative", stage: Stage::Vertex }));
        let mut m = module(vec![]);
        m.textures[0].tex_var = "t0; evil".into();
        assert!(matches!(validate(&m), Err(ValidationError::BadName { what: "texture", .. })));
        m.textures[0].tex_var = "heap[index]".into();
        assert_eq!(validate(&m), Ok(()));
        m.textures[0].tex_var = "heap[f(x)]".into();
        assert!(matches!(validate(&m), Err(ValidationError::BadName { what: "texture", .. })));
        let mut m = module(vec![]);
        m.header_comments.push("line\r\nnext".into());
        assert_eq!(validate(&m), Err(ValidationError::MultiLineComment));
    }
}
