//! The types every module uses (declared once, up front) and constants (declared on first
//! use, once per value).

use super::{Result, Writer};
use rspirv::dr::Builder;
use rspirv::spirv::{StorageClass, Word};

/// Type ids.
pub(super) struct Types {
    pub(super) void: Word,
    pub(super) f32: Word,
    pub(super) v2f: Word,
    pub(super) v3f: Word,
    pub(super) v4f: Word,
    pub(super) u32: Word,
    pub(super) v4u: Word,
    pub(super) i32: Word,
    pub(super) v4i: Word,
    pub(super) bool: Word,
    pub(super) v4b: Word,
    pub(super) fn_void: Word,
    pub(super) ptr_private_v4f: Word,
}

impl Types {
    pub(super) fn new(b: &mut Builder) -> Self {
        let void = b.type_void();
        let f32 = b.type_float(32);
        let u32 = b.type_int(32, 0);
        let i32 = b.type_int(32, 1);
        let bool = b.type_bool();
        let v4f = b.type_vector(f32, 4);
        Types {
            void,
            f32,
            v2f: b.type_vector(f32, 2),
            v3f: b.type_vector(f32, 3),
            v4f,
            u32,
            v4u: b.type_vector(u32, 4),
            i32,
            v4i: b.type_vector(i32, 4),
            bool,
            v4b: b.type_vector(bool, 4),
            fn_void: b.type_function(void, []),
            ptr_private_v4f: b.type_pointer(None, StorageClass::Private, v4f),
        }
    }
}

impl Writer<'_> {
    /// A scalar constant of type `ty` (32-bit) with the bit pattern `bits`.
    pub(super) fn scalar_bits(&mut self, ty: Word, bits: u32) -> Word {
        if let Some(&id) = self.scalars.get(&(ty, bits)) {
            return id;
        }
        let id = self.b.constant_bit32(ty, bits);
        self.scalars.insert((ty, bits), id);
        id
    }

    pub(super) fn f32_const(&mut self, v: f32) -> Word {
        self.scalar_bits(self.t.f32, v.to_bits())
    }

    pub(super) fn u32_const(&mut self, v: u32) -> Word {
        self.scalar_bits(self.t.u32, v)
    }

    pub(super) fn i32_const(&mut self, v: i32) -> Word {
        self.scalar_bits(self.t.i32, v as u32)
    }

    /// A composite constant of type `ty` from constituent constants.
    pub(super) fn composite_const(&mut self, ty: Word, parts: Vec<Word>) -> Word {
        if let Some(&id) = self.composites.get(&(ty, parts.clone())) {
            return id;
        }
        let id = self.b.constant_composite(ty, parts.iter().copied());
        self.composites.insert((ty, parts), id);
        id
    }

    /// A `vec4` constant with the exact bit patterns `bits` (denormals and NaN payloads kept).
    pub(super) fn v4f_bits(&mut self, bits: [u32; 4]) -> Word {
        let parts = bits.iter().map(|&b| self.scalar_bits(self.t.f32, b)).collect();
        self.composite_const(self.t.v4f, parts)
    }

    pub(super) fn v4f_splat(&mut self, v: f32) -> Word {
        self.v4f_bits([v.to_bits(); 4])
    }

    pub(super) fn v4u_splat(&mut self, v: u32) -> Word {
        let c = self.u32_const(v);
        self.composite_const(self.t.v4u, vec![c; 4])
    }

    /// A vector of `n` (2-4) lanes of `ty` with every lane `scalar`, computed.
    pub(super) fn splat(&mut self, vec_ty: Word, scalar: Word, n: usize) -> Result<Word> {
        self.inst(rspirv::spirv::Op::CompositeConstruct, vec_ty, vec![rspirv::dr::Operand::IdRef(scalar); n])
    }

    /// The float vector type of `n` lanes (1: the scalar).
    pub(super) fn float_vec(&self, n: usize) -> Word {
        match n {
            1 => self.t.f32,
            2 => self.t.v2f,
            3 => self.t.v3f,
            _ => self.t.v4f,
        }
    }

    /// `uint` / `uvec2..4` (`n` 1-4).
    pub(super) fn uint_vec(&mut self, n: u32) -> Word {
        match n {
            1 => self.t.u32,
            4 => self.t.v4u,
            _ => self.b.type_vector(self.t.u32, n),
        }
    }
}
