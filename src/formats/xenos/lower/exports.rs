//! Memory export (`memexport`): the stores flushed at `alloc` and before a kill, and the formats the runtime knows.

use super::*;

impl Ctx<'_> {
    /// Memory-export stores of the eM# written since the previous store, then eM0-eM4 and the
    /// written flags cleared (`memexport`: at every `alloc`, the end, and before a kill).
    pub(super) fn memexport_flush(&self) -> Vec<Stmt> {
        let mut v = Vec::new();
        if self.ul.as_ref().is_some_and(|u| u.reverse_pass) {
            // the reverse-Z run of an Unleashed vertex shader stores nothing (the second run does)
            return v;
        }
        for e in 0..EM_COUNT {
            if self.em_used & (1 << e) == 0 {
                continue;
            }
            let flag = if e < 4 { read(RegFile::Temp, EM_WRITTEN, [e as u8; 4]) } else { tx(EM4_WRITTEN) };
            let em = t(EM_REG + e);
            v.push(Stmt::If {
                cond: Cond::Compare(CmpOp::Ne, flag, lit(0.0)),
                then_body: vec![Stmt::XenosMemExport { address: t(EA_REG), value: em, element: e }],
                else_body: vec![],
            });
        }
        if !v.is_empty() {
            v.push(assign(EM_WRITTEN, 0xF, lit(0.0)));
            v.push(assign(EM4_WRITTEN, 0xF, lit(0.0)));
            for e in 0..EM_COUNT {
                if self.em_used & (1 << e) != 0 {
                    v.push(assign(EM_REG + e, 0xF, lit(0.0)));
                }
            }
        }
        v
    }

    /// `alloc`: ends the previous memory export; `alloc export` (type 3) also clears eA.
    pub(super) fn alloc(&self, cf: &Cf) -> Vec<Stmt> {
        // The markers name where the stores come from in the HLSL, and let the verification
        // suite remove exactly these stores to prove it notices (shrec-verify's mutations).
        let flush = self.memexport_flush();
        let mut v = Vec::new();
        if !flush.is_empty() {
            v.push(Stmt::Comment(MEMEXPORT_ALLOC_BEGIN.into()));
            v.extend(flush);
            v.push(Stmt::Comment(MEMEXPORT_ALLOC_END.into()));
        }
        if cf.alloc_type() == 3 && (self.ea_used || self.em_used != 0) {
            v.push(assign(EA_REG, 0xF, lit(0.0)));
        }
        v
    }
}

/// The format table `shrec_xenos_memexport_format` (declared in shader_common.h) returns.
pub(super) fn memexport_formats() -> Vec<MemExportFormat> {
    memexport::FORMATS
        .iter()
        .map(|f| {
            // kind: 0 fixed point, 1 raw 32-bit floats, 2 16-bit floats (shader_common.h)
            let (widths, kind) = match f.kind {
                memexport::Kind::Fixed(w) => (w, 0),
                memexport::Kind::Float32(_) => ([0; 4], 1),
                memexport::Kind::Float16(_) => ([0; 4], 2),
            };
            MemExportFormat { id: f.id, name: f.name.to_string(), widths, size_log2: f.size_log2(), kind }
        })
        .collect()
}
