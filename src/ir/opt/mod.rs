//! Optimizing passes over a validated module, run between lowering and the HLSL writer.
//!
//! The front ends lower instruction by instruction, so their modules move every result through
//! temporaries and write each lane of a scalar ISA on its own; the HLSL the writer printed from
//! that gave DXC most of its work. These passes shrink the module without changing any value
//! the shader computes:
//! - `fold`: exact constant folding (integer operators, swizzles, sign bits; never float
//!   arithmetic) and constant `If` conditions;
//! - `copy_prop`: reads of moved register lanes and constants read the source instead;
//! - `forward`: a result computed into a result temporary (GX2 PV/PS) and then moved is
//!   computed into its destination;
//! - `dce`: component-wise liveness; dead assignments go, masks shrink to live lanes;
//! - `merge`: assignments to different lanes of one register become one;
//! - `tidy`: adjacent `If`s on one condition join, comments left annotating nothing go.
//!
//! Expressions are pure, so passes may drop or duplicate reads freely; they never move an
//! expression into or out of control flow, or past a `Discard` or `Return` (implicit
//! derivatives need the neighbouring pixels on the same path). They depend on nothing outside
//! `ir` and walk expressions only through [`crate::ir::visit`].
//!
//! Every pass works on a copy of the module and the validator checks the copy before it
//! replaces the module: a pass that produced invalid IR is a bug, a panic in debug builds (and
//! so in the crate's tests), and in release builds the module stays as it was before that pass
//! (the shader is still translated, only less compactly). Each pass is linear in the body
//! (loops iterate liveness to a fixed point); a work budget proportional to the module's size
//! stops a pathological input from taking long.

mod copy_prop;
mod dce;
mod fold;
mod forward;
mod merge;
mod regs;
mod tidy;

use super::{validate, Module, ValidationError};

/// One optimizing pass.
type Pass = fn(&mut Module, &mut Budget) -> Result<(), OutOfBudget>;

/// The passes in order, with their names (for reports of a broken pass). Liveness runs before
/// forwarding (which needs result temporaries narrowed to the lanes really moved) and after
/// (which leaves dead moves); forwarding runs again after merging (which makes multi-lane
/// results of scalar writes).
const PIPELINE: [(&str, Pass); 13] = [
    ("fold", fold::run),
    ("copy propagation", copy_prop::run),
    ("dead-code elimination", dce::run),
    ("result forwarding", forward::run),
    ("copy propagation", copy_prop::run),
    ("dead-code elimination", dce::run),
    ("lane merging", merge::run),
    ("result forwarding", forward::run),
    ("copy propagation", copy_prop::run),
    ("fold", fold::run),
    ("dead-code elimination", dce::run),
    ("lane merging", merge::run),
    ("tidy", tidy::run),
];

/// Work (statement visits) each pass may spend per statement of the module before it gives up.
const BUDGET_PER_STATEMENT: u64 = 400;

/// A pass ran out of its work budget (the module is left as before that pass).
#[derive(Debug)]
pub struct OutOfBudget;

/// Work counter of one pass.
pub struct Budget {
    left: u64,
}

impl Budget {
    fn spend(&mut self, n: u64) -> Result<(), OutOfBudget> {
        self.left = self.left.checked_sub(n).ok_or(OutOfBudget)?;
        Ok(())
    }
}

/// A pass that broke the IR contract (a bug of the pass).
#[derive(Debug)]
pub struct PassError {
    pub pass: &'static str,
    pub error: ValidationError,
}

/// Runs every pass on `m`, validating after each; returns the first pass that produced invalid
/// IR (the module then stays as that pass found it).
pub fn optimize_checked(m: &mut Module) -> Result<(), PassError> {
    for (name, pass) in PIPELINE {
        let (count, _) = super::validate::measure(&m.body);
        let mut budget = Budget { left: (count as u64 + 64) * BUDGET_PER_STATEMENT };
        let mut next = m.clone();
        if pass(&mut next, &mut budget).is_err() {
            continue;
        }
        validate(&next).map_err(|error| PassError { pass: name, error })?;
        *m = next;
    }
    Ok(())
}

/// Runs every pass on `m` (see the module documentation); a pass that breaks the IR contract
/// panics in debug builds and is skipped in release builds.
pub fn optimize(m: &mut Module) {
    if let Err(e) = optimize_checked(m) {
        debug_assert!(false, "IR pass {} produced invalid IR: {}", e.pass, e.error);
    }
}

#[cfg(test)]
mod tests;
