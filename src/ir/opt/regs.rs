//! Register lanes as the passes track them: every fixed-index temporary, stage input and stage
//! output is a *slot* with four lanes. Constant files are never tracked (nothing a pass does
//! depends on them being written); a dynamic index into the temporary file stands for every
//! temporary slot.

use crate::ir::{Index, Module, RegFile, RegRef};
use std::ops::Range;

/// The slot numbering of one module.
#[derive(Clone, Copy, Debug)]
pub struct Slots {
    temps: u32,
    inputs: u32,
    outputs: u32,
}

/// What a register reference names, for a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// One tracked slot.
    Slot(usize),
    /// Some slot of this range, chosen at run time (a dynamic temporary index).
    AnyOf(Range<usize>),
    /// A constant file entry (never tracked).
    Untracked,
}

impl Slots {
    pub fn of(m: &Module) -> Slots {
        Slots { temps: m.temps.count, inputs: m.inputs.len() as u32, outputs: m.outputs.len() as u32 }
    }

    pub fn len(&self) -> usize {
        (self.temps + self.inputs + self.outputs) as usize
    }

    /// Slots of a register file (empty for constant files).
    pub fn file(&self, file: RegFile) -> Range<usize> {
        let (t, i, o) = (self.temps as usize, self.inputs as usize, self.outputs as usize);
        match file {
            RegFile::Temp => 0..t,
            RegFile::Input => t..t + i,
            RegFile::Output => t + i..t + i + o,
            RegFile::Const(_) => 0..0,
        }
    }

    pub fn name(&self, r: &RegRef) -> Named {
        let range = self.file(r.file);
        if range.is_empty() {
            return Named::Untracked;
        }
        match r.index {
            Index::Fixed(i) if (i as usize) < range.len() => Named::Slot(range.start + i as usize),
            // out of range is refused by the validator; stay conservative anyway
            _ => Named::AnyOf(range),
        }
    }

    /// Whether lanes `lanes` of `reg` overlap lanes `mask` of slot `slot` (a dynamic index
    /// overlaps every slot of its file; a constant file never does).
    pub fn overlaps(&self, reg: &RegRef, lanes: u8, slot: usize, mask: u8) -> bool {
        lanes & mask != 0
            && match self.name(reg) {
                Named::Slot(s) => s == slot,
                Named::AnyOf(r) => r.contains(&slot),
                Named::Untracked => false,
            }
    }
}

/// Lanes of a mask, low bit first.
pub fn lanes(mask: u8) -> impl Iterator<Item = u8> {
    (0..4u8).filter(move |i| mask >> i & 1 == 1)
}
