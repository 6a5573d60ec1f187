//! IR → HLSL (Shader Model 6.0, HLSL 2021; 6.7 / 6.8 for a shader with a depth compare at an
//! explicit LOD, bias or gradients, declared by a [`SHADER_MODEL_LINE`]). The only HLSL writer.
//!
//! Shape of every generated shader:
//! - `#include "shader_common.h"` (resolved by DXC's include handler, see [`crate::dxc`]);
//! - resources with explicit D3D registers *and* Vulkan bindings (`[[vk::binding]]`), so both targets
//!   bind exactly as `shader_common.h` documents;
//! - every register the program names as a `static precise float4` at global scope (evaluated
//!   as written, see `Writer::module`), the program in `shrec_body()` (so that the IR's
//!   `Return` is a plain `return`), and a `main` that copies the stage inputs it reads in, runs
//!   the body and copies the outputs out (an output the program never writes is 0).
//!
//! Submodules by what they print: `module` the declarations and the entry point, `stmt`
//! statements and conditions, `expr` whole-vector and integer expressions, `lanes` values read
//! lane by lane, `regs` register / constant / texture names, `text` the small pieces (literals,
//! swizzles, operator tables), `xenos_abi` the XenosRecomp ABI's declarations.

use crate::ir::*;

mod compare;
pub mod compare_placeholder;
mod expr;
mod lanes;
mod module;
mod regs;
mod stmt;
mod text;
mod xenos_abi;
pub use text::STREAM_OUT_SEMANTIC;

/// Name of the prelude file generated shaders include.
pub const PRELUDE_NAME: &str = "shader_common.h";

/// The prelude's text (also written next to generated caches for consumers).
pub const PRELUDE: &str = include_str!("../../shader_common.h");

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

/// How an HLSL text declares the shader model its profile needs: a line
/// `// shrec: shader-model = 6_8` (a profile suffix). The writer ends the text of a shader that
/// needs more than 6.0 with it (after the code, as the mask line), so DXC, `--hlsl-dir`'s
/// `dxc.sh` and an `--override-dir` replacement compile it with that profile; without the line a
/// shader compiles as 6.0.
pub const SHADER_MODEL_LINE: &str = "// shrec: shader-model = ";

/// The `// shrec: name = value` directives of an HLSL text with their line numbers; `Err` names
/// the line of one that cannot be read or whose name is not known.
fn directives(hlsl: &str) -> Result<Vec<(usize, &str, &str)>, String> {
    const KNOWN: [&str; 3] = ["spec-constants-mask", "shader-model", "xfb"];
    let mut out = Vec::new();
    for (i, line) in hlsl.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("//").map(str::trim_start).and_then(|l| l.strip_prefix("shrec:")) else {
            continue;
        };
        let line_no = i + 1;
        let Some((name, value)) = rest.split_once('=') else {
            return Err(format!("line {line_no}: a `// shrec:` directive needs `name = value`"));
        };
        let name = name.trim();
        if !KNOWN.contains(&name) {
            return Err(format!("line {line_no}: unknown `// shrec:` directive {name:?} (known: {})", KNOWN.join(", ")));
        }
        out.push((line_no, name, value.trim()));
    }
    Ok(out)
}

/// The mask an HLSL text declares (see [`SPEC_CONSTANTS_MASK_LINE`]); `Err` names the line of a
/// `// shrec:` directive that cannot be read, or of a second declaration that disagrees.
pub fn declared_spec_constants_mask(hlsl: &str) -> Result<Option<u32>, String> {
    let mut found: Option<(usize, u32)> = None;
    for (line_no, _, value) in directives(hlsl)?.into_iter().filter(|d| d.1 == "spec-constants-mask") {
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

/// The shader model an HLSL text declares (see [`SHADER_MODEL_LINE`]), 6.0 when it declares
/// none; `Err` names the line of a directive that cannot be read or that contradicts an earlier one.
pub fn declared_shader_model(hlsl: &str) -> Result<ShaderModel, String> {
    let mut found: Option<(usize, ShaderModel)> = None;
    for (line_no, _, value) in directives(hlsl)?.into_iter().filter(|d| d.1 == "shader-model") {
        let model = ShaderModel::from_suffix(value).ok_or_else(|| format!("line {line_no}: shader-model {value:?} is not one of 6_0, 6_7, 6_8"))?;
        match found {
            Some((first, m)) if m != model => {
                return Err(format!("line {line_no}: shader-model {} contradicts line {first} ({})", model.suffix(), m.suffix()));
            }
            _ => found = Some((line_no, model)),
        }
    }
    Ok(found.map_or(ShaderModel::Sm6_0, |(_, m)| m))
}

/// How an HLSL text declares a stream-out output for the SPIR-V target: one line
/// `// shrec: xfb = location L buffer B offset O stride S` per output (`O`, `S` in bytes). DXC
/// cannot write transform-feedback decorations from HLSL, so after compiling to SPIR-V
/// `dxc::xfb` adds them to the output variable at location `L` from these lines (the writer
/// ends the text of a module with [`StreamOut`] with them).
pub const XFB_LINE: &str = "// shrec: xfb = ";

/// One `xfb` directive (see [`XFB_LINE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XfbDecl {
    pub location: u32,
    pub buffer: u32,
    /// Bytes from the start of the vertex record.
    pub offset: u32,
    /// Bytes per vertex record of `buffer`.
    pub stride: u32,
}

/// The stream-out outputs an HLSL text declares (see [`XFB_LINE`]), in line order; `Err` names
/// the line of a directive that cannot be read.
pub fn declared_xfb(hlsl: &str) -> Result<Vec<XfbDecl>, String> {
    let mut out = Vec::new();
    for (line_no, _, value) in directives(hlsl)?.into_iter().filter(|d| d.1 == "xfb") {
        let words: Vec<&str> = value.split_whitespace().collect();
        let field = |name: &str| -> Result<u32, String> {
            let at = words.iter().position(|w| *w == name).ok_or_else(|| format!("line {line_no}: xfb directive without `{name}`"))?;
            words.get(at + 1).and_then(|v| v.parse::<u32>().ok()).ok_or_else(|| format!("line {line_no}: xfb `{name}` is not followed by a number"))
        };
        let d = XfbDecl { location: field("location")?, buffer: field("buffer")?, offset: field("offset")?, stride: field("stride")? };
        if words.len() != 8 {
            return Err(format!("line {line_no}: an xfb directive is `location L buffer B offset O stride S`"));
        }
        if d.buffer >= 4 || !d.offset.is_multiple_of(4) || !d.stride.is_multiple_of(4) || d.offset >= d.stride {
            return Err(format!(
                "line {line_no}: xfb buffer {} offset {} stride {} (buffers 0-3, offsets and strides multiples of 4, offset inside the stride)",
                d.buffer, d.offset, d.stride
            ));
        }
        out.push(d);
    }
    Ok(out)
}

/// The `xfb` directives of a module's stream-out outputs (see [`XFB_LINE`]).
fn xfb_lines(m: &Module) -> String {
    let mut out = String::new();
    let Some(so) = &m.ext.stream_out else { return out };
    for e in &so.entries {
        if let Some(Semantic::StreamOut { location, .. }) = m.outputs.get(e.output as usize).map(|v| &v.semantic) {
            out.push_str(&format!(
                "{XFB_LINE}location {location} buffer {} offset {} stride {}\n",
                e.buffer,
                e.offset * 4,
                so.strides[e.buffer as usize]
            ));
        }
    }
    out
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
        shader_model: Default::default(),
        compare_placeholders: Default::default(),
    };
    w.module();
    let model = w.shader_model.get();
    if model != ShaderModel::Sm6_0 {
        w.out.push_str(&format!("{SHADER_MODEL_LINE}{}\n", model.suffix()));
    }
    w.out.push_str(&xfb_lines(m));
    w.out
}

struct Writer<'a> {
    m: &'a Module,
    /// Name of the shader function.
    entry: &'a str,
    out: String,
    indent: usize,
    /// The fixed-index temps the text names so far: only those are declared (a GX2 shader
    /// has 194 temps, most programs use a handful).
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
    /// The highest shader model an expression written so far needs ([`ShaderModel`]).
    shader_model: std::cell::Cell<ShaderModel>,
    /// The depth-compare macros the text calls (`compare::compare_macro`): only those are defined.
    compare_placeholders: std::cell::RefCell<std::collections::BTreeSet<(compare::CompareKind, &'static str, bool)>>,
}

impl Writer<'_> {
    /// Writes one line, after the `precise` locals its text names (see `exact_operand`).
    pub(super) fn line(&mut self, text: impl AsRef<str>) {
        let locals = std::mem::take(&mut *self.pending_locals.borrow_mut());
        for l in locals.iter().map(String::as_str).chain([text.as_ref()]) {
            for _ in 0..self.indent {
                self.out.push_str("    ");
            }
            self.out.push_str(l);
            self.out.push('\n');
        }
    }

    /// Names prelude helper `name` (recorded: only the helpers a shader calls are defined).
    pub(super) fn h(&self, name: &'static str) -> &'static str {
        self.used_helpers.borrow_mut().insert(name);
        name
    }

    /// The D3D9 legacy multiply of `a` and `b` (texts of `e_a`, `e_b`): the prelude's
    /// `SHREC_MUL_LEGACY` / `_K` expression when the operands may be repeated, else its
    /// function. The expression keeps a long block of multiplies from compiling in quadratic
    /// time (shader_common.h says why); both forms compute the same value. `k_b` / `k_a`: that
    /// operand is a literal whose lanes are all finite and non-zero.
    pub(super) fn mul_legacy(&self, (e_a, a): (&Expr, &str), (e_b, b): (&Expr, &str), k_a: bool, k_b: bool) -> String {
        let (macro_form, (x, y), function) = match (k_b, k_a) {
            (true, _) => ("SHREC_MUL_LEGACY_K", (a, b), "shrec_mul_legacy_k"),
            (false, true) => ("SHREC_MUL_LEGACY_K", (b, a), "shrec_mul_legacy_k"),
            (false, false) => ("SHREC_MUL_LEGACY", (a, b), "shrec_mul_legacy"),
        };
        // the `_K` form repeats only its first operand
        let repeated_ok = match (k_b, k_a) {
            (true, _) => text::is_repeatable(e_a),
            (false, true) => text::is_repeatable(e_b),
            (false, false) => text::is_repeatable(e_a) && text::is_repeatable(e_b),
        };
        if repeated_ok {
            format!("{macro_form}({x}, {y})")
        } else {
            format!("{}({x}, {y})", self.h(function))
        }
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

    #[test]
    fn the_declared_shader_model_reads_back() {
        assert_eq!(declared_shader_model("x\n"), Ok(ShaderModel::Sm6_0));
        let both = "// shrec: spec-constants-mask = 0x1\n// shrec: shader-model = 6_8\n";
        assert_eq!(declared_shader_model(both), Ok(ShaderModel::Sm6_8));
        assert_eq!(declared_spec_constants_mask(both), Ok(Some(1)));
        assert!(declared_shader_model("\n// shrec: shader-model = 6_5\n").unwrap_err().starts_with("line 2:"));
        assert!(declared_shader_model("// shrec: shader-model = 6_7\n// shrec: shader-model = 6_8\n").unwrap_err().contains("contradicts line 1"));
    }
}
