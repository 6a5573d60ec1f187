//! AGAL → IR.
//!
//! Semantics follow Flash's D3D9 heritage (docs/isa/agal.md §5-§8): positional swizzles, `|x|` in
//! `sqt`/`rsq`/`log`/`pow`, matrix rows in consecutive constant registers, `kil` as `clip`.
//! The choices where Flash is undocumented are listed in docs/agal.md.

use super::decode::{self, AgalError, Dest, Op, Operand2, Program, RegType, Sampler, Source, Token, VARYING_SLOTS};
use crate::formats::{Family, Stage};
use crate::ir::build::*;
use crate::ir::*;

/// Options that change AGAL semantics where Flash's behaviour is an open question.
#[derive(Clone, Copy, Debug, Default)]
pub struct AgalOptions {
    /// `ifg` as strict `>` (Ruffle) instead of `>=` (the Adobe docs' text, the default).
    pub ifg_strict: bool,
}

/// Register-file layout of a lowered AGAL module (also used by the verification harness to
/// feed inputs and read outputs).
pub struct Layout;

impl Layout {
    /// Vulkan binding of the vertex / fragment constant buffers (set 0).
    pub const VK_VERTEX_CONSTANTS: u32 = 0;
    pub const VK_FRAGMENT_CONSTANTS: u32 = 1;
    /// Vulkan binding of fragment texture `i` is `VK_TEXTURE_BASE + i`, its sampler `VK_SAMPLER_BASE + i`.
    pub const VK_TEXTURE_BASE: u32 = 16;
    pub const VK_SAMPLER_BASE: u32 = 32;
    /// Vertex textures (AGAL4 `tld`): `VK_VERTEX_TEXTURE_BASE + i`, samplers `VK_VERTEX_SAMPLER_BASE + i`.
    pub const VK_VERTEX_TEXTURE_BASE: u32 = 48;
    pub const VK_VERTEX_SAMPLER_BASE: u32 = 52;
}

/// What lowering produces besides the module.
pub struct Lowered {
    pub module: Module,
    /// Sampler words per slot, sorted by slot.
    pub samplers: Vec<Sampler>,
}

struct Lowerer<'a> {
    prog: &'a Program,
    opts: AgalOptions,
    /// Input index of `va{i}` / `v{i}` (fragment) / `iid`.
    inputs: Vec<(RegType, u16)>,
    /// Output index of `op`/`oc{i}`/`od`/`v{i}` (vertex).
    outputs: Vec<(RegType, u16)>,
    /// Texture slot → index in `module.textures`.
    textures: Vec<(u16, u32)>,
    module: Module,
    samplers: Vec<Sampler>,
}

pub fn lower(prog: &Program, opts: AgalOptions) -> Result<Lowered, AgalError> {
    let limits = decode::limits(prog.version);
    let vertex = prog.stage == Stage::Vertex;
    let (prefix, cb) = if vertex {
        (
            "vt",
            ConstBuffer {
                block: "AgalVertexConstants".into(),
                var: "vc".into(),
                len: limits.vertex_constants,
                binding: Binding { dx_register: 0, dx_space: 0, vk_set: 0, vk_binding: Layout::VK_VERTEX_CONSTANTS },
            },
        )
    } else {
        (
            "ft",
            ConstBuffer {
                block: "AgalFragmentConstants".into(),
                var: "fc".into(),
                len: limits.fragment_constants,
                binding: Binding { dx_register: 1, dx_space: 0, vk_set: 0, vk_binding: Layout::VK_FRAGMENT_CONSTANTS },
            },
        )
    };
    let module = Module {
        family: Family::Agal,
        stage: prog.stage,
        inputs: Vec::new(),
        outputs: Vec::new(),
        const_buffers: vec![cb],
        textures: Vec::new(),
        temps: TempFile { count: limits.temporaries, prefix: prefix.into(), indexable: false },
        body: Vec::new(),
        ext: Default::default(),
        header_comments: vec![format!("AGAL{} {} program, {} tokens", prog.version, prog.stage.name_in(Family::Agal), prog.tokens.len())],
    };
    let mut l = Lowerer { prog, opts, inputs: Vec::new(), outputs: Vec::new(), textures: Vec::new(), module, samplers: Vec::new() };
    l.declare_interface();
    l.declare_textures();
    let body = l.lower_body()?;
    l.module.body = body;
    l.samplers.sort_by_key(|s| s.num);
    Ok(Lowered { module: l.module, samplers: l.samplers })
}

impl Lowerer<'_> {
    fn used_regs(&self, reg: RegType) -> Vec<u16> {
        let mut nums: Vec<u16> = Vec::new();
        for t in &self.prog.tokens {
            let mut note = |r: RegType, n: u16| {
                if r == reg && !nums.contains(&n) {
                    nums.push(n)
                }
            };
            if let Some(d) = t.dest {
                note(d.reg, d.num);
            }
            for s in [t.src1, if let Operand2::Source(s) = t.src2 { Some(s) } else { None }].into_iter().flatten() {
                match s.indirect {
                    Some(ind) => note(ind.reg, ind.num),
                    None => note(s.reg, s.num),
                }
            }
            // m33/m34/m44 read their matrix from consecutive registers of source 2: an
            // attribute or varying matrix uses every one of them.
            let rows = t.op.matrix_rows();
            if let (Operand2::Source(m), true) = (t.src2, rows > 0) {
                if m.indirect.is_none() {
                    for i in 1..rows {
                        note(m.reg, m.num.saturating_add(i));
                    }
                }
            }
        }
        nums.sort_unstable();
        nums
    }

    fn declare_interface(&mut self) {
        let attributes = self.used_regs(RegType::Attribute);
        let reads_iid = !self.used_regs(RegType::InstanceId).is_empty();
        let colour_outputs = self.used_regs(RegType::Output);
        let writes_depth = !self.used_regs(RegType::Depth).is_empty();
        let add_input = |l: &mut Self, reg: RegType, num: u16, name: String, semantic: Semantic, components: u8| {
            l.inputs.push((reg, num));
            l.module.inputs.push(IoVar { name, semantic, components });
        };
        if self.prog.stage == Stage::Vertex {
            for n in attributes {
                add_input(self, RegType::Attribute, n, format!("va{n}"), Semantic::Texcoord(n.into()), 4);
            }
            if reads_iid {
                add_input(self, RegType::InstanceId, 0, "iid".into(), Semantic::InstanceId, 1);
            }
            self.add_output(RegType::Output, 0, "op".into(), Semantic::Position, 4);
            for n in 0..VARYING_SLOTS as u16 {
                self.add_output(RegType::Varying, n, format!("v{n}"), Semantic::Texcoord(n.into()), 4);
            }
        } else {
            // The fragment stage declares the vertex stage's whole output signature so that the two
            // always link: position first (no AGAL register reads it), then every varying slot.
            add_input(self, RegType::Output, u16::MAX, "frag_position".into(), Semantic::Position, 4);
            for n in 0..VARYING_SLOTS as u16 {
                add_input(self, RegType::Varying, n, format!("v{n}"), Semantic::Texcoord(n.into()), 4);
            }
            for n in colour_outputs {
                self.add_output(RegType::Output, n, format!("oc{n}"), Semantic::Target(n.into()), 4);
            }
            if writes_depth {
                self.add_output(RegType::Depth, 0, "od".into(), Semantic::Depth, 1);
            }
        }
    }

    fn add_output(&mut self, reg: RegType, num: u16, name: String, semantic: Semantic, components: u8) {
        self.outputs.push((reg, num));
        self.module.outputs.push(IoVar { name, semantic, components });
    }

    fn declare_textures(&mut self) {
        let vertex = self.prog.stage == Stage::Vertex;
        for t in &self.prog.tokens {
            let Operand2::Sampler(s) = t.src2 else { continue };
            if self.textures.iter().any(|(slot, _)| *slot == s.num) {
                continue;
            }
            let n = u32::from(s.num);
            let (prefix, tb, sb) = if vertex {
                ("vs", Layout::VK_VERTEX_TEXTURE_BASE, Layout::VK_VERTEX_SAMPLER_BASE)
            } else {
                ("fs", Layout::VK_TEXTURE_BASE, Layout::VK_SAMPLER_BASE)
            };
            self.textures.push((s.num, self.module.textures.len() as u32));
            self.module.textures.push(Texture {
                tex_var: format!("{prefix}{n}_tex"),
                smp_var: format!("{prefix}{n}_smp"),
                dim: if s.dim == 1 { TexDim::Cube } else { TexDim::D2 },
                compare: false,
                texture_binding: Binding { dx_register: n, dx_space: 0, vk_set: 0, vk_binding: tb + n },
                sampler_binding: Binding { dx_register: n, dx_space: 0, vk_set: 0, vk_binding: sb + n },
            });
            self.samplers.push(s);
        }
    }

    fn input_index(&self, reg: RegType, num: u16) -> u32 {
        self.inputs.iter().position(|&(r, n)| r == reg && n == num).expect("declared input") as u32
    }
    fn output_index(&self, reg: RegType, num: u16) -> u32 {
        self.outputs.iter().position(|&(r, n)| r == reg && n == num).expect("declared output") as u32
    }

    /// The register file and index an AGAL register lives in.
    fn place(&self, reg: RegType, num: u16) -> (RegFile, u32) {
        let vertex = self.prog.stage == Stage::Vertex;
        match reg {
            RegType::Temporary => (RegFile::Temp, num.into()),
            RegType::Constant => (RegFile::Const(0), num.into()),
            RegType::Attribute | RegType::InstanceId => (RegFile::Input, self.input_index(reg, num)),
            // Vertex varyings are outputs the program may read back; fragment varyings are inputs.
            RegType::Varying if vertex => (RegFile::Output, self.output_index(reg, num)),
            RegType::Varying => (RegFile::Input, self.input_index(reg, num)),
            RegType::Output | RegType::Depth => (RegFile::Output, self.output_index(reg, num)),
            RegType::Sampler => unreachable!("samplers are never register operands (decoder rejects it)"),
        }
    }

    /// Reads register `row` steps after the one `s` names, with `s`'s swizzle.
    fn read_row(&self, s: &Source, row: u32) -> Expr {
        let reg = match s.indirect {
            None => {
                let (file, index) = self.place(s.reg, s.num);
                RegRef::fixed(file, index + row)
            }
            Some(ind) => {
                let (ifile, iindex) = self.place(ind.reg, ind.num);
                let (file, _) = self.place(s.reg, 0);
                RegRef {
                    file,
                    index: Index::Dynamic {
                        base: i32::from(ind.offset) + row as i32,
                        value: Box::new(broadcast(read(ifile, iindex, XYZW), ind.lane)),
                        conv: IndexConv::RoundHalfUp,
                    },
                }
            }
        };
        Expr::Read(Src { reg, swizzle: s.swizzle, abs: false, negate: false })
    }

    fn src(&self, s: &Option<Source>) -> Expr {
        self.read_row(s.as_ref().expect("decoder guarantees the operand"), 0)
    }
    fn src2(&self, t: &Token) -> Expr {
        match &t.src2 {
            Operand2::Source(s) => self.read_row(s, 0),
            _ => unreachable!("decoder guarantees a second source"),
        }
    }

    fn dst(&self, d: &Dest, mask: u8) -> Dst {
        let (file, index) = self.place(d.reg, d.num);
        Dst { reg: RegRef::fixed(file, index), mask }
    }

    /// Matrix op: `rows` dot products of `n` lanes against consecutive registers of source 2.
    fn matrix(&self, t: &Token, n: u8, rows: u32) -> Expr {
        let Operand2::Source(m) = &t.src2 else { unreachable!() };
        let v = self.src(&t.src1);
        let lane = |i: u32| if i < rows { dot(n, v.clone(), self.read_row(m, i)) } else { Expr::Literal([0.0; 4]) };
        Expr::Compose(Box::new([lane(0), lane(1), lane(2), lane(3)]))
    }

    fn lower_body(&mut self) -> Result<Vec<Stmt>, AgalError> {
        // Stack of open `if` blocks: (condition, then-body, else-body once `els` is seen).
        struct Open {
            cond: Cond,
            then_body: Vec<Stmt>,
            else_body: Option<Vec<Stmt>>,
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut root: Vec<Stmt> = Vec::new();
        fn current<'s>(root: &'s mut Vec<Stmt>, stack: &'s mut [Open]) -> &'s mut Vec<Stmt> {
            match stack.last_mut() {
                None => root,
                Some(o) => o.else_body.as_mut().unwrap_or(&mut o.then_body),
            }
        }
        for (i, t) in self.prog.tokens.iter().enumerate() {
            let offset = decode::token_offset(i + 1);
            let op = t.op;
            let open_if = |stack: &mut Vec<Open>, cmp: CmpOp| {
                let cond = Cond::Compare(cmp, self.src(&t.src1), self.src2(t));
                stack.push(Open { cond, then_body: Vec::new(), else_body: None });
            };
            let a = || self.src(&t.src1);
            let b = || self.src2(t);
            // Ops whose result has no meaningful w write xyz only (docs: "must be masked to .xyz or less").
            let mut mask = t.dest.map_or(0, |d| d.mask);
            let value = match op {
                // Flow control and `kil` produce no value.
                Op::Ife => {
                    open_if(&mut stack, CmpOp::Eq);
                    continue;
                }
                Op::Ine => {
                    open_if(&mut stack, CmpOp::Ne);
                    continue;
                }
                Op::Ifg => {
                    open_if(&mut stack, if self.opts.ifg_strict { CmpOp::Gt } else { CmpOp::Ge });
                    continue;
                }
                Op::Ifl => {
                    open_if(&mut stack, CmpOp::Lt);
                    continue;
                }
                Op::Els => {
                    let open = stack.last_mut().expect("decoder checked nesting");
                    open.else_body = Some(Vec::new());
                    continue;
                }
                Op::Eif => {
                    let open = stack.pop().expect("decoder checked nesting");
                    let stmt = Stmt::If { cond: open.cond, then_body: open.then_body, else_body: open.else_body.unwrap_or_default() };
                    current(&mut root, &mut stack).push(stmt);
                    continue;
                }
                Op::Kil => {
                    let stmt = Stmt::Discard(Cond::AnyNegative(self.src(&t.src1)));
                    current(&mut root, &mut stack).push(stmt);
                    continue;
                }
                Op::Mov => a(),
                Op::Add => bin(BinOp::Add, a(), b()),
                Op::Sub => bin(BinOp::Sub, a(), b()),
                Op::Mul => bin(BinOp::Mul, a(), b()),
                Op::Div => bin(BinOp::Div, a(), b()),
                Op::Min => bin(BinOp::Min, a(), b()),
                Op::Max => bin(BinOp::Max, a(), b()),
                Op::Rcp => un(UnOp::Rcp, a()),
                Op::Frc => un(UnOp::Fract, a()),
                // D3D9 heritage: these take |x| (docs/isa/agal.md §5).
                Op::Sqt => un(UnOp::Sqrt, un(UnOp::Abs, a())),
                Op::Rsq => un(UnOp::Rsq, un(UnOp::Abs, a())),
                Op::Log => un(UnOp::Log2, un(UnOp::Abs, a())),
                Op::Pow => bin(BinOp::Pow, un(UnOp::Abs, a()), b()),
                Op::Exp => un(UnOp::Exp2, a()),
                Op::Nrm => {
                    mask &= 0x7;
                    un(UnOp::Normalize3, a())
                }
                Op::Sin => un(UnOp::Sin, a()),
                Op::Cos => un(UnOp::Cos, a()),
                Op::Crs => {
                    mask &= 0x7;
                    bin(BinOp::Cross3, a(), b())
                }
                Op::Dp3 => dot(3, a(), b()),
                Op::Dp4 => dot(4, a(), b()),
                Op::Abs => un(UnOp::Abs, a()),
                Op::Neg => un(UnOp::Neg, a()),
                Op::Sat => un(UnOp::Saturate, a()),
                Op::M33 => {
                    mask &= 0x7;
                    self.matrix(t, 3, 3)
                }
                Op::M34 => {
                    mask &= 0x7;
                    self.matrix(t, 4, 3)
                }
                Op::M44 => self.matrix(t, 4, 4),
                Op::Ddx => un(UnOp::Ddx, a()),
                Op::Ddy => un(UnOp::Ddy, a()),
                Op::Sge => bin(BinOp::Sge, a(), b()),
                Op::Slt => bin(BinOp::Slt, a(), b()),
                Op::Seq => bin(BinOp::Seq, a(), b()),
                Op::Sne => bin(BinOp::Sne, a(), b()),
                Op::Sgn => un(UnOp::Sign, a()),
                Op::Tex | Op::Tld => {
                    let Operand2::Sampler(s) = t.src2 else { unreachable!() };
                    let tex = self.textures.iter().find(|(slot, _)| *slot == s.num).expect("declared texture").1;
                    let mode = if op == Op::Tld {
                        // Vertex texture fetch has no derivatives: explicit LOD from coord.w, as D3D9 texldl.
                        SampleMode::Lod(Box::new(broadcast(a(), 3)))
                    } else {
                        SampleMode::Bias(f32::from(s.bias) / 8.0)
                    };
                    Expr::Sample { tex, coord: Box::new(a()), mode, offset: [0; 3] }
                }
                // Rejected by the table (the decoder refuses it first; kept as an error, not a panic).
                Op::Ted => return Err(AgalError::Rejected { offset, op, reason: op.status().reason().unwrap_or_default() }),
            };
            if mask == 0 {
                // e.g. `nrm vt0.w`: the op defines only xyz, so the instruction would write nothing.
                return Err(AgalError::WritesOnlyW { offset, op });
            }
            let d = t.dest.as_ref().expect("ops with a value have a destination");
            let stmt = Stmt::Assign { dst: self.dst(d, mask), value, saturate: false };
            current(&mut root, &mut stack).push(stmt);
        }
        Ok(root)
    }
}
