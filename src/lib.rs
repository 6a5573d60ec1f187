//! shrec — batch shader recompiler.
//!
//! The pipeline, one module per step:
//! [`detect`] finds shader containers in bytes, [`formats`] parses each family's containers and
//! lowers its microcode to the shared [`ir`], [`hlsl`] writes HLSL from the IR, [`dxc`] compiles it
//! to DXIL and SPIR-V, [`pack`] compresses, [`cache`] writes the embeddable source files and keeps
//! the incremental on-disk cache, [`report`] collects per-shader outcomes. [`build`] runs them all.
//! The verification (a Vulkan harness executing the generated SPIR-V on a CPU driver against
//! reference interpreters of the four ISAs) lives outside the library, in the `shrec-verify` crate.
//! The library prints nothing: the `shrec` executable (the default `cli` feature: clap, indicatif)
//! prints what [`build`] returns and reports while it runs; a build script depends on the library
//! with `default-features = false`.

pub mod build;
pub mod cache;
pub mod detect;
pub mod dxc;
pub mod dxc_worker;
pub mod error;
pub mod formats;
pub mod hlsl;
pub mod hooks;
pub mod ir;
pub mod limits;
pub mod pack;
pub mod report;
pub mod scan;
pub mod spirv;
pub mod text;

pub use ir::{Family, Stage};
