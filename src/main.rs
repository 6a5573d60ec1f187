//! `shrec` command line: a thin layer over the library, which returns outcomes; everything the
//! command prints is printed here and in `cli/` (the build's progress, its report, GitHub
//! annotations).

mod cli;

use clap::Parser;
use cli::args::{Cli, Command, PickArgs};
use shrec::detect::{self, Candidate};
use shrec::dxc::LocateOptions;
use shrec::formats::{self, TranslateOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// `shrec --version`: the version, then the DXC library a build would load (found and loaded
/// here, never downloaded) or how a build would get one.
fn print_version() -> ExitCode {
    println!("shrec {}", env!("CARGO_PKG_VERSION"));
    let from_env = std::env::var_os("SHREC_DXC").filter(|v| !v.is_empty());
    match shrec::dxc::locate(&LocateOptions { explicit: None, offline: true, notes: None }) {
        Ok(lib) => {
            let origin = if from_env.is_some() {
                "$SHREC_DXC".to_string()
            } else {
                format!("provisioned from PyPI {}, sha256-checked", shrec::dxc::provision::PACKAGE)
            };
            println!("DXC: {} ({origin})", lib.path.display());
        }
        Err(e) if from_env.is_none() && shrec::dxc::provision::AVAILABLE => println!(
            "DXC: none yet ({e}); the first build fetches PyPI {} into {} (Python 3 with pip), or pass --dxc / set SHREC_DXC",
            shrec::dxc::provision::PACKAGE,
            shrec::dxc::provisioned_path().display()
        ),
        Err(e) => println!("DXC: {}", shrec::report::printable(&e.to_string())),
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    // `shrec --version` alone says which DXC it uses as well (clap's own flag prints one line).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.len() == 1 && (args[0] == "--version" || args[0] == "-V") {
        return print_version();
    }
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Scan { dir, json, list_containers } => scan(dir, json, list_containers),
        Command::Build(args) => cli::build::run(*args),
        Command::Hlsl { pick, translate } => one_shader(&pick, &translate.options(), false),
        Command::Disasm { pick, translate } => one_shader(&pick, &translate.options(), true),
        Command::DxcWorker { dxc, cpu_limit, memory_limit } => {
            let limits = cpu_limit.zip(memory_limit).map(|(cpu_seconds, memory_mib)| shrec::limits::DxcLimits { cpu_seconds, memory_mib });
            match shrec::dxc_worker::serve(&dxc, limits) {
                Ok(()) => 0,
                Err(e) => {
                    if e.is_explained() {
                        eprintln!("error: dxc-worker: {e}");
                    }
                    e.exit_code()
                }
            }
        }
    };
    ExitCode::from(code as u8)
}

/// Writes `text` to stdout. A reader that closed the pipe early (`shrec scan DIR --json | head`)
/// wanted no more output: exit quietly with success instead of panicking as `print!` does. Any
/// other write error is reported and ends the process with status 1.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

fn scan(dir: PathBuf, json: bool, list_containers: bool) -> i32 {
    if !dir.exists() {
        let message = format!("{}: no such file or directory", shrec::report::path_text(&dir));
        eprintln!("error: {}", shrec::report::printable(&message));
        if json {
            // a reader of --json gets the same document, with the error in `fatal`
            let mut text = serde_json::to_string_pretty(&shrec::report::scan_fatal_json(&message)).expect("JSON of plain data");
            text.push('\n');
            emit(&text);
        }
        return 1;
    }
    let result = shrec::scan::scan_dir(&dir);
    if json {
        let mut text = serde_json::to_string_pretty(&shrec::report::scan_to_json(&result)).expect("JSON of plain data");
        text.push('\n');
        emit(&text);
    } else {
        emit(&shrec::scan::render_table(&result));
        if list_containers {
            emit(&shrec::scan::render_containers(&result));
        }
    }
    if result.errors.is_empty() {
        0
    } else {
        2
    }
}

/// Picks the container at `--offset` (or the first) in a file.
fn pick(args: &PickArgs, buf: &[u8]) -> Result<Candidate, String> {
    let found = detect::detect(buf);
    let chosen = match args.offset {
        Some(off) => found.iter().find(|c| c.offset as u64 == off),
        None => found.first(),
    };
    chosen.copied().ok_or_else(|| match args.offset {
        Some(off) => format!(
            "{}: no shader container at offset 0x{off:X} (found {} container(s){})",
            args.file.display(),
            found.len(),
            found.iter().take(8).map(|c| format!(" {}@0x{:X}", c.kind.name(), c.offset)).collect::<String>()
        ),
        None => format!("{}: no shader container found", args.file.display()),
    })
}

fn one_shader(args: &PickArgs, opts: &TranslateOptions, disasm: bool) -> i32 {
    let buf = match shrec::scan::read_label(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}", shrec::report::printable(&e));
            return 1;
        }
    };
    let c = match pick(args, &buf) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {}", shrec::report::printable(&e));
            return 1;
        }
    };
    let bytes = &buf[c.offset..c.offset + c.len];
    // An invalid program is still listed as far as it decodes (stdout), then its error (stderr).
    let (text, error) = if disasm {
        formats::disasm_prefix(c.kind, bytes, args.index, opts)
    } else {
        match formats::translate(c.kind, bytes, args.index, opts) {
            Ok(t) => (Some(shrec::hlsl::with_spec_constants_mask(shrec::hlsl::write(&t.module), t.spec_constants_mask)), None),
            Err(e) => (None, Some(e)),
        }
    };
    if let Some(text) = text {
        emit(&text);
    }
    match error {
        None => 0,
        Some(e) => {
            let at = e.offset().map(|o| format!(" (at container +0x{o:X})")).unwrap_or_default();
            let line = format!("{}+0x{:X} [{}]: {}{at}", args.file.display(), c.offset, c.kind.family(), e.reason());
            eprintln!("error: {}", shrec::report::printable(&line));
            2
        }
    }
}
