//! Every float operation shrec's SPIR-V asks for is evaluated as written: each arithmetic
//! instruction carries `NoContraction`, so a driver may not fuse (`a × b + c` → fma),
//! reassociate (`(a × b) × c` → `a × (b × c)`) or fold (`x + -x` → 0) it. The source GPUs
//! evaluate each ALU operation on its own with IEEE inf / NaN; lavapipe did all three rewrites
//! to shrec's output before the registers became `precise` (docs/semantics-audit.md, "All
//! families: host evaluation").
//!
//! `precise` on a variable marks only the operations of expressions assigned to it, not the
//! body of a function those expressions call, so the prelude's helpers compute into `precise`
//! locals of their own. Two checks: the SPIR-V of every corpus shader, and a module that calls
//! every float helper of shader_common.h (found by their signatures, so a new helper is
//! checked without editing this file).

use crate::common;

use common::repo;
use rspirv::dr::{Instruction, Module};
use rspirv::spirv::{Decoration, Op};
use shrec::dxc::{self, Target};
use shrec::formats::{self, Stage, TranslateOptions};
use std::collections::{BTreeMap, BTreeSet};

/// SPIR-V's float arithmetic: the instructions `NoContraction` is defined for (SPIR-V spec,
/// "NoContraction": "Apply to an arithmetic instruction").
const FLOAT_ARITHMETIC: &[Op] = &[
    Op::FAdd,
    Op::FSub,
    Op::FMul,
    Op::FDiv,
    Op::FRem,
    Op::FMod,
    Op::VectorTimesScalar,
    Op::MatrixTimesScalar,
    Op::VectorTimesMatrix,
    Op::MatrixTimesVector,
    Op::MatrixTimesMatrix,
    Op::Dot,
];

fn module(spirv: &[u8]) -> Module {
    let words: Vec<u32> = spirv.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    rspirv::dr::load_words(words).expect("rspirv parses the module")
}

/// The float arithmetic instructions of `m` without `NoContraction`, by opcode name.
fn contractible(m: &Module) -> BTreeMap<String, usize> {
    let exact: BTreeSet<u32> = m
        .annotations
        .iter()
        .filter(|a| a.class.opcode == Op::Decorate)
        .filter(|a| matches!(a.operands.get(1), Some(rspirv::dr::Operand::Decoration(Decoration::NoContraction))))
        .filter_map(|a| a.operands[0].id_ref_any())
        .collect();
    let mut found = BTreeMap::new();
    let body = m.functions.iter().flat_map(|f| f.blocks.iter()).flat_map(|b| b.instructions.iter());
    for i in body.filter(|i: &&Instruction| FLOAT_ARITHMETIC.contains(&i.class.opcode)) {
        if !i.result_id.is_some_and(|id| exact.contains(&id)) {
            *found.entry(format!("{:?}", i.class.opcode)).or_insert(0) += 1;
        }
    }
    found
}

#[test]
fn corpus_spirv_marks_every_float_operation_no_contraction() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus"));
    let mut seen = BTreeSet::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for s in scan.shaders.iter().filter(|s| seen.insert(s.key)) {
        let bytes = shrec::scan::read_container(s).unwrap();
        let t = formats::translate(s.container, &bytes, s.index, &TranslateOptions::default()).unwrap();
        let hlsl = shrec::hlsl::write(&t.module);
        let spirv = dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Spirv, t.spec_constants_mask).unwrap();
        checked += 1;
        let found = contractible(&module(&spirv));
        if !found.is_empty() {
            failures.push(format!("{:016X} ({}): {found:?}", s.key, s.container.family()));
        }
    }
    assert!(checked > 200, "corpus shaders checked: {checked}");
    assert!(failures.is_empty(), "{} of {checked} shaders have contractible float operations:\n{}", failures.len(), failures.join("\n"));
}

/// The prelude's helpers that take and return floats: `float4 shrec_x(float4 a[, float4 b])`.
fn float_helpers() -> Vec<(String, usize)> {
    let mut helpers = Vec::new();
    for line in shrec::hlsl::PRELUDE.lines() {
        let Some(rest) = line.strip_prefix("float4 shrec_") else { continue };
        let Some((name, rest)) = rest.split_once('(') else { continue };
        let params = rest.split_once(')').map_or("", |p| p.0);
        let arity = params.split(',').count();
        if params.split(',').all(|p| p.trim_start().starts_with("float4 ")) {
            helpers.push((format!("shrec_{name}"), arity));
        }
    }
    helpers
}

#[test]
fn prelude_float_helpers_mark_every_operation_no_contraction() {
    let helpers = float_helpers();
    let names: Vec<&str> = helpers.iter().map(|h| h.0.as_str()).collect();
    // The signature scan finds the helpers it should (a changed prelude layout fails here, not
    // by checking nothing).
    for expected in ["shrec_mul_legacy", "shrec_rcp_clamp_max", "shrec_pica_dot4", "shrec_rcp_ff", "shrec_log2_clamped"] {
        assert!(names.contains(&expected), "{expected} not found among {names:?}");
    }
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let mut failures = Vec::new();
    for (name, arity) in &helpers {
        // Operands from a buffer, so DXC cannot fold the helper away; the result is stored in a
        // plain (not `precise`) output, so only the helper's own marking counts.
        let args = ["a[0]", "a[1]"][..*arity].join(", ");
        let hlsl = format!(
            "#include \"{}\"\ncbuffer C : register(b0) {{ float4 a[2]; }};\nfloat4 main() : SV_Target0 {{ return {name}({args}); }}\n",
            shrec::hlsl::PRELUDE_NAME
        );
        let spirv = dxc::compile(&lib, &hlsl, Stage::Pixel, Target::Spirv).unwrap_or_else(|e| panic!("{name}: {e}"));
        let found = contractible(&module(&spirv));
        if !found.is_empty() {
            failures.push(format!("{name}: {found:?}"));
        }
    }
    assert!(failures.is_empty(), "helpers with contractible float operations:\n{}", failures.join("\n"));
}
