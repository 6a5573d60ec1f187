//! One shader's build: read its container, translate, apply the project hooks, then DXC per
//! target — or the incremental cache's artifacts when the artifact key matches.

use super::clock::{add, ThreadClock};
use super::pipeline::Pipeline;
use super::SpirvBackend;
use crate::cache::incremental::{ArtifactKey, Artifacts};
use crate::cache::{self, CacheEntry};
use crate::dxc::{self, Target};
use crate::formats;
use crate::report::{FailureKind, Outcome, Phase, Status};
use crate::scan::{self, FoundShader};
use std::sync::atomic::Ordering;

/// Every argument list a build uses, for the artifact key (the direct SPIR-V back end is named
/// with shrec's version, which the key holds too).
fn args_fingerprint(stage: crate::Stage, targets: &[Target], extra: &[String], backend: SpirvBackend, float_controls: bool) -> String {
    let extra = extra.iter().map(|a| format!(" {a:?}")).collect::<String>();
    targets
        .iter()
        .map(|&t| match (t, backend) {
            (Target::Spirv, SpirvBackend::Direct) => format!("spirv:direct:float-controls={float_controls}"),
            _ => format!("{}:{}:{}{extra}", t.name(), dxc::profile(stage), dxc::args(stage, t).join(" ")),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The SPIR-V of the direct back end (`--spirv-backend direct`): from the translation's IR; a
/// shader whose HLSL an `--override-dir` file replaces has no IR to write from.
fn direct_spirv(module: Option<&crate::ir::Module>, entry: &str, float_controls: bool) -> Result<Vec<u8>, (FailureKind, String)> {
    let Some(module) = module else {
        let reason = "the direct SPIR-V back end: an --override-dir HLSL replacement is compiled by DXC only (build with --spirv-backend dxc)";
        return Err((FailureKind::SpirvUnsupported, reason.to_string()));
    };
    let opts = crate::spirv::Options { entry_point: entry.to_string(), float_controls };
    match crate::spirv::write(module, &opts) {
        Ok(words) => Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect()),
        Err(e) => Err((FailureKind::SpirvUnsupported, format!("direct SPIR-V: {e}"))),
    }
}

/// Builds one shader: from the incremental cache when its artifact key matches, else with DXC.
pub(super) fn build_one(job: &FoundShader, pipeline: &Pipeline, members: &scan::MemberReader) -> (Outcome, Option<CacheEntry>) {
    let Pipeline { opts, targets, lib, store, clock, compilations, .. } = *pipeline;
    let outcome = |status: Status| Outcome {
        path: job.label(),
        file: job.path.clone(),
        member: job.member.clone(),
        container: job.container,
        name: job.name.clone(),
        offset: job.offset,
        family: job.family,
        stage: job.stage,
        key: job.key,
        index: job.index,
        status,
        hlsl_override: None,
        hlsl_dump_error: None,
        spirv_unoptimized: false,
    };
    let failed = |phase: Phase, kind: FailureKind, reason: String, detail_offset: Option<u64>| {
        (outcome(Status::Failed { phase, kind, reason, detail_offset }), None)
    };
    if !formats::has_translator(job.container) {
        let reason = format!("{} translation is not implemented yet (detection and keys are)", job.family);
        return (outcome(Status::Skipped { reason }), None);
    }

    let t = ThreadClock::start();
    let bytes = scan::read_container_with(job, members);
    add(&clock.parse, t);
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => return failed(Phase::Parse, FailureKind::InputRead, e, None),
    };
    let t = ThreadClock::start();
    let translated = formats::translate(job.container, &bytes, job.index, &opts.translate);
    let overridden = match opts.hooks.override_for(job.key) {
        Ok(o) => o,
        Err(e) => {
            add(&clock.translate, t);
            return failed(Phase::Translate, FailureKind::Override, format!("reading its --override-dir file: {e}"), None);
        }
    };
    // An override replaces the HLSL only: the runtime metadata (sampler words, the Xenos
    // specialization-constant mask) still come from the translation when there is one.
    // The mask an override declares (`// shrec: spec-constants-mask = …`, which generated HLSL
    // carries) wins: it describes the text that is compiled.
    let declared = match &overridden {
        Some((path, text)) => match crate::hlsl::declared_spec_constants_mask(text) {
            Ok(m) => m,
            Err(e) => {
                add(&clock.translate, t);
                return failed(Phase::Translate, FailureKind::Override, format!("its --override-dir file {}: {e}", path.display()), None);
            }
        },
        None => None,
    };
    let (hlsl, meta, spec_constants_mask, override_path, module) = match (translated, overridden) {
        (Ok(tr), None) => {
            let text = crate::hlsl::write_with_entry_point(&tr.module, opts.abi.entry_point());
            (crate::hlsl::with_spec_constants_mask(text, tr.spec_constants_mask), tr.meta, tr.spec_constants_mask, None, Some(tr.module))
        }
        (Ok(tr), Some((path, text))) => (text, tr.meta, declared.unwrap_or(tr.spec_constants_mask), Some(path), None),
        (Err(_), Some((path, text))) => (text, Vec::new(), declared.unwrap_or(0), Some(path), None),
        (Err(e), None) => {
            add(&clock.translate, t);
            return failed(Phase::Translate, FailureKind::of_shader_error(&e), e.reason(), e.offset());
        }
    };
    let hlsl = opts.hooks.apply(hlsl);
    let outcome = |status: Status| Outcome { hlsl_override: override_path.clone(), ..outcome(status) };
    add(&clock.translate, t);
    if hlsl.len() > opts.max_hlsl_bytes {
        let reason = format!(
            "the generated HLSL is {} bytes, over the limit of {} bytes per shader (DXC's time on such a shader is unbounded in practice)",
            hlsl.len(),
            opts.max_hlsl_bytes
        );
        return (outcome(Status::Failed { phase: Phase::Translate, kind: FailureKind::LimitHlsl, reason, detail_offset: None }), None);
    }
    // A `--hlsl-dir` file that cannot be written (full disk, ...) is an error of its own: the
    // shader is still compiled and cached (it used to fail the shader, and a full
    // disk dropped 137 of 143 shaders from the cache).
    let mut hlsl_dump_error = None;
    if let Some(dir) = &opts.hlsl_dir {
        let path = dir.join(dxc::hlsl_file_name(job.key, job.family, job.stage));
        if let Err(e) = cache::atomic::write(&path, hlsl.as_bytes()) {
            hlsl_dump_error = Some(format!("writing {}: {e}", path.display()));
        }
    }

    // A runtime that links another entry point (`--abi xenosrecomp-metal`: `shaderMain`) gets it
    // as DXC's last `-E`, which wins over the `main` the compiler interface passes first.
    let entry = opts.abi.entry_point();
    let dxc_args: std::borrow::Cow<[String]> = if entry == "main" {
        std::borrow::Cow::Borrowed(&opts.hooks.dxc_args)
    } else {
        std::borrow::Cow::Owned(["-E".to_string(), entry.to_string()].into_iter().chain(opts.hooks.dxc_args.iter().cloned()).collect())
    };
    // A very long shader compiles to SPIR-V without DXC's optimizer (limits::
    // SPIRV_UNOPTIMIZED_HLSL_BYTES says why), unless the project picked a level with --dxc-arg.
    let spirv_unoptimized = targets.contains(&Target::Spirv)
        && opts.spirv_backend == SpirvBackend::Dxc
        && hlsl.len() > opts.spirv_unoptimized_above
        && !dxc_args.iter().any(|a| a.starts_with("-O"));
    let spirv_args: std::borrow::Cow<[String]> =
        if spirv_unoptimized { std::borrow::Cow::Owned(dxc_args.iter().cloned().chain(["-O0".to_string()]).collect()) } else { dxc_args.clone() };
    let outcome = |status: Status| Outcome { hlsl_dump_error: hlsl_dump_error.clone(), spirv_unoptimized, ..outcome(status) };
    let failed = |phase: Phase, kind: FailureKind, reason: String, detail_offset: Option<u64>| {
        (outcome(Status::Failed { phase, kind, reason, detail_offset }), None)
    };
    let key = ArtifactKey::derive(&[
        b"shrec-artifact-1",
        env!("CARGO_PKG_VERSION").as_bytes(),
        &lib.map_or(0, |l| l.identity).to_le_bytes(),
        hlsl.as_bytes(),
        args_fingerprint(job.stage, targets, &dxc_args, opts.spirv_backend, opts.spirv_float_controls).as_bytes(),
        &[u8::from(spirv_unoptimized)],
        &job.key.to_le_bytes(),
    ]);
    let entry = |a: Artifacts| CacheEntry {
        key: job.key,
        family: job.family,
        stage: job.stage,
        dxil: a.dxil,
        spirv: a.spirv,
        spec_constants_mask: a.spec_constants_mask,
        meta: a.meta,
    };
    if let Some(hit) = store.and_then(|s| s.get(&key)) {
        return (outcome(Status::Compiled { cached: true }), Some(entry(hit)));
    }

    let mut artifacts = Artifacts { dxil: None, spirv: None, meta, spec_constants_mask, hlsl_len: hlsl.len() as u32 };
    // In a worker process, under the time and memory limits: every shader with --isolate-dxc,
    // and a large one always (DXC's cost is steep in its size; in-process it cannot be stopped).
    let large = hlsl.len() > opts.dxc_isolate_above;
    // (Worker processes need Unix or Windows: elsewhere a large shader compiles in-process, unlimited.)
    let worker = opts.isolate_dxc.clone().or_else(|| if large && crate::dxc_worker::SUPPORTED { opts.dxc_worker_exe.clone() } else { None });
    let mut failures: Vec<(Phase, FailureKind, String)> = Vec::new();
    for &target in targets {
        let t = ThreadClock::start();
        compilations.fetch_add(1, Ordering::Relaxed);
        let mask = spec_constants_mask;
        // DXC's messages name the file `--hlsl-dir` writes (and `shrec hlsl` prints), not DXC's
        // in-memory `shader.hlsl`.
        let file_name = dxc::hlsl_file_name(job.key, job.family, job.stage);
        let dxc_failed = |e: dxc::CompileError| {
            let kind = FailureKind::of_compile(&e);
            let reason = match e {
                dxc::CompileError::Rejected(diag) => {
                    let diag = diag.replace(&format!("{}:", dxc::SOURCE_NAME), &format!("{file_name}:"));
                    format!("DXC ({}) rejected the generated HLSL:\n{diag}", target.name())
                }
                other => format!("DXC ({}): {other}", target.name()),
            };
            (kind, reason)
        };
        let args = if target == Target::Spirv { &spirv_args } else { &dxc_args };
        let compiled = match (&worker, lib) {
            _ if target == Target::Spirv && opts.spirv_backend == SpirvBackend::Direct => {
                direct_spirv(module.as_ref(), opts.abi.entry_point(), opts.spirv_float_controls)
            }
            (_, None) => Err((FailureKind::DxcLibrary, format!("DXC ({}): no DXC library was loaded for this build", target.name()))),
            (Some(exe), Some(lib)) => match crate::dxc_worker::compile(exe, lib, &hlsl, job.stage, target, mask, args, Some(opts.dxc_limits)) {
                Ok(result) => result.map_err(dxc_failed),
                Err(gone) => Err((FailureKind::of_worker(&gone), format!("DXC ({}): {gone}", target.name()))),
            },
            (None, Some(lib)) => dxc::compile_with_args(lib, &hlsl, job.stage, target, mask, args).map_err(dxc_failed),
        };
        add(if target == Target::Dxil { &clock.dxil } else { &clock.spirv }, t);
        match compiled {
            Ok(code) => match target {
                Target::Dxil => artifacts.dxil = Some(code),
                Target::Spirv => artifacts.spirv = Some(code),
            },
            // The other backend is still compiled: a shader DXIL cannot take may still run
            // from SPIR-V, and the other way round.
            Err((kind, reason)) => {
                let phase = if target == Target::Dxil { Phase::DxcDxil } else { Phase::DxcSpirv };
                failures.push((phase, kind, reason));
            }
        }
    }
    if let Some((phase, kind, reason)) = failures.first().cloned() {
        let built: Vec<&str> =
            [(artifacts.dxil.is_some(), "DXIL"), (artifacts.spirv.is_some(), "SPIR-V")].into_iter().filter_map(|(b, n)| b.then_some(n)).collect();
        let mut reason = reason;
        for (_, _, other) in &failures[1..] {
            reason.push('\n');
            reason.push_str(other);
        }
        if built.is_empty() {
            return failed(phase, kind, reason, None);
        }
        // Partly built: in the cache with the backends that compiled, still a failure; not
        // stored in the incremental cache, which holds complete builds only.
        reason.push_str(&format!("\n(its {} is in the cache)", built.join(" and ")));
        return (outcome(Status::Failed { phase, kind, reason, detail_offset: None }), Some(entry(artifacts)));
    }
    if let Some(s) = store {
        // A failed cache write costs a rebuild next time, nothing else: not a shader failure.
        if let Err(e) = s.put(&key, &artifacts) {
            pipeline.events.cache_write_failed(&e.to_string());
        }
    }
    (outcome(Status::Compiled { cached: false }), Some(entry(artifacts)))
}
