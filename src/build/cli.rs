//! `shrec build` as the command line runs it: the build, then its report printed.

use super::{output::report_writable, run, BuildOptions};
use crate::cache;
use crate::report::{Report, Status};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

fn fmt_ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// `shrec build` as the command line runs it: prints errors, summary, timings; returns the exit code.
pub fn run_cli(opts: &BuildOptions) -> i32 {
    let out = match run(opts) {
        Ok(o) => o,
        Err(e) => {
            let msg = crate::report::printable(&e.to_string());
            eprintln!("error: {msg}");
            // CI reads the report even when the build could not run.
            if let Some(path) = opts.report_json.as_ref().filter(|p| report_writable(p)) {
                let report = Report { fatal: vec![e.to_string()], ..Report::default() };
                let text = serde_json::to_string_pretty(&crate::report::to_json(&report)).expect("JSON of plain data");
                if let Err(w) = cache::atomic::write(path, text.as_bytes()) {
                    eprintln!("error: {}", crate::report::printable(&format!("writing the report {}: {w}", path.display())));
                }
            }
            // a fatal error is a failure CI must show too
            if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
                println!("::error::{}", crate::report::escape_annotation_data(&e.to_string()));
            }
            return 1;
        }
    };
    let r = &out.report;
    // Skipped shaders: one line per family (the JSON report lists each one).
    let mut skipped: BTreeMap<crate::Family, (usize, String)> = BTreeMap::new();
    for o in &r.outcomes {
        if let Status::Skipped { reason } = &o.status {
            skipped.entry(o.family).or_insert_with(|| (0, reason.clone())).0 += 1;
        }
    }
    for (family, (n, reason)) in skipped {
        eprintln!("warning: {n} {family} shader(s) found but not built: {reason}");
    }
    if !opts.print_errors_as_they_happen {
        for o in &r.outcomes {
            if let Some(line) = crate::report::error_line(o) {
                eprintln!("{line}");
            }
        }
    }
    if opts.progress {
        for o in r.outcomes.iter().filter(|o| o.hlsl_override.is_some()) {
            let file = o.hlsl_override.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            eprintln!("note: {}", crate::report::printable(&format!("{}+0x{:x} [0x{:016X}]: HLSL from {file}", o.path.display(), o.offset, o.key)));
        }
    }
    for line in r.outcomes.iter().filter_map(crate::report::dump_error_line) {
        eprintln!("{line}");
    }
    for e in &r.scan_errors {
        eprintln!("{}", crate::report::scan_error_line(e));
    }
    for w in &r.cache_repairs {
        eprintln!("warning: incremental cache: {w}");
    }
    if let Some(e) = &r.empty_input {
        eprintln!("error: {}", crate::report::printable(e));
    }
    if let Some(w) = &out.scan_warning {
        eprintln!("warning: {w}");
    }
    for w in &out.override_warnings {
        eprintln!("warning: {}", crate::report::printable(w));
    }
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        for a in crate::report::github_annotations(r) {
            println!("{a}");
        }
        // The job summary: appended, as every step of the job writes to the same file.
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            use std::io::Write as _;
            let written = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .and_then(|mut f| f.write_all(crate::report::step_summary(r).as_bytes()));
            if let Err(e) = written {
                eprintln!("warning: {}", crate::report::printable(&format!("GITHUB_STEP_SUMMARY {}: {e}", PathBuf::from(&path).display())));
            }
        }
    }
    if opts.progress {
        if let Some(n) = &out.links_note {
            eprintln!("note: {n}");
        }
        eprint!("{}", crate::report::summary_table(r));
        if out.output_written {
            eprintln!("shrec: wrote {}", opts.output.display());
        } else {
            eprintln!("shrec: {} is up to date", opts.output.display());
        }
    }
    if opts.print_summary {
        if let Some(s) = &out.sizes {
            eprint!("{s}");
        }
        if let Some(l) = &out.layouts {
            eprint!("{l}");
        }
    }
    if opts.print_timings {
        let t = &out.timings;
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
        let n = r.outcomes.len() as f64;
        eprintln!("  {:.1} shaders/s", n / t.wall.as_secs_f64().max(1e-9));
        if !t.dxc_floor().is_zero() {
            eprintln!("  wall / (DXC CPU time / threads) = {:.3}", t.wall_over_floor());
        }
    }
    if let Some(line) = crate::report::closing_line(r) {
        eprintln!("{line}");
    }
    crate::report::exit_code(r)
}
