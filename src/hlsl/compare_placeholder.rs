//! The SPIR-V placeholder the writer calls for a depth compare at an explicit LOD, with a bias
//! or with gradients: DXC 1.8's SPIR-V back end lacks `SampleCmpLevel` / `SampleCmpBias` /
//! `SampleCmpGrad`, so the text calls `[[vk::ext_instruction(N, PLACEHOLDER_SET)]]` and
//! [`crate::dxc::dref`] rewrites each such instruction into `OpImageSampleDref*`.

/// The extended-instruction-set name of the placeholders (NonSemantic: SPIRV-Tools passes
/// unknown non-semantic sets through, with every operand an id).
pub const PLACEHOLDER_SET: &str = "NonSemantic.shrec.compare";

/// Placeholder numbers: the level operand kind, plus [`WITH_OFFSET`] when a constant texel
/// offset follows as the last operand.
pub const LEVEL: u32 = 1;
pub const BIAS: u32 = 2;
pub const GRAD: u32 = 3;
pub const WITH_OFFSET: u32 = 8;
