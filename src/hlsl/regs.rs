//! Register, constant and texture names: temporaries, stage inputs and outputs, constant
//! files (bindings or the XenosRecomp ABI's accessors), dynamic indices.
use super::{xenos_abi, Writer};
use crate::ir::*;

impl Writer<'_> {
    /// Whether `r` is a whole `static float4` register variable (a fixed temp of a
    /// non-indexable file, a stage input or output copy). Such registers are read as the rvalue
    /// `((float4)r)` and written a whole vector at a time (one lane through a select): DXC's
    /// SPIR-V front end turns a one-lane access `r.x` (also `(r.xxxx).x`) on a variable into an
    /// OpAccessChain, and its optimizer then cannot promote the variable to SSA values when the
    /// module declares SPV_KHR_physical_storage_buffer (Xenos' push-constant buffer addresses):
    /// spirv-opt's local access-chain conversion and load/store elimination passes skip modules
    /// with extensions outside their allow-lists, and the variable stays in memory, every read a
    /// load (docs/performance.md, "Xenos SPIR-V size"). The cast changes no value.
    pub(super) fn is_variable(&self, r: &RegRef) -> bool {
        // Only modules that declare that extension need it (the XenosRecomp ABI); elsewhere a
        // register is read and written lane by lane, `R1.x = R130.y;`, and DXC's optimizer
        // promotes it all the same.
        if !matches!(self.m.ext.resource_abi, ResourceAbi::XenosRecomp(_)) {
            return false;
        }
        match (&r.file, &r.index) {
            (RegFile::Temp, Index::Fixed(_)) => !self.m.temps.indexable,
            (RegFile::Input | RegFile::Output, Index::Fixed(_)) => true,
            _ => false,
        }
    }

    pub(super) fn reg(&self, r: &RegRef) -> String {
        let m = self.m;
        match (&r.file, &r.index) {
            (RegFile::Temp, Index::Fixed(i)) if !m.temps.indexable => {
                self.used_temps.borrow_mut().insert(*i);
                format!("{}{i}", m.temps.prefix)
            }
            (RegFile::Temp, idx) => format!("{}[{}]", m.temps.prefix, self.index(idx)),
            (RegFile::Input, Index::Fixed(i)) => {
                self.used_io.borrow_mut().insert((false, *i));
                m.inputs[*i as usize].name.clone()
            }
            (RegFile::Output, Index::Fixed(i)) => {
                self.used_io.borrow_mut().insert((true, *i));
                m.outputs[*i as usize].name.clone()
            }
            (RegFile::Const(b), idx) => match &m.ext.resource_abi {
                ResourceAbi::XenosRecomp(x) => self.xenos_const(x, *b, idx),
                ResourceAbi::Bindings => format!("{}[{}]", m.const_buffers[*b as usize].var, self.index(idx)),
            },
            (RegFile::Input | RegFile::Output, Index::Dynamic { .. } | Index::Int(_)) => {
                unreachable!("ir::validate refuses dynamic indices into stage inputs/outputs")
            }
        }
    }

    /// A read of XenosRecomp-ABI constant file `file` (see [`XenosRecompAbi`]): the entry's own
    /// expression at a fixed index, an accessor function at a dynamic one.
    pub(super) fn xenos_const(&self, x: &XenosRecompAbi, file: u32, idx: &Index) -> String {
        let text = match (file, idx) {
            (XenosRecompAbi::FLOAT_CONSTANTS, Index::Fixed(i)) => xenos_abi::constant(self.m, *i, &mut self.xenos_used.borrow_mut()),
            (_, Index::Fixed(i)) => xenos_abi::state(x, *i, &mut self.xenos_used.borrow_mut()),
            (_, idx) => {
                // the index text first: it may read constants itself
                let i = self.index(idx);
                let mut used = self.xenos_used.borrow_mut();
                let f = if file == XenosRecompAbi::FLOAT_CONSTANTS {
                    used.dynamic_constant = true;
                    "shrec_xenos_c"
                } else {
                    used.dynamic_state = true;
                    "shrec_xenos_state"
                };
                format!("{f}({i})")
            }
        };
        format!("({text})")
    }

    /// The texture expression of `m.textures[tex]`: under the XenosRecomp ABI its heap indexed
    /// by the local `shrec_body` loads once (`xenos_abi::hoisted`), else `tex_var`.
    pub(super) fn tex_var(&self, tex: u32) -> String {
        match self.m.ext.resource_abi {
            ResourceAbi::XenosRecomp(_) => format!("{}[shrec_ti{tex}]", xenos_abi::split_heap(&self.m.textures[tex as usize].tex_var).0),
            ResourceAbi::Bindings => self.m.textures[tex as usize].tex_var.clone(),
        }
    }

    pub(super) fn smp_var(&self, tex: u32) -> String {
        match self.m.ext.resource_abi {
            ResourceAbi::XenosRecomp(_) => format!("{}[shrec_si{tex}]", xenos_abi::split_heap(&self.m.textures[tex as usize].smp_var).0),
            ResourceAbi::Bindings => self.m.textures[tex as usize].smp_var.clone(),
        }
    }

    pub(super) fn index(&self, idx: &Index) -> String {
        match idx {
            Index::Fixed(i) => i.to_string(),
            Index::Int(e) => self.iexpr(e),
            Index::Dynamic { base, value, conv } => {
                let f = match conv {
                    IndexConv::RoundHalfUp => "shrec_index_round_half_up",
                    IndexConv::Floor => "shrec_index_floor",
                    IndexConv::Trunc => "shrec_index_trunc",
                };
                let f = self.h(f);
                let v = self.expr(value);
                if *base == 0 {
                    format!("{f}(({v}).x)")
                } else {
                    format!("{f}(({v}).x) + ({base})")
                }
            }
        }
    }
}
