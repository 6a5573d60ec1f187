//! The tests of shrec-verify that use no GPU, in one binary (as the root crate's
//! `tests/integration/`): translation of synthetic GX2 programs (`gx2_synthetic`), the direct SPIR-V of the
//! fixed-seed generated programs (`direct_spirv`), the resource caps (`resource_caps`) and the C++ DVLB length helper (`pica_dvlb_length_cpp`). One module's
//! tests: `cargo test --release -p shrec-verify --test no_gpu gx2_synthetic::`.
//!
//! The tests that run on lavapipe keep one binary per family (`verify_*.rs`): their long and
//! reproduce modes are selected by process-wide environment variables (`SHREC_FUZZ_SEED`,
//! `SHREC_FUZZ_ONLY`, `SHREC_FUZZ_PROGRAMS`, ...) and test names every family shares
//! (`fuzz_one`, `long_fuzz`), and the geometry-shader binaries must run alone on one thread
//! (lavapipe crashed with two threads driving geometry jobs, docs/verification.md).
//! Tests here must not change process-wide state either (environment, working directory).

use shrec_testkit as common;

mod direct_spirv;
mod gx2_synthetic;
mod pica_dvlb_length_cpp;
mod resource_caps;
