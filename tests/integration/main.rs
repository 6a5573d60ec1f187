//! The root crate's integration tests, in ONE test binary (as ripgrep does): each former
//! `tests/<name>.rs` is a module here, so the library is linked once instead of once per file.
//! Run one file's tests with a filter on its module name, e.g.
//! `cargo test --release -p shrec --test integration containers::` (or `-- containers::` after
//! other arguments).
//!
//! All tests of all modules run as threads of one process, so a test here must not touch
//! process-wide state: no `std::env::set_var`/`remove_var` (give a child process its variables
//! with `Command::env`), no `set_current_dir` (use `Command::current_dir`), no signal handlers,
//! no rlimits on this process (set them in the child, see `cli_args`), and temporary paths
//! unique across the whole binary (`common::tmpdir` names are per process, so a name used in
//! two modules collides). A test that needs any of these belongs in a binary of its own.
//! The DXC library is process-wide too, but it is made for that: one loaded library, one
//! compiler per thread (`shrec::dxc`); a DXC crash is isolated by running the `shrec`
//! executable (`--isolate-dxc`), never by this process.

use shrec_testkit as common;

mod agal_disasm;
mod build_pipeline;
mod cache_writers;
mod cli_args;
mod containers;
mod detect;
mod dxc_isolation;
mod dxc_provisioning;

mod dxc_version;
mod dxil_hash;
mod embed_cargo;
mod embed_cmake;
mod embed_layouts;
mod first_contact;
mod fuzz_regressions;
mod golden_hlsl;
mod gx2_containers;
mod gx2_disasm;
mod gx2_stream_out;
mod gx2_translate;
mod host_evaluation;
mod hostile_names;
mod incremental;
mod kill_mid_write;
mod opcode_docs;
mod overrides_and_failures;
mod pica_disasm;
mod pica_translate;
mod scan_corpus;
mod scan_index;
mod smolv_vectors;
mod spirv_direct;
mod spirv_unoptimized;
mod xenos_abi;
mod xenos_container;
mod xenos_disasm;
mod xenos_profiles;
mod xenos_synthetic;
mod xenos_translate;
mod xenosrecomp_layouts;
