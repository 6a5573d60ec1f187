//! The one shader IR every family lowers to and the HLSL writer reads.
//!
//! A vec4 register machine with structured control flow:
//! - every value is a `float4` (scalar results are broadcast to all four lanes);
//! - registers live in *register files* (temps, inputs, outputs, constant buffers), addressed by a
//!   constant or a dynamic index;
//! - an assignment writes the lanes of its destination mask, lane `i` receiving lane `i` of the value
//!   (the D3D9 "positional" rule all four source ISAs share);
//! - control flow is a tree (`If`, `Loop`, `Break`, `Continue`, `Discard`, `Return`): frontends that
//!   meet unstructured jumps lower them to a pc-dispatch loop with these same statements.
//!
//! Every operator's semantics is defined here, once, so that the HLSL writer and any interpreter agree
//! on what a lowered program means.

mod kind;
pub mod opt;
pub mod validate;
pub mod visit;
pub use kind::{Family, Stage};
pub use validate::{validate, ValidationError};

/// A module: one shader entry point with its interface.
#[derive(Clone, Debug)]
pub struct Module {
    pub family: Family,
    pub stage: Stage,
    /// Stage inputs, in declaration order; `RegFile::Input` index `i` is `inputs[i]`.
    pub inputs: Vec<IoVar>,
    /// Stage outputs; `RegFile::Output` index `i` is `outputs[i]`.
    pub outputs: Vec<IoVar>,
    /// Constant register files; `RegFile::Const(i)` is `const_buffers[i]`.
    pub const_buffers: Vec<ConstBuffer>,
    /// Textures with their samplers, sampled by `Expr::Sample` (and read by `Expr::Load`,
    /// queried by `Expr::TexSize` / `Expr::TexInfo`, which ignore the sampler).
    pub textures: Vec<Texture>,
    /// Number of temporary vec4 registers and how they are named in HLSL.
    pub temps: TempFile,
    pub body: Vec<Stmt>,
    /// Lines written as comments at the top of the HLSL (provenance, documented deviations).
    pub header_comments: Vec<String>,
    /// Integer state, integer uniforms and geometry-stage shape (PICA; empty for other families).
    pub ext: ModuleExt,
}

/// Additions used by some front ends (all empty by default): PICA's integer state and geometry
/// shape, GX2's geometry stage, Xenos' resource ABI.
#[derive(Clone, Debug, Default)]
pub struct ModuleExt {
    /// Integer (`int`, 32-bit two's complement, wrapping) variables: `IExpr::Var(i)` /
    /// `Stmt::SetInt { var: i }` name `int_vars[i]`. All start at 0 in every invocation.
    pub int_vars: Vec<IntVar>,
    /// Constant buffers of `uint4` arrays, read by `IExpr::Uniform { buffer: i }`.
    pub uint_buffers: Vec<ConstBuffer>,
    /// Present for `Stage::Geometry` modules.
    pub geometry: Option<GeometryInfo>,
    /// How the module's resources are declared and read: the HLSL writer's back-end option
    /// (what `hlsl::write` derives the declarations, constant reads and entry attributes from).
    pub resource_abi: ResourceAbi,
    /// Stream-out (transform feedback) of a vertex stage: which outputs are captured where.
    pub stream_out: Option<StreamOut>,
    /// Length in float4s of the invocation-local array `Stmt::LocalStore` / `Stmt::LocalLoad`
    /// address (0: none): a strip-mode geometry shader's GSVS ring, or GX2 scratch memory. It
    /// starts at 0 in every invocation.
    pub local_array: u32,
}

/// Stream-out of a vertex stage: every vertex writes one record of `strides[b]` bytes to
/// buffer `b`, in the order the primitive assembler emits vertices (D3D12 stream output and
/// Vulkan transform feedback both define it so). Each entry places one output (whose semantic is
/// [`Semantic::StreamOut`]) at a dword offset of the record: its `components` 32-bit lanes go,
/// bit for bit, to dwords `offset..offset + components`. Dwords no entry covers are not written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOut {
    /// Record size in bytes of buffers 0-3 (a multiple of 4; 0 for a buffer no entry writes).
    pub strides: [u32; 4],
    /// Sorted by (buffer, offset); entries of one buffer do not overlap.
    pub entries: Vec<StreamOutEntry>,
}

/// One captured output (see [`StreamOut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamOutEntry {
    /// `Module::outputs` index.
    pub output: u32,
    /// Buffer 0-3 (D3D12 `OutputSlot`, Vulkan `XfbBuffer`).
    pub buffer: u32,
    /// First dword of the record written.
    pub offset: u32,
}

/// The runtime ABI a module's resources follow (the HLSL writer writes the text for it).
#[derive(Clone, Debug, Default)]
pub enum ResourceAbi {
    /// One cbuffer, texture and sampler per binding, as `Module::const_buffers`,
    /// `ModuleExt::uint_buffers` and `Module::textures` give them.
    #[default]
    Bindings,
    /// XenosRecomp's (its shader_common.h, Xenos section): float constants and shared constants
    /// read from push-constant buffer device addresses on SPIR-V and from fixed cbuffers on DXIL,
    /// textures and samplers from bindless heaps indexed by per-slot descriptor indices, the
    /// alpha test and texture-format switches as specialization constants.
    XenosRecomp(XenosRecompAbi),
}

/// The facts of one Xenos module the HLSL writer needs for [`ResourceAbi::XenosRecomp`].
///
/// Constant files: `RegFile::Const(XenosRecompAbi::FLOAT_CONSTANTS)` is the stage's float
/// constant registers (`Module::const_buffers[0].len` of them, 0 at or past that count, as
/// XenosRecomp); `RegFile::Const(XenosRecompAbi::STATE)` is the shared state, read only at
/// fixed indices: [`XenosRecompAbi::STATE_SHARED`] = (asfloat(g_Booleans),
/// asfloat(g_SwappedTexcoords), g_HalfPixelOffset), [`XenosRecompAbi::STATE_ALPHA`] =
/// (g_AlphaThreshold, 0, 0, 0), [`XenosRecompAbi::STATE_SPEC`] = (ALPHA_TEST, R11G11B10_NORMAL,
/// 0, 0) and [`XenosRecompAbi::STATE_SPEC_UNLEASHED`] = (BICUBIC_GI_FILTER, ALPHA_TO_COVERAGE,
/// REVERSE_Z, 0) as 1.0 / 0.0 from the specialization constant, entry w after
/// [`XenosRecompAbi::STATE_BOOLS`] = (asfloat(word w of this stage's booleans b0-b255), 0, 0, 0)
/// and entry i after [`XenosRecompAbi::STATE_LOOPS`] = (count, aL start, aL step, 0) of loop
/// constant i (shrec's extension of SharedConstants); every other index reads 0.
#[derive(Clone, Debug, Default)]
pub struct XenosRecompAbi {
    /// Sampler name per fetch-constant slot (0-15), in slot order: the slot's descriptor
    /// indices are `NAME_Texture{2D,3D,Cube}DescriptorIndex` and `NAME_SamplerDescriptorIndex`.
    pub samplers: Vec<(u32, String)>,
    /// The fetch-constant slot (0-15) of each `Module::textures` entry, by index: where its
    /// descriptor indices sit in SharedConstants.
    pub texture_slots: Vec<u32>,
    /// XenosRecomp's `specConstantsMask`: the `SPEC_CONSTANT_*` bits the shader reads.
    pub spec_constants_mask: u32,
    /// The shader reads shrec's extension of SharedConstants (booleans b16-b255, loop constants).
    pub shared_extension: bool,
    /// The shader exports to memory: the formats `shrec_xenos_memexport_format` knows.
    pub memexport_formats: Option<Vec<MemExportFormat>>,
    /// XenosRecomp built with `UNLEASHED_RECOMP` (its shader_common.h then defines the
    /// UnleashedRecomp specialization-constant bits).
    pub unleashed: bool,
}

impl XenosRecompAbi {
    /// `RegFile::Const` index of the float constants.
    pub const FLOAT_CONSTANTS: u32 = 0;
    /// `RegFile::Const` index of the shared state.
    pub const STATE: u32 = 1;
    /// Indices of the shared state (see the type's documentation).
    pub const STATE_SHARED: u32 = 16;
    pub const STATE_ALPHA: u32 = 17;
    pub const STATE_SPEC: u32 = 18;
    pub const STATE_SPEC_UNLEASHED: u32 = 19;
    pub const STATE_BOOLS: u32 = 20;
    pub const STATE_LOOPS: u32 = 32;
    /// Entries of the shared state file (loop constants i0-i31 end it).
    pub const STATE_LEN: u32 = Self::STATE_LOOPS + 32;
    /// XenosRecomp's specialization-constant bits (shader_common.h); the last three only with
    /// `UNLEASHED_RECOMP`.
    pub const SPEC_R11G11B10_NORMAL: u32 = 1 << 0;
    pub const SPEC_ALPHA_TEST: u32 = 1 << 1;
    pub const SPEC_BICUBIC_GI_FILTER: u32 = 1 << 2;
    pub const SPEC_ALPHA_TO_COVERAGE: u32 = 1 << 3;
    pub const SPEC_REVERSE_Z: u32 = 1 << 4;

    /// SharedConstants byte offsets of shrec's extension for `stage`: the booleans b0-b255
    /// (VS 288, PS 320; 8 words each, b0-b15 still from g_Booleans) and the loop constants
    /// i0-i31 (VS 352, PS 480; one word each: count | start << 8 | step << 16).
    pub fn extension_words(stage: Stage) -> (u32, u32) {
        if stage == Stage::Vertex {
            (288, 352)
        } else {
            (320, 480)
        }
    }
}

/// One memory-export format as `shrec_xenos_memexport_format` returns it (shader_common.h).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemExportFormat {
    pub id: u32,
    pub name: String,
    /// Bits per component of a fixed-point format (0 for float formats).
    pub widths: [u32; 4],
    pub size_log2: u32,
    /// 0 fixed point, 1 raw 32-bit floats, 2 16-bit floats.
    pub kind: u32,
}

#[derive(Clone, Debug)]
pub struct IntVar {
    pub name: String,
    /// 0 for a scalar; otherwise an array of `len` elements (indexed by `IExpr`, in range).
    pub len: u32,
}

/// Input primitive of a geometry shader (number of vertices per invocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GsPrimitive {
    Point,
    Line,
    Triangle,
    LineAdj,
    TriangleAdj,
}

impl GsPrimitive {
    pub fn vertices(self) -> u32 {
        match self {
            GsPrimitive::Point => 1,
            GsPrimitive::Line => 2,
            GsPrimitive::Triangle => 3,
            GsPrimitive::LineAdj => 4,
            GsPrimitive::TriangleAdj => 6,
        }
    }
}

/// Shape of a geometry shader: input vertices carry `vertex_fields`; `Module::inputs[i]` (plain
/// registers, their `semantic` unused) is loaded from field `input_sources[i].1` of input vertex
/// `input_sources[i].0` before the body runs. Outputs are `Module::outputs`; the output stream is a
/// triangle list written only by `Stmt::GsStore` / `Stmt::GsEmitTriangle`.
#[derive(Clone, Debug)]
pub struct GeometryInfo {
    pub primitive: GsPrimitive,
    pub vertex_fields: Vec<IoVar>,
    pub input_sources: Vec<(u32, u32)>,
    /// `[maxvertexcount]`; triangles past it are not emitted (counted, never undefined).
    pub max_vertices: u32,
    /// Strip mode (GX2): the output stream is written by `Stmt::GsEmitVertex` /
    /// `Stmt::GsCutStrip` instead of `GsStore` / `GsEmitTriangle`. `None` for PICA.
    pub strip: Option<GsStrip>,
}

/// Output stream of a strip-mode geometry shader (HLSL `PointStream` / `LineStream` /
/// `TriangleStream`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GsOutput {
    Points,
    LineStrip,
    TriangleStrip,
}

/// Strip-mode geometry shader shape (see [`GeometryInfo::strip`]).
#[derive(Clone, Debug)]
pub struct GsStrip {
    pub output: GsOutput,
    /// `Module::inputs` index (the last input, after the `input_sources` ones) that receives
    /// `SV_PrimitiveID` as raw bits in lane x.
    pub primitive_id: Option<u32>,
}

/// An integer expression (`int`, wrapping arithmetic).
#[derive(Clone, Debug, PartialEq)]
pub enum IExpr {
    Const(i32),
    Var(u32),
    /// Element of an integer array variable (index in range).
    Elem(u32, Box<IExpr>),
    Add(Box<IExpr>, Box<IExpr>),
    Sub(Box<IExpr>, Box<IExpr>),
    /// Bitwise and.
    And(Box<IExpr>, Box<IExpr>),
    Min(Box<IExpr>, Box<IExpr>),
    Select(Box<Cond>, Box<IExpr>, Box<IExpr>),
    /// Lane `.x` of a float expression truncated toward zero; NaN and values outside the `int`
    /// range give `i32::MIN` (the x86 `cvttss2si` rule Azahar's `static_cast<s32>` gets).
    TruncX86(Box<Expr>),
    /// Lane `lane` of element `reg` of `ModuleExt::uint_buffers[buffer]`, as int.
    Uniform {
        buffer: u32,
        reg: u32,
        lane: u8,
    },
}

#[derive(Clone, Debug)]
pub struct TempFile {
    pub count: u32,
    /// HLSL name prefix: temp `i` is `{prefix}{i}` (or `{prefix}[i]` when indexable).
    pub prefix: String,
    /// True when some access uses a dynamic index: the temps become one array.
    pub indexable: bool,
}

/// One stage input or output register.
#[derive(Clone, Debug)]
pub struct IoVar {
    /// HLSL variable name (e.g. `va0`, `op`, `oc1`).
    pub name: String,
    pub semantic: Semantic,
    /// Number of components the signature element carries (1 for depth, 1-4 for stream-out,
    /// 4 otherwise).
    pub components: u8,
}

/// Signature semantics. Locations for Vulkan are given explicitly so that stages link by number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Semantic {
    /// A user attribute / varying: HLSL `TEXCOORD{n}`, Vulkan `location = n`.
    Texcoord(u32),
    /// Clip-space position (vertex output) — `SV_Position`.
    Position,
    /// Render-target output `n` — `SV_Target{n}`.
    Target(u32),
    /// Pixel depth output — `SV_Depth`.
    Depth,
    /// Instance index — `SV_InstanceID`, read as `float4(id, 0, 0, 0)`.
    InstanceId,
    /// A named D3D semantic `{name}{index}` (e.g. `POSITION0`, `NORMAL1`) with an explicit
    /// Vulkan location. Used for vertex inputs whose D3D input layout matches by usage (Xenos).
    Usage { name: &'static str, index: u32, location: u32 },
    /// As `Usage`, declared `uint4` in the signature (an integer vertex format); the register
    /// receives the four 32-bit patterns unchanged (`asfloat(input)`), for the frontend to
    /// convert or decode.
    UsageUint { name: &'static str, index: u32, location: u32 },
    /// Vertex index — `SV_VertexID`, read as `float4(asfloat(id), 0, 0, 0)` (the raw integer
    /// bits in lane x, as Latte's R0.x holds it).
    VertexId,
    /// Vertex point size (lane x): the Vulkan `PointSize` built-in. D3D12 has no programmable
    /// point size, so the DXIL signature leaves it out (`#ifdef __spirv__`).
    PointSize,
    /// Vertex cull distance (lane x) — `SV_CullDistance`: a primitive whose vertices all have a
    /// negative value is discarded.
    CullDistance,
    /// A vertex output captured by stream-out ([`StreamOut`]), not read by any later stage:
    /// HLSL `SHREC_SO{index}`, declared `uint` / `uint2..4` after `IoVar::components` (lanes
    /// x.. of the register, their bits unchanged: `asuint`), Vulkan `location`.
    StreamOut { index: u32, location: u32 },
}

/// Where a resource binds, in both APIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// D3D register number (`b#`, `t#` or `s#` by resource kind) and space.
    pub dx_register: u32,
    pub dx_space: u32,
    /// Vulkan descriptor set and binding.
    pub vk_set: u32,
    pub vk_binding: u32,
}

/// An array of vec4 constants in a constant buffer.
#[derive(Clone, Debug)]
pub struct ConstBuffer {
    /// cbuffer block name.
    pub block: String,
    /// Array variable name (e.g. `vc`).
    pub var: String,
    pub len: u32,
    pub binding: Binding,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexDim {
    /// `Texture1D<float4>`, one coordinate lane (x).
    D1,
    D2,
    D3,
    Cube,
    /// `Texture1DArray<float4>`: x, then the slice in lane y.
    D1Array,
    /// `Texture2DArray<float4>`: x, y, then the slice in lane z.
    D2Array,
    /// `TextureCubeArray<float4>`: the direction x, y, z, then the cube index in lane w.
    CubeArray,
}

impl TexDim {
    /// Number of coordinate lanes a sample reads (an array's slice is the last one; HLSL and
    /// Vulkan round it to the nearest integer, ties to even, and clamp it to the slices).
    pub fn coord_lanes(self) -> usize {
        match self {
            TexDim::D1 => 1,
            TexDim::D2 | TexDim::D1Array => 2,
            TexDim::D3 | TexDim::Cube | TexDim::D2Array => 3,
            TexDim::CubeArray => 4,
        }
    }

    /// Cube map or cube-map array (direction coordinates; no texel offsets, no `Load`).
    pub fn is_cube(self) -> bool {
        matches!(self, TexDim::Cube | TexDim::CubeArray)
    }

    /// Array of slices (the last coordinate lane selects the slice).
    pub fn is_array(self) -> bool {
        matches!(self, TexDim::D1Array | TexDim::D2Array | TexDim::CubeArray)
    }

    /// Lanes a constant texel offset / a gradient has: the coordinate lanes without the slice
    /// (cubes: 3 for gradients; offsets are never allowed on cubes).
    pub fn texel_lanes(self) -> usize {
        match self {
            TexDim::D1 | TexDim::D1Array => 1,
            TexDim::D2 | TexDim::D2Array => 2,
            TexDim::D3 | TexDim::Cube | TexDim::CubeArray => 3,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Texture {
    /// HLSL names of the texture and its sampler (e.g. `fs0_tex`, `fs0_smp`).
    pub tex_var: String,
    pub smp_var: String,
    pub dim: TexDim,
    /// The sampler is a comparison sampler (HLSL `SamplerComparisonState`, Vulkan
    /// `compareEnable`): the texture is read only by [`Expr::SampleCmp`], and the consumer sets
    /// the comparison function in the sampler state.
    pub compare: bool,
    pub texture_binding: Binding,
    pub sampler_binding: Binding,
}

/// Which register file a register belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFile {
    Temp,
    Input,
    Output,
    Const(u32),
}

/// A register index: fixed, or computed at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    Fixed(u32),
    /// `base + round_to_int(value.x)`, with the conversion rule given.
    Dynamic {
        base: i32,
        value: Box<Expr>,
        conv: IndexConv,
    },
    /// An integer expression (the frontend guarantees it is in range).
    Int(Box<IExpr>),
}

/// How a float lane becomes a register index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexConv {
    /// `floor(x + 0.5)`: D3D9 `mova` rounding (round half up).
    RoundHalfUp,
    /// `floor(x)`.
    Floor,
    /// Truncation toward zero.
    Trunc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RegRef {
    pub file: RegFile,
    pub index: Index,
}

impl RegRef {
    pub fn fixed(file: RegFile, index: u32) -> Self {
        RegRef { file, index: Index::Fixed(index) }
    }
}

/// Identity swizzle.
pub const XYZW: [u8; 4] = [0, 1, 2, 3];

/// An operand read: register, swizzle (lane `i` of the result is lane `swizzle[i]` of the
/// register), then absolute value, then negation.
#[derive(Clone, Debug, PartialEq)]
pub struct Src {
    pub reg: RegRef,
    pub swizzle: [u8; 4],
    pub abs: bool,
    pub negate: bool,
}

/// A float4-valued expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Read(Src),
    Literal([f32; 4]),
    /// Re-order lanes of a value.
    Swizzle(Box<Expr>, [u8; 4]),
    /// A float4 from the `.x` lane of four expressions.
    Compose(Box<[Expr; 4]>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Dot product over the first `n` lanes (2, 3 or 4), broadcast.
    Dot(u8, Box<Expr>, Box<Expr>),
    /// `a * b + c` per lane (IEEE multiply, not fused).
    Mad(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Sample texture `tex` (index into `Module::textures`) at `coord` (lanes per dimension).
    /// `offset`: a constant texel offset per dimension, in texels of the sampled mip level, added
    /// to the unnormalised texel coordinate before addressing (HLSL `Sample(s, uv, offset)`,
    /// range -8..7; all zero = none; never on a cube or cube-array texture, never on an array's slice
    /// lane).
    Sample {
        tex: u32,
        coord: Box<Expr>,
        mode: SampleMode,
        offset: [i8; 3],
    },
    /// Depth-compare sample of texture `tex` (its `compare` sampler) at `coord` (lanes per
    /// dimension): each texel the filter reads is replaced by 1.0 where `reference` (lane x)
    /// passes the sampler's comparison function against the texel's first component
    /// (`reference OP texel`), else 0.0, and the results are filtered; the result is broadcast
    /// to all four lanes. `level_zero`: mip level 0 (HLSL `SampleCmpLevelZero`, any stage);
    /// otherwise implicit derivatives (`SampleCmp`, pixel shaders only). `offset` as for
    /// [`Expr::Sample`].
    SampleCmp {
        tex: u32,
        coord: Box<Expr>,
        reference: Box<Expr>,
        level_zero: bool,
        offset: [i8; 3],
    },
    /// A depth-compare sample as [`Expr::SampleCmp`] whose level comes from `mode`: an explicit
    /// LOD (HLSL `SampleCmpLevel`, shader model 6.7), a bias on the implicit LOD
    /// (`SampleCmpBias`, 6.8, pixel shaders only) or explicit gradients (`SampleCmpGrad`, 6.8).
    /// A shader using it needs that shader model ([`ShaderModel::for_compare`]).
    SampleCmpMode {
        tex: u32,
        coord: Box<Expr>,
        reference: Box<Expr>,
        mode: SampleMode,
        offset: [i8; 3],
    },
    /// The four texels bilinear filtering of mip level 0 of texture `tex` at `coord` would
    /// read, component 0 (red) of each, in HLSL `Gather` order: x = (i0, j1), y = (i1, j1),
    /// z = (i1, j0), w = (i0, j0), where i0/i1 are the left/right and j0/j1 the upper/lower
    /// texel columns and rows of the 2×2 footprint. `offset` as for [`Expr::Sample`] (2D only).
    Gather {
        tex: u32,
        coord: Box<Expr>,
        offset: [i8; 3],
    },
    /// Level of detail an implicit-derivative sample of texture `tex` at `coord` computes,
    /// relative to the base level, broadcast (pixel shaders only): not clamped to the texture's
    /// levels or the sampler's LOD range (HLSL `CalculateLevelOfDetailUnclamped`, lane 1 of
    /// SPIR-V `OpImageQueryLod`), or, with `clamped`, the level the sample would access
    /// (`CalculateLevelOfDetail`, lane 0).
    QueryLod {
        tex: u32,
        coord: Box<Expr>,
        clamped: bool,
    },
    /// Size of texture `tex`'s base level in texels: (width, height, depth, 0), 1 for the
    /// dimensions the texture lacks; an array's slice count takes the lane after its texel
    /// lanes (1D array: (width, slices, 1, 0)) (HLSL `GetDimensions`, through `shrec_tex_size`).
    TexSize {
        tex: u32,
    },
    /// Texel fetch without a sampler (no filtering, no addressing mode, no LOD computation):
    /// the texel of texture `tex` at integer coordinates `coord` (lanes per dimension) of mip
    /// level `lod` (lane x). Coordinates and level are 32-bit signed integers given as bit
    /// patterns (`asint`), as integer operators leave them. A coordinate outside the level, or
    /// a level outside the texture, has no defined result (D3D returns 0, Vulkan leaves it
    /// undefined): a frontend translates only what its source defines there. Never on a cube
    /// texture (or cube array); an array's slice is the last coordinate lane. HLSL
    /// `Load(int3(x, y, lod))` (`int2` / `int4` for 1D / 3D and 2D arrays).
    Load {
        tex: u32,
        coord: Box<Expr>,
        lod: Box<Expr>,
    },
    /// Size of mip level `lod` (lane x, a signed integer bit pattern) of texture `tex` and the
    /// texture's number of mip levels, as unsigned integer bit patterns (`asfloat(uint4)`):
    /// (width, height, depth, levels), 1 for the dimensions the texture lacks (a cube's depth
    /// is 1; an array's slice count takes the lane after its texel lanes, as in `TexSize`).
    /// For a level outside the texture the three sizes are undefined (the level count is not). HLSL `GetDimensions(lod, w, h[, d], levels)`, through `shrec_tex_info`.
    TexInfo {
        tex: u32,
        lod: Box<Expr>,
    },
    /// Per-lane select: lane `i` = `a[i] cmp b[i] ? if_true[i] : if_false[i]` (IEEE comparisons:
    /// every comparison with NaN is false except `Ne`). HLSL `select(a cmp b, t, f)`.
    Select {
        cmp: CmpOp,
        a: Box<Expr>,
        b: Box<Expr>,
        if_true: Box<Expr>,
        if_false: Box<Expr>,
    },
    /// Dot product over the first `n` lanes (2, 3 or 4) with `BinOp::MulPica` products summed
    /// left to right (`((p.x + p.y) + p.z) + p.w`), broadcast.
    DotPica(u8, Box<Expr>, Box<Expr>),
    /// `cond ? a : b` (whole vectors chosen by one scalar condition; only the chosen side's
    /// value matters). Compare `Select`, which chooses per lane.
    SelectIf(Box<Cond>, Box<Expr>, Box<Expr>),
    /// Four raw 32-bit patterns reinterpreted as float (`asfloat(uint4(...))`), exact for every
    /// pattern (denormals, NaN payloads). Used by frontends whose registers hold untyped bits.
    Bits([u32; 4]),
    /// Integer operator on the 32-bit patterns of the operand lanes (`asuint`); the result's
    /// pattern is returned reinterpreted as float (`asfloat`). See [`IntUnOp`].
    IntUnary(IntUnOp, Box<Expr>),
    /// As [`Expr::IntUnary`], two operands. See [`IntBinOp`].
    IntBinary(IntBinOp, Box<Expr>, Box<Expr>),
    /// As [`Expr::IntUnary`], three operands. See [`IntTerOp`].
    IntTernary(IntTerOp, Box<Expr>, Box<Expr>, Box<Expr>),
}

/// Integer unary operators (operands and results are 32-bit patterns, see [`Expr::IntUnary`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntUnOp {
    /// Bitwise not.
    Not,
    /// Float → signed int, truncating toward zero; NaN → 0, out of range saturates (HLSL `(int)`
    /// on DXIL/SPIR-V is undefined out of range, so the writer clamps first).
    FloatToInt,
    /// Float → unsigned int, truncating; negative/NaN → 0, saturating.
    FloatToUint,
    /// Signed int → float (round to nearest).
    IntToFloat,
    /// Unsigned int → float (round to nearest).
    UintToFloat,
}

/// Integer binary operators on 32-bit patterns. Comparisons return all-ones (0xFFFFFFFF) for
/// true and 0 for false (the D3D10 boolean convention).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntBinOp {
    /// Wrapping add / subtract / multiply (low 32 bits; signedness does not matter).
    Add,
    Sub,
    MulLo,
    /// High 32 bits of the 64-bit signed / unsigned product.
    MulHiI,
    MulHiU,
    And,
    Or,
    Xor,
    /// Shifts by `b & 31`: left, logical right, arithmetic right.
    Shl,
    ShrU,
    ShrI,
    MinI,
    MaxI,
    MinU,
    MaxU,
    /// Integer comparisons → all-ones / 0.
    EqI,
    NeI,
    GtI,
    GeI,
    GtU,
    GeU,
    /// Float comparisons of the operands (read as floats) → all-ones / 0 (D3D10 `SETcc_DX10`);
    /// IEEE like [`CmpOp`]: with a NaN only `NeF` is true.
    EqF,
    NeF,
    GtF,
    GeF,
}

/// Integer ternary operators on 32-bit patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntTerOp {
    /// Bitfield extract `(a >> (b & 31))` of width `c & 31` (width 0 → 0), zero / sign extended.
    BfeU,
    BfeI,
    /// Bitfield insert: `(a & b) | (~a & c)` (a = mask).
    Bfi,
    /// `a == 0 ? b : c`, `a > 0 ? b : c`, `a >= 0 ? b : c`, comparing `a` as a signed int.
    CndEI,
    CndGtI,
    CndGeI,
}

/// The HLSL shader model a module's text needs: 6.0 (every other shader), 6.7 for
/// `SampleCmpLevel`, 6.8 for `SampleCmpBias` / `SampleCmpGrad`. A consumer needs the matching
/// D3D12 shader model support (`D3D12_FEATURE_SHADER_MODEL`); the SPIR-V is plain Vulkan 1.0
/// (`OpImageSampleDref*` with a Lod, Bias or Grad operand).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShaderModel {
    #[default]
    Sm6_0,
    Sm6_7,
    Sm6_8,
}

impl ShaderModel {
    /// The profile suffix, as in `ps_6_8`.
    pub fn suffix(self) -> &'static str {
        match self {
            ShaderModel::Sm6_0 => "6_0",
            ShaderModel::Sm6_7 => "6_7",
            ShaderModel::Sm6_8 => "6_8",
        }
    }

    /// The model a profile suffix names (`6_0`, `6_7`, `6_8`).
    pub fn from_suffix(s: &str) -> Option<ShaderModel> {
        [ShaderModel::Sm6_0, ShaderModel::Sm6_7, ShaderModel::Sm6_8].into_iter().find(|m| m.suffix() == s)
    }

    /// The model a depth-compare sample with `mode` needs ([`Expr::SampleCmpMode`]): HLSL has
    /// `SampleCmpLevel` since 6.7, `SampleCmpBias` and `SampleCmpGrad` since 6.8.
    pub fn for_compare(mode: &SampleMode) -> ShaderModel {
        match mode {
            SampleMode::Lod(_) => ShaderModel::Sm6_7,
            SampleMode::Bias(_) | SampleMode::BiasExpr(_) | SampleMode::Grad(..) => ShaderModel::Sm6_8,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SampleMode {
    /// Implicit derivatives, with a constant LOD bias (0 = none).
    Bias(f32),
    /// Explicit LOD from lane x of an expression.
    Lod(Box<Expr>),
    /// Implicit derivatives with a LOD bias from lane x of an expression.
    BiasExpr(Box<Expr>),
    /// Explicit gradients: d(coord)/dx and d(coord)/dy (lanes per dimension).
    Grad(Box<Expr>, Box<Expr>),
}

/// Per-lane unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Abs,
    /// `1 / x` (IEEE: ±inf at ±0).
    Rcp,
    /// `1 / sqrt(x)` (IEEE: +inf at +0, NaN below 0).
    Rsq,
    Sqrt,
    /// `log2(x)`.
    Log2,
    /// `exp2(x)`.
    Exp2,
    /// `x - floor(x)`: NaN for ±inf and NaN (the HLSL writer's `shrec_frac`; HLSL `frac` alone
    /// leaves those to the driver).
    Fract,
    Floor,
    Sin,
    Cos,
    /// Clamp to [0, 1] (NaN → 0, as HLSL `saturate`).
    Saturate,
    /// -1, 0 or 1.
    Sign,
    /// Screen-space derivatives (pixel stage only).
    Ddx,
    Ddy,
    /// `float4(normalize(x.xyz), 0)`: `x.xyz * rsqrt(dot3(x, x))`.
    Normalize3,
    /// Truncation toward zero: `x >= 0 ? floor(x) : -floor(-x)`.
    Trunc,
    /// Xenos `rcpc`: `t = (x == 1 ? 1 : 1 / x)`, then +inf → +FLT_MAX, -inf → -FLT_MAX.
    RcpClampMax,
    /// Xenos `rcpf`: `t = (x == 1 ? 1 : 1 / x)`, then +inf → +0, -inf → -0.
    RcpClampZero,
    /// Xenos `rsq`: `x == 1 ? 1 : 1 / sqrt(x)` (IEEE division of an IEEE square root).
    RsqExactOne,
    /// Xenos `rsqc`: `RsqExactOne`, then ±inf → ±FLT_MAX.
    RsqClampMax,
    /// Xenos `rsqf`: `RsqExactOne`, then ±inf → ±0.
    RsqClampZero,
    /// Xenos `log`: `x == 1 ? 0 : log2(x)`.
    Log2ExactOne,
    /// Xenos `logc`: `Log2ExactOne`, then -inf → -FLT_MAX.
    Log2ClampMax,
    /// Round toward +inf / to nearest even (toward zero is `Trunc` above).
    Ceil,
    RoundEven,
    /// `1 / x`, a ±inf result clamped to ±FLT_MAX (R600 `RECIP_CLAMPED`).
    RcpClamped,
    /// `1 / x`, a ±inf result replaced by ±0 (R600 `RECIP_FF`).
    RcpFF,
    /// `1 / sqrt(x)`, +inf clamped to FLT_MAX (R600 `RECIPSQRT_CLAMPED`).
    RsqClamped,
    /// `1 / sqrt(x)`, +inf replaced by 0 (R600 `RECIPSQRT_FF`).
    RsqFF,
    /// `log2(x)`, −inf clamped to −FLT_MAX (R600 `LOG_CLAMPED`).
    Log2Clamped,
}

/// Per-lane binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    /// IEEE multiply.
    Mul,
    /// IEEE division.
    Div,
    /// `b < a ? b : a` (HLSL `min`: returns the non-NaN operand).
    Min,
    Max,
    /// `pow(a, b)` = `exp2(b * log2(a))`.
    Pow,
    /// 1.0 where `a >= b`, else 0.0.
    Sge,
    /// 1.0 where `a < b`, else 0.0.
    Slt,
    /// 1.0 where `a == b`, else 0.0.
    Seq,
    /// 1.0 where `a != b` (IEEE: true when either lane is NaN), else 0.0.
    Sne,
    /// `float4(cross(a.xyz, b.xyz), 0)`.
    Cross3,
    /// D3D9 "legacy" multiply per lane: `(a == 0 || b == 0) ? +0 : a * b`, so that 0 × inf and
    /// 0 × NaN give +0 (Xenia `ZeroIfAnyOperandIsZero`; Latte non-IEEE `MUL`, `MULADD`, `DOT4`).
    MulLegacy,
    /// PICA200 multiply per lane: IEEE `a * b`, except that a NaN product of two non-NaN operands
    /// (0 · ±inf) is +0. 0 · NaN stays NaN (Azahar `Float::operator*`).
    MulPica,
    /// `a > b ? a : b` per lane: max(0, NaN) = NaN, max(NaN, 0) = 0, max(0, -inf) = 0.
    MaxPica,
    /// `a < b ? a : b` per lane: min(0, NaN) = NaN, min(NaN, 0) = 0.
    MinPica,
}

/// A comparison. On floats it is IEEE: every comparison with a NaN is false except `Ne`, which
/// is true (the HLSL writer keeps this on both DXC targets, see `hlsl::cmp_text`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A boolean condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// Compare lane x of two expressions.
    Compare(CmpOp, Expr, Expr),
    /// True when any of the four lanes is below zero (HLSL `clip` semantics).
    AnyNegative(Expr),
    Not(Box<Cond>),
    /// True when bit `bit` (0-31) of the raw bits of lane x of `value` (`asuint(value.x)`) is set:
    /// boolean constants packed in a uint word of a constant buffer.
    BitSet {
        value: Expr,
        bit: u32,
    },
    /// Integer comparison.
    IntCmp(CmpOp, IExpr, IExpr),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

/// Destination of an assignment: lanes of `mask` (bit 0 = x) receive the same lanes of the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Dst {
    pub reg: RegRef,
    pub mask: u8,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Assign {
        dst: Dst,
        value: Expr,
        saturate: bool,
    },
    If {
        cond: Cond,
        then_body: Vec<Stmt>,
        else_body: Vec<Stmt>,
    },
    /// Repeats until a `Break` (or `Return`/`Discard`) leaves it.
    Loop {
        body: Vec<Stmt>,
    },
    Break,
    Continue,
    /// Discard the pixel when the condition holds (execution continues as a helper lane).
    Discard(Cond),
    Return,
    Comment(String),
    /// `int_vars[var] = value` (or `int_vars[var][index] = value`).
    SetInt {
        var: u32,
        index: Option<IExpr>,
        value: IExpr,
    },
    /// Geometry: copy the current values of all `Module::outputs` into vertex slot `slot` (0-2)
    /// of the primitive buffer.
    GsStore(IExpr),
    /// Geometry: append the triangle (slot 0, slot 1, slot 2) — or (slot 1, slot 0, slot 2) when
    /// `invert` holds — to the output stream and restart the strip. Past `max_vertices` the
    /// triangle is dropped.
    GsEmitTriangle {
        invert: Cond,
    },
    /// Geometry, strip mode: append one vertex made of the current values of all
    /// `Module::outputs`. Past `max_vertices` appended vertices nothing is appended.
    GsEmitVertex,
    /// Geometry, strip mode: end the current strip (the next vertex starts a new one).
    GsCutStrip,
    /// Lanes `mask` of element `index` of the invocation-local array = `value`; an index outside
    /// `0..ModuleExt::local_array` writes nothing.
    LocalStore {
        index: Index,
        mask: u8,
        value: Expr,
    },
    /// `dst` = element `index` of the invocation-local array (0 outside
    /// `0..ModuleExt::local_array`).
    LocalLoad {
        dst: Dst,
        index: Index,
    },
    /// Xenos memory export of data element eM`element` (0-4): `address` holds eA as raw 32-bit
    /// patterns, `value` the eM register. Formatting, bounds and the store into the guest-memory
    /// buffer are `formats::xenos::memexport`'s rules, written by `shrec_xenos_memexport` of
    /// shader_common.h (the module must define `SHREC_XENOS_MEMEXPORT`).
    XenosMemExport {
        address: Expr,
        value: Expr,
        element: u32,
    },
}

impl Module {
    /// Total statement count, recursively (used for resource caps and statistics).
    pub fn stmt_count(&self) -> usize {
        fn count(body: &[Stmt]) -> usize {
            body.iter()
                .map(|s| {
                    1 + match s {
                        Stmt::If { then_body, else_body, .. } => count(then_body) + count(else_body),
                        Stmt::Loop { body } => count(body),
                        _ => 0,
                    }
                })
                .sum()
        }
        count(&self.body)
    }
}

/// Helpers for building expressions tersely in frontends.
pub mod build {
    use super::*;

    pub fn read(file: RegFile, index: u32, swizzle: [u8; 4]) -> Expr {
        Expr::Read(Src { reg: RegRef::fixed(file, index), swizzle, abs: false, negate: false })
    }
    pub fn un(op: UnOp, a: Expr) -> Expr {
        Expr::Unary(op, Box::new(a))
    }
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }
    pub fn dot(n: u8, a: Expr, b: Expr) -> Expr {
        Expr::Dot(n, Box::new(a), Box::new(b))
    }
    pub fn swz(a: Expr, s: [u8; 4]) -> Expr {
        Expr::Swizzle(Box::new(a), s)
    }
    pub fn broadcast(a: Expr, lane: u8) -> Expr {
        swz(a, [lane; 4])
    }
}
