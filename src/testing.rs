//! Test-only switches. NOT for production use: they exist so that the verification suite can
//! prove it detects a mistranslation (tests/verify_agal.rs, `harness_detects_mutation`).
//!
//! The switch is per thread, so a test that turns it on cannot affect tests running in parallel
//! threads; lowering reads it on the calling thread.

use std::cell::Cell;

/// A deliberate mistranslation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    None,
    /// AGAL `add` is lowered as a subtraction.
    AgalAddAsSub,
    /// A single-lane AGAL write takes lane x of the value instead of the positional lane
    /// (the deviation docs/isa/agal.md §9.5 item 5 documents in Ruffle).
    AgalSingleLaneWriteFromX,
    /// PICA `mul` (and the products of mad/dp*) use the IEEE multiply (0·inf = NaN) instead of
    /// the PICA multiply.
    PicaMulAsIeee,
    /// GX2 (Latte) `MUL` (and the products of MULADD / DOT4) use the IEEE multiply instead of
    /// the non-IEEE one (0 × anything = 0).
    Gx2MulAsIeee,
    /// PICA `emit` ignores the `setemit … inv` flag (wrong vertex order).
    PicaGsIgnoreWinding,
    /// GX2 geometry shaders: CUT_VERTEX / EMIT_CUT_VERTEX do not end the strip.
    Gx2GsDropCut,
    /// Xenos `mul` (and every product: mad, dp*, muls, ...) uses the IEEE multiply instead of the
    /// D3D9 "0 × anything = 0" multiply.
    XenosMulAsIeee,
    /// Xenos `alloc` does not store the pending memory exports (only the end of the shader
    /// does, with the last eA).
    XenosMemExportAllocNoStore,
    /// A Xenos pixel-shader kill discards the pixel without storing its pending memory exports.
    XenosMemExportKillNoStore,
    /// Xenos memory export stores eM# with lanes x and y exchanged (the two halves of a
    /// 16_16_FLOAT element).
    XenosMemExportSwapXY,
}

thread_local! {
    static MUTATION: Cell<Mutation> = const { Cell::new(Mutation::None) };
}

/// Turns a mutation on (or off with [`Mutation::None`]) for the calling thread.
pub fn set_mutation(m: Mutation) {
    MUTATION.with(|c| c.set(m));
}

/// The calling thread's mutation (always [`Mutation::None`] unless a test set one).
pub fn mutation() -> Mutation {
    MUTATION.with(|c| c.get())
}
