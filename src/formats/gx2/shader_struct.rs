//! What GFD and SHARCFB share: the GX2 shader structs (docs/isa/gx2.md §2), read in either byte
//! order, and the GX2 cache key.
//!
//! For scanning only the program size / pointer fields are read. Full decoding of the structs
//! (registers, uniform blocks and vars, samplers, attribs) extends [`ShaderKind`] and the readers
//! here; both containers call into this module so there is one decoder, generic over [`Endian`].

use super::error::container;
use crate::formats::container_fault::ContainerFault;
use crate::formats::{ShaderError, Stage};

/// Byte order of a container's structs (GFD: always big; SHARCFB: from its magic / endian field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Big,
    Little,
}

impl Endian {
    /// u32 at `off`, or `None` if it does not fit. Unaligned offsets are fine.
    #[inline]
    pub fn u32_at(self, buf: &[u8], off: usize) -> Option<u32> {
        let b: [u8; 4] = buf.get(off..off.checked_add(4)?)?.try_into().ok()?;
        Some(match self {
            Endian::Big => u32::from_be_bytes(b),
            Endian::Little => u32::from_le_bytes(b),
        })
    }

    /// As [`Endian::u32_at`] but an out-of-bounds read is a [`ShaderError`] naming `what`.
    pub fn read_u32(self, buf: &[u8], off: usize, what: &str) -> Result<u32, ShaderError> {
        self.u32_at(buf, off).ok_or_else(|| {
            container(off as u64, ContainerFault::OutOfBounds(format!("{what}: 4 bytes at 0x{off:X} lie past the end (0x{:X})", buf.len())))
        })
    }
}

/// Which GX2 shader struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderKind {
    Vertex,
    Pixel,
    Geometry,
}

impl ShaderKind {
    pub fn stage(self) -> Stage {
        match self {
            ShaderKind::Vertex => Stage::Vertex,
            ShaderKind::Pixel => Stage::Pixel,
            ShaderKind::Geometry => Stage::Geometry,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShaderKind::Vertex => "vertex",
            ShaderKind::Pixel => "pixel",
            ShaderKind::Geometry => "geometry",
        }
    }

    /// Size of the struct: GX2VertexShader 0x134, GX2PixelShader 0xE8, GX2GeometryShader 0xC0
    /// (decaf / Cemu / the GFD reader; wut's 0xB0 omits the second GX2RBuffer).
    pub fn struct_size(self) -> usize {
        match self {
            ShaderKind::Vertex => 0x134,
            ShaderKind::Pixel => 0xE8,
            ShaderKind::Geometry => 0xC0,
        }
    }

    /// Smallest struct size a container may carry: GFD block major 0 pixel headers are 0xD8
    /// (no GX2RBuffer); the program fields come before that.
    pub fn min_struct_size(self) -> usize {
        match self {
            ShaderKind::Pixel => 0xD8,
            k => k.struct_size(),
        }
    }

    /// Offsets of the program `size` and program pointer fields.
    pub fn program_fields(self) -> (usize, usize) {
        match self {
            ShaderKind::Vertex => (0xD0, 0xD4),
            ShaderKind::Pixel => (0xA4, 0xA8),
            ShaderKind::Geometry => (0x4C, 0x50),
        }
    }
}

/// The program fields of one GX2 shader struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramRef {
    /// Program (microcode) size in bytes.
    pub size: u32,
    /// Program pointer as stored: 0 in GFD (the program is a separate block), a plain offset from
    /// the struct start in SHARCFB.
    pub ptr: u32,
}

/// Reads the program size and pointer of the `kind` struct at `buf[base..]`, checking that the
/// struct (at least [`ShaderKind::min_struct_size`] bytes) fits.
pub fn read_program_ref(buf: &[u8], base: usize, kind: ShaderKind, e: Endian) -> Result<ProgramRef, ShaderError> {
    let need = kind.min_struct_size();
    if base.checked_add(need).is_none_or(|end| end > buf.len()) {
        return Err(container(
            base as u64,
            ContainerFault::OutOfBounds(format!(
                "GX2 {} shader struct at 0x{base:X} needs 0x{need:X} bytes, only 0x{:X} available",
                kind.name(),
                buf.len().saturating_sub(base)
            )),
        ));
    }
    let (so, po) = kind.program_fields();
    Ok(ProgramRef { size: e.read_u32(buf, base + so, "GX2 program size")?, ptr: e.read_u32(buf, base + po, "GX2 program pointer")? })
}

/// The GX2 cache key, the same for GFD and SHARCFB: XXH3-64 (seed 0) of the shader's program
/// (microcode) bytes, i.e. what the GX2 struct's program pointer and size designate. A shader
/// stored in both containers therefore has one key. The struct's registers are not part of the
/// key. Geometry shaders use [`key_geometry`].
pub fn key(program: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(program)
}

/// Key of a geometry shader: XXH3-64 (seed 0) of the GS program followed by its copy program
/// (the translation inlines the copy program at every EMIT), so two GS binaries differing only
/// in their copy programs get different keys. Without a copy program it equals [`key`].
pub fn key_geometry(program: &[u8], copy: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(program);
    h.update(copy);
    h.digest()
}

/// Reads a geometry shader's copy program (size 0x54, pointer 0x58) from `buf[base..]` in a
/// container whose pointers are plain offsets from the struct (SHARCFB). Size 0 = none.
pub fn read_copy_program(buf: &[u8], base: usize, e: Endian) -> Result<Vec<u8>, ShaderError> {
    let size = e.read_u32(buf, base + 0x54, "GX2 copy program size")? as usize;
    let ptr = e.read_u32(buf, base + 0x58, "GX2 copy program pointer")? as usize;
    if size == 0 {
        return Ok(Vec::new());
    }
    base.checked_add(ptr).and_then(|a| a.checked_add(size).and_then(|end| buf.get(a..end))).map(<[u8]>::to_vec).ok_or_else(|| {
        container(base as u64 + 0x58, ContainerFault::OutOfBounds(format!("GX2 copy program [0x{ptr:X}, +0x{size:X}) lies outside the shader data")))
    })
}

// ---------------------------------------------------------------------------------------------
// Full struct decoding (registers, variables, program), one decoder for both containers.
// ---------------------------------------------------------------------------------------------

/// GX2UniformBlock (0x0C): name, offset (= buffer location / binding), size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniformBlock {
    pub name: String,
    pub offset: u32,
    pub size: u32,
}

/// GX2UniformVar (0x14): `offset` is in 32-bit units (vec4 register × 4 + component);
/// `block` −1 = the register file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniformVar {
    pub name: String,
    pub ty: u32,
    pub count: u32,
    pub offset: u32,
    pub block: i32,
}

/// GX2UniformInitialValue (0x14): four float bit patterns and a dword offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitialValue {
    pub value: [u32; 4],
    pub offset: u32,
}

/// GX2LoopVar (0x08).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopVar {
    pub offset: u32,
    pub value: u32,
}

/// GX2SamplerVar (0x0C): `ty` is a GX2SamplerType ([`sampler_type`]); location = texture unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SamplerVar {
    pub name: String,
    pub ty: u32,
    pub location: u32,
}

/// GX2AttribVar (0x10): location = the fetch-shader semantic id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttribVar {
    pub name: String,
    pub ty: u32,
    pub count: u32,
    pub location: u32,
}

/// A fully decoded GX2 shader: the struct's words (pointer fields as stored in the container),
/// its variable arrays and its program. Containers differ only in how pointers resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gx2Shader {
    pub kind: ShaderKind,
    /// The struct as 32-bit words in host order (`struct_size / 4` words; a 0xD8-byte GFD v0
    /// pixel struct is zero-extended). Use [`Gx2Shader::reg`] with the byte offsets of notes §2.
    pub words: Vec<u32>,
    pub uniform_blocks: Vec<UniformBlock>,
    pub uniform_vars: Vec<UniformVar>,
    pub initial_values: Vec<InitialValue>,
    pub loop_vars: Vec<LoopVar>,
    pub sampler_vars: Vec<SamplerVar>,
    pub attrib_vars: Vec<AttribVar>,
    /// Latte microcode (little-endian 32-bit words in both containers).
    pub program: Vec<u8>,
    /// Geometry shaders: the copy ("DC") program (GX2GeometryShader 0x54 size / 0x58 pointer;
    /// GFD block type 10); empty for other kinds.
    pub copy_program: Vec<u8>,
}

/// Byte offsets of the `(count, pointer)` pairs and the mode field per struct kind.
#[derive(Clone, Copy, Debug)]
pub struct VarFields {
    pub mode: usize,
    pub uniform_blocks: usize,
    pub uniform_vars: usize,
    pub initial_values: usize,
    pub loop_vars: usize,
    pub sampler_vars: usize,
    /// Vertex shaders only.
    pub attrib_vars: Option<usize>,
}

impl ShaderKind {
    pub fn var_fields(self) -> VarFields {
        match self {
            ShaderKind::Vertex => VarFields {
                mode: 0xD8,
                uniform_blocks: 0xDC,
                uniform_vars: 0xE4,
                initial_values: 0xEC,
                loop_vars: 0xF4,
                sampler_vars: 0xFC,
                attrib_vars: Some(0x104),
            },
            ShaderKind::Pixel => VarFields {
                mode: 0xAC,
                uniform_blocks: 0xB0,
                uniform_vars: 0xB8,
                initial_values: 0xC0,
                loop_vars: 0xC8,
                sampler_vars: 0xD0,
                attrib_vars: None,
            },
            ShaderKind::Geometry => VarFields {
                mode: 0x5C,
                uniform_blocks: 0x60,
                uniform_vars: 0x68,
                initial_values: 0x70,
                loop_vars: 0x78,
                sampler_vars: 0x80,
                attrib_vars: None,
            },
        }
    }
}

/// GX2ShaderMode.
pub const MODE_UNIFORM_REGISTER: u32 = 0;
pub const MODE_UNIFORM_BLOCK: u32 = 1;

impl Gx2Shader {
    /// The struct word at byte offset `off` (0 when past the stored struct).
    pub fn reg(&self, off: usize) -> u32 {
        self.words.get(off / 4).copied().unwrap_or(0)
    }
    pub fn mode(&self) -> u32 {
        self.reg(self.kind.var_fields().mode)
    }
    /// NUM_GPRS of SQ_PGM_RESOURCES_* (word 0 of every struct).
    pub fn num_gprs(&self) -> u32 {
        self.reg(0) & 0xFF
    }
}

/// Upper bound on any array count (a corrupt count must not make us allocate gigabytes).
const MAX_VARS: u32 = 0x10000;

/// Decodes the `kind` struct at `buf[base..]` in byte order `e`. `resolve(ptr)` maps a stored
/// pointer to an offset in `buf` (GFD: tag-checked block-relative offsets; SHARCFB: `base + ptr`)
/// or `None` when it is invalid; `program` is the microcode, located by the container.
pub fn decode_struct(
    buf: &[u8],
    base: usize,
    kind: ShaderKind,
    e: Endian,
    struct_len: usize,
    resolve: &dyn Fn(u32) -> Option<usize>,
    program: Vec<u8>,
) -> Result<Gx2Shader, ShaderError> {
    let len = struct_len.min(kind.struct_size());
    if len < kind.min_struct_size() || base + len > buf.len() {
        return Err(container(base as u64, ContainerFault::OutOfBounds(format!("GX2 {} shader struct truncated", kind.name()))));
    }
    let mut words: Vec<u32> = (0..len / 4).map(|i| e.u32_at(buf, base + i * 4).unwrap_or(0)).collect();
    words.resize(kind.struct_size() / 4, 0);
    let f = kind.var_fields();
    let w = |off: usize| words[off / 4];
    let string = |ptr: u32, what: &str| -> Result<String, ShaderError> {
        let at = resolve(ptr).filter(|&a| a < buf.len()).ok_or_else(|| {
            container(base as u64, ContainerFault::OutOfBounds(format!("{what}: name pointer 0x{ptr:08X} does not resolve inside the shader data")))
        })?;
        let raw = &buf[at..];
        let end =
            raw.iter().position(|&c| c == 0).ok_or_else(|| container(at as u64, ContainerFault::BadValue(format!("{what}: unterminated name"))))?;
        Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
    };
    // (count, element offset iterator) for an array field
    let array = |field: usize, elem: usize, what: &str| -> Result<Vec<usize>, ShaderError> {
        let (count, ptr) = (w(field), w(field + 4));
        if count == 0 {
            return Ok(Vec::new());
        }
        if count > MAX_VARS {
            return Err(container(base as u64 + field as u64, ContainerFault::BadValue(format!("{what}: count {count} is implausible"))));
        }
        let at = resolve(ptr).ok_or_else(|| {
            container(base as u64 + field as u64 + 4, ContainerFault::OutOfBounds(format!("{what}: pointer 0x{ptr:08X} does not resolve")))
        })?;
        let end = at as u64 + count as u64 * elem as u64;
        if end > buf.len() as u64 {
            return Err(container(at as u64, ContainerFault::OutOfBounds(format!("{what}: {count} entries at 0x{at:X} run past the shader data"))));
        }
        Ok((0..count as usize).map(|i| at + i * elem).collect())
    };
    let rd = |off: usize| e.u32_at(buf, off).unwrap_or(0);
    let mut uniform_blocks = Vec::new();
    for a in array(f.uniform_blocks, 0x0C, "uniform blocks")? {
        uniform_blocks.push(UniformBlock { name: string(rd(a), "uniform block")?, offset: rd(a + 4), size: rd(a + 8) });
    }
    let mut uniform_vars = Vec::new();
    for a in array(f.uniform_vars, 0x14, "uniform vars")? {
        uniform_vars.push(UniformVar {
            name: string(rd(a), "uniform var")?,
            ty: rd(a + 4),
            count: rd(a + 8),
            offset: rd(a + 12),
            block: rd(a + 16) as i32,
        });
    }
    let mut initial_values = Vec::new();
    for a in array(f.initial_values, 0x14, "uniform initial values")? {
        initial_values.push(InitialValue { value: [rd(a), rd(a + 4), rd(a + 8), rd(a + 12)], offset: rd(a + 16) });
    }
    let mut loop_vars = Vec::new();
    for a in array(f.loop_vars, 0x08, "loop vars")? {
        loop_vars.push(LoopVar { offset: rd(a), value: rd(a + 4) });
    }
    let mut sampler_vars = Vec::new();
    for a in array(f.sampler_vars, 0x0C, "sampler vars")? {
        sampler_vars.push(SamplerVar { name: string(rd(a), "sampler var")?, ty: rd(a + 4), location: rd(a + 8) });
    }
    let mut attrib_vars = Vec::new();
    if let Some(af) = f.attrib_vars {
        for a in array(af, 0x10, "attrib vars")? {
            attrib_vars.push(AttribVar { name: string(rd(a), "attrib var")?, ty: rd(a + 4), count: rd(a + 8), location: rd(a + 12) });
        }
    }
    Ok(Gx2Shader {
        kind,
        words,
        uniform_blocks,
        uniform_vars,
        initial_values,
        loop_vars,
        sampler_vars,
        attrib_vars,
        program,
        copy_program: Vec::new(),
    })
}

/// What a GX2SamplerVar's type declares: the texture's dimension as the IR binds it and
/// whether its sampler is a comparison (shadow) sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerDecl {
    pub dim: crate::ir::TexDim,
    pub compare: bool,
}

/// The GX2SamplerType values (the SDK's `GX2SamplerType`; docs/gx2.md "Sampler types"): the
/// declaration shrec translates, or why it does not. 1D samplers are bound as 2D textures (a
/// GX2 1D texture is one texel high), and 1D arrays likewise as 2D arrays, their slice in src.z
/// as on a 2D array (Mesa r600: "the array index is read from Z"; decaf and Cemu read y).
pub fn sampler_type(ty: u32) -> Result<SamplerDecl, &'static str> {
    use crate::ir::TexDim::*;
    let d = |dim, compare| Ok(SamplerDecl { dim, compare });
    match ty {
        0 | 1 => d(D2, false),
        3 => d(D3, false),
        4 => d(Cube, false),
        5 | 6 => d(D2, true),
        8 => d(Cube, true),
        9 | 10 => d(D2Array, false),
        11 | 12 => d(D2Array, true),
        13 => d(CubeArray, false),
        14 => d(CubeArray, true),
        2 | 7 => Err("a rectangle (unnormalized-coordinate) sampler"),
        15 | 27 | 39 => Err("a buffer sampler"),
        17 | 18 | 29 | 30 | 41 | 42 => Err("a multisample sampler"),
        19..=26 | 31..=38 => Err("an integer-format sampler"),
        _ => Err("an unknown sampler type"),
    }
}
