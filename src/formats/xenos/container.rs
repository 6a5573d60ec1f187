//! The D3D9-for-Xenon shader container (docs/isa/xenos.md §4): the 36-byte header, the scanner's
//! acceptance rule (XenosRecomp `main.cpp`, notes §3) and the structural sanity checks shrec adds
//! on top of it (notes §18).
//!
//! This module only reads what detection and listing need (header, the shader header's microcode
//! range, the cache key). Full parsing (constant table, definition table, vertex elements,
//! interpolators) is a later issue and belongs next to [`ContainerHeader`]: every offset it reads is
//! relative to the container start, like the ones here.

use super::error::{container as err, ContainerError as E, XenosError};

/// Size of the container header (`ShaderContainer` in XenosRecomp `shader.h`).
pub const HEADER_SIZE: usize = 36;
/// `flags & FLAGS_MASK == FLAGS_MAGIC` is XenosRecomp's magic test.
pub const FLAGS_MASK: u32 = 0xFFFF_FF00;
pub const FLAGS_MAGIC: u32 = 0x102A_1100;
/// Size of the shader header at `shaderOffset` that this module reads (physicalOffset, size,
/// program control, context misc, field10, interpolatorInfo).
pub const SHADER_HEADER_SIZE: usize = 0x18;

/// Big-endian u32 at `off`, or `None` past the end.
#[inline]
pub(crate) fn be32(buf: &[u8], off: usize) -> Option<u32> {
    let b = buf.get(off..off.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The container header, all fields big-endian in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerHeader {
    /// `0x102A11xx`; bit 0: 1 vertex, 0 pixel.
    pub flags: u32,
    /// Size of the CPU-side metadata part = offset of the physical part.
    pub virtual_size: u32,
    /// Size of the GPU part (microcode + literal constants).
    pub physical_size: u32,
    /// 0 or the offset of an fxc `/XZi` debug block.
    pub field_0c: u32,
    pub constant_table_offset: u32,
    pub definition_table_offset: u32,
    pub shader_offset: u32,
    pub field_1c: u32,
    pub field_20: u32,
}

impl ContainerHeader {
    /// Reads the header at the start of `buf` (no validation besides length).
    pub fn read(buf: &[u8]) -> Option<ContainerHeader> {
        if buf.len() < HEADER_SIZE {
            return None;
        }
        let w = |i: usize| be32(buf, i * 4).unwrap_or(0);
        Some(ContainerHeader {
            flags: w(0),
            virtual_size: w(1),
            physical_size: w(2),
            field_0c: w(3),
            constant_table_offset: w(4),
            definition_table_offset: w(5),
            shader_offset: w(6),
            field_1c: w(7),
            field_20: w(8),
        })
    }

    pub fn has_magic(&self) -> bool {
        self.flags & FLAGS_MASK == FLAGS_MAGIC
    }

    pub fn is_vertex(&self) -> bool {
        self.flags & 1 == 1
    }

    /// `virtualSize + physicalSize` computed the way XenosRecomp (and UnleashedRecomp's run-time
    /// lookup, `function[1] + function[2]`) compute it: a 32-bit sum that wraps. The scanner uses
    /// this value to accept and to advance so that it visits exactly the offsets XR visits.
    pub fn xr_data_size(&self) -> u32 {
        self.virtual_size.wrapping_add(self.physical_size)
    }

    /// The true (non-wrapping) container size.
    pub fn data_size(&self) -> u64 {
        self.virtual_size as u64 + self.physical_size as u64
    }

    /// XenosRecomp's acceptance test for a header at a position with `remaining` bytes left in
    /// the file: magic, `virtualSize + physicalSize <= remaining` (32-bit sum), and the words at
    /// 0x1C and 0x20 zero.
    pub fn xr_accepts(&self, remaining: usize) -> bool {
        self.has_magic() && (self.xr_data_size() as u64) <= remaining as u64 && self.field_1c == 0 && self.field_20 == 0
    }
}

/// What [`check`] found about one container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerInfo {
    pub header: ContainerHeader,
    /// Container size in bytes (`virtualSize + physicalSize`).
    pub size: usize,
    /// Microcode range, relative to the container start.
    pub microcode_offset: usize,
    pub microcode_size: usize,
}

/// Structural checks on a container that starts at `buf[0]` (`buf` may extend past it):
/// magic, size ≥ 36 and inside `buf` without 32-bit wrap-around, `constantTableOffset` (0 is
/// allowed here: XenosRecomp asserts on it, but the container is real and the translator reports
/// it), `definitionTableOffset` and the shader header inside the virtual part, and the microcode
/// range `[physicalOffset, physicalOffset + size)` inside the physical part.
/// Every error carries the offset (relative to the container) of the field that is wrong.
pub fn check(buf: &[u8]) -> Result<ContainerInfo, XenosError> {
    let h = ContainerHeader::read(buf).ok_or_else(|| err(0, E::HeaderTruncated { need: HEADER_SIZE, available: buf.len() }))?;
    if !h.has_magic() {
        return Err(err(0, E::BadMagic { flags: h.flags }));
    }
    let size = h.data_size();
    if size != h.xr_data_size() as u64 {
        return Err(err(4, E::SizeOverflow { virtual_size: h.virtual_size, physical_size: h.physical_size }));
    }
    if size < HEADER_SIZE as u64 {
        return Err(err(4, E::SmallerThanHeader { size, header: HEADER_SIZE }));
    }
    if size > buf.len() as u64 {
        return Err(err(4, E::Truncated { size, available: buf.len() }));
    }
    let vsize = h.virtual_size as u64;
    if (h.virtual_size as usize) < HEADER_SIZE {
        return Err(err(4, E::VirtualSizeBelowHeader { virtual_size: h.virtual_size }));
    }
    if h.constant_table_offset != 0 && h.constant_table_offset as u64 + 4 > vsize {
        let reason = E::TableOutsideVirtual { field: "constantTableOffset", value: h.constant_table_offset, virtual_size: h.virtual_size };
        return Err(err(0x10, reason));
    }
    if h.definition_table_offset != 0 && h.definition_table_offset as u64 >= vsize {
        let reason = E::TableOutsideVirtual { field: "definitionTableOffset", value: h.definition_table_offset, virtual_size: h.virtual_size };
        return Err(err(0x14, reason));
    }
    let so = h.shader_offset as u64;
    if so < HEADER_SIZE as u64 || so + SHADER_HEADER_SIZE as u64 > vsize {
        return Err(err(0x18, E::ShaderHeaderOutside { shader_offset: h.shader_offset, virtual_size: h.virtual_size }));
    }
    let so = so as usize;
    // Both reads are inside [0, virtualSize) ⊂ buf, checked above.
    let phys_off = be32(buf, so).unwrap_or(0);
    let code_size = be32(buf, so + 4).unwrap_or(0);
    if phys_off as u64 + code_size as u64 > h.physical_size as u64 {
        return Err(err(so as u64, E::MicrocodeOutside { start: phys_off, size: code_size, physical_size: h.physical_size }));
    }
    Ok(ContainerInfo { header: h, size: size as usize, microcode_offset: (vsize + phys_off as u64) as usize, microcode_size: code_size as usize })
}

/// The XenosRecomp cache key: XXH3-64, seed 0, of the container's bytes
/// `[0, virtualSize + physicalSize)` exactly as found in the file (big-endian, unmodified). This is
/// what UnleashedRecomp computes at run time over the pointer the game passes to
/// `CreateVertexShader` / `CreatePixelShader`.
pub fn key(container: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(container)
}

// ---------------------------------------------------------------------------------------------
// Full parse: constant table, definition table, shader header, vertex elements, interpolators.
// ---------------------------------------------------------------------------------------------

/// D3DX register sets (`D3DXREGISTER_SET`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegisterSet {
    Bool,
    Int4,
    Float4,
    Sampler,
    Other(u16),
}

impl RegisterSet {
    fn from_u16(v: u16) -> Self {
        match v {
            0 => RegisterSet::Bool,
            1 => RegisterSet::Int4,
            2 => RegisterSet::Float4,
            3 => RegisterSet::Sampler,
            o => RegisterSet::Other(o),
        }
    }
}

/// `D3DXSHADER_TYPEINFO`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeInfo {
    pub class: u16,
    pub ty: u16,
    pub rows: u16,
    pub columns: u16,
    pub elements: u16,
    pub struct_members: u16,
}

/// One `D3DXSHADER_CONSTANTINFO`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstantInfo {
    pub name: String,
    pub register_set: RegisterSet,
    pub register_index: u16,
    pub register_count: u16,
    pub type_info: Option<TypeInfo>,
    /// Default value dwords (`register_count * 4` for float/int sets), when the table has one.
    pub default_value: Option<Vec<u32>>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConstantTable {
    pub creator: String,
    /// 0xFFFF0300 = ps_3_0, 0xFFFE0300 = vs_3_0.
    pub version: u32,
    pub target: String,
    pub flags: u32,
    pub constants: Vec<ConstantInfo>,
}

/// A literal float4 block from the definition table (`def c#`), register numbers as in the
/// microcode (the pixel-shader 256 bias already removed).
#[derive(Clone, Debug, PartialEq)]
pub struct FloatDef {
    pub register: u32,
    pub values: Vec<f32>,
}

/// A literal integer constant (`defi i#`): 4 packed int8 (count, start, step, unused).
#[derive(Clone, Debug, PartialEq)]
pub struct IntDef {
    pub register: u32,
    pub values: Vec<u32>,
}

/// `VertexElement`: vfetch slot (instruction address) → D3DDECLUSAGE / index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexElement {
    pub address: u32,
    pub usage: u32,
    pub usage_index: u32,
}

/// `Interpolator`: interpolator register ↔ D3DDECLUSAGE / index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interpolator {
    pub reg: u32,
    pub usage: u32,
    pub usage_index: u32,
}

/// Everything shrec reads from a container.
#[derive(Clone, Debug)]
pub struct Container {
    pub info: ContainerInfo,
    pub constant_table: Option<ConstantTable>,
    pub float_defs: Vec<FloatDef>,
    pub int_defs: Vec<IntDef>,
    pub program_control: u32,
    pub context_misc: u32,
    pub interpolator_info: u32,
    pub vertex_elements: Vec<VertexElement>,
    pub interpolators: Vec<Interpolator>,
    /// Pixel shaders: bits 0-3 COLOR0-3, bit 4 DEPTH.
    pub ps_outputs: u32,
    /// Microcode dwords (big-endian words already decoded).
    pub microcode: Vec<u32>,
}

impl Container {
    pub fn is_vertex(&self) -> bool {
        self.info.header.is_vertex()
    }
}

pub const DECL_USAGE_NAMES: [&str; 14] = [
    "position",
    "blendweight",
    "blendindices",
    "normal",
    "psize",
    "texcoord",
    "tangent",
    "binormal",
    "tessfactor",
    "positiont",
    "color",
    "fog",
    "depth",
    "sample",
];

struct Reader<'a> {
    buf: &'a [u8],
}

impl Reader<'_> {
    fn u32(&self, off: u64, what: &'static str) -> Result<u32, XenosError> {
        usize::try_from(off).ok().and_then(|o| be32(self.buf, o)).ok_or_else(|| err(off, E::FieldOutside { what, offset: off }))
    }
    fn u16(&self, off: u64, what: &'static str) -> Result<u16, XenosError> {
        let o = usize::try_from(off).ok();
        o.and_then(|o| self.buf.get(o..o.checked_add(2)?))
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| err(off, E::FieldOutside { what, offset: off }))
    }
    fn cstr(&self, off: u64, what: &'static str) -> Result<String, XenosError> {
        let o = usize::try_from(off).ok().filter(|&o| o < self.buf.len()).ok_or_else(|| err(off, E::StringOutside { what, offset: off }))?;
        let end = self.buf[o..].iter().position(|&b| b == 0).ok_or_else(|| err(off, E::StringUnterminated { what, offset: off }))?;
        Ok(self.buf[o..o + end].iter().map(|&b| b as char).collect())
    }
}

/// Parses a whole container (see the module notes for every layout). Every read is bounds-checked
/// against the container (`virtualSize + physicalSize`); errors name the offending offset.
pub fn parse(buf: &[u8]) -> Result<Container, XenosError> {
    let info = check(buf)?;
    let buf = &buf[..info.size];
    let r = Reader { buf };
    let h = info.header;
    let vsize = h.virtual_size as u64;

    // Constant table.
    let constant_table = if h.constant_table_offset == 0 {
        None
    } else {
        let base = h.constant_table_offset as u64 + 4;
        let _size = r.u32(base - 4, "constant table size")?;
        let creator_off = r.u32(base + 4, "constant table Creator")?;
        let version = r.u32(base + 8, "constant table Version")?;
        let count = r.u32(base + 12, "constant table Constants")?;
        let info_off = r.u32(base + 16, "constant table ConstantInfo")?;
        let flags = r.u32(base + 20, "constant table Flags")?;
        let target_off = r.u32(base + 24, "constant table Target")?;
        if count > 4096 {
            return Err(err(base + 12, E::TooManyConstants { count }));
        }
        let creator = if creator_off == 0 { String::new() } else { r.cstr(base + creator_off as u64, "Creator")? };
        let target = if target_off == 0 { String::new() } else { r.cstr(base + target_off as u64, "Target")? };
        let mut constants = Vec::with_capacity(count as usize);
        for i in 0..count as u64 {
            let o = base + info_off as u64 + 20 * i;
            let name_off = r.u32(o, "ConstantInfo.Name")?;
            let set = r.u16(o + 4, "ConstantInfo.RegisterSet")?;
            let index = r.u16(o + 6, "ConstantInfo.RegisterIndex")?;
            let rcount = r.u16(o + 8, "ConstantInfo.RegisterCount")?;
            let ti = r.u32(o + 12, "ConstantInfo.TypeInfo")?;
            let dv = r.u32(o + 16, "ConstantInfo.DefaultValue")?;
            let name = r.cstr(base + name_off as u64, "constant name")?;
            let type_info = if ti == 0 {
                None
            } else {
                let t = base + ti as u64;
                Some(TypeInfo {
                    class: r.u16(t, "TypeInfo.Class")?,
                    ty: r.u16(t + 2, "TypeInfo.Type")?,
                    rows: r.u16(t + 4, "TypeInfo.Rows")?,
                    columns: r.u16(t + 6, "TypeInfo.Columns")?,
                    elements: r.u16(t + 8, "TypeInfo.Elements")?,
                    struct_members: r.u16(t + 10, "TypeInfo.StructMembers")?,
                })
            };
            let register_set = RegisterSet::from_u16(set);
            let default_value = if dv == 0 {
                None
            } else {
                let n = match register_set {
                    RegisterSet::Float4 | RegisterSet::Int4 => rcount as u64 * 4,
                    _ => rcount as u64,
                };
                let mut v = Vec::with_capacity(n as usize);
                for k in 0..n {
                    v.push(r.u32(base + dv as u64 + 4 * k, "DefaultValue")?);
                }
                Some(v)
            };
            constants.push(ConstantInfo { name, register_set, register_index: index, register_count: rcount, type_info, default_value });
        }
        Some(ConstantTable { creator, version, target, flags, constants })
    };

    // Definition table.
    let is_ps = !h.is_vertex();
    let mut float_defs = Vec::new();
    let mut int_defs = Vec::new();
    if h.definition_table_offset != 0 {
        let mut d = h.definition_table_offset as u64 + 20;
        loop {
            let w = r.u32(d, "float definition")?;
            if w == 0 {
                d += 4;
                break;
            }
            let reg = w >> 16;
            let cnt = w & 0xFFFF;
            let po = r.u32(d + 4, "float definition offset")? as u64;
            let reg = if is_ps { reg.checked_sub(256).ok_or_else(|| err(d, E::PixelFloatDefinitionBelow256 { register: reg }))? } else { reg };
            let mut values = Vec::with_capacity(cnt as usize);
            for k in 0..cnt as u64 {
                values.push(f32::from_bits(r.u32(vsize + po + 4 * k, "float definition value")?));
            }
            float_defs.push(FloatDef { register: reg, values });
            d += 8;
        }
        loop {
            let w = r.u32(d, "int definition")?;
            if w == 0 {
                break;
            }
            let reg = w >> 16;
            let cnt = w & 0xFFFF;
            let mut values = Vec::with_capacity(cnt as usize);
            for k in 0..cnt as u64 {
                values.push(r.u32(d + 4 + 4 * k, "int definition value")?);
            }
            let reg = reg.checked_sub(0x2320).map(|x| x / 4).ok_or_else(|| err(d, E::IntDefinitionBelow2320 { register: reg }))?;
            int_defs.push(IntDef { register: reg, values });
            d += 4 + 4 * cnt as u64;
        }
    }

    // Shader header.
    let so = h.shader_offset as u64;
    let program_control = r.u32(so + 8, "program control")?;
    let context_misc = r.u32(so + 12, "context misc")?;
    let interpolator_info = r.u32(so + 20, "interpolator info")?;
    let n_interp = (interpolator_info >> 5) & 0x1F;
    let mut vertex_elements = Vec::new();
    let mut interpolators = Vec::new();
    let mut ps_outputs = 0;
    let interp = |v: u32| Interpolator { usage_index: v & 0xF, usage: (v >> 4) & 0xF, reg: (v >> 8) & 0xF };
    let interp_base;
    if h.is_vertex() {
        let f18 = r.u32(so + 0x18, "vertex shader field18")? as u64;
        let nve = r.u32(so + 0x1C, "vertex element count")? as u64;
        if f18 > 1024 || nve > 1024 {
            return Err(err(so + 0x18, E::ImplausibleVertexHeader { field18: f18, elements: nve }));
        }
        let e0 = so + 0x24 + 4 * f18;
        for i in 0..nve {
            let v = r.u32(e0 + 4 * i, "vertex element")?;
            vertex_elements.push(VertexElement { address: v & 0xFFF, usage: (v >> 12) & 0xF, usage_index: (v >> 16) & 0xF });
        }
        interp_base = e0 + 4 * nve;
    } else {
        ps_outputs = r.u32(so + 0x1C, "pixel outputs")?;
        interp_base = so + 0x20;
    }
    for i in 0..n_interp as u64 {
        interpolators.push(interp(r.u32(interp_base + 4 * i, "interpolator")?));
    }

    let mut microcode = Vec::with_capacity(info.microcode_size / 4);
    if info.microcode_size % 12 != 0 {
        return Err(err(so + 4, E::MicrocodeSize { size: info.microcode_size }));
    }
    for k in 0..info.microcode_size / 4 {
        microcode.push(be32(buf, info.microcode_offset + 4 * k).unwrap_or(0));
    }
    Ok(Container {
        info,
        constant_table,
        float_defs,
        int_defs,
        program_control,
        context_misc,
        interpolator_info,
        vertex_elements,
        interpolators,
        ps_outputs,
        microcode,
    })
}
