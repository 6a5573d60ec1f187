//! `shrec build` as the command line runs it: the options from the arguments, the build with its
//! progress display, then everything the build returned printed on stderr (and, in GitHub
//! Actions, as annotations and a job summary).

use super::args::{AbiArg, BuildArgs, LayoutArg, SpirvBackendArg, SpirvEncodingArg};
use super::github;
use super::progress::{FinishProgressOnDrop, Progress};
use shrec::build::{self, BuildOptions, BuildOutput, Timings};
use shrec::cache::{CacheLayout, SpirvEncoding};
use shrec::dxc::LocateOptions;
use shrec::report::{self, printable, Status};
use std::collections::BTreeMap;
use std::time::Duration;

/// What the command line prints besides errors and warnings.
struct Printing {
    /// Progress, the summary table and the "wrote" line (`-q` turns them off).
    progress: bool,
    /// Cache sizes per backend and every layout's (`--summary`).
    sizes: bool,
    /// Per-stage times (`--timings`).
    timings: bool,
}

/// `shrec build`: returns the exit code.
pub(crate) fn run(a: BuildArgs) -> i32 {
    let printing = Printing { progress: !a.quiet, sizes: a.summary, timings: a.timings };
    let opts = match options(a) {
        Ok(o) => o,
        Err(message) => {
            eprintln!("error: {message}");
            return 1;
        }
    };
    let progress = Progress::new(printing.progress);
    let built = std::thread::scope(|scope| {
        // finished before the scope waits for the display's thread, also if the build panics
        let _finish = FinishProgressOnDrop(&progress);
        scope.spawn(|| progress.watch());
        build::run_observed(&opts, &progress)
    });
    match built {
        Ok(out) => print_build(&opts, &printing, &out),
        Err(e) => {
            eprintln!("error: {}", printable(&e.to_string()));
            // CI reads the report even when the build could not run.
            if let Err(w) = build::write_fatal_report(&opts, &e) {
                eprintln!("error: {}", printable(&w.to_string()));
            }
            // a fatal error is a failure CI must show too
            if github::in_actions() {
                github::print_fatal(&e.to_string());
            }
            1
        }
    }
}

/// The library's options from the arguments; `Err`: a combination the command line refuses.
fn options(a: BuildArgs) -> Result<BuildOptions, String> {
    if a.spirv_float_controls && matches!(a.spirv_backend, Some(SpirvBackendArg::Dxc)) {
        return Err(
            "--spirv-float-controls needs the direct SPIR-V back end, not --spirv-backend dxc (DXC has no option for these execution modes)".into()
        );
    }
    if a.zstd_dict && !matches!(a.layout, LayoutArg::PerShader) {
        return Err("--zstd-dict needs --layout per-shader (a single frame has nothing to share a dictionary with)".into());
    }
    let hooks = shrec::hooks::Hooks::new(a.prelude.as_deref(), &a.defines, a.override_dir, a.dxc_args).map_err(|e| printable(&e.to_string()))?;
    let isolate_dxc = match (a.isolate_dxc, std::env::current_exe()) {
        (false, _) => None,
        (true, _) if !shrec::dxc_worker::SUPPORTED => return Err(format!("--isolate-dxc: {}", shrec::dxc_worker::UNSUPPORTED)),
        (true, Ok(exe)) => Some(exe),
        (true, Err(e)) => return Err(format!("--isolate-dxc: cannot find this executable: {e}")),
    };
    Ok(BuildOptions {
        hooks,
        input: a.dir,
        output: a.output,
        targets: a.targets,
        dxc: LocateOptions { explicit: a.dxc, offline: a.offline, notes: (!a.quiet).then_some(print_note as fn(&str)) },
        cache_dir: if a.no_cache { None } else { Some(a.cache_dir.unwrap_or_else(build::default_cache_dir)) },
        report_json: a.report,
        hlsl_dir: a.hlsl_dir,
        spirv_encoding: match a.spirv_encoding {
            SpirvEncodingArg::Smolv => SpirvEncoding::Smolv,
            SpirvEncodingArg::Raw => SpirvEncoding::Raw,
        },
        spirv_backend: match a.spirv_backend {
            None => shrec::build::SpirvBackend::Auto,
            Some(SpirvBackendArg::Dxc) => shrec::build::SpirvBackend::Dxc,
            Some(SpirvBackendArg::Direct) => shrec::build::SpirvBackend::Direct,
        },
        spirv_float_controls: a.spirv_float_controls,
        zstd_level: a.zstd_level,
        layout: match a.layout {
            LayoutArg::Single => CacheLayout::Single,
            LayoutArg::PerShader => CacheLayout::PerShader,
        },
        zstd_dict: a.zstd_dict.then_some(a.zstd_dict_size),
        jobs: a.jobs,
        translate: a.translate.options(),
        compare_layouts: a.summary,
        max_hlsl_bytes: a.max_hlsl_bytes,
        allow_empty: a.allow_empty,
        allow_failures: a.allow_failures,
        abi: match a.abi {
            AbiArg::Shrec => shrec::cache::CppAbi::Shrec,
            AbiArg::Xenosrecomp => shrec::cache::CppAbi::XenosRecomp,
            AbiArg::XenosrecompMetal => shrec::cache::CppAbi::XenosRecompMetal,
        },
        dxc_limits: shrec::limits::DxcLimits { cpu_seconds: a.dxc_time_limit, memory_mib: a.dxc_memory_limit },
        dxc_isolate_above: a.dxc_isolate_above,
        spirv_unoptimized_above: a.spirv_unoptimized_above,
        // large shaders go to workers of this executable even without --isolate-dxc
        dxc_worker_exe: std::env::current_exe().ok(),
        isolate_dxc,
    })
}

/// What DXC's search and provisioning say they do (not with `-q`).
fn print_note(text: &str) {
    eprint!("{text}");
}

/// Everything a build that ran returned, on stderr; returns the exit code. The failed shaders'
/// `error:` lines were printed as they failed ([`Progress`]).
fn print_build(opts: &BuildOptions, printing: &Printing, out: &BuildOutput) -> i32 {
    let r = &out.report;
    // Skipped shaders: one line per family (the JSON report lists each one).
    let mut skipped: BTreeMap<shrec::Family, (usize, String)> = BTreeMap::new();
    for o in &r.outcomes {
        if let Status::Skipped { reason } = &o.status {
            skipped.entry(o.family).or_insert_with(|| (0, reason.clone())).0 += 1;
        }
    }
    for (family, (n, reason)) in skipped {
        eprintln!("warning: {n} {family} shader(s) found but not built: {reason}");
    }
    if printing.progress {
        for o in r.outcomes.iter().filter(|o| o.hlsl_override.is_some()) {
            let file = o.hlsl_override.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            eprintln!("note: {}", printable(&format!("{}+0x{:x} [0x{:016X}]: HLSL from {file}", o.path.display(), o.offset, o.key)));
        }
    }
    for line in r.outcomes.iter().filter_map(report::dump_error_line) {
        eprintln!("{line}");
    }
    for e in &r.scan_errors {
        eprintln!("{}", report::scan_error_line(e));
    }
    for w in &r.cache_repairs {
        eprintln!("warning: incremental cache: {w}");
    }
    if let Some(e) = &r.empty_input {
        eprintln!("error: {}", printable(e));
    }
    if let Some(w) = &out.scan_warning {
        eprintln!("warning: {w}");
    }
    for w in &out.override_warnings {
        eprintln!("warning: {}", printable(w));
    }
    if github::in_actions() {
        github::print_report(r);
    }
    if printing.progress {
        if let Some(n) = &out.links_note {
            eprintln!("note: {n}");
        }
        eprint!("{}", report::summary_table(r));
        if out.output_written {
            eprintln!("shrec: wrote {}", opts.output.display());
        } else {
            eprintln!("shrec: {} is up to date", opts.output.display());
        }
    }
    if printing.sizes {
        if let Some(s) = &out.sizes {
            eprint!("{s}");
        }
        if let Some(l) = &out.layouts {
            eprint!("{l}");
        }
    }
    if printing.timings {
        print_timings(&out.timings, r.outcomes.len());
    }
    if let Some(line) = report::closing_line(r) {
        eprintln!("{line}");
    }
    report::exit_code(r)
}

fn fmt_ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// `--timings`: wall time, CPU time per stage, the rate, and how far the build is from the floor
/// DXC's CPU time sets.
fn print_timings(t: &Timings, shaders: usize) {
    eprintln!("timings ({} threads): wall {}", t.threads, fmt_ms(t.wall));
    match t.first_shader_started {
        Some(first) => eprintln!(
            "  scan       {} (wall; ended at {}, the first shader started compiling at {})",
            fmt_ms(t.scan),
            fmt_ms(t.scan_ended),
            fmt_ms(first)
        ),
        None => eprintln!("  scan       {} (wall)", fmt_ms(t.scan)),
    }
    eprintln!("  parse      {} (CPU, summed over threads)", fmt_ms(t.parse));
    eprintln!("  translate  {} (CPU, summed)", fmt_ms(t.translate));
    eprintln!("  dxc dxil   {} (CPU, summed)", fmt_ms(t.dxc_dxil));
    eprintln!("  dxc spirv  {} (CPU, summed)", fmt_ms(t.dxc_spirv));
    eprintln!("  pack       {} (CPU: SMOL-V + zstd, mostly while DXC runs)", fmt_ms(t.pack));
    eprintln!("  write      {} (wall)", fmt_ms(t.write));
    eprintln!("  {:.1} shaders/s", shaders as f64 / t.wall.as_secs_f64().max(1e-9));
    if !t.dxc_floor().is_zero() {
        eprintln!("  wall / (DXC CPU time / threads) = {:.3}", t.wall_over_floor());
    }
}
