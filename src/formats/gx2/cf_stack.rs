//! The execution-mask stack effect of every Latte CF instruction, written down once as data.
//!
//! The lowering ([`super::lower`]) and the reference interpreter (`verify`) each read this table;
//! neither encodes a stack rule of its own. docs/gx2.md ("Control flow and the mask stack")
//! explains the model and lists the sources per row.
//!
//! The hardware runs a wavefront of lanes with one shared program counter. An instruction that
//! *jumps* does so only when **no lane of the wave** is active after its condition test
//! ([`Step::JumpIfNoneActive`]); the POP_COUNT of JUMP, ELSE, PUSH and PUSH_ELSE is applied on
//! that taken path only. That is why compilers point those jumps *past* the POP that closes the
//! block and give them POP_CNT(1): the jump stands in for the POP it skips. Sources that agree:
//! - Multi2Sim's Evergreen emulator (`evg_isa_JUMP_impl`, `evg_isa_ELSE_impl`: "if all pixels
//!   are inactive, pop stack and jump"), validated against AMD's own compiler output;
//! - Mesa r600 (`tgsi_else` sets `pop_count = 1` on ELSE, `tgsi_endif` sets it on the JUMP of an
//!   if without else and points it past the POP it emits) and LLVM's R600ControlFlowFinalizer
//!   (ENDIF sets POP:1 on the pending JUMP / ELSE): both emit a POP after the ELSE as well, which
//!   would underflow the stack if ELSE popped unconditionally;
//! - the AMD R700 ISA document §3.7.2 says so for PUSH ("if all pixels fail the test, PUSH does
//!   not push anything; instead it performs POP_COUNT pops, then jumps"). Its prose for ELSE and
//!   JUMP ("starts by popping POP_COUNT entries") reads as an unconditional pop; the compilers'
//!   output above shows that reading is not what the hardware does.
//!
//! A per-lane translation cannot know whether the other lanes of the wave are active, so it
//! follows the fall-through path. That is exact when the code a jump skips, run by a lane that is
//! inactive, ends at the target in the state the taken jump would leave; [`JumpCheck`] states
//! that condition and the lowering rejects every jump that does not meet it. decaf's SPIR-V and
//! HLSL back ends make the same per-lane choice (JUMP "is actually only an optimization",
//! ELSE inverts without popping).

/// How many entries a step pops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// The instruction's POP_COUNT field.
    PopCountField,
    /// A fixed number (ALU_POP_AFTER 1, ALU_POP2_AFTER 2).
    Fixed(u32),
}

impl Count {
    /// The number of entries, given the instruction's POP_COUNT.
    pub fn resolve(self, pop_count: u32) -> u32 {
        match self {
            Count::PopCountField => pop_count,
            Count::Fixed(n) => n,
        }
    }
}

/// One stack step, in the order the instruction performs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Pop entries; the lane's active flag becomes the last entry popped.
    Pop(Count),
    /// Push the lane's active flag.
    Push,
    /// `active = (entry on top of the stack, or true when empty) && !active`.
    Else,
    /// If no lane of the wave is active: pop entries and continue at ADDR (the steps after
    /// this one are skipped). Otherwise go on with the next step.
    JumpIfNoneActive { pop: Count },
}

/// When the steps run relative to the instruction's clause (ALU CF instructions have one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Normal CF instructions: the steps are the instruction.
    Instruction,
    /// ALU_PUSH_BEFORE: before the clause.
    BeforeClause,
    /// ALU_POP_AFTER / POP2_AFTER / ELSE_AFTER: after the clause.
    AfterClause,
}

/// One row: a CF instruction's stack effect and where it is written.
#[derive(Clone, Copy, Debug)]
pub struct StackEffect {
    pub name: &'static str,
    pub timing: Timing,
    pub steps: &'static [Step],
    /// The sources that state the rule (docs/gx2.md lists them with links).
    pub sources: &'static str,
    /// `true` when only one source states it (docs/gx2.md gives the plan for a second).
    pub one_source: bool,
}

const JUMP_POP: Step = Step::JumpIfNoneActive { pop: Count::PopCountField };
const POP_FIELD: Step = Step::Pop(Count::PopCountField);

/// The table. Loops (LOOP_START* / LOOP_END / LOOP_BREAK / LOOP_CONTINUE, ALU_BREAK /
/// ALU_CONTINUE) and CALL / RETURN are structured by the lowering and the interpreter and are
/// not in it; their POP_COUNT must be 0 ([`pop_count_allowed`]).
pub const TABLE: &[StackEffect] = &[
    StackEffect {
        name: "JUMP",
        timing: Timing::Instruction,
        steps: &[JUMP_POP],
        sources: "Multi2Sim evg_isa_JUMP_impl; Mesa r600 tgsi_endif (JUMP POP_CNT(1) past the POP); LLVM R600ControlFlowFinalizer",
        one_source: false,
    },
    StackEffect {
        name: "ELSE",
        timing: Timing::Instruction,
        steps: &[Step::Else, JUMP_POP],
        sources: "Multi2Sim evg_isa_ELSE_impl; Mesa r600 tgsi_else + tgsi_endif; LLVM R600ControlFlowFinalizer; decaf (invert, no pop)",
        one_source: false,
    },
    StackEffect {
        name: "PUSH",
        timing: Timing::Instruction,
        steps: &[JUMP_POP, Step::Push],
        sources: "R700 ISA §3.7.2 (no push and POP_COUNT pops when all pixels fail)",
        one_source: true,
    },
    StackEffect {
        name: "PUSH_ELSE",
        timing: Timing::Instruction,
        steps: &[Step::Push, Step::Else, JUMP_POP],
        sources: "R700 ISA CF table (push, then else)",
        one_source: true,
    },
    StackEffect {
        name: "POP",
        timing: Timing::Instruction,
        steps: &[POP_FIELD],
        sources: "R700 ISA §3.7.2 (pops POP_COUNT, never jumps); Mesa r600 / LLVM R600 ENDIF",
        one_source: false,
    },
    StackEffect {
        name: "POP_JUMP",
        timing: Timing::Instruction,
        steps: &[POP_FIELD, Step::JumpIfNoneActive { pop: Count::Fixed(0) }],
        sources: "R700 ISA CF table (pop, then jump if all pixels fail)",
        one_source: true,
    },
    StackEffect {
        name: "POP_PUSH",
        timing: Timing::Instruction,
        steps: &[POP_FIELD, Step::Push],
        sources: "R700 ISA CF table (pop, then push)",
        one_source: true,
    },
    StackEffect {
        name: "POP_PUSH_ELSE",
        timing: Timing::Instruction,
        steps: &[POP_FIELD, Step::Push, Step::Else],
        sources: "R700 ISA CF table (pop, then push, then else)",
        one_source: true,
    },
    StackEffect {
        name: "ALU_PUSH_BEFORE",
        timing: Timing::BeforeClause,
        steps: &[Step::Push],
        sources: "R700 ISA CF table (\"equivalent to PUSH; ALU clause\", no jump); Mesa r600 emit_if; LLVM R600 IF_PREDICATE_SET",
        one_source: false,
    },
    StackEffect {
        name: "ALU_POP_AFTER",
        timing: Timing::AfterClause,
        steps: &[Step::Pop(Count::Fixed(1))],
        sources: "R700 ISA CF table; Mesa r600 tgsi_endif (last ALU turned into ALU_POP_AFTER)",
        one_source: false,
    },
    StackEffect {
        name: "ALU_POP2_AFTER",
        timing: Timing::AfterClause,
        steps: &[Step::Pop(Count::Fixed(2))],
        sources: "R700 ISA CF table; Mesa r600 tgsi_endif (ALU_POP_AFTER turned into ALU_POP2_AFTER)",
        one_source: false,
    },
    StackEffect {
        name: "ALU_ELSE_AFTER",
        timing: Timing::AfterClause,
        steps: &[Step::Else],
        sources: "R700 ISA CF table; decaf translateCf_ALU_ELSE_AFTER (ALU, then ELSE)",
        one_source: false,
    },
];

/// The row of CF instruction `name`, if its stack effect is in the table.
pub fn effect(name: &str) -> Option<&'static StackEffect> {
    TABLE.iter().find(|e| e.name == name)
}

/// Whether a non-zero POP_COUNT has a stated meaning on `name`: the table's rows that read the
/// field. Everything else (loops, CALL, TEX, ...) must carry 0, else the instruction is
/// rejected: no two sources agree on what such a count does (Multi2Sim pops it on LOOP_BREAK when
/// the jump is *not* taken; the R700 ISA says CALL's must be zero).
pub fn pop_count_allowed(name: &str) -> bool {
    effect(name)
        .is_some_and(|e| e.steps.iter().any(|s| matches!(s, Step::Pop(Count::PopCountField) | Step::JumpIfNoneActive { pop: Count::PopCountField })))
}

/// How far the fall-through path of a jump has come through the pops the taken jump stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No pop has restored an entry saved before the jump: the lane is still inactive, so the
    /// skipped code has no effect on it.
    Skipping,
    /// A pop restored an entry saved before the jump, above the depth the taken jump leaves: the
    /// lane may be active again, so until the target only pops may run. A pop changes nothing
    /// but the flag and the depth, and the last one lands where the taken jump's own pops do.
    /// This is the else-if ladder's close (`ALU_POP2_AFTER; POP POP_CNT(2)` under a
    /// `JUMP POP_CNT(4)`): the compiler splits the pops the jump stands for over several
    /// instructions.
    Draining,
    /// A pop reached the depth the taken jump leaves: only the target may follow.
    Landed,
}

/// What a lane that falls through a jump must meet so that the fall-through path ends where the
/// taken jump would (see the module comment), stated for the static mask-stack depth:
/// - `jump_depth`: the depth when the jump step runs (entries below it were pushed before);
/// - the taken jump leaves `target_depth = jump_depth − pop` at the target, its flag the entry
///   at that depth;
/// - on the fall-through path, between the jump and the target: no else step at a depth
///   ≤ `jump_depth` (it would invert against an entry saved before the jump and could wake the
///   lane); once a pop has gone below `jump_depth` ([`Phase::Draining`]) nothing but pops until
///   one lands exactly on `target_depth` ([`Phase::Landed`]), and none below it; the depth at
///   the target equals `target_depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JumpCheck {
    /// CF index of the jumping instruction and of its target.
    pub from: u32,
    pub target: u32,
    pub jump_depth: u32,
    pub target_depth: u32,
    pub phase: Phase,
    /// Loops open at the jump. A loop that starts inside the skipped code is left at once by
    /// an inactive lane, so its ALU_BREAK / ALU_CONTINUE never touch it; those of an enclosing
    /// loop would.
    pub loops: u32,
}

impl JumpCheck {
    /// A jump at CF `from` to `target`, taken at depth `jump_depth` with `pop` pops, inside
    /// `loops` loops. An error when the jump is malformed on its own (backward, or popping more
    /// than is pushed).
    pub fn new(from: u32, target: u32, jump_depth: u32, pop: u32, loops: u32) -> Result<JumpCheck, String> {
        if target <= from {
            return Err(format!("jumps backward to CF {target:02}: a jump that is not past itself is not a compiled if / else"));
        }
        let Some(target_depth) = jump_depth.checked_sub(pop) else {
            return Err(format!("would pop {pop} stack entries when its jump is taken, but only {jump_depth} are pushed"));
        };
        Ok(JumpCheck { from, target, jump_depth, target_depth, phase: Phase::Skipping, loops })
    }

    /// Whether CF `pc` lies strictly between the jump and its target.
    pub fn skips(&self, pc: u32) -> bool {
        self.from < pc && pc < self.target
    }

    /// The fall-through path, inside the skipped code, pops down to `depth`. An error (the
    /// reason, for the message) when that is not what the taken jump's pops do.
    pub fn pop_to(&mut self, depth: u32) -> Result<(), String> {
        if depth >= self.jump_depth {
            // restores an entry pushed after the jump, by this inactive lane: still inactive
            return Ok(());
        }
        if self.phase == Phase::Landed {
            return Err(format!("pops to depth {depth} after the pop the jump stands for"));
        }
        if depth < self.target_depth {
            return Err(format!("pops to depth {depth} where the taken jump leaves {}", self.target_depth));
        }
        self.phase = if depth == self.target_depth { Phase::Landed } else { Phase::Draining };
        Ok(())
    }

    /// Whether the fall-through path may run anything but a pop at CF `pc`: not inside the
    /// skipped code once a pop has restored an entry saved before the jump.
    pub fn allows_more_than_pops(&self, pc: u32) -> bool {
        !(self.skips(pc) && self.phase != Phase::Skipping)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The else-if ladder's innermost jump: `JUMP POP_CNT(4)` at depth 6 over `ALU_POP2_AFTER`
    /// (to 4) and `POP POP_CNT(2)` (to 2).
    #[test]
    fn a_jump_may_stand_for_pops_split_over_instructions() {
        let mut j = JumpCheck::new(22, 25, 6, 4, 0).unwrap();
        assert_eq!(j.target_depth, 2);
        assert!(j.allows_more_than_pops(23));
        j.pop_to(4).unwrap();
        assert_eq!(j.phase, Phase::Draining);
        assert!(!j.allows_more_than_pops(24), "only pops after a pop restored a pre-jump entry");
        assert!(j.allows_more_than_pops(25), "the target itself runs normally");
        j.pop_to(2).unwrap();
        assert_eq!(j.phase, Phase::Landed);
    }

    #[test]
    fn pops_that_miss_the_taken_jumps_depth_are_refused() {
        // below the target depth
        let mut j = JumpCheck::new(3, 7, 3, 1, 0).unwrap();
        assert!(j.pop_to(1).unwrap_err().contains("where the taken jump leaves 2"));
        // another pop after landing
        let mut j = JumpCheck::new(3, 7, 3, 2, 0).unwrap();
        j.pop_to(2).unwrap();
        j.pop_to(1).unwrap();
        assert!(j.pop_to(0).is_err());
        // pops that only restore entries pushed after the jump change nothing
        let mut j = JumpCheck::new(3, 9, 2, 1, 0).unwrap();
        j.pop_to(3).unwrap();
        j.pop_to(2).unwrap();
        assert_eq!(j.phase, Phase::Skipping);
    }

    #[test]
    fn malformed_jumps_are_refused() {
        assert!(JumpCheck::new(5, 5, 1, 0, 0).is_err());
        assert!(JumpCheck::new(5, 9, 1, 2, 0).is_err());
    }
}
