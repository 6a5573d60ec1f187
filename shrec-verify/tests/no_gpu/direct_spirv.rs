//! The direct SPIR-V back end (`shrec::spirv`, docs/spirv-direct.md) on the fixed-seed
//! generated programs of every family: every program's module passes the IR
//! validator, is written without a refusal, and passes `spirv-val`. (Whether it *executes*
//! right is the `verify_*` suites' question, run with `SHREC_VERIFY_SPIRV_BACKEND=direct`.)
//! The programs are those of the suites' fixed-seed runs (seed 1): random programs and
//! compiler-shaped programs.

use crate::common::spirv_val;
use shrec::ir::Module;
use shrec_verify::{agal, agal_shaped, gx2, gx2_gs, pica, pica_shaped, xenos};

const SEED: u64 = 1;

/// Writes `module` with the direct back end and validates it; a failure names the program.
fn check(name: &str, module: &Module, failures: &mut Vec<String>) {
    if let Err(e) = shrec::ir::validate(module) {
        failures.push(format!("{name}: IR validation: {e}"));
        return;
    }
    match shrec::spirv::write(module, &shrec::spirv::Options::default()) {
        Ok(words) => {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            if let Err(e) = spirv_val(&bytes, "direct-fixed-seed") {
                failures.push(format!("{name}: spirv-val: {e}"));
            }
        }
        Err(e) => failures.push(format!("{name}: {e}")),
    }
}

fn finish(what: &str, count: usize, failures: Vec<String>) {
    crate::common::log_uncaptured(&format!("direct SPIR-V {what}: {count} programs, {} failed", failures.len()));
    assert!(failures.is_empty(), "{} of {count} {what}:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn gx2_fixed_seed_programs_write_valid_spirv() {
    let mut failures = Vec::new();
    let mut count = 0;
    let programs = (0..300).map(|i| gx2::gen::program(SEED, i)).chain((0..200).map(|i| gx2::gen::shaped_program(SEED, i)));
    let shaders = programs.map(|p| (p.name, p.shader));
    let geometry = (0..60).map(|i| (format!("gs fuzz seed {SEED} program {i}"), gx2_gs::random_geometry_shader(SEED, i).0));
    for (name, shader) in shaders.chain(geometry) {
        count += 1;
        match shrec::formats::gx2::lower::lower(&shader) {
            Ok(m) => check(&name, &m, &mut failures),
            Err(e) => failures.push(format!("{name}: translate: {e}")),
        }
    }
    finish("GX2 (300 random, 200 compiler-shaped, 60 geometry)", count, failures);
}

#[test]
fn pica_fixed_seed_programs_write_valid_spirv() {
    let mut failures = Vec::new();
    let mut count = 0;
    let programs = (0..300)
        .map(|i| pica::gen::program(SEED, i))
        .chain((0..200).map(|i| pica_shaped::shaped_program(SEED, i)))
        .chain((0..100).map(|i| pica::gen::gs_program(SEED, i)));
    for p in programs {
        count += 1;
        match shrec::formats::pica::translate(&p.bytes, p.dvle) {
            Ok(t) => check(&p.name, &t.module, &mut failures),
            Err(e) => failures.push(format!("{}: translate: {}", p.name, e.reason())),
        }
    }
    finish("PICA (300 random, 200 compiler-shaped, 100 geometry)", count, failures);
}

#[test]
fn agal_fixed_seed_programs_write_valid_spirv() {
    let mut failures = Vec::new();
    let mut count = 0;
    let programs = (0..300).map(|i| agal::gen::program(SEED, i)).chain((0..200).map(|i| agal_shaped::shaped_program(SEED, i)));
    for p in programs {
        count += 1;
        match shrec::formats::agal::translate(&p.bytes, &Default::default()) {
            Ok(t) => check(&p.name, &t.module, &mut failures),
            Err(e) => failures.push(format!("{}: translate: {e}", p.name)),
        }
    }
    finish("AGAL (300 random, 200 compiler-shaped)", count, failures);
}

#[test]
fn xenos_fixed_seed_programs_write_valid_spirv() {
    let mut failures = Vec::new();
    let mut count = 0;
    let programs = (0..150).map(|i| xenos::gen::program(SEED, i)).chain((0..200).map(|i| xenos::gen::shaped_program(SEED, i)));
    for p in programs {
        count += 1;
        match shrec::formats::xenos::translate(&p.bytes) {
            Ok(t) => check(&p.name, &t.module, &mut failures),
            Err(e) => failures.push(format!("{}: translate: {}", p.name, e.reason())),
        }
    }
    finish("Xenos (150 random, 200 compiler-shaped)", count, failures);
}
