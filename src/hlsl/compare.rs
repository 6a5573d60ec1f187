//! Depth compares at an explicit LOD, with a bias or with gradients ([`Expr::SampleCmpMode`]):
//! one macro per (kind, texture dimension, offset) that the body calls, defined as the HLSL
//! method (`SampleCmpLevel`, shader model 6.7; `SampleCmpBias` / `SampleCmpGrad`, 6.8) for DXIL
//! and as DXC's SPIR-V placeholder for SPIR-V, where DXC 1.8 lacks the methods
//! ([`crate::dxc::dref`] rewrites the placeholder into `OpImageSampleDref*`).

use super::compare_placeholder as dref;
use crate::ir::*;

/// The level operand kind of a compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CompareKind {
    Level,
    Bias,
    Grad,
}

impl CompareKind {
    fn name(self) -> &'static str {
        match self {
            CompareKind::Level => "LEVEL",
            CompareKind::Bias => "BIAS",
            CompareKind::Grad => "GRAD",
        }
    }

    fn method(self) -> &'static str {
        match self {
            CompareKind::Level => "SampleCmpLevel",
            CompareKind::Bias => "SampleCmpBias",
            CompareKind::Grad => "SampleCmpGrad",
        }
    }

    fn placeholder_number(self) -> u32 {
        match self {
            CompareKind::Level => dref::LEVEL,
            CompareKind::Bias => dref::BIAS,
            CompareKind::Grad => dref::GRAD,
        }
    }
}

/// (HLSL texture type, coordinate type, gradient type, offset type) of the dimensions a compare
/// is declared on (shadow samplers: 2D, 2D array, cube), keyed by a name part.
const DIMS: [(&str, &str, &str, &str, &str); 3] = [
    ("2D", "Texture2D<float4>", "float2", "float2", "int2"),
    ("2DARRAY", "Texture2DArray<float4>", "float3", "float2", "int2"),
    ("CUBE", "TextureCube<float4>", "float3", "float3", ""),
];

pub(super) fn compare_dim_key(dim: TexDim) -> &'static str {
    match dim {
        TexDim::D2Array => "2DARRAY",
        TexDim::Cube => "CUBE",
        _ => "2D",
    }
}

/// The macro the body calls for a compare: `SHREC_CMP_<KIND>_<DIM>[_O]`.
pub(super) fn compare_macro(kind: CompareKind, dim: TexDim, offset: bool) -> String {
    format!("SHREC_CMP_{}_{}{}", kind.name(), compare_dim_key(dim), if offset { "_O" } else { "" })
}

/// The definitions of the macros `used` names, for both targets.
pub(super) fn compare_definitions(used: &std::collections::BTreeSet<(CompareKind, &'static str, bool)>) -> String {
    let mut spirv = String::new();
    let mut dxil = String::new();
    for &(kind, dim, offset) in used {
        let Some(&(_, texture, coord, grad, off)) = DIMS.iter().find(|d| d.0 == dim) else { continue };
        let name = format!("SHREC_CMP_{}_{dim}{}", kind.name(), if offset { "_O" } else { "" });
        let function = name.to_lowercase();
        let (level_params, level_args) = match kind {
            CompareKind::Grad => (format!("{grad} dx, {grad} dy"), "dx, dy"),
            _ => ("float l".to_string(), "l"),
        };
        let (offset_param, offset_arg) = if offset { (format!(", {off} o"), ", o") } else { (String::new(), "") };
        let number = kind.placeholder_number() | if offset { dref::WITH_OFFSET } else { 0 };
        spirv.push_str(&format!(
            "[[vk::ext_instruction({number}, \"{}\")]] float {function}({texture} t, SamplerComparisonState s, {coord} c, float r, {level_params}{offset_param});\n",
            dref::PLACEHOLDER_SET
        ));
        spirv.push_str(&format!("#define {name}(t, s, c, r, {level_args}{offset_arg}) {function}(t, s, c, r, {level_args}{offset_arg})\n"));
        dxil.push_str(&format!("#define {name}(t, s, c, r, {level_args}{offset_arg}) t.{}(s, c, r, {level_args}{offset_arg})\n", kind.method()));
    }
    if spirv.is_empty() {
        return String::new();
    }
    format!("#ifdef __spirv__\n{spirv}#else\n{dxil}#endif\n")
}
