//! The XenosRecomp resource ABI (`ir::ResourceAbi::XenosRecomp`), as DXC compiles the HLSL
//! writer's text for it (`hlsl::xenos_abi`, the Xenos section of shader_common.h): the module's
//! buffers are read through the buffer device addresses of the push-constant block
//! `{ uint64 VertexShaderConstants, PixelShaderConstants, SharedConstants }`
//! (`vk::RawBufferLoad`: `OpBitcast` of the address to a `PhysicalStorageBuffer` pointer, a
//! load `Aligned` 16 for a float4 constant and 4 for the rest), textures and samplers from the
//! bindless heaps (runtime arrays: 2D at set 0, 3D at set 1, cube at set 2, samplers at set 3,
//! binding 0) at the descriptor indices SharedConstants holds, and `g_SpecConstants` is the
//! specialization constant with id 0.
//!
//! The HLSL loads each descriptor index and float constant once at the top of the body; this
//! writer loads them where they are read. The buffers are the runtime's, which no invocation
//! writes, so every load gives the same value.

use super::{ids, unsupported, Result, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{Capability, Decoration, MemoryAccess, Op, StorageClass, Word};

/// Push-constant members.
const VERTEX_CONSTANTS: u32 = 0;
const PIXEL_CONSTANTS: u32 = 1;
const SHARED_CONSTANTS: u32 = 2;

/// SharedConstants byte offsets (XenosRecomp's shader_common.h; shrec's extension after them,
/// `XenosRecompAbi::extension_words`): descriptor indices per heap (64 bytes each: 2D, 3D,
/// cube, samplers), then g_Booleans, g_SwappedTexcoords, g_HalfPixelOffset, g_AlphaThreshold.
const SAMPLER_INDICES: u32 = 3 * 64;
const BOOLEANS: u32 = 256;
const SWAPPED_TEXCOORDS: u32 = 260;
const HALF_PIXEL_OFFSET: u32 = 264;
const ALPHA_THRESHOLD: u32 = 272;

/// The module-scope variables of the ABI, declared on first use.
#[derive(Default)]
pub(super) struct XenosVars {
    push_constants: Option<Word>,
    /// Texture heaps by heap number (0 2D, 1 3D, 2 cube) and the sampler heap.
    heaps: [Option<(Word, Word)>; 4],
    spec_constants: Option<Word>,
}

impl Writer<'_> {
    fn xenos_abi(&self) -> Result<&XenosRecompAbi> {
        match &self.m.ext.resource_abi {
            ResourceAbi::XenosRecomp(x) => Ok(x),
            ResourceAbi::Bindings => unsupported("a XenosRecomp resource read in a module with bindings"),
        }
    }

    /// The 32-bit value of type `ty` (or a float2 / float4) at byte `offset` (a `u64` id) of
    /// push-constant member `member`'s buffer.
    fn bda_load(&mut self, member: u32, offset: Word, ty: Word, align: u32) -> Result<Word> {
        let pc = self.push_constants();
        let u64 = self.u64_type();
        let ptr_u64 = self.b.type_pointer(None, StorageClass::PushConstant, u64);
        let m = self.i32_const(member as i32);
        let field = self.inst(Op::AccessChain, ptr_u64, ids(&[pc, m]))?;
        let base = self.inst(Op::Load, u64, ids(&[field]))?;
        let address = self.inst(Op::IAdd, u64, ids(&[base, offset]))?;
        let ptr_ty = self.b.type_pointer(None, StorageClass::PhysicalStorageBuffer, ty);
        let ptr = self.inst(Op::Bitcast, ptr_ty, ids(&[address]))?;
        self.inst(Op::Load, ty, vec![Operand::IdRef(ptr), Operand::MemoryAccess(MemoryAccess::ALIGNED), Operand::LiteralBit32(align)])
    }

    /// [`Self::bda_load`] at a constant offset.
    fn bda_load_at(&mut self, member: u32, offset: u32, ty: Word, align: u32) -> Result<Word> {
        let o = self.u64_const(u64::from(offset));
        self.bda_load(member, o, ty, align)
    }

    fn u64_type(&mut self) -> Word {
        self.need_capability(Capability::Int64);
        self.b.type_int(64, 0)
    }

    fn u64_const(&mut self, v: u64) -> Word {
        let ty = self.u64_type();
        if let Some(&id) = self.u64_constants.get(&v) {
            return id;
        }
        let id = self.b.constant_bit64(ty, v);
        self.u64_constants.insert(v, id);
        id
    }

    /// `g_PushConstants`: `struct { uint64 ×3 }`, offsets 0 / 8 / 16, `Block`.
    fn push_constants(&mut self) -> Word {
        if let Some(v) = self.xenos.push_constants {
            return v;
        }
        self.need_capability(Capability::PhysicalStorageBufferAddresses);
        self.need_extension("SPV_KHR_physical_storage_buffer");
        let u64 = self.u64_type();
        let strukt = self.b.id();
        self.b.insert_types_global_values(
            rspirv::dr::InsertPoint::End,
            rspirv::dr::Instruction::new(Op::TypeStruct, None, Some(strukt), vec![Operand::IdRef(u64); 3]),
        );
        for (k, offset) in [0u32, 8, 16].into_iter().enumerate() {
            self.b.member_decorate(strukt, k as u32, Decoration::Offset, [Operand::LiteralBit32(offset)]);
        }
        self.b.decorate(strukt, Decoration::Block, []);
        let var = self.global_variable(strukt, StorageClass::PushConstant, None);
        self.xenos.push_constants = Some(var);
        var
    }

    /// `g_SpecConstants`: an `OpSpecConstant` uint 0 with `SpecId 0`.
    fn spec_constants(&mut self) -> Word {
        if let Some(v) = self.xenos.spec_constants {
            return v;
        }
        let id = self.b.spec_constant_bit32(self.t.u32, 0);
        self.b.decorate(id, Decoration::SpecId, [Operand::LiteralBit32(0)]);
        self.xenos.spec_constants = Some(id);
        id
    }

    /// A read of constant file `file` at `index` (the float constants or the shared state).
    pub(super) fn xenos_const(&mut self, file: u32, index: &Index) -> Result<Word> {
        let count = self.m.const_buffers.get(XenosRecompAbi::FLOAT_CONSTANTS as usize).map_or(0, |b| b.len);
        let member = if self.m.stage == Stage::Vertex { VERTEX_CONSTANTS } else { PIXEL_CONSTANTS };
        match (file, index) {
            (XenosRecompAbi::FLOAT_CONSTANTS, Index::Fixed(i)) if *i < count => self.bda_load_at(member, i * 16, self.t.v4f, 16),
            (XenosRecompAbi::FLOAT_CONSTANTS, Index::Fixed(_)) => Ok(self.v4f_splat(0.0)),
            (XenosRecompAbi::FLOAT_CONSTANTS, idx) => {
                // `(uint)index >= count ? 0 : load(index)`: the load at the index clamped into
                // the buffer, so that no lane reads past it
                if count == 0 {
                    return Ok(self.v4f_splat(0.0));
                }
                let i = self.index_value(idx)?;
                let u = self.inst(Op::Bitcast, self.t.u32, ids(&[i]))?;
                let last = self.u32_const(count - 1);
                let clamped = self.glsl(rspirv::spirv::GLOp::UMin, self.t.u32, &[u, last])?;
                let u64 = self.u64_type();
                let wide = self.inst(Op::UConvert, u64, ids(&[clamped]))?;
                let sixteen = self.u64_const(16);
                let offset = self.inst(Op::IMul, u64, ids(&[wide, sixteen]))?;
                let v = self.bda_load(member, offset, self.t.v4f, 16)?;
                let n = self.u32_const(count);
                let outside = self.inst(Op::UGreaterThanEqual, self.t.bool, ids(&[u, n]))?;
                let zero = self.v4f_splat(0.0);
                let outside4 = self.splat(self.t.v4b, outside, 4)?;
                self.inst(Op::Select, self.t.v4f, ids(&[outside4, zero, v]))
            }
            (_, Index::Fixed(i)) => self.xenos_state(*i),
            _ => unsupported("a dynamic index into the Xenos shared state"),
        }
    }

    /// Shared-state entry `index` (`hlsl::xenos_abi::state`).
    fn xenos_state(&mut self, index: u32) -> Result<Word> {
        type Abi = XenosRecompAbi;
        let (spec_mask, shared_extension) = {
            let x = self.xenos_abi()?;
            (x.spec_constants_mask, x.shared_extension)
        };
        let f32 = self.t.f32;
        let zero = self.f32_const(0.0);
        let vec4 = |w: &mut Self, lanes: [Word; 4]| w.inst(Op::CompositeConstruct, w.t.v4f, ids(&lanes));
        let bit = |w: &mut Self, b: u32| -> Result<Word> {
            // (g_SpecConstants & bit) != 0 ? 1.0 : 0.0
            let spec = w.spec_constants();
            let mask = w.u32_const(b);
            let and = w.inst(Op::BitwiseAnd, w.t.u32, ids(&[spec, mask]))?;
            let z = w.u32_const(0);
            let set = w.inst(Op::INotEqual, w.t.bool, ids(&[and, z]))?;
            let (one, zero) = (w.f32_const(1.0), w.f32_const(0.0));
            w.inst(Op::Select, w.t.f32, ids(&[set, one, zero]))
        };
        let unleashed_bits = Abi::SPEC_BICUBIC_GI_FILTER | Abi::SPEC_ALPHA_TO_COVERAGE | Abi::SPEC_REVERSE_Z;
        let (bools_at, loops_at) = Abi::extension_words(self.m.stage);
        match index {
            Abi::STATE_SHARED => {
                let b = self.bda_load_at(SHARED_CONSTANTS, BOOLEANS, self.t.u32, 4)?;
                let b = self.inst(Op::Bitcast, f32, ids(&[b]))?;
                let s = self.bda_load_at(SHARED_CONSTANTS, SWAPPED_TEXCOORDS, self.t.u32, 4)?;
                let s = self.inst(Op::Bitcast, f32, ids(&[s]))?;
                let h = self.bda_load_at(SHARED_CONSTANTS, HALF_PIXEL_OFFSET, self.t.v2f, 4)?;
                let h0 = self.inst(Op::CompositeExtract, f32, vec![Operand::IdRef(h), Operand::LiteralBit32(0)])?;
                let h1 = self.inst(Op::CompositeExtract, f32, vec![Operand::IdRef(h), Operand::LiteralBit32(1)])?;
                vec4(self, [b, s, h0, h1])
            }
            Abi::STATE_ALPHA => {
                let a = self.bda_load_at(SHARED_CONSTANTS, ALPHA_THRESHOLD, f32, 4)?;
                vec4(self, [a, zero, zero, zero])
            }
            Abi::STATE_SPEC if spec_mask != 0 => {
                let a = bit(self, Abi::SPEC_ALPHA_TEST)?;
                let n = bit(self, Abi::SPEC_R11G11B10_NORMAL)?;
                vec4(self, [a, n, zero, zero])
            }
            Abi::STATE_SPEC_UNLEASHED if spec_mask & unleashed_bits != 0 => {
                let g = bit(self, Abi::SPEC_BICUBIC_GI_FILTER)?;
                let c = bit(self, Abi::SPEC_ALPHA_TO_COVERAGE)?;
                let r = bit(self, Abi::SPEC_REVERSE_Z)?;
                vec4(self, [g, c, r, zero])
            }
            i if shared_extension && (Abi::STATE_BOOLS..Abi::STATE_BOOLS + 8).contains(&i) => {
                let w = self.bda_load_at(SHARED_CONSTANTS, bools_at + (i - Abi::STATE_BOOLS) * 4, self.t.u32, 4)?;
                let w = self.inst(Op::Bitcast, f32, ids(&[w]))?;
                vec4(self, [w, zero, zero, zero])
            }
            i if shared_extension && (Abi::STATE_LOOPS..Abi::STATE_LEN).contains(&i) => {
                // count | start << 8 | step << 16: (count, start, signed step, 0)
                let v = self.bda_load_at(SHARED_CONSTANTS, loops_at + (i - Abi::STATE_LOOPS) * 4, self.t.u32, 4)?;
                let (ff, eight, twenty_four) = (self.u32_const(0xFF), self.u32_const(8), self.u32_const(24));
                let count = self.inst(Op::BitwiseAnd, self.t.u32, ids(&[v, ff]))?;
                let start = self.inst(Op::ShiftRightLogical, self.t.u32, ids(&[v, eight]))?;
                let start = self.inst(Op::BitwiseAnd, self.t.u32, ids(&[start, ff]))?;
                let up = self.inst(Op::ShiftLeftLogical, self.t.u32, ids(&[v, eight]))?;
                let up = self.inst(Op::Bitcast, self.t.i32, ids(&[up]))?;
                let step = self.inst(Op::ShiftRightArithmetic, self.t.i32, ids(&[up, twenty_four]))?;
                let count = self.inst(Op::ConvertUToF, f32, ids(&[count]))?;
                let start = self.inst(Op::ConvertUToF, f32, ids(&[start]))?;
                let step = self.inst(Op::ConvertSToF, f32, ids(&[step]))?;
                vec4(self, [count, start, step, zero])
            }
            _ => Ok(self.v4f_splat(0.0)),
        }
    }

    /// Heap `heap` (0 2D, 1 3D, 2 cube; 3 samplers): the runtime-array variable and its
    /// element type.
    fn heap(&mut self, heap: usize) -> Result<(Word, Word)> {
        if let Some(h) = self.xenos.heaps[heap] {
            return Ok(h);
        }
        self.need_capability(Capability::RuntimeDescriptorArray);
        self.need_extension("SPV_EXT_descriptor_indexing");
        let element = match heap {
            0 => self.image_type(TexDim::D2),
            1 => self.image_type(TexDim::D3),
            2 => self.image_type(TexDim::Cube),
            _ => self.b.type_sampler(),
        };
        let array = self.b.type_runtime_array(element);
        let var = self.global_variable(array, StorageClass::UniformConstant, None);
        self.b.decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(heap as u32)]);
        self.b.decorate(var, Decoration::Binding, [Operand::LiteralBit32(0)]);
        self.xenos.heaps[heap] = Some((var, element));
        Ok((var, element))
    }

    /// Element `index` (a `u32` id) of heap `heap`, loaded.
    fn heap_element(&mut self, heap: usize, index: Word) -> Result<(Word, Word)> {
        let (var, element) = self.heap(heap)?;
        let ptr_ty = self.b.type_pointer(None, StorageClass::UniformConstant, element);
        let ptr = self.inst(Op::AccessChain, ptr_ty, ids(&[var, index]))?;
        Ok((self.inst(Op::Load, element, ids(&[ptr]))?, element))
    }

    /// Whether the module reads through buffer device addresses.
    pub(super) fn xenos_uses_addresses(&self) -> bool {
        self.xenos.push_constants.is_some()
    }

    /// The fetch-constant slot of texture `tex`.
    fn texture_slot(&self, tex: u32) -> Result<u32> {
        let x = self.xenos_abi()?;
        x.texture_slots.get(tex as usize).copied().ok_or(super::SpirvError::Undeclared { what: "texture slot", index: tex })
    }

    /// The image of texture `tex` from its heap, and the image type.
    pub(super) fn xenos_image(&mut self, tex: u32) -> Result<(Word, Word)> {
        let slot = self.texture_slot(tex)?;
        let heap = match self.m.textures[tex as usize].dim {
            TexDim::D2 => 0,
            TexDim::D3 => 1,
            TexDim::Cube => 2,
            _ => return unsupported("a Xenos texture other than 2D, 3D or cube"),
        };
        let index = self.bda_load_at(SHARED_CONSTANTS, heap as u32 * 64 + slot * 4, self.t.u32, 4)?;
        self.heap_element(heap, index)
    }

    /// The sampler of texture `tex` from the sampler heap.
    pub(super) fn xenos_sampler(&mut self, tex: u32) -> Result<Word> {
        let slot = self.texture_slot(tex)?;
        let index = self.bda_load_at(SHARED_CONSTANTS, SAMPLER_INDICES + slot * 4, self.t.u32, 4)?;
        Ok(self.heap_element(3, index)?.0)
    }
}
