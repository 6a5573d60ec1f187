//! Xenos memory export (memexport): the rules the lowering and the reference interpreter share.
//!
//! Facts from Xenia's translators (shader_translator.cc, dxbc_shader_translator_memexport.cc,
//! xenos.h); no public hardware document describes memexport. A shader writes the export
//! address to eA (export register 32) and up to five data elements to eM0-eM4 (33-37), inside an
//! `alloc export` section:
//! - eA is four raw 32-bit words, usually `mad eA, r#.x, (0, 1, 0, 0), c_stream` with the stream
//!   constant the CPU wrote: x = 0x40000000 | base dword address (bits 0-29), y = 2^23 + base
//!   element index, z = 2^23 + format info, w = 2^23 + element count (y, z, w are floats in
//!   [2^23, 2^24): the low 23 bits are the integer). Anything else (x bits 30-31 ≠ 01, or y / z / w
//!   not of exponent 0x96) exports nothing.
//! - format info (low 23 bits of z): bits 0-2 endian swap, bits 8-13 ColorFormat, bit 16 signed,
//!   bit 17 integer (else normalized), bit 19 red/blue swap (eM x ↔ z before packing).
//! - eM# is element `index + #`; it is stored when `index + # < count`, at byte address
//!   `(x << 2) + ((index + #) << log2(element bytes))` (32-bit wrap; bits 30-31 of x drop out).
//! - When: every `alloc` (any type) and the end of the shader store the eM# written since the
//!   previous such point, with the eA value current at that point, then clear eM0-eM4 to 0 (a
//!   later partial write exports 0 in the other lanes); `alloc export` also sets eA to 0. A pixel
//!   shader stores before a kill discards the pixel (and nothing after). eM0-eM4 and eA start at 0.
//!
//! Formats (stored value, before the endian swap):
//! - 32_FLOAT / 32_32_FLOAT / 32_32_32_32_FLOAT: the raw bits of x / xy / xyzw (1 / 2 / 4 dwords).
//! - fixed point (8, 8_8, 8_8_8_8, 16, 16_16, 16_16_16_16, 2_10_10_10, 10_11_11, 11_11_10, 5_6_5,
//!   6_5_5, 1_5_5_5, 4_4_4_4 and aliases): per component of width n, NaN → 0, then
//!   unorm: saturate, × (2^n − 1) when n > 1, + 0.5, truncate;
//!   snorm: clamp [−1, 1], × (2^(n−1) − 1) when n > 2, ± 0.5 (sign of the value), truncate;
//!   uint: clamp [0, 2^n − 1], + 0.5, truncate; sint: clamp [−2^(n−1), 2^(n−1) − 1], ± 0.5,
//!   truncate (all f32 arithmetic); the low n bits packed from bit 0 in x, y, z, w order.
//!   16_16_16_16 is two dwords (x | y << 16, z | w << 16); 8- and 16-bit elements are stored
//!   into their bytes only (the rest of the dword is kept).
//! - 16_FLOAT / 16_16_FLOAT / 16_16_16_16_FLOAT: x / xy / xyzw converted to IEEE half floats
//!   by the host (HLSL `f32tof16`, as Xenia's `F32ToF16`: no NaN flush, no clamp), packed x | y
//!   << 16 (z | w << 16 in the second dword). The hardware's own f32 → f16 rounding is not
//!   documented; the reference ([`to_f16`]) determines only what every conforming host gives
//!   (see there): a value the host may round either way leaves the differing bytes undetermined.
//! - Nothing is stored for a format outside the table.
//!
//! Endian swap (bits 0-2), applied to each stored dword: 0 none, 1 8in16, 2 8in32, 3 16in32,
//! 4 8in64 (dword pairs exchanged, then 8in32), 5 8in128 (dwords reversed, then 8in32). A swap
//! unit larger than the element (e.g. 8in64 on a 32-bit element, 8in16 on an 8-bit one, 8in32 on
//! a 16-bit one) and the undefined values 6-7 store nothing: Xenia then swaps lanes that are not
//! part of the element, which cannot be what the hardware does.

/// Export registers: eA, then eM0-eM4.
pub const EA: u32 = 32;
pub const EM0: u32 = 33;
pub const EM_COUNT: u32 = 5;

/// How a format turns eM lanes into stored bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Raw f32 bits of the first `n` lanes.
    Float32(u32),
    /// Fixed-point components of these widths (r, g, b, a; 0 = absent), packed from bit 0.
    Fixed([u32; 4]),
    /// IEEE half floats of the first `n` lanes, two per dword from bit 0.
    Float16(u32),
}

#[derive(Clone, Copy, Debug)]
pub struct Format {
    /// ColorFormat value (bits 8-13 of the format info).
    pub id: u32,
    pub name: &'static str,
    pub kind: Kind,
}

impl Format {
    /// log2 of the element size in bytes.
    pub fn size_log2(&self) -> u32 {
        match self.kind {
            Kind::Float32(n) => 2 + n.trailing_zeros(),
            Kind::Float16(n) => 1 + n.trailing_zeros(),
            Kind::Fixed([16, 16, 16, 16]) => 3,
            Kind::Fixed(w) => (w.iter().sum::<u32>() / 8).trailing_zeros(),
        }
    }
}

/// The formats memexport stores (Xenia's ExportToMemory list).
pub const FORMATS: &[Format] = &[
    Format { id: 2, name: "8", kind: Kind::Fixed([8, 0, 0, 0]) },
    Format { id: 3, name: "1_5_5_5", kind: Kind::Fixed([5, 5, 5, 1]) },
    Format { id: 4, name: "5_6_5", kind: Kind::Fixed([5, 6, 5, 0]) },
    Format { id: 5, name: "6_5_5", kind: Kind::Fixed([5, 5, 6, 0]) },
    Format { id: 6, name: "8_8_8_8", kind: Kind::Fixed([8, 8, 8, 8]) },
    Format { id: 7, name: "2_10_10_10", kind: Kind::Fixed([10, 10, 10, 2]) },
    Format { id: 8, name: "8_A", kind: Kind::Fixed([8, 0, 0, 0]) },
    Format { id: 9, name: "8_B", kind: Kind::Fixed([8, 0, 0, 0]) },
    Format { id: 10, name: "8_8", kind: Kind::Fixed([8, 8, 0, 0]) },
    Format { id: 14, name: "8_8_8_8_A", kind: Kind::Fixed([8, 8, 8, 8]) },
    Format { id: 15, name: "4_4_4_4", kind: Kind::Fixed([4, 4, 4, 4]) },
    Format { id: 16, name: "10_11_11", kind: Kind::Fixed([11, 11, 10, 0]) },
    Format { id: 17, name: "11_11_10", kind: Kind::Fixed([10, 11, 11, 0]) },
    Format { id: 24, name: "16", kind: Kind::Fixed([16, 0, 0, 0]) },
    Format { id: 25, name: "16_16", kind: Kind::Fixed([16, 16, 0, 0]) },
    Format { id: 26, name: "16_16_16_16", kind: Kind::Fixed([16, 16, 16, 16]) },
    Format { id: 30, name: "16_FLOAT", kind: Kind::Float16(1) },
    Format { id: 31, name: "16_16_FLOAT", kind: Kind::Float16(2) },
    Format { id: 32, name: "16_16_16_16_FLOAT", kind: Kind::Float16(4) },
    Format { id: 36, name: "32_FLOAT", kind: Kind::Float32(1) },
    Format { id: 37, name: "32_32_FLOAT", kind: Kind::Float32(2) },
    Format { id: 38, name: "32_32_32_32_FLOAT", kind: Kind::Float32(4) },
    Format { id: 50, name: "8_8_8_8_AS_16_16_16_16", kind: Kind::Fixed([8, 8, 8, 8]) },
    Format { id: 54, name: "2_10_10_10_AS_16_16_16_16", kind: Kind::Fixed([10, 10, 10, 2]) },
    Format { id: 55, name: "10_11_11_AS_16_16_16_16", kind: Kind::Fixed([11, 11, 10, 0]) },
    Format { id: 56, name: "11_11_10_AS_16_16_16_16", kind: Kind::Fixed([10, 11, 11, 0]) },
];

pub fn format(id: u32) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.id == id)
}

/// Size in bytes of the unit an endian mode swaps within (None: undefined mode).
pub fn swap_unit(endian: u32) -> Option<u32> {
    match endian {
        0 => Some(0),
        1 => Some(2),
        2 | 3 => Some(4),
        4 => Some(8),
        5 => Some(16),
        _ => None,
    }
}

/// The decoded eA: valid only with the sign / exponent pattern of the module comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address {
    /// Byte address of element 0 (`eA.x << 2`).
    pub base: u32,
    pub index: u32,
    pub count: u32,
    pub info: u32,
}

impl Address {
    pub fn decode(ea: [u32; 4]) -> Option<Address> {
        if ea[0] >> 30 != 1 || ea[1..].iter().any(|w| w >> 23 != 0x96) {
            return None;
        }
        let low = |w: u32| w & 0x7F_FFFF;
        Some(Address { base: ea[0] << 2, index: low(ea[1]), count: low(ea[3]), info: low(ea[2]) })
    }
    pub fn endian(&self) -> u32 {
        self.info & 7
    }
    pub fn format_id(&self) -> u32 {
        (self.info >> 8) & 63
    }
    pub fn signed(&self) -> bool {
        self.info & (1 << 16) != 0
    }
    pub fn integer(&self) -> bool {
        self.info & (1 << 17) != 0
    }
    pub fn swap_red_blue(&self) -> bool {
        self.info & (1 << 19) != 0
    }
}

/// One store: `bytes` (little-endian, 1, 2, 4, 8 or 16 of them) at byte address `address`.
/// Bit k of `undetermined` set: byte k is written, but its value is not determined (a 16-bit
/// float the host may round either way, a NaN; `bytes[k]` then holds the round-to-nearest-even
/// choice).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    pub address: u32,
    pub bytes: Vec<u8>,
    pub undetermined: u16,
}

/// One float → fixed conversion (module comment), in f32 arithmetic as the GPU does it.
pub fn to_fixed(v: f32, width: u32, signed: bool, integer: bool) -> u32 {
    let v = if v.is_nan() { 0.0 } else { v };
    let mask = (1u32 << width) - 1;
    if signed {
        let m = ((1u32 << (width - 1)) - 1) as f32;
        let f = if integer {
            v.max(-1.0 - m).min(m)
        } else {
            let c = v.max(-1.0).min(1.0);
            if width > 2 {
                c * m
            } else {
                c
            }
        };
        let f = f + if f.is_sign_negative() { -0.5 } else { 0.5 };
        (f.trunc() as i32 as u32) & mask
    } else {
        let m = mask as f32;
        let f = if integer {
            v.max(0.0).min(m)
        } else {
            let c = v.max(0.0).min(1.0);
            if width > 1 {
                c * m
            } else {
                c
            }
        };
        ((f + 0.5).trunc() as u32) & mask
    }
}

/// The value of IEEE half-float bits `h` (sign ignored), exactly.
fn f16_magnitude(h: u16) -> f64 {
    let (e, m) = (i32::from(h >> 10 & 0x1F), f64::from(h & 0x3FF));
    if e == 0 {
        m * 2f64.powi(-24)
    } else {
        (1024.0 + m) * 2f64.powi(e - 25)
    }
}

/// The host's f32 → f16 conversion of `v` (HLSL `f32tof16`; DXC emits GLSL.std.450
/// `PackHalf2x16(vec2(v, 0))` for SPIR-V, `dx.op.legacyF32ToF16` for DXIL) as far as it is
/// determined: (half bits, mask of the bits not determined, whole bytes). What a conforming
/// Vulkan host may return (PackHalf2x16 converts "to the 16-bit OpTypeFloat"; Vulkan's
/// "Precision and Operation of SPIR-V Instructions", DXC declaring no float-controls execution
/// mode):
/// - a value exactly representable (±0, ±inf, f16 normals and denormals): that value;
/// - otherwise either neighbour, the one towards zero or the one away from it (conversions are
///   "correctly rounded" with an unspecified rounding direction; D3D's data conversion rules say
///   round-to-zero for float-to-float conversions); beyond 65504 the neighbours are 65504 and
///   inf (the only values allowed on overflow);
/// - an f32 denormal input may be flushed to a zero of its sign, and so may an f16 denormal
///   result (PackHalf2x16 must keep denormals only under DenormPreserve);
/// - NaN: some NaN (sign and payload not determined).
///
/// A byte is determined when every allowed result has the same byte there. The returned bits
/// are the round-to-nearest-even choice. lavapipe (Mesa 22.3.6) rounds to nearest even: with
/// this choice taken as exact for every non-NaN value (a temporary switch), `memexport_f16_values`
/// gave 0 mismatches (ties 1 + 2^-11 → 1, 2051 → 2052, 1.5 · 2^-24 → 2^-23; 65519 → 65504,
/// 65520 → inf; f16 denormals kept), with the round-to-zero choice 26.
pub fn to_f16(v: f32) -> (u16, u16) {
    let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
    if v.is_nan() {
        return (0x7E00 | sign, 0xFFFF);
    }
    if v.is_infinite() {
        return (0x7C00 | sign, 0);
    }
    let a = f64::from(v.abs());
    // lo: the largest finite half magnitude <= a (magnitudes grow with the bits)
    let (mut lo, mut hi_bits) = (0u16, 0x7BFFu16);
    while lo < hi_bits {
        let mid = (lo + hi_bits).div_ceil(2);
        if f16_magnitude(mid) <= a {
            lo = mid;
        } else {
            hi_bits = mid - 1;
        }
    }
    let exact = f16_magnitude(lo) == a;
    let hi = if exact { lo } else { lo + 1 }; // 0x7BFF + 1 = inf
    let nearest = if exact {
        lo
    } else if hi == 0x7C00 {
        // round to nearest even past the largest finite: 65520 = 65504 + half its ulp of 32
        if a < 65520.0 {
            lo
        } else {
            hi
        }
    } else {
        let (dl, dh) = (a - f16_magnitude(lo), f16_magnitude(hi) - a);
        if dl < dh || (dl == dh && lo & 1 == 0) {
            lo
        } else {
            hi
        }
    };
    let mut allowed = vec![lo, hi];
    let denormal = |h: u16| h != 0 && h < 0x400;
    if (v != 0.0 && v.abs() < f32::MIN_POSITIVE) || denormal(lo) || denormal(hi) {
        allowed.push(0);
    }
    let mut unknown = 0u16;
    for &h in &allowed {
        for byte in [0x00FFu16, 0xFF00] {
            if h & byte != nearest & byte {
                unknown |= byte;
            }
        }
    }
    (nearest | sign, unknown)
}

/// The store eM# (lanes `v`, raw bits) makes under eA, or None when it stores nothing.
pub fn store(ea: [u32; 4], element: u32, v: [u32; 4]) -> Option<Store> {
    let a = Address::decode(ea)?;
    let index = a.index + element;
    if index >= a.count {
        return None;
    }
    let f = format(a.format_id())?;
    let size = 1u32 << f.size_log2();
    let unit = swap_unit(a.endian())?;
    if unit > size {
        return None;
    }
    let mut v = v;
    if a.swap_red_blue() {
        v.swap(0, 2);
    }
    // the stored dwords and, bit for bit, which of their bits are not determined
    let mut unknown = vec![0u32; 4];
    let mut dwords: Vec<u32> = match f.kind {
        Kind::Float32(n) => v[..n as usize].to_vec(),
        Kind::Float16(n) => {
            let h: Vec<(u16, u16)> = (0..4).map(|k| if k < n as usize { to_f16(f32::from_bits(v[k])) } else { (0, 0) }).collect();
            let pair = |a: (u16, u16), b: (u16, u16)| (u32::from(a.0) | u32::from(b.0) << 16, u32::from(a.1) | u32::from(b.1) << 16);
            let (d0, d1) = (pair(h[0], h[1]), pair(h[2], h[3]));
            unknown = vec![d0.1, d1.1];
            vec![d0.0, d1.0]
        }
        Kind::Fixed(w) => {
            let c: Vec<u32> = (0..4).map(|k| if w[k] == 0 { 0 } else { to_fixed(f32::from_bits(v[k]), w[k], a.signed(), a.integer()) }).collect();
            if w == [16; 4] {
                vec![c[0] | c[1] << 16, c[2] | c[3] << 16]
            } else {
                let mut packed = 0u32;
                let mut at = 0;
                for k in 0..4 {
                    packed |= c[k].checked_shl(at).unwrap_or(0);
                    at += w[k];
                }
                vec![packed]
            }
        }
    };
    unknown.resize(dwords.len(), 0);
    // the endian swap moves the undetermined bits with their bytes
    for d in [&mut dwords, &mut unknown] {
        match a.endian() {
            4 => d.chunks_mut(2).for_each(|p| p.swap(0, 1)),
            5 => d.reverse(),
            _ => {}
        }
        for d in d.iter_mut() {
            *d = match a.endian() {
                1 => (*d & 0x00FF_00FF) << 8 | (*d >> 8) & 0x00FF_00FF,
                3 => d.rotate_left(16),
                2 | 4 | 5 => d.swap_bytes(),
                _ => *d,
            };
        }
    }
    let mut bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
    bytes.truncate(size as usize);
    let undetermined =
        unknown.iter().flat_map(|d| d.to_le_bytes()).take(size as usize).enumerate().fold(0u16, |m, (k, b)| if b != 0 { m | 1 << k } else { m });
    Some(Store { address: a.base.wrapping_add(index << f.size_log2()), bytes, undetermined })
}
