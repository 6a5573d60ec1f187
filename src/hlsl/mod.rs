//! IR → HLSL (Shader Model 6.0, HLSL 2021). The only HLSL writer.
//!
//! Shape of every generated shader:
//! - `#include "shader_common.h"` (resolved by DXC's include handler, see [`crate::dxc`]);
//! - resources with explicit D3D registers *and* Vulkan bindings (`[[vk::binding]]`), so both targets
//!   bind exactly as `shader_common.h` documents;
//! - every register as a `static precise float4` at global scope (evaluated as written, see
//!   `Writer::module`), the program in `shrec_body()` (so that the IR's `Return` is a plain
//!   `return`), and a `main` that copies stage inputs in, runs the body and copies outputs out.

use crate::ir::*;

mod xenos_abi;

/// Name of the prelude file generated shaders include.
pub const PRELUDE_NAME: &str = "shader_common.h";

/// The prelude's text (also written next to generated caches for consumers).
pub const PRELUDE: &str = include_str!("../../shader_common.h");

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

/// How an HLSL text declares the specialization-constant mask of its shader: a line
/// `// shrec: spec-constants-mask = 0x…` (hex with `0x`, or decimal). Generated HLSL of a shader
/// with a non-zero mask ends with it, so the file `--hlsl-dir` or `shrec hlsl` gives, used as an
/// `--override-dir` replacement, compiles as its translation did (DXIL as a library when the
/// mask is non-zero) even when the translation fails; a hand-written override declares its own.
pub const SPEC_CONSTANTS_MASK_LINE: &str = "// shrec: spec-constants-mask = ";

/// `hlsl` with its mask declared on a last line (after the code, so DXC's line numbers do not
/// move) when the mask is non-zero.
pub fn with_spec_constants_mask(mut hlsl: String, mask: u32) -> String {
    if mask != 0 {
        if !hlsl.is_empty() && !hlsl.ends_with('\n') {
            hlsl.push('\n');
        }
        hlsl.push_str(&format!("{SPEC_CONSTANTS_MASK_LINE}0x{mask:X}\n"));
    }
    hlsl
}

/// The mask an HLSL text declares (see [`SPEC_CONSTANTS_MASK_LINE`]); `Err` names the line of a
/// `// shrec:` directive that cannot be read, or of a second declaration that disagrees.
pub fn declared_spec_constants_mask(hlsl: &str) -> Result<Option<u32>, String> {
    let mut found: Option<(usize, u32)> = None;
    for (i, line) in hlsl.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("//").map(str::trim_start).and_then(|l| l.strip_prefix("shrec:")) else {
            continue;
        };
        let line_no = i + 1;
        let Some((name, value)) = rest.split_once('=') else {
            return Err(format!("line {line_no}: a `// shrec:` directive needs `name = value`"));
        };
        if name.trim() != "spec-constants-mask" {
            return Err(format!("line {line_no}: unknown `// shrec:` directive {:?} (known: spec-constants-mask)", name.trim()));
        }
        let value = value.trim();
        let parsed = match value.strip_prefix("0x").or_else(|| value.strip_prefix("0X")) {
            Some(hex) => u32::from_str_radix(hex, 16),
            None => value.parse::<u32>(),
        };
        let mask = parsed.map_err(|_| format!("line {line_no}: spec-constants-mask {value:?} is not a 32-bit number (0x… or decimal)"))?;
        match found {
            Some((first, m)) if m != mask => {
                return Err(format!("line {line_no}: spec-constants-mask 0x{mask:X} contradicts line {first} (0x{m:X})"));
            }
            _ => found = Some((line_no, mask)),
        }
    }
    Ok(found.map(|(_, m)| m))
}

/// Writes the HLSL for a module that passed [`crate::ir::validate()`] (the writer indexes
/// registers, textures and variables as the validator has checked them), after the IR's
/// optimizing passes ([`crate::ir::opt`]).
pub fn write(m: &Module) -> String {
    write_with_entry_point(m, "main")
}

/// [`write()`], the shader function named `entry` (XenosRecomp's Metal branch and the runtimes
/// built on it compile and link `shaderMain`).
pub fn write_with_entry_point(m: &Module, entry: &str) -> String {
    let mut m = m.clone();
    crate::ir::opt::optimize(&mut m);
    write_as_is_with_entry_point(&m, entry)
}

/// [`write()`] without the optimizing passes: the module's statements as the front end lowered
/// them (for comparisons and for looking at a front end's own output).
pub fn write_as_is(m: &Module) -> String {
    write_as_is_with_entry_point(m, "main")
}

fn write_as_is_with_entry_point(m: &Module, entry: &str) -> String {
    let mut w = Writer {
        m,
        entry,
        out: String::with_capacity(4096),
        indent: 0,
        used_temps: Default::default(),
        used_io: Default::default(),
        used_helpers: Default::default(),
        xenos_used: Default::default(),
        precise_locals: Default::default(),
        pending_locals: Default::default(),
    };
    w.module();
    w.out
}

struct Writer<'a> {
    m: &'a Module,
    /// Name of the shader function.
    entry: &'a str,
    out: String,
    indent: usize,
    /// The fixed-index temps the text names so far: only those are declared (a GX2 shader
    /// has 176 temps, most programs use a handful).
    used_temps: std::cell::RefCell<std::collections::BTreeSet<u32>>,
    /// The stage inputs and outputs the text names so far (`(RegFile::Input, i)` /
    /// `(RegFile::Output, i)`): only those get a register variable and a copy in the entry
    /// point; the signature keeps them all.
    used_io: std::cell::RefCell<std::collections::BTreeSet<(bool, u32)>>,
    /// The prelude helpers (`shrec_*` functions of shader_common.h) the text calls: only those
    /// are defined (see `module`).
    used_helpers: std::cell::RefCell<std::collections::BTreeSet<&'static str>>,
    /// The XenosRecomp ABI accessors the text uses (see `xenos_abi`).
    xenos_used: std::cell::RefCell<xenos_abi::Used>,
    /// `precise` locals named so far (`shrec_operand<n>`, see `exact_operand`), and those
    /// the next line declares before itself.
    precise_locals: std::cell::Cell<u32>,
    pending_locals: std::cell::RefCell<Vec<String>>,
}

fn float_literal(v: f32) -> String {
    if v.is_finite() {
        let s = format!("{v:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        format!("asfloat(0x{:08X}u)", v.to_bits())
    }
}

/// The value of `e` when it is a literal, possibly swizzled, negated or made absolute (exact
/// operations on the bits, as the GPU performs them), so that the writer prints one literal
/// instead of an expression DXC has to parse and fold.
fn literal_of(e: &Expr) -> Option<[f32; 4]> {
    match e {
        Expr::Literal(v) => Some(*v),
        Expr::Swizzle(a, s) => literal_of(a).map(|v| s.map(|l| v[l as usize & 3])),
        Expr::Unary(UnOp::Neg, a) => literal_of(a).map(|v| v.map(|x| -x)),
        Expr::Unary(UnOp::Abs, a) => literal_of(a).map(|v| v.map(f32::abs)),
        _ => None,
    }
}

/// Whether `e` reads a register (with swizzles and source modifiers) and computes nothing.
fn is_plain_read(e: &Expr) -> bool {
    match e {
        Expr::Read(_) => true,
        Expr::Swizzle(a, _) => is_plain_read(a),
        _ => false,
    }
}

/// The argument of `text` when all of `text` is one call `name(argument)`.
fn call_argument<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let inner = text.strip_prefix(name)?.strip_prefix('(')?.strip_suffix(')')?;
    // the parentheses of `name(` and the last `)` must be a pair
    let mut depth = 0i32;
    for c in inner.chars() {
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then_some(inner)
}

/// The 32 bits of a scalar float text as `uint`: `asuint(x)`, or the bits themselves when the
/// text is `asfloat(bits)` (the same pattern, without the round trip).
fn uint_text(float: &str) -> String {
    match call_argument(float, "asfloat") {
        Some(bits) => format!("({bits})"),
        None => format!("asuint({float})"),
    }
}

fn literal_text(v: &[f32; 4]) -> String {
    if v.iter().all(|&x| x.to_bits() == v[0].to_bits()) {
        format!("((float4){})", float_literal(v[0]))
    } else {
        let parts: Vec<String> = v.iter().map(|&x| float_literal(x)).collect();
        format!("float4({})", parts.join(", "))
    }
}

fn mask_text(mask: u8) -> String {
    (0..4).filter(|i| mask >> i & 1 == 1).map(|i| LANES[i]).collect()
}

fn swizzle_text(s: &[u8; 4]) -> String {
    s.iter().map(|&l| LANES[l as usize & 3]).collect()
}

/// HLSL text of a comparison. Float `!=` is never written with this: the IR's `Ne` is IEEE
/// (true when either side is NaN, as in DXIL), but DXC's SPIR-V backend compiles HLSL `!=` to an
/// ordered compare (false with NaN), so float `Ne` is written as `!(a == b)` (or a select with
/// swapped arms) and both targets agree. Integer compares have no NaN and use it as is.
fn cmp_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
    }
}

fn semantic_text(s: &Semantic) -> String {
    match s {
        Semantic::Texcoord(n) => format!("TEXCOORD{n}"),
        Semantic::Position => "SV_Position".into(),
        Semantic::Target(n) => format!("SV_Target{n}"),
        Semantic::Depth => "SV_Depth".into(),
        Semantic::InstanceId => "SV_InstanceID".into(),
        Semantic::Usage { name, index, .. } | Semantic::UsageUint { name, index, .. } => format!("{name}{index}"),
        Semantic::VertexId => "SV_VertexID".into(),
        Semantic::PointSize => "PSIZE".into(),
        Semantic::CullDistance => "SV_CullDistance".into(),
    }
}

/// Outputs only the SPIR-V target has (declared and written inside `#ifdef __spirv__`).
fn spirv_only(s: &Semantic) -> bool {
    *s == Semantic::PointSize
}

/// Vulkan location for user semantics; builtins get none (DXC maps them to built-ins).
fn vk_location(s: &Semantic) -> Option<u32> {
    match s {
        Semantic::Texcoord(n) => Some(*n),
        Semantic::Usage { location, .. } | Semantic::UsageUint { location, .. } => Some(*location),
        _ => None,
    }
}

impl Writer<'_> {
    /// Writes one line, after the `precise` locals its text names (see `exact_operand`).
    fn line(&mut self, text: impl AsRef<str>) {
        let locals = std::mem::take(&mut *self.pending_locals.borrow_mut());
        for l in locals.iter().map(String::as_str).chain([text.as_ref()]) {
            for _ in 0..self.indent {
                self.out.push_str("    ");
            }
            self.out.push_str(l);
            self.out.push('\n');
        }
    }

    fn module(&mut self) {
        let m = self.m;
        self.line(format!("// Generated by shrec {} from a {} {} shader.", env!("CARGO_PKG_VERSION"), m.family, m.stage.name_in(m.family)));
        for c in &m.header_comments {
            self.line(format!("// {c}"));
        }
        if let ResourceAbi::XenosRecomp(x) = &m.ext.resource_abi {
            for d in xenos_abi::defines(x) {
                self.line(d);
            }
        }
        // `#define SHREC_USE_<helper>` lines go here once the body has named its helpers.
        let helpers_at = self.out.len();
        self.line(format!("#include \"{PRELUDE_NAME}\""));
        self.line("");
        // The XenosRecomp ABI's declarations go here once the body has named its accessors.
        let declarations_at = self.out.len();
        let bindings = matches!(m.ext.resource_abi, ResourceAbi::Bindings);
        for cb in m.const_buffers.iter().filter(|_| bindings) {
            let b = cb.binding;
            self.line(format!(
                "[[vk::binding({}, {})]] cbuffer {} : register(b{}, space{}) {{ float4 {}[{}]; }};",
                b.vk_binding, b.vk_set, cb.block, b.dx_register, b.dx_space, cb.var, cb.len
            ));
        }
        for cb in m.ext.uint_buffers.iter().filter(|_| bindings) {
            let b = cb.binding;
            self.line(format!(
                "[[vk::binding({}, {})]] cbuffer {} : register(b{}, space{}) {{ uint4 {}[{}]; }};",
                b.vk_binding, b.vk_set, cb.block, b.dx_register, b.dx_space, cb.var, cb.len
            ));
        }
        for t in m.textures.iter().filter(|_| bindings) {
            let ty = match t.dim {
                TexDim::D1 => "Texture1D<float4>",
                TexDim::D2 => "Texture2D<float4>",
                TexDim::D3 => "Texture3D<float4>",
                TexDim::Cube => "TextureCube<float4>",
                TexDim::D1Array => "Texture1DArray<float4>",
                TexDim::D2Array => "Texture2DArray<float4>",
                TexDim::CubeArray => "TextureCubeArray<float4>",
            };
            let sampler = if t.compare { "SamplerComparisonState" } else { "SamplerState" };
            let (tb, sb) = (t.texture_binding, t.sampler_binding);
            self.line(format!(
                "[[vk::binding({}, {})]] {ty} {} : register(t{}, space{});",
                tb.vk_binding, tb.vk_set, t.tex_var, tb.dx_register, tb.dx_space
            ));
            self.line(format!(
                "[[vk::binding({}, {})]] {sampler} {} : register(s{}, space{});",
                sb.vk_binding, sb.vk_set, t.smp_var, sb.dx_register, sb.dx_space
            ));
        }
        self.line("");
        match &m.ext.geometry {
            Some(g) => self.io_struct("ShaderInput", &g.vertex_fields),
            None => self.io_struct("ShaderInput", &m.inputs),
        }
        self.io_struct("ShaderOutput", &m.outputs);
        // only the integer variables the body names are declared
        let mut named = vec![false; m.ext.int_vars.len()];
        for s in &m.body {
            crate::ir::visit::stmt_int_vars(s, &mut |v| {
                if let Some(n) = named.get_mut(v as usize) {
                    *n = true;
                }
            });
        }
        let int_vars: Vec<&IntVar> = m.ext.int_vars.iter().zip(&named).filter(|(_, &n)| n).map(|(v, _)| v).collect();
        for v in &int_vars {
            if v.len == 0 {
                self.line(format!("static int {} = 0;", v.name));
            } else {
                self.line(format!("static int {}[{}];", v.name, v.len));
            }
        }
        if let Some(g) = &m.ext.geometry {
            self.line("static ShaderOutput shrec_gs_buf[3];");
            self.line("static int shrec_gs_emitted = 0;");
            if let Some(st) = g.strip.as_ref().filter(|st| st.ring_len > 0) {
                self.line(format!("static float4 shrec_ring[{}];", st.ring_len));
            }
        }
        // Registers.
        let mut temps_at = None;
        // Registers are `precise`: every source GPU evaluates each ALU operation on its own and
        // rounds its result. It never fuses a multiply and an add written as two instructions,
        // never reassociates `(a * b) * 0.5` and never folds `x - x` to 0 (NaN for x = inf or
        // NaN); without `precise`, DXC's SPIR-V leaves the driver free to do all three, and
        // lavapipe does (docs/semantics-audit.md, "host evaluation"). `precise` on a variable
        // marks every operation whose result flows into it `NoContraction`. DXC's DXIL ignores
        // `precise` on static globals: `dxc::args` gives DXIL `-Gis` instead. The flow stops at
        // a function call and at a comparison: the prelude's helpers compute into `precise`
        // locals of their own, and compared operands go through `exact_operand`.
        let float4 = "precise float4";
        // declared once the body has named them (below); a geometry shader's entry point and
        // vertex stores name them all
        let io_at = self.out.len();
        if m.ext.geometry.is_some() {
            let mut used = self.used_io.borrow_mut();
            used.extend((0..m.inputs.len() as u32).map(|i| (false, i)));
            used.extend((0..m.outputs.len() as u32).map(|i| (true, i)));
        }
        if m.temps.count > 0 {
            if m.temps.indexable {
                self.line(format!("static {float4} {}[{}];", m.temps.prefix, m.temps.count));
            } else {
                // declared once the body has named them (below)
                temps_at = Some(self.out.len());
            }
        }
        self.line("");
        if let Some(g) = &m.ext.geometry {
            self.line(format!("void shrec_body(inout {}<ShaderOutput> shrec_stream)", stream_type(g)));
        } else {
            self.line("void shrec_body()");
        }
        self.line("{");
        self.indent += 1;
        for v in &int_vars {
            if v.len > 0 {
                self.line(format!("for (int i = 0; i < {}; i++) {}[i] = 0;", v.len, v.name));
            }
        }
        if m.temps.indexable {
            self.line(format!("for (int i = 0; i < {}; i++) {}[i] = 0;", m.temps.count, m.temps.prefix));
        }
        if let Some(st) = m.ext.geometry.as_ref().and_then(|g| g.strip.as_ref()).filter(|st| st.ring_len > 0) {
            self.line(format!("for (int i = 0; i < {}; i++) shrec_ring[i] = 0;", st.ring_len));
        }
        // The XenosRecomp ABI's loads done once per invocation go here (`xenos_abi::hoisted`).
        let hoisted_at = self.out.len();
        self.block(&m.body);
        if let ResourceAbi::XenosRecomp(_) = &m.ext.resource_abi {
            let text = xenos_abi::hoisted(m, &self.xenos_used.borrow());
            self.out.insert_str(hoisted_at, &text);
        }
        self.indent -= 1;
        self.line("}");
        self.line("");
        // Declared in this order: helpers (before the prelude) and temps are inserted at their
        // places, the later position first.
        let helpers: Vec<&str> = self.used_helpers.borrow().iter().copied().collect();
        if let Some(at) = temps_at {
            let names: Vec<String> = self.used_temps.borrow().iter().map(|i| format!("{}{i} = 0", m.temps.prefix)).collect();
            if !names.is_empty() {
                self.out.insert_str(at, &format!("static {float4} {};\n", names.join(", ")));
            }
        }
        let io: String = named_io(m, &self.used_io.borrow()).into_iter().map(|(_, v)| format!("static {float4} {} = 0;\n", v.name)).collect();
        self.out.insert_str(io_at, &io);
        if let ResourceAbi::XenosRecomp(x) = &m.ext.resource_abi {
            self.out.insert_str(declarations_at, &xenos_abi::declarations(m, x, &self.xenos_used.borrow()));
        }
        // Only the helpers the shader calls are defined: DXC parses and generates code for every
        // function of the prelude, used or not, which cost about 2 ms per shader (docs/performance.md).
        let mut defs = String::from("#define SHREC_HELPERS 1\n");
        for h in helpers {
            defs.push_str(&format!("#define SHREC_USE_{h} 1\n"));
        }
        self.out.insert_str(helpers_at, &defs);
        if let Some(g) = &m.ext.geometry {
            let prim = match g.primitive {
                GsPrimitive::Point => "point",
                GsPrimitive::Line => "line",
                GsPrimitive::Triangle => "triangle",
                GsPrimitive::LineAdj => "lineadj",
                GsPrimitive::TriangleAdj => "triangleadj",
            };
            self.line(format!("[maxvertexcount({})]", g.max_vertices));
            let pid = g.strip.as_ref().and_then(|st| st.primitive_id);
            self.line(format!(
                "void {}({prim} ShaderInput input[{}], {}inout {}<ShaderOutput> shrec_stream)",
                self.entry,
                g.primitive.vertices(),
                if pid.is_some() { "uint shrec_primitive_id : SV_PrimitiveID, " } else { "" },
                stream_type(g)
            ));
            self.line("{");
            self.indent += 1;
            for (v, (vtx, field)) in m.inputs.iter().zip(&g.input_sources) {
                self.line(format!("{} = input[{vtx}].{};", v.name, g.vertex_fields[*field as usize].name));
            }
            if let Some(i) = pid {
                self.line(format!("{} = float4(asfloat(shrec_primitive_id), 0, 0, 0);", m.inputs[i as usize].name));
            }
            self.line("shrec_body(shrec_stream);");
            self.indent -= 1;
            self.line("}");
            return;
        }
        let ret = if m.outputs.is_empty() { "void" } else { "ShaderOutput" };
        let arg = if m.inputs.is_empty() { "" } else { "ShaderInput input" };
        if let ResourceAbi::XenosRecomp(_) = &m.ext.resource_abi {
            for a in xenos_abi::entry_attributes(m.stage) {
                self.line(a);
            }
        }
        self.line(format!("{ret} {}({arg})", self.entry));
        self.line("{");
        self.indent += 1;
        let named = named_io(m, &self.used_io.borrow());
        for v in named.iter().filter(|(output, _)| !output).map(|(_, v)| v) {
            match v.semantic {
                Semantic::InstanceId => self.line(format!("{0} = float4((float)input.{0}, 0, 0, 0);", v.name)),
                Semantic::VertexId => self.line(format!("{0} = float4(asfloat(input.{0}), 0, 0, 0);", v.name)),
                Semantic::UsageUint { .. } => self.line(format!("{0} = asfloat(input.{0});", v.name)),
                _ if v.components == 1 => self.line(format!("{0} = float4(input.{0}, 0, 0, 0);", v.name)),
                _ => self.line(format!("{0} = input.{0};", v.name)),
            }
        }
        self.line("shrec_body();");
        if !m.outputs.is_empty() {
            let written: Vec<&IoVar> = named.iter().filter(|(output, _)| *output).map(|(_, v)| *v).collect();
            // an output the body never names is 0, as its register was
            if written.len() == m.outputs.len() {
                self.line("ShaderOutput output;");
            } else {
                self.line("ShaderOutput output = (ShaderOutput)0;");
            }
            for v in written {
                if spirv_only(&v.semantic) {
                    self.line("#ifdef __spirv__");
                }
                if v.components == 1 {
                    self.line(format!("output.{0} = {0}.x;", v.name));
                } else {
                    self.line(format!("output.{0} = {0};", v.name));
                }
                if spirv_only(&v.semantic) {
                    self.line("#endif");
                }
            }
            self.line("return output;");
        }
        self.indent -= 1;
        self.line("}");
    }

    fn io_struct(&mut self, name: &str, vars: &[IoVar]) {
        if vars.is_empty() {
            return;
        }
        self.line(format!("struct {name}"));
        self.line("{");
        self.indent += 1;
        for v in vars {
            let ty = match v.semantic {
                Semantic::InstanceId | Semantic::VertexId => "uint",
                Semantic::UsageUint { .. } => "uint4",
                _ if v.components == 1 => "float",
                _ => "float4",
            };
            let loc = vk_location(&v.semantic).map(|l| format!("[[vk::location({l})]] ")).unwrap_or_default();
            if spirv_only(&v.semantic) {
                self.line("#ifdef __spirv__");
                self.line(format!("[[vk::builtin(\"PointSize\")]] {ty} {} : {};", v.name, semantic_text(&v.semantic)));
                self.line("#endif");
                continue;
            }
            self.line(format!("{loc}{ty} {} : {};", v.name, semantic_text(&v.semantic)));
        }
        self.indent -= 1;
        self.line("};");
        self.line("");
    }

    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { dst, value, saturate } => {
                let full = |w: &Self| {
                    let v = w.expr(value);
                    if *saturate {
                        format!("saturate({v})")
                    } else {
                        v
                    }
                };
                let target = self.reg(&dst.reg);
                if dst.mask & 0xF == 0xF {
                    let v = full(self);
                    self.line(format!("{target} = {v};"));
                } else if !self.is_variable(&dst.reg) && dst.mask.count_ones() == 1 {
                    // a component write of a scalar: `R1.x = R130.y * 2.0;`
                    let l = dst.mask.trailing_zeros() as u8;
                    let mut v = self.lane(value, l);
                    if *saturate {
                        v = format!("saturate({v})");
                    }
                    self.line(format!("{target}.{} = {v};", LANES[l as usize]));
                } else if let (false, Expr::Compose(parts)) = (dst.mask.count_ones() == 1, value) {
                    // lanes composed one by one: `R1.xy = float2(a, b);`
                    let picked: Vec<&Expr> = (0..4).filter(|i| dst.mask >> i & 1 == 1).map(|i| &parts[i]).collect();
                    let mut v = self.composed(&picked);
                    if *saturate {
                        v = format!("saturate({v})");
                    }
                    self.line(format!("{target}.{} = {v};", mask_text(dst.mask)));
                } else if self.is_variable(&dst.reg) && dst.mask.count_ones() == 1 {
                    // One lane of a register variable: a whole-vector select, not `r.x = …`,
                    // which DXC's SPIR-V front end writes through an OpAccessChain (see
                    // `is_variable`).
                    let lanes: Vec<&str> = (0..4).map(|i| if dst.mask >> i & 1 == 1 { "true" } else { "false" }).collect();
                    let v = full(self);
                    self.line(format!("{target} = select(bool4({}), {v}, {target});", lanes.join(", ")));
                } else {
                    let mk = mask_text(dst.mask);
                    let mut v = self.masked(value, dst.mask);
                    if *saturate {
                        v = format!("saturate({v})");
                    }
                    self.line(format!("{target}.{mk} = {v};"));
                }
            }
            Stmt::If { cond, then_body, else_body } => {
                let c = self.cond(cond);
                self.line(format!("[branch] if ({c})"));
                self.line("{");
                self.indent += 1;
                self.block(then_body);
                self.indent -= 1;
                self.line("}");
                if !else_body.is_empty() {
                    self.line("else");
                    self.line("{");
                    self.indent += 1;
                    self.block(else_body);
                    self.indent -= 1;
                    self.line("}");
                }
            }
            Stmt::Loop { body } => {
                self.line("[loop] while (true)");
                self.line("{");
                self.indent += 1;
                self.block(body);
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::Return => self.line("return;"),
            Stmt::Discard(Cond::AnyNegative(e)) => {
                let e = self.exact_operand(e);
                self.line(format!("clip({e});"));
            }
            Stmt::Discard(c) => {
                let c = self.cond(c);
                self.line(format!("if ({c}) discard;"));
            }
            Stmt::SetInt { var, index, value } => {
                let name = &self.m.ext.int_vars[*var as usize].name;
                let v = self.iexpr(value);
                match index {
                    None => self.line(format!("{name} = {v};")),
                    Some(i) => {
                        let i = self.iexpr(i);
                        self.line(format!("{name}[{i}] = {v};"))
                    }
                }
            }
            Stmt::GsStore(slot) => {
                let slot = self.iexpr(slot);
                let fields: Vec<String> = self.m.outputs.iter().map(|v| format!("o.{0} = {0};", v.name)).collect();
                self.line(format!("{{ ShaderOutput o; {} shrec_gs_buf[{slot}] = o; }}", fields.join(" ")));
            }
            Stmt::GsEmitTriangle { invert } => {
                let max = self.m.ext.geometry.as_ref().map_or(0, |g| g.max_vertices);
                let c = self.cond(invert);
                self.line(format!("if (shrec_gs_emitted + 3 <= {max})"));
                self.line("{");
                self.indent += 1;
                self.line(format!("int first = ({c}) ? 1 : 0;"));
                self.line("shrec_stream.Append(shrec_gs_buf[first]);");
                self.line("shrec_stream.Append(shrec_gs_buf[1 - first]);");
                self.line("shrec_stream.Append(shrec_gs_buf[2]);");
                self.line("shrec_stream.RestartStrip();");
                self.line("shrec_gs_emitted += 3;");
                self.indent -= 1;
                self.line("}");
            }
            Stmt::GsEmitVertex => {
                let max = self.m.ext.geometry.as_ref().map_or(0, |g| g.max_vertices);
                let fields: Vec<String> = self.m.outputs.iter().map(|v| format!("o.{0} = {0};", v.name)).collect();
                self.line(format!("if (shrec_gs_emitted < {max})"));
                self.line("{");
                self.indent += 1;
                self.line(format!("ShaderOutput o; {}", fields.join(" ")));
                self.line("shrec_stream.Append(o);");
                self.line("shrec_gs_emitted += 1;");
                self.indent -= 1;
                self.line("}");
            }
            Stmt::GsCutStrip => self.line("shrec_stream.RestartStrip();"),
            Stmt::RingStore { index, mask, value } => {
                let len = self.ring_len();
                let (i, v) = (self.index(index), self.expr(value));
                let mk = mask_text(*mask);
                self.line(format!("{{ int ri = {i}; if (ri >= 0 && ri < {len}) shrec_ring[ri].{mk} = ({v}).{mk}; }}"));
            }
            Stmt::XenosMemExport { address, value, element } => {
                let (a, v) = (self.expr(address), self.expr(value));
                self.line(format!("shrec_xenos_memexport(asuint({a}), {v}, {element}u);"));
            }
            Stmt::RingLoad { dst, index } => {
                let len = self.ring_len();
                let i = self.index(index);
                let target = self.reg(&dst.reg);
                let mk = mask_text(dst.mask);
                if len == 0 {
                    self.line(format!("{target}.{mk} = float4(0, 0, 0, 0).{mk};"));
                } else {
                    // clamp first: both sides of ?: are evaluated
                    self.line(format!(
                        "{{ int ri = {i}; float4 rv = shrec_ring[clamp(ri, 0, {})]; {target}.{mk} = (ri >= 0 && ri < {len}) ? rv.{mk} : float4(0, 0, 0, 0).{mk}; }}",
                        len - 1
                    ));
                }
            }
            Stmt::Comment(text) => {
                for l in text.lines() {
                    self.line(format!("// {l}"));
                }
            }
        }
    }

    fn cond(&self, c: &Cond) -> String {
        let lane_x = |e: &Expr| self.lane_x_of(e, Self::exact_operand);
        match c {
            Cond::Compare(CmpOp::Ne, a, b) => format!("!({} == {})", lane_x(a), lane_x(b)),
            Cond::Compare(op, a, b) => {
                let op = cmp_text(*op);
                format!("{} {op} {}", lane_x(a), lane_x(b))
            }
            Cond::AnyNegative(e) => format!("any(({}) < 0.0)", self.exact_operand(e)),
            Cond::Not(c) => format!("!({})", self.cond(c)),
            Cond::BitSet { value, bit } => format!("((asuint(({}).x) >> {bit}u) & 1u) != 0u", self.expr(value)),
            Cond::IntCmp(op, a, b) => format!("({} {} {})", self.iexpr(a), cmp_text(*op), self.iexpr(b)),
            Cond::And(a, b) => format!("(({}) && ({}))", self.cond(a), self.cond(b)),
            Cond::Or(a, b) => format!("(({}) || ({}))", self.cond(a), self.cond(b)),
        }
    }

    /// The text of a compared float operand: a register read or a literal as it is, anything
    /// computed as a `precise` local, declared by the next `line` (just before the statement
    /// that compares it). `precise` registers mark only the operations whose value flows into
    /// them, and a comparison ends that flow: without the local, `select(x - 1.0 <= 0.0, …)` or
    /// the Xenos alpha test `oC0.w - g_AlphaThreshold < 0` would be left for the driver to
    /// rewrite (tests/integration/host_evaluation.rs).
    fn exact_operand(&self, e: &Expr) -> String {
        let value = self.expr(e);
        if literal_of(e).is_some() || is_plain_read(e) {
            return value;
        }
        let n = self.precise_locals.get();
        self.precise_locals.set(n + 1);
        self.pending_locals.borrow_mut().push(format!("precise float4 shrec_operand{n} = {value};"));
        format!("shrec_operand{n}")
    }

    /// Names prelude helper `name` (recorded: only the helpers a shader calls are defined).
    fn h(&self, name: &'static str) -> &'static str {
        self.used_helpers.borrow_mut().insert(name);
        name
    }

    /// Lane x of `e` as a scalar, `text` writing a computed `e` (a compared operand goes
    /// through [`Self::exact_operand`]).
    fn lane_x_of(&self, e: &Expr, text: fn(&Self, &Expr) -> String) -> String {
        match literal_of(e) {
            Some(v) => float_literal(v[0]),
            None if is_plain_read(e) => self.lane(e, 0),
            None => format!("({}).x", text(self, e)),
        }
    }

    /// Lane `l` of `e` as a scalar expression: a register lane is `R1.y`, a per-lane operator
    /// is written on the scalar lanes of its operands (`R1.y * c[3].x`); anything else is the
    /// vector expression's lane.
    fn lane(&self, e: &Expr, l: u8) -> String {
        let l = l & 3;
        let lane = |a: &Expr| self.lane(a, l);
        match e {
            Expr::Read(src) => {
                let mut t = self.reg(&src.reg);
                if self.is_variable(&src.reg) {
                    t = format!("((float4){t})");
                }
                t = format!("{t}.{}", LANES[src.swizzle[l as usize] as usize & 3]);
                if src.abs {
                    t = format!("abs({t})");
                }
                if src.negate {
                    t = format!("(-{t})");
                }
                t
            }
            Expr::Literal(v) => float_literal(v[l as usize]),
            Expr::Bits(v) => format!("asfloat(0x{:08X}u)", v[l as usize]),
            Expr::Swizzle(a, sw) => self.lane(a, sw[l as usize]),
            Expr::Compose(parts) => self.lane(&parts[l as usize], 0),
            Expr::Unary(op, a) => {
                let f = match op {
                    UnOp::Neg => return format!("(-({}))", lane(a)),
                    UnOp::Rcp => return format!("(1.0 / ({}))", lane(a)),
                    UnOp::Sign => return format!("((float)sign({}))", lane(a)),
                    UnOp::Abs => "abs",
                    UnOp::Rsq => "rsqrt",
                    UnOp::Sqrt => "sqrt",
                    UnOp::Log2 => "log2",
                    UnOp::Exp2 => "exp2",
                    UnOp::Floor => "floor",
                    UnOp::Sin => "sin",
                    UnOp::Cos => "cos",
                    UnOp::Saturate => "saturate",
                    UnOp::Ddx => "ddx",
                    UnOp::Ddy => "ddy",
                    UnOp::Trunc => "trunc",
                    UnOp::Ceil => "ceil",
                    UnOp::RoundEven => "round",
                    _ => return self.vector_lane(e, l),
                };
                format!("{f}({})", lane(a))
            }
            Expr::Binary(BinOp::Cross3, ..) => self.vector_lane(e, l),
            // a dot product is a scalar, the same in every lane
            Expr::Dot(..) => self.dot(e),
            Expr::Binary(op, e_a, e_b) => {
                let (a, b) = (lane(e_a), lane(e_b));
                // the prelude's scalar overloads of the per-lane helpers
                let k = |e: &Expr| literal_of(e).is_some_and(|v| v[l as usize].is_finite() && v[l as usize] != 0.0);
                match op {
                    BinOp::MulLegacy if k(e_b) => format!("{}({a}, {b})", self.h("shrec_mul_legacy_k")),
                    BinOp::MulLegacy if k(e_a) => format!("{}({b}, {a})", self.h("shrec_mul_legacy_k")),
                    BinOp::MulLegacy => format!("{}({a}, {b})", self.h("shrec_mul_legacy")),
                    BinOp::MaxPica => format!("{}({a}, {b})", self.h("shrec_pica_max")),
                    BinOp::MinPica => format!("{}({a}, {b})", self.h("shrec_pica_min")),
                    BinOp::MulPica => format!("{}({a}, {b})", self.h("shrec_pica_mul")),
                    BinOp::Add => format!("({a} + {b})"),
                    BinOp::Sub => format!("({a} - {b})"),
                    BinOp::Mul => format!("({a} * {b})"),
                    BinOp::Div => format!("({a} / {b})"),
                    BinOp::Min => format!("min({a}, {b})"),
                    BinOp::Max => format!("max({a}, {b})"),
                    BinOp::Pow => format!("pow({a}, {b})"),
                    BinOp::Sge => format!("((float)({a} >= {b}))"),
                    BinOp::Slt => format!("((float)({a} < {b}))"),
                    BinOp::Seq => format!("((float)({a} == {b}))"),
                    BinOp::Sne => format!("((float)!({a} == {b}))"),
                    _ => self.vector_lane(e, l),
                }
            }
            Expr::Mad(a, b, c) => format!("({} * {} + {})", lane(a), lane(b), lane(c)),
            Expr::SelectIf(c, a, b) => format!("(({}) ? {} : {})", self.cond(c), lane(a), lane(b)),
            Expr::Select { if_true, if_false, .. } if if_true == if_false => lane(if_true),
            Expr::IntUnary(IntUnOp::Not, a) => format!("asfloat(~{})", uint_text(&lane(a))),
            Expr::IntUnary(IntUnOp::IntToFloat, a) => format!("((float)asint({}))", uint_text(&lane(a))),
            Expr::IntUnary(IntUnOp::UintToFloat, a) => format!("((float){})", uint_text(&lane(a))),
            Expr::IntTernary(op @ (IntTerOp::CndEI | IntTerOp::CndGtI | IntTerOp::CndGeI), a, b, c) => {
                let f = match op {
                    IntTerOp::CndEI => "shrec_cnde_i",
                    IntTerOp::CndGtI => "shrec_cndgt_i",
                    _ => "shrec_cndge_i",
                };
                let f = self.h(f);
                format!("asfloat({f}({}, {}, {}))", uint_text(&lane(a)), uint_text(&lane(b)), uint_text(&lane(c)))
            }
            Expr::IntBinary(op @ (IntBinOp::EqF | IntBinOp::NeF | IntBinOp::GtF | IntBinOp::GeF), a, b) => {
                let (a, b) = (lane(a), lane(b));
                let c = match op {
                    IntBinOp::EqF => format!("{a} == {b}"),
                    IntBinOp::NeF => format!("!({a} == {b})"),
                    IntBinOp::GtF => format!("{a} > {b}"),
                    _ => format!("{a} >= {b}"),
                };
                format!("asfloat(({c}) ? 0xFFFFFFFFu : 0u)")
            }
            Expr::IntBinary(IntBinOp::MulHiI | IntBinOp::MulHiU, ..) => self.vector_lane(e, l),
            Expr::IntBinary(op, a, b) => {
                let (a, b) = (uint_text(&lane(a)), uint_text(&lane(b)));
                let (ia, ib) = (format!("asint({a})"), format!("asint({b})"));
                match op {
                    IntBinOp::Add => format!("asfloat({a} + {b})"),
                    IntBinOp::Sub => format!("asfloat({a} - {b})"),
                    IntBinOp::MulLo => format!("asfloat({a} * {b})"),
                    IntBinOp::And => format!("asfloat({a} & {b})"),
                    IntBinOp::Or => format!("asfloat({a} | {b})"),
                    IntBinOp::Xor => format!("asfloat({a} ^ {b})"),
                    IntBinOp::Shl => format!("asfloat({a} << ({b} & 31u))"),
                    IntBinOp::ShrU => format!("asfloat({a} >> ({b} & 31u))"),
                    IntBinOp::ShrI => format!("asfloat({ia} >> ({b} & 31u))"),
                    IntBinOp::MinI => format!("asfloat(min({ia}, {ib}))"),
                    IntBinOp::MaxI => format!("asfloat(max({ia}, {ib}))"),
                    IntBinOp::MinU => format!("asfloat(min({a}, {b}))"),
                    IntBinOp::MaxU => format!("asfloat(max({a}, {b}))"),
                    _ => {
                        let c = match op {
                            IntBinOp::EqI => format!("{a} == {b}"),
                            IntBinOp::NeI => format!("{a} != {b}"),
                            IntBinOp::GtI => format!("{ia} > {ib}"),
                            IntBinOp::GeI => format!("{ia} >= {ib}"),
                            IntBinOp::GtU => format!("{a} > {b}"),
                            IntBinOp::GeU => format!("{a} >= {b}"),
                            _ => return self.vector_lane(e, l),
                        };
                        format!("asfloat(({c}) ? 0xFFFFFFFFu : 0u)")
                    }
                }
            }
            _ => self.vector_lane(e, l),
        }
    }

    /// The first `n` lanes (1-4) of `e` (a coordinate operand).
    fn lanes(&self, e: &Expr, n: usize) -> String {
        self.sel(e, &[0, 1, 2, 3][..n])
    }

    /// Lanes `mask` of `e`, packed (the value of a partial write).
    fn masked(&self, e: &Expr, mask: u8) -> String {
        let picked: Vec<u8> = (0..4).filter(|i| mask >> i & 1 == 1).collect();
        self.sel(e, &picked)
    }

    /// Lanes `picked` of `e` as a `floatN` (N = their count): a register's swizzle (`R1.zy`),
    /// per-lane operators on their operands' picked lanes (`R1.xy * c[2].zw`), else the vector
    /// expression's lanes.
    fn sel(&self, e: &Expr, picked: &[u8]) -> String {
        let n = picked.len();
        if n == 1 {
            return self.lane(e, picked[0]);
        }
        let letters = |sw: &[u8; 4]| -> String { picked.iter().map(|&l| LANES[sw[l as usize & 3] as usize & 3]).collect() };
        let sel = |a: &Expr| self.sel(a, picked);
        let vector = || {
            let v = self.expr(e);
            if picked == [0, 1, 2, 3] {
                v
            } else {
                format!("({v}).{}", letters(&XYZW))
            }
        };
        match e {
            Expr::Read(src) => {
                let mut t = self.reg(&src.reg);
                if self.is_variable(&src.reg) {
                    t = format!("((float4){t})");
                }
                let picked_letters = letters(&src.swizzle);
                if picked_letters != "xyzw" {
                    t = format!("{t}.{picked_letters}");
                }
                if src.abs {
                    t = format!("abs({t})");
                }
                if src.negate {
                    t = format!("(-{t})");
                }
                t
            }
            Expr::Literal(v) => {
                let vals: Vec<f32> = picked.iter().map(|&l| v[l as usize & 3]).collect();
                if vals.iter().all(|x| x.to_bits() == vals[0].to_bits()) {
                    format!("((float{n}){})", float_literal(vals[0]))
                } else {
                    let p: Vec<String> = vals.iter().map(|&x| float_literal(x)).collect();
                    format!("float{n}({})", p.join(", "))
                }
            }
            Expr::Swizzle(a, sw) => {
                let inner: Vec<u8> = picked.iter().map(|&l| sw[l as usize & 3] & 3).collect();
                self.sel(a, &inner)
            }
            Expr::Compose(parts) => self.composed(&picked.iter().map(|&l| &parts[l as usize & 3]).collect::<Vec<_>>()),
            Expr::Bits(_) => {
                let p: Vec<String> = picked.iter().map(|&l| self.lane(e, l)).collect();
                format!("float{n}({})", p.join(", "))
            }
            Expr::Unary(op, a) => {
                let f = match op {
                    UnOp::Neg => return format!("(-({}))", sel(a)),
                    UnOp::Rcp => return format!("(1.0 / ({}))", sel(a)),
                    UnOp::Sign => return format!("((float{n})sign({}))", sel(a)),
                    UnOp::Abs => "abs",
                    UnOp::Rsq => "rsqrt",
                    UnOp::Sqrt => "sqrt",
                    UnOp::Log2 => "log2",
                    UnOp::Exp2 => "exp2",
                    UnOp::Floor => "floor",
                    UnOp::Sin => "sin",
                    UnOp::Cos => "cos",
                    UnOp::Saturate => "saturate",
                    UnOp::Ddx => "ddx",
                    UnOp::Ddy => "ddy",
                    UnOp::Trunc => "trunc",
                    UnOp::Ceil => "ceil",
                    UnOp::RoundEven => "round",
                    _ => return vector(),
                };
                format!("{f}({})", sel(a))
            }
            Expr::Binary(BinOp::Cross3 | BinOp::MulLegacy | BinOp::MulPica | BinOp::MaxPica | BinOp::MinPica, ..) => vector(),
            Expr::Binary(op, e_a, e_b) => {
                let (a, b) = (sel(e_a), sel(e_b));
                let (sa, sb) = (Self::broadcast_operand(e_a, e_b, a.clone()), Self::broadcast_operand(e_b, e_a, b.clone()));
                match op {
                    BinOp::Add => format!("({sa} + {sb})"),
                    BinOp::Sub => format!("({sa} - {sb})"),
                    BinOp::Mul => format!("({sa} * {sb})"),
                    BinOp::Div => format!("({sa} / {sb})"),
                    BinOp::Min => format!("min({a}, {b})"),
                    BinOp::Max => format!("max({a}, {b})"),
                    BinOp::Pow => format!("pow({a}, {b})"),
                    BinOp::Sge => format!("((float{n})({a} >= {b}))"),
                    BinOp::Slt => format!("((float{n})({a} < {b}))"),
                    BinOp::Seq => format!("((float{n})({a} == {b}))"),
                    BinOp::Sne => format!("((float{n})!({a} == {b}))"),
                    _ => vector(),
                }
            }
            Expr::Mad(a, b, c) => format!("({} * {} + {})", sel(a), sel(b), sel(c)),
            // Both arms the same: the select is that value, whatever the compare gives (NaN too).
            Expr::Select { if_true, if_false, .. } if if_true == if_false => sel(if_true),
            _ => vector(),
        }
    }

    /// An operand of a per-lane arithmetic operator (`lanes` its text), the other operand
    /// giving the vector's width:
    /// a literal with the same value in every lane is written as that scalar (`1.0 - R1`,
    /// HLSL broadcasts it: the same value in every lane), anything else as its lanes.
    fn broadcast_operand(e: &Expr, other: &Expr, lanes: String) -> String {
        let uniform = literal_of(e).filter(|v| v.iter().all(|x| x.to_bits() == v[0].to_bits()));
        match (uniform, literal_of(other)) {
            (Some(v), None) => float_literal(v[0]),
            _ => lanes,
        }
    }

    /// A `floatN` of lane x of each of `parts` (N = their count), adjacent lanes of one
    /// register read as one swizzle: `float4(R1.xyz, c[3].x)`, or `R1.xyz` alone.
    fn composed(&self, parts: &[&Expr]) -> String {
        let mut runs: Vec<(Option<&Src>, String)> = Vec::new();
        for p in parts {
            let read = read_lane(p, 0);
            match (runs.last_mut(), read) {
                (Some((Some(prev), letters)), Some((src, l))) if prev.reg == src.reg && prev.abs == src.abs && prev.negate == src.negate => {
                    letters.push(LANES[l as usize & 3]);
                }
                (_, Some((src, l))) => runs.push((Some(src), LANES[l as usize & 3].to_string())),
                (_, None) => runs.push((None, self.lane(p, 0))),
            }
        }
        let texts: Vec<String> = runs.iter().map(|(src, t)| src.map_or_else(|| t.clone(), |s| self.read_text(s, t))).collect();
        match runs.as_slice() {
            [(Some(_), _)] if parts.len() > 1 => texts[0].clone(),
            _ => format!("float{}({})", parts.len(), texts.join(", ")),
        }
    }

    /// Lanes `letters` of register read `src` (no swizzle for `xyzw`), with its modifiers.
    fn read_text(&self, src: &Src, letters: &str) -> String {
        let mut t = self.reg(&src.reg);
        if self.is_variable(&src.reg) {
            t = format!("((float4){t})");
        }
        if letters != "xyzw" {
            t = format!("{t}.{letters}");
        }
        if src.abs {
            t = format!("abs({t})");
        }
        if src.negate {
            t = format!("(-{t})");
        }
        t
    }

    /// The scalar `dot` of an `Expr::Dot` (its operands' first `n` lanes).
    fn dot(&self, e: &Expr) -> String {
        let Expr::Dot(n, a, b) = e else { unreachable!("dot() is called on Expr::Dot") };
        let n = (*n as usize).clamp(1, 4);
        format!("dot({}, {})", self.lanes(a, n), self.lanes(b, n))
    }

    /// Lane `l` of the vector expression `e`.
    fn vector_lane(&self, e: &Expr, l: u8) -> String {
        format!("({}).{}", self.expr(e), LANES[l as usize & 3])
    }

    fn ring_len(&self) -> u32 {
        self.m.ext.geometry.as_ref().and_then(|g| g.strip.as_ref()).map_or(0, |st| st.ring_len)
    }

    /// Whether `r` is a whole `static float4` register variable (a fixed temp of a
    /// non-indexable file, a stage input or output copy). Such registers are read as the rvalue
    /// `((float4)r)` and written a whole vector at a time (one lane through a select): DXC's
    /// SPIR-V front end turns a one-lane access `r.x` (also `(r.xxxx).x`) on a variable into an
    /// OpAccessChain, and its optimizer then cannot promote the variable to SSA values when the
    /// module declares SPV_KHR_physical_storage_buffer (Xenos' push-constant buffer addresses):
    /// spirv-opt's local access-chain conversion and load/store elimination passes skip modules
    /// with extensions outside their allow-lists, and the variable stays in memory, every read a
    /// load (docs/performance.md, "Xenos SPIR-V size"). The cast changes no value.
    fn is_variable(&self, r: &RegRef) -> bool {
        // Only modules that declare that extension need it (the XenosRecomp ABI); elsewhere a
        // register is read and written lane by lane, `R1.x = R130.y;`, and DXC's optimizer
        // promotes it all the same.
        if !matches!(self.m.ext.resource_abi, ResourceAbi::XenosRecomp(_)) {
            return false;
        }
        match (&r.file, &r.index) {
            (RegFile::Temp, Index::Fixed(_)) => !self.m.temps.indexable,
            (RegFile::Input | RegFile::Output, Index::Fixed(_)) => true,
            _ => false,
        }
    }

    fn reg(&self, r: &RegRef) -> String {
        let m = self.m;
        match (&r.file, &r.index) {
            (RegFile::Temp, Index::Fixed(i)) if !m.temps.indexable => {
                self.used_temps.borrow_mut().insert(*i);
                format!("{}{i}", m.temps.prefix)
            }
            (RegFile::Temp, idx) => format!("{}[{}]", m.temps.prefix, self.index(idx)),
            (RegFile::Input, Index::Fixed(i)) => {
                self.used_io.borrow_mut().insert((false, *i));
                m.inputs[*i as usize].name.clone()
            }
            (RegFile::Output, Index::Fixed(i)) => {
                self.used_io.borrow_mut().insert((true, *i));
                m.outputs[*i as usize].name.clone()
            }
            (RegFile::Const(b), idx) => match &m.ext.resource_abi {
                ResourceAbi::XenosRecomp(x) => self.xenos_const(x, *b, idx),
                ResourceAbi::Bindings => format!("{}[{}]", m.const_buffers[*b as usize].var, self.index(idx)),
            },
            (RegFile::Input | RegFile::Output, Index::Dynamic { .. } | Index::Int(_)) => {
                unreachable!("ir::validate refuses dynamic indices into stage inputs/outputs")
            }
        }
    }

    /// A read of XenosRecomp-ABI constant file `file` (see [`XenosRecompAbi`]): the entry's own
    /// expression at a fixed index, an accessor function at a dynamic one.
    fn xenos_const(&self, x: &XenosRecompAbi, file: u32, idx: &Index) -> String {
        let text = match (file, idx) {
            (XenosRecompAbi::FLOAT_CONSTANTS, Index::Fixed(i)) => xenos_abi::constant(self.m, *i, &mut self.xenos_used.borrow_mut()),
            (_, Index::Fixed(i)) => xenos_abi::state(x, *i, &mut self.xenos_used.borrow_mut()),
            (_, idx) => {
                // the index text first: it may read constants itself
                let i = self.index(idx);
                let mut used = self.xenos_used.borrow_mut();
                let f = if file == XenosRecompAbi::FLOAT_CONSTANTS {
                    used.dynamic_constant = true;
                    "shrec_xenos_c"
                } else {
                    used.dynamic_state = true;
                    "shrec_xenos_state"
                };
                format!("{f}({i})")
            }
        };
        format!("({text})")
    }

    /// The texture expression of `m.textures[tex]`: under the XenosRecomp ABI its heap indexed
    /// by the local `shrec_body` loads once (`xenos_abi::hoisted`), else `tex_var`.
    fn tex_var(&self, tex: u32) -> String {
        match self.m.ext.resource_abi {
            ResourceAbi::XenosRecomp(_) => format!("{}[shrec_ti{tex}]", xenos_abi::split_heap(&self.m.textures[tex as usize].tex_var).0),
            ResourceAbi::Bindings => self.m.textures[tex as usize].tex_var.clone(),
        }
    }

    fn smp_var(&self, tex: u32) -> String {
        match self.m.ext.resource_abi {
            ResourceAbi::XenosRecomp(_) => format!("{}[shrec_si{tex}]", xenos_abi::split_heap(&self.m.textures[tex as usize].smp_var).0),
            ResourceAbi::Bindings => self.m.textures[tex as usize].smp_var.clone(),
        }
    }

    fn index(&self, idx: &Index) -> String {
        match idx {
            Index::Fixed(i) => i.to_string(),
            Index::Int(e) => self.iexpr(e),
            Index::Dynamic { base, value, conv } => {
                let f = match conv {
                    IndexConv::RoundHalfUp => "shrec_index_round_half_up",
                    IndexConv::Floor => "shrec_index_floor",
                    IndexConv::Trunc => "shrec_index_trunc",
                };
                let f = self.h(f);
                let v = self.expr(value);
                if *base == 0 {
                    format!("{f}(({v}).x)")
                } else {
                    format!("{f}(({v}).x) + ({base})")
                }
            }
        }
    }

    fn iexpr(&self, e: &IExpr) -> String {
        match e {
            IExpr::Const(c) if *c == i32::MIN => "(int)0x80000000".into(),
            IExpr::Const(c) => format!("{c}"),
            IExpr::Var(v) => self.m.ext.int_vars[*v as usize].name.clone(),
            IExpr::Elem(v, i) => format!("{}[{}]", self.m.ext.int_vars[*v as usize].name, self.iexpr(i)),
            IExpr::Add(a, b) => format!("({} + {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Sub(a, b) => format!("({} - {})", self.iexpr(a), self.iexpr(b)),
            IExpr::And(a, b) => format!("({} & {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Min(a, b) => format!("min({}, {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Select(c, a, b) => format!("(({}) ? {} : {})", self.cond(c), self.iexpr(a), self.iexpr(b)),
            IExpr::TruncX86(x) => format!("{}(({}).x)", self.h("shrec_f2i_x86"), self.expr(x)),
            IExpr::Uniform { buffer, reg, lane } => {
                format!("(int){}[{reg}].{}", self.m.ext.uint_buffers[*buffer as usize].var, LANES[*lane as usize & 3])
            }
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Read(src) => {
                let mut t = self.reg(&src.reg);
                if self.is_variable(&src.reg) {
                    t = format!("((float4){t})");
                }
                if src.swizzle != XYZW {
                    t = format!("{t}.{}", swizzle_text(&src.swizzle));
                }
                if src.abs {
                    t = format!("abs({t})");
                }
                if src.negate {
                    t = format!("(-{t})");
                }
                t
            }
            Expr::Literal(v) => literal_text(v),
            Expr::Swizzle(..) | Expr::Unary(UnOp::Neg | UnOp::Abs, _) if literal_of(e).is_some() => literal_text(&literal_of(e).unwrap_or_default()),
            // a swizzle of a register or of per-lane operators picks their lanes (`R1.yx`,
            // `R1.yx + c[0].zw`), of anything else the vector's (`(dot4).xxxx`)
            Expr::Swizzle(a, s) => self.sel(a, s),
            Expr::Compose(parts) => self.composed(&parts.iter().collect::<Vec<_>>()),
            Expr::Unary(op, a) => {
                let a = self.expr(a);
                match op {
                    UnOp::Neg => format!("(-({a}))"),
                    UnOp::Abs => format!("abs({a})"),
                    UnOp::Rcp => format!("(1.0 / ({a}))"),
                    UnOp::Rsq => format!("rsqrt({a})"),
                    UnOp::Sqrt => format!("sqrt({a})"),
                    UnOp::Log2 => format!("log2({a})"),
                    UnOp::Exp2 => format!("exp2({a})"),
                    UnOp::Fract => format!("{}({a})", self.h("shrec_frac")),
                    UnOp::Floor => format!("floor({a})"),
                    UnOp::Sin => format!("sin({a})"),
                    UnOp::Cos => format!("cos({a})"),
                    UnOp::Saturate => format!("saturate({a})"),
                    UnOp::Sign => format!("((float4)sign({a}))"),
                    UnOp::Ddx => format!("ddx({a})"),
                    UnOp::Ddy => format!("ddy({a})"),
                    UnOp::Normalize3 => format!("float4(normalize(({a}).xyz), 0.0)"),
                    UnOp::Trunc => format!("trunc({a})"),
                    UnOp::RcpClampMax => format!("{}({a})", self.h("shrec_rcp_clamp_max")),
                    UnOp::RcpClampZero => format!("{}({a})", self.h("shrec_rcp_clamp_zero")),
                    UnOp::RsqExactOne => format!("{}({a})", self.h("shrec_rsq_exact_one")),
                    UnOp::RsqClampMax => format!("{}({a})", self.h("shrec_rsq_clamp_max")),
                    UnOp::RsqClampZero => format!("{}({a})", self.h("shrec_rsq_clamp_zero")),
                    UnOp::Log2ExactOne => format!("{}({a})", self.h("shrec_log2_exact_one")),
                    UnOp::Log2ClampMax => format!("{}({a})", self.h("shrec_log2_clamp_max")),
                    UnOp::Ceil => format!("ceil({a})"),
                    UnOp::RoundEven => format!("round({a})"),
                    UnOp::RcpClamped => format!("{}({a})", self.h("shrec_rcp_clamped")),
                    UnOp::RcpFF => format!("{}({a})", self.h("shrec_rcp_ff")),
                    UnOp::RsqClamped => format!("{}({a})", self.h("shrec_rsq_clamped")),
                    UnOp::RsqFF => format!("{}({a})", self.h("shrec_rsq_ff")),
                    UnOp::Log2Clamped => format!("{}({a})", self.h("shrec_log2_clamped")),
                }
            }
            Expr::Binary(op, e_a, e_b) => {
                let (a, b) = (self.expr(e_a), self.expr(e_b));
                let (sa, sb) = (Self::broadcast_operand(e_a, e_b, a.clone()), Self::broadcast_operand(e_b, e_a, b.clone()));
                match op {
                    BinOp::Add => format!("({sa} + {sb})"),
                    BinOp::Sub => format!("({sa} - {sb})"),
                    BinOp::Mul => format!("({sa} * {sb})"),
                    BinOp::Div => format!("({sa} / {sb})"),
                    // 0 × x = +0 needs one test when the other factor is a literal whose
                    // lanes are all finite and non-zero (its product with any x is 0 only for
                    // x = ±0, an inf / NaN x stays inf / NaN): shrec_mul_legacy_k
                    BinOp::MulLegacy if literal_of(e_b).is_some_and(|v| v.iter().all(|x| x.is_finite() && *x != 0.0)) => {
                        format!("{}({a}, {b})", self.h("shrec_mul_legacy_k"))
                    }
                    BinOp::MulLegacy if literal_of(e_a).is_some_and(|v| v.iter().all(|x| x.is_finite() && *x != 0.0)) => {
                        format!("{}({b}, {a})", self.h("shrec_mul_legacy_k"))
                    }
                    BinOp::MulLegacy => format!("{}({a}, {b})", self.h("shrec_mul_legacy")),
                    BinOp::Min => format!("min({a}, {b})"),
                    BinOp::Max => format!("max({a}, {b})"),
                    BinOp::Pow => format!("pow({a}, {b})"),
                    BinOp::Sge => format!("((float4)({a} >= {b}))"),
                    BinOp::Slt => format!("((float4)({a} < {b}))"),
                    BinOp::Seq => format!("((float4)({a} == {b}))"),
                    BinOp::Sne => format!("((float4)!({a} == {b}))"),
                    BinOp::Cross3 => format!("float4(cross(({a}).xyz, ({b}).xyz), 0.0)"),
                    BinOp::MulPica => format!("{}({a}, {b})", self.h("shrec_pica_mul")),
                    BinOp::MaxPica => format!("{}({a}, {b})", self.h("shrec_pica_max")),
                    BinOp::MinPica => format!("{}({a}, {b})", self.h("shrec_pica_min")),
                }
            }
            Expr::Dot(..) => format!("((float4){})", self.dot(e)),
            // Both arms the same: the select is that value, whatever the compare gives (NaN too).
            Expr::Select { if_true, if_false, .. } if if_true == if_false => self.expr(if_true),
            Expr::Select { cmp: CmpOp::Ne, a, b, if_true, if_false } => {
                format!("select({} == {}, {}, {})", self.exact_operand(a), self.exact_operand(b), self.expr(if_false), self.expr(if_true))
            }
            Expr::Select { cmp, a, b, if_true, if_false } => {
                let op = cmp_text(*cmp);
                format!("select({} {op} {}, {}, {})", self.exact_operand(a), self.exact_operand(b), self.expr(if_true), self.expr(if_false))
            }
            Expr::DotPica(n, a, b) => {
                let f = self.h(["shrec_pica_dot2", "shrec_pica_dot3", "shrec_pica_dot4"][(*n as usize).clamp(2, 4) - 2]);
                format!("{f}({}, {})", self.expr(a), self.expr(b))
            }
            Expr::SelectIf(c, a, b) => format!("(({}) ? {} : {})", self.cond(c), self.expr(a), self.expr(b)),
            Expr::Mad(a, b, c) => format!("({} * {} + {})", self.expr(a), self.expr(b), self.expr(c)),
            Expr::Sample { tex, coord, mode, offset } => {
                let t = &self.m.textures[*tex as usize];
                let c = self.lanes(coord, t.dim.coord_lanes());
                let o = offset_operand(t.dim, offset);
                match mode {
                    SampleMode::Bias(b) if *b == 0.0 => format!("{}.Sample({}, {c}{o})", self.tex_var(*tex), self.smp_var(*tex)),
                    SampleMode::Bias(b) => format!("{}.SampleBias({}, {c}, {}{o})", self.tex_var(*tex), self.smp_var(*tex), float_literal(*b)),
                    // `float(...)`: DXC (compushady-lrtu 0.18) emits an invalid vector Lod operand
                    // ("Expected Image Operand Lod to be float scalar") for a swizzle of a
                    // swizzle such as `((va0).wwww).x`; the cast makes it a plain scalar.
                    SampleMode::Lod(l) => format!("{}.SampleLevel({}, {c}, float({}){o})", self.tex_var(*tex), self.smp_var(*tex), self.lane(l, 0)),
                    SampleMode::BiasExpr(b) => format!("{}.SampleBias({}, {c}, {}{o})", self.tex_var(*tex), self.smp_var(*tex), self.lane(b, 0)),
                    SampleMode::Grad(dx, dy) => {
                        // gradients have the texel lanes (no slice)
                        let n = t.dim.texel_lanes();
                        format!("{}.SampleGrad({}, {c}, {}, {}{o})", self.tex_var(*tex), self.smp_var(*tex), self.lanes(dx, n), self.lanes(dy, n))
                    }
                }
            }
            Expr::SampleCmp { tex, coord, reference, level_zero, offset } => {
                let t = &self.m.textures[*tex as usize];
                let c = format!("({}).{}", self.expr(coord), coord_lanes(t.dim));
                let o = offset_operand(t.dim, offset);
                let f = if *level_zero { "SampleCmpLevelZero" } else { "SampleCmp" };
                // `float(...)`: a scalar reference operand, as for SampleLevel's Lod
                format!("((float4){}.{f}({}, {c}, float(({}).x){o}))", self.tex_var(*tex), self.smp_var(*tex), self.expr(reference))
            }
            Expr::Gather { tex, coord, offset } => {
                let t = &self.m.textures[*tex as usize];
                let c = format!("({}).{}", self.expr(coord), coord_lanes(t.dim));
                let o = offset_operand(t.dim, offset);
                format!("{}.GatherRed({}, {c}{o})", self.tex_var(*tex), self.smp_var(*tex))
            }
            Expr::QueryLod { tex, coord } => {
                // the LOD of an array texture depends on its texel lanes only
                let t = &self.m.textures[*tex as usize];
                let lanes = if t.dim.is_array() { &"xyz"[..t.dim.texel_lanes()] } else { coord_lanes(t.dim) };
                format!("((float4){}.CalculateLevelOfDetailUnclamped({}, ({}).{lanes}))", self.tex_var(*tex), self.smp_var(*tex), self.expr(coord))
            }
            Expr::TexSize { tex } => format!("{}({})", self.h("shrec_tex_size"), self.tex_var(*tex)),
            Expr::Load { tex, coord, lod } => {
                // `Load(intN(coordinates, level))`: the integer lanes are the operands' bit
                // patterns (ir::Expr::Load); validate keeps cubes out
                let t = &self.m.textures[*tex as usize];
                let n = t.dim.coord_lanes();
                format!(
                    "{}.Load(int{}(asint(({}).{}), asint(({}).x)))",
                    self.tex_var(*tex),
                    n + 1,
                    self.expr(coord),
                    coord_lanes(t.dim),
                    self.expr(lod)
                )
            }
            Expr::TexInfo { tex, lod } => {
                format!("{}({}, asuint(({}).x))", self.h("shrec_tex_info"), self.tex_var(*tex), self.expr(lod))
            }
            Expr::Bits(v) if v.iter().all(|&b| b == v[0]) => format!("((float4)asfloat(0x{:08X}u))", v[0]),
            Expr::Bits(v) => format!("asfloat(uint4(0x{:08X}u, 0x{:08X}u, 0x{:08X}u, 0x{:08X}u))", v[0], v[1], v[2], v[3]),
            Expr::IntUnary(op, a) => {
                let a = format!("asuint({})", self.expr(a));
                match op {
                    IntUnOp::Not => format!("asfloat(~{a})"),
                    IntUnOp::FloatToInt => format!("asfloat({}(asfloat({a})))", self.h("shrec_f2i")),
                    IntUnOp::FloatToUint => format!("asfloat({}(asfloat({a})))", self.h("shrec_f2u")),
                    IntUnOp::IntToFloat => format!("((float4)(int4){a})"),
                    IntUnOp::UintToFloat => format!("((float4){a})"),
                }
            }
            Expr::IntBinary(op, a, b) => {
                let (a, b) = (format!("asuint({})", self.expr(a)), format!("asuint({})", self.expr(b)));
                let (ia, ib) = (format!("asint({a})"), format!("asint({b})"));
                let mask = |c: String| format!("asfloat(select({c}, (uint4)0xFFFFFFFFu, (uint4)0u))");
                match op {
                    IntBinOp::Add => format!("asfloat({a} + {b})"),
                    IntBinOp::Sub => format!("asfloat({a} - {b})"),
                    IntBinOp::MulLo => format!("asfloat({a} * {b})"),
                    IntBinOp::MulHiI => format!("asfloat({}({ia}, {ib}))", self.h("shrec_imulhi")),
                    IntBinOp::MulHiU => format!("asfloat({}({a}, {b}))", self.h("shrec_umulhi")),
                    IntBinOp::And => format!("asfloat({a} & {b})"),
                    IntBinOp::Or => format!("asfloat({a} | {b})"),
                    IntBinOp::Xor => format!("asfloat({a} ^ {b})"),
                    IntBinOp::Shl => format!("asfloat({a} << ({b} & 31u))"),
                    IntBinOp::ShrU => format!("asfloat({a} >> ({b} & 31u))"),
                    IntBinOp::ShrI => format!("asfloat({ia} >> ({b} & 31u))"),
                    IntBinOp::MinI => format!("asfloat(min({ia}, {ib}))"),
                    IntBinOp::MaxI => format!("asfloat(max({ia}, {ib}))"),
                    IntBinOp::MinU => format!("asfloat(min({a}, {b}))"),
                    IntBinOp::MaxU => format!("asfloat(max({a}, {b}))"),
                    IntBinOp::EqI => mask(format!("{a} == {b}")),
                    IntBinOp::NeI => mask(format!("{a} != {b}")),
                    IntBinOp::GtI => mask(format!("{ia} > {ib}")),
                    IntBinOp::GeI => mask(format!("{ia} >= {ib}")),
                    IntBinOp::GtU => mask(format!("{a} > {b}")),
                    IntBinOp::GeU => mask(format!("{a} >= {b}")),
                    IntBinOp::EqF => mask(format!("asfloat({a}) == asfloat({b})")),
                    IntBinOp::NeF => mask(format!("!(asfloat({a}) == asfloat({b}))")),
                    IntBinOp::GtF => mask(format!("asfloat({a}) > asfloat({b})")),
                    IntBinOp::GeF => mask(format!("asfloat({a}) >= asfloat({b})")),
                }
            }
            Expr::IntTernary(op, a, b, c) => {
                let (a, b, c) = (self.expr(a), self.expr(b), self.expr(c));
                let f = match op {
                    IntTerOp::BfeU => "shrec_bfe_u",
                    IntTerOp::BfeI => "shrec_bfe_i",
                    IntTerOp::Bfi => "shrec_bfi",
                    IntTerOp::CndEI => "shrec_cnde_i",
                    IntTerOp::CndGtI => "shrec_cndgt_i",
                    IntTerOp::CndGeI => "shrec_cndge_i",
                };
                let f = self.h(f);
                format!("asfloat({f}(asuint({a}), asuint({b}), asuint({c})))")
            }
        }
    }
}

/// The register read and its lane that lane `l` of `e` is, when `e` is a (swizzled) read.
fn read_lane(e: &Expr, l: u8) -> Option<(&Src, u8)> {
    match e {
        Expr::Read(src) => Some((src, src.swizzle[l as usize & 3])),
        Expr::Swizzle(a, sw) => read_lane(a, sw[l as usize & 3]),
        _ => None,
    }
}

/// The inputs, then the outputs, of `m` that `used` names (`true` for an output), in
/// declaration order.
fn named_io<'m>(m: &'m Module, used: &std::collections::BTreeSet<(bool, u32)>) -> Vec<(bool, &'m IoVar)> {
    let inputs = m.inputs.iter().enumerate().map(|(i, v)| (false, i, v));
    let outputs = m.outputs.iter().enumerate().map(|(i, v)| (true, i, v));
    inputs.chain(outputs).filter(|(o, i, _)| used.contains(&(*o, *i as u32))).map(|(o, _, v)| (o, v)).collect()
}

/// HLSL stream object type of a geometry shader (PICA: triangle lists).
fn stream_type(g: &GeometryInfo) -> &'static str {
    match g.strip.as_ref().map(|st| st.output) {
        Some(GsOutput::Points) => "PointStream",
        Some(GsOutput::LineStrip) => "LineStream",
        _ => "TriangleStream",
    }
}

/// The coordinate lanes a sample of a `dim` texture reads (`x` … `xyzw`).
fn coord_lanes(dim: TexDim) -> &'static str {
    &"xyzw"[..dim.coord_lanes()]
}

/// HLSL's constant texel-offset operand (`, int2(1, -2)`), empty when all zero; it has the
/// texture's texel lanes (an array's slice has none).
fn offset_operand(dim: TexDim, offset: &[i8; 3]) -> String {
    if *offset == [0, 0, 0] {
        return String::new();
    }
    let n = dim.texel_lanes();
    let v: Vec<String> = offset[..n].iter().map(|o| o.to_string()).collect();
    format!(", int{n}({})", v.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_hlsl() {
        assert_eq!(float_literal(1.0), "1.0");
        assert_eq!(float_literal(0.125), "0.125");
        assert_eq!(float_literal(f32::INFINITY), "asfloat(0x7F800000u)");
        assert_eq!(float_literal(1e-40), "1e-40");
    }

    #[test]
    fn masks_and_swizzles() {
        assert_eq!(mask_text(0b0110), "yz");
        assert_eq!(swizzle_text(&[3, 3, 0, 1]), "wwxy");
    }
}

#[cfg(test)]
mod mask_line_tests {
    use super::*;

    #[test]
    fn the_declared_mask_reads_back_and_bad_lines_are_named() {
        let hlsl = with_spec_constants_mask("float4 main() : SV_Target { return 0; }".into(), 0x13);
        assert!(hlsl.ends_with("}\n// shrec: spec-constants-mask = 0x13\n"), "{hlsl}");
        assert_eq!(declared_spec_constants_mask(&hlsl), Ok(Some(0x13)));
        assert_eq!(with_spec_constants_mask("x\n".into(), 0), "x\n");
        assert_eq!(declared_spec_constants_mask("// a comment\nx"), Ok(None));
        assert_eq!(declared_spec_constants_mask("  //shrec: spec-constants-mask = 5\n"), Ok(Some(5)));
        assert!(declared_spec_constants_mask("\n// shrec: spec-constants-mask = 0xZ\n").unwrap_err().starts_with("line 2:"));
        assert!(declared_spec_constants_mask("// shrec: spec-constant-mask = 1\n").unwrap_err().contains("unknown"));
        let two = "// shrec: spec-constants-mask = 1\n// shrec: spec-constants-mask = 2\n";
        assert!(declared_spec_constants_mask(two).unwrap_err().contains("contradicts line 1"));
    }
}
