//! The ring-buffer model shrec translates GX2 geometry shaders with (docs/gx2.md "GX2 geometry
//! shaders"). On the hardware the VS runs as ES and writes its outputs with MEM_RING into the
//! ESGS ring; the GS reads each input vertex with VTX fetches from that ring (per-vertex offsets
//! in R0/R1), writes its vertices with MEM_RING into the GSVS ring and signals EMIT/CUT; the copy
//! shader (the GS struct's second program, run as the hardware VS) reads the GSVS ring with VTX
//! fetches and exports POS/PARAM. Both the lowering and the interpreter implement this model;
//! the field checks that decide what is accepted live here so both accept the same programs.
//!
//! Choices (the hardware's own ring layout is not documented publicly):
//! - ESGS: input vertex k's item starts at dword `k * ESGS_ITEM_DWORDS`; the GS starts with
//!   R0 = (item 0, item 1, primitive id, item 2) and R1 = (item 3, item 4, item 5, 0) as integers
//!   (the Mesa r600 register assignment); a ring fetch reads the float4 at dword
//!   `asint(src) + OFFSET / 4`. Only the float4 slots `0..=max OFFSET / 16` of the program's
//!   ring fetches of input vertices 0-2 (triangle input) exist; any other address reads 0.
//! - The ES writes slot `ARRAY_BASE / 4 + burst` of its own item (ELEM_SIZE 3: one float4 per
//!   element).
//! - GSVS: one invocation-local array of `ringItemSize / 4` float4s; MEM_RING writes element
//!   `ARRAY_BASE / 4 + burst (+ asint(R[INDEX_GPR].x) for WRITE_IND)`; at the n-th EMIT the copy
//!   shader runs with R0.x = `n * SQ_GS_VERT_ITEMSIZE` (dwords) and its fetch reads element
//!   `(R0.x + OFFSET / 4) / 4`. Elements outside the array are not written / read as 0.

use super::isa::VtxInst;

/// BUFFER_ID of the ESGS ring in a GS and of the GSVS ring in a copy shader (decaf
/// `GS_GSIN_RESOURCE` / `VS_GSOUT_RESOURCE` minus the stage's resource base).
pub const RING_BUFFER_ID: u32 = 0x9F;
/// Dwords per input vertex item of the ESGS ring.
pub const ESGS_ITEM_DWORDS: u32 = 128;
/// Float4 slots an ES can write (ESGS_ITEM_DWORDS / 4).
pub const ES_SLOTS: u32 = ESGS_ITEM_DWORDS / 4;
/// Input vertices of the translated GS (the draw's primitive type is run-time state; shrec
/// translates for triangles).
pub const GS_INPUT_VERTICES: u32 = 3;
/// R0 / R1 at GS start, lane by lane: the ESGS item offset of input vertex k, or `None` for
/// R0.z (the primitive id) and R1.w (0).
pub const GS_OFFSET_REGS: [[Option<u32>; 4]; 2] = [[Some(0), Some(1), None, Some(2)], [Some(3), Some(4), Some(5), None]];
/// VTX data format FMT_32_32_32_32_FLOAT.
pub const FMT_32_32_32_32_FLOAT: u32 = 0x23;
/// HLSL limit on a GS's `maxvertexcount × output scalars`.
pub const HLSL_GS_MAX_SCALARS: u32 = 1024;

/// Why a VTX fetch is not a ring read shrec translates exactly (`None`: it is one).
pub fn ring_fetch_problem(v: &VtxInst) -> Option<String> {
    if v.buffer_id != RING_BUFFER_ID {
        return Some(format!("{} from buffer {} (only the ring, buffer {RING_BUFFER_ID}, is a GS / copy-shader input)", v.name, v.buffer_id));
    }
    if v.name != "FETCH" {
        return Some(format!("{} on the ring", v.name));
    }
    if v.src_rel || v.dst_rel {
        return Some("ring FETCH with relative GPR addressing".into());
    }
    if v.fetch_type != 2 {
        return Some(format!("ring FETCH with FETCH_TYPE {} (only NO_INDEX_OFFSET)", v.fetch_type));
    }
    if !v.offset.is_multiple_of(16) {
        return Some(format!("ring FETCH at OFFSET {} (not a float4 boundary)", v.offset));
    }
    if v.endian_swap != 0 {
        return Some(format!("ring FETCH with ENDIAN_SWAP {}", v.endian_swap));
    }
    if !v.use_const_fields && v.data_format != FMT_32_32_32_32_FLOAT {
        return Some(format!("ring FETCH with DATA_FORMAT {} (only the ring's 32_32_32_32_FLOAT)", v.data_format));
    }
    None
}

/// Why a MEM_RING export is not translated exactly (`None`: it is). `indexed_ok`: WRITE_IND is
/// allowed (GS); `slots`: ARRAY_BASE / 4 + burst must stay below it (ES).
pub fn mem_ring_problem(
    ty: u32,
    array_base: u32,
    elem_size: u32,
    array_size: u32,
    rw_rel: bool,
    burst: u32,
    indexed_ok: bool,
    slots: Option<u32>,
) -> Option<String> {
    if elem_size != 3 {
        return Some(format!("MEM_RING with ELEM_SIZE {elem_size} (only 3: one float4 per element)"));
    }
    if !array_base.is_multiple_of(4) {
        return Some(format!("MEM_RING at ARRAY_BASE {array_base} (not a float4 boundary)"));
    }
    if array_size != 0xFFF {
        return Some(format!("MEM_RING with ARRAY_SIZE {array_size} (write clipping by ARRAY_SIZE is not modelled; compilers write 0xFFF)"));
    }
    if rw_rel {
        return Some("MEM_RING with relative GPR".into());
    }
    if ty & 1 == 1 && !indexed_ok {
        return Some("MEM_RING WRITE_IND in a vertex shader (ES writes are not indexed)".into());
    }
    if let Some(n) = slots {
        if array_base / 4 + burst >= n {
            return Some(format!("MEM_RING to ESGS slot {} (an ES item holds {n})", array_base / 4 + burst));
        }
    }
    None
}

/// Whether a program writes MEM_RING (a VS that does is an ES).
pub fn writes_ring(p: &super::isa::Program) -> bool {
    p.cfs.iter().any(|(c, _)| matches!(c.cf, super::isa::Cf::Export { op: super::isa::ExpOp::MEM_RING, .. }))
}
