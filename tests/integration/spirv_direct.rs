//! The direct SPIR-V back end (`shrec::spirv`, docs/spirv-direct.md): every corpus shader it
//! covers passes `spirv-val`, marks every float operation `NoContraction`, and has exactly the
//! interface DXC gives the HLSL writer's text for the same shader (reflected with rspirv:
//! entry point, execution model and modes, stage variables with Location / BuiltIn, descriptor
//! set / binding and type, push constants, specialization-constant ids); a shader it does not
//! cover yet is a typed `Unsupported` error, never a panic.

use crate::common;

use common::{log_uncaptured, repo, spirv_val};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass};
use shrec::dxc::{self, Target};
use shrec::formats::{self, TranslateOptions, Translation};
use shrec::spirv::{self as direct, SpirvError};
use std::collections::{BTreeMap, BTreeSet};

/// The distinct shaders of tests/corpus/`dir` (one per key), translated.
fn corpus(dir: &str) -> Vec<(String, Translation)> {
    let scan = shrec::scan::scan_dir(&repo().join("tests/corpus").join(dir));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for s in scan.shaders.iter().filter(|s| seen.insert(s.key)) {
        let bytes = shrec::scan::read_container(s).unwrap();
        let t = formats::translate(s.container, &bytes, s.index, &TranslateOptions::default()).unwrap();
        out.push((format!("{:016X} {}", s.key, s.path.display()), t));
    }
    out
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn load(spirv: &[u8]) -> Module {
    let words: Vec<u32> = spirv.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    rspirv::dr::load_words(words).expect("rspirv parses the module")
}

fn id(o: &Operand) -> u32 {
    o.id_ref_any().unwrap_or_else(|| panic!("expected an id, got {o:?}"))
}

fn lit(o: &Operand) -> u32 {
    match o {
        Operand::LiteralBit32(v) => *v,
        o => panic!("expected a literal, got {o:?}"),
    }
}

fn def(m: &Module, target: u32) -> &Instruction {
    m.types_global_values.iter().find(|i| i.result_id == Some(target)).expect("defined")
}

/// The decorations on `target` (or on member `member` of it), as text.
fn decorations(m: &Module, target: u32, member: Option<u32>) -> Vec<String> {
    let mut v: Vec<String> = m
        .annotations
        .iter()
        .filter(|a| id(&a.operands[0]) == target)
        .filter(|a| match (a.class.opcode, member) {
            (Op::Decorate, None) => true,
            (Op::MemberDecorate, Some(k)) => lit(&a.operands[1]) == k,
            _ => false,
        })
        .map(|a| {
            let skip = if member.is_some() { 2 } else { 1 };
            a.operands[skip..].iter().map(|o| format!("{o}")).collect::<Vec<_>>().join(" ")
        })
        // names and the optimizer's own hints are not interface
        .filter(|d| !d.starts_with("NoContraction") && !d.starts_with("RelaxedPrecision"))
        .collect();
    v.sort();
    v
}

/// A type as text, with the layout decorations that make it part of the interface.
fn describe(m: &Module, ty: u32) -> String {
    let i = def(m, ty);
    let inner = |k: usize| describe(m, id(&i.operands[k]));
    match i.class.opcode {
        Op::TypeFloat => format!("f{}", lit(&i.operands[0])),
        Op::TypeInt => format!("{}{}", if lit(&i.operands[1]) == 1 { "i" } else { "u" }, lit(&i.operands[0])),
        Op::TypeBool => "bool".into(),
        Op::TypeVector => format!("vec{}<{}>", lit(&i.operands[1]), inner(0)),
        Op::TypeArray => {
            let len = lit(&def(m, id(&i.operands[1])).operands[0]);
            format!("array<{}, {len}>{:?}", inner(0), decorations(m, ty, None))
        }
        Op::TypeRuntimeArray => format!("array<{}>{:?}", inner(0), decorations(m, ty, None)),
        Op::TypeStruct => {
            let members: Vec<String> = (0..i.operands.len()).map(|k| format!("{} {:?}", inner(k), decorations(m, ty, Some(k as u32)))).collect();
            format!("struct{:?}{{{}}}", decorations(m, ty, None), members.join(", "))
        }
        Op::TypePointer => format!("ptr<{}, {}>", i.operands[0], inner(1)),
        Op::TypeImage => format!("image<{}, {:?}>", inner(0), &i.operands[1..]),
        Op::TypeSampler => "sampler".into(),
        Op::TypeSampledImage => format!("sampled<{}>", inner(0)),
        op => format!("{op:?}"),
    }
}

/// What a runtime binds and links against: everything of a module but its code.
#[derive(Debug, PartialEq, Eq)]
struct Interface {
    entry_points: Vec<String>,
    execution_modes: BTreeSet<String>,
    /// Stage variables: storage class, decorations (Location / BuiltIn / interpolation), type.
    stage_variables: BTreeSet<String>,
    /// Resources: set / binding decorations and type; push-constant blocks; spec-constant ids.
    resources: BTreeSet<String>,
    capabilities: BTreeSet<String>,
}

fn reflect(spirv: &[u8]) -> Interface {
    let m = load(spirv);
    let entry_points = m
        .entry_points
        .iter()
        .map(|e| {
            let name = match &e.operands[2] {
                Operand::LiteralString(s) => s.clone(),
                o => panic!("entry point name {o:?}"),
            };
            format!("{} {name} ({} interface variables)", e.operands[0], e.operands.len() - 3)
        })
        .collect();
    let execution_modes = m.execution_modes.iter().map(|e| e.operands[1..].iter().map(|o| format!("{o}")).collect::<Vec<_>>().join(" ")).collect();
    let mut stage_variables = BTreeSet::new();
    let mut resources = BTreeSet::new();
    for v in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let var = v.result_id.unwrap();
        let Operand::StorageClass(class) = v.operands[0] else { unreachable!() };
        let text = format!("{class:?} {:?} {}", decorations(&m, var, None), describe(&m, v.result_type.unwrap()));
        match class {
            StorageClass::Input | StorageClass::Output => {
                stage_variables.insert(text);
            }
            StorageClass::Uniform | StorageClass::UniformConstant | StorageClass::StorageBuffer | StorageClass::PushConstant => {
                resources.insert(text);
            }
            _ => {}
        }
    }
    for c in m.types_global_values.iter().filter(|i| matches!(i.class.opcode, Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse)) {
        resources.insert(format!("spec constant {:?} {}", decorations(&m, c.result_id.unwrap(), None), describe(&m, c.result_type.unwrap())));
    }
    let capabilities = m.capabilities.iter().map(|c| format!("{}", c.operands[0])).collect();
    Interface { entry_points, execution_modes, stage_variables, resources, capabilities }
}

/// Float arithmetic instructions without `NoContraction` (see host_evaluation.rs).
fn contractible(m: &Module) -> usize {
    const ARITH: &[Op] = &[Op::FAdd, Op::FSub, Op::FMul, Op::FDiv, Op::FRem, Op::FMod, Op::VectorTimesScalar, Op::Dot, Op::FNegate];
    let exact: BTreeSet<u32> = m
        .annotations
        .iter()
        .filter(|a| matches!(a.operands.get(1), Some(Operand::Decoration(Decoration::NoContraction))))
        .map(|a| id(&a.operands[0]))
        .collect();
    let body = m.functions.iter().flat_map(|f| f.blocks.iter()).flat_map(|b| b.instructions.iter());
    body.filter(|i| ARITH.contains(&i.class.opcode) && !i.result_id.is_some_and(|r| exact.contains(&r))).count()
}

/// The families whose corpus shaders the back end covers, and the constructs it may still
/// refuse in them (named by `SpirvError::Unsupported`): the tests below hold every other shader
/// of these families to spirv-val, `NoContraction` and DXC's interface.
const COVERED: &[(&str, &[&str])] = &[("agal", &[]), ("gx2", &[]), ("pica", &[]), ("xenos", &[])];

/// The covered shaders of `dir` with their direct SPIR-V; a refusal outside `allowed` is a
/// failure.
fn covered(dir: &str, allowed: &[&str], opts: &direct::Options, failures: &mut Vec<String>) -> Vec<(String, Translation, Vec<u8>)> {
    let mut out = Vec::new();
    for (name, t) in corpus(dir) {
        match direct::write(&t.module, opts) {
            Ok(words) => out.push((name, t, bytes(&words))),
            Err(SpirvError::Unsupported { construct }) if allowed.contains(&construct) => {}
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    out
}

#[test]
fn corpus_direct_spirv_validates_and_is_exact() {
    let mut failures = Vec::new();
    for (dir, allowed) in COVERED {
        let shaders = covered(dir, allowed, &direct::Options::default(), &mut failures);
        for (name, _, spirv) in &shaders {
            if let Err(e) = spirv_val(spirv, &format!("{dir}-direct")) {
                failures.push(format!("{name}: spirv-val: {e}"));
            }
            let loose = contractible(&load(spirv));
            if loose > 0 {
                failures.push(format!("{name}: {loose} float operations without NoContraction"));
            }
        }
        log_uncaptured(&format!(
            "spirv direct {dir}: {} corpus shaders written, spirv-val clean, every float operation NoContraction",
            shaders.len()
        ));
        assert!(shaders.len() >= 25, "{dir} corpus shaders: {}", shaders.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_direct_interface_is_dxcs() {
    let lib = dxc::locate(&dxc::LocateOptions::default()).unwrap();
    let mut failures = Vec::new();
    for (dir, allowed) in COVERED {
        let shaders = covered(dir, allowed, &direct::Options::default(), &mut failures);
        let mut differences = 0;
        for (name, t, spirv) in &shaders {
            let hlsl = shrec::hlsl::write(&t.module);
            let via_dxc = dxc::compile_with_spec_constants(&lib, &hlsl, t.module.stage, Target::Spirv, t.spec_constants_mask).unwrap();
            let (ours, theirs) = (reflect(spirv), reflect(&via_dxc));
            if ours != theirs {
                differences += 1;
                failures.push(format!("{name}:\n  direct: {ours:#?}\n  dxc:    {theirs:#?}"));
            }
        }
        log_uncaptured(&format!("spirv direct {dir}: {differences} of {} interfaces differ from DXC's", shaders.len()));
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Every shader of every family: covered (and valid), or a typed `Unsupported` naming the
/// construct; never a panic or another error.
#[test]
fn whole_corpus_is_covered_or_named_unsupported() {
    let mut by_family: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut constructs: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for dir in ["agal", "pica", "gx2", "xenos"] {
        for (name, t) in corpus(dir) {
            let family = by_family.entry(dir.to_string()).or_default();
            family.1 += 1;
            match direct::write(&t.module, &direct::Options::default()) {
                Ok(words) => {
                    family.0 += 1;
                    if let Err(e) = spirv_val(&bytes(&words), "direct") {
                        failures.push(format!("{name}: spirv-val: {e}"));
                    }
                }
                Err(SpirvError::Unsupported { construct }) => {
                    *constructs.entry(construct).or_default() += 1;
                    // a covered family refuses only what COVERED allows it
                    if COVERED.iter().any(|(d, allowed)| *d == dir && !allowed.contains(&construct)) {
                        failures.push(format!("{name}: {construct} not covered"));
                    }
                }
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
    }
    for (family, (covered, total)) in &by_family {
        log_uncaptured(&format!("spirv direct {family}: {covered} / {total} corpus shaders covered"));
    }
    log_uncaptured(&format!("spirv direct: not covered yet, by first construct met: {constructs:?}"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--targets spirv --spirv-backend direct` builds the whole corpus (every family) with DXC
/// pointed at nothing (offline, `--dxc` naming a file that does not exist): every shader
/// compiled, its SPIR-V valid, no DXIL. The same options with the DXC back end fail for want of
/// DXC, so the direct build really never loaded it.
#[test]
fn direct_spirv_build_needs_no_dxc() {
    use shrec::build::{BuildOptions, FatalError, SpirvBackend};
    let dir = common::tmpdir("spirv-direct-no-dxc");
    let mut o = BuildOptions::new(repo().join("tests/corpus"), dir.join("cache.rs"));
    o.targets = vec![Target::Spirv];
    o.spirv_backend = SpirvBackend::Direct;
    o.cache_dir = None;
    o.spirv_encoding = shrec::cache::SpirvEncoding::Raw;
    o.dxc = dxc::LocateOptions { explicit: Some(dir.join("nonexistent/libdxcompiler.so")), offline: true, notes: None };
    let built = shrec::build::run(&o).expect("a direct SPIR-V build needs no DXC");
    let failed: Vec<String> = built
        .report
        .outcomes
        .iter()
        .filter(|o| !matches!(o.status, shrec::report::Status::Compiled { .. }))
        .map(|o| format!("{}: {:?}", o.path.display(), o.status))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_eq!(built.report.dxc_compilations, built.entries.len(), "one SPIR-V compilation per shader");
    let distinct: usize = ["agal", "gx2", "pica", "xenos"].iter().map(|d| corpus(d).len()).sum();
    assert_eq!(built.entries.len(), distinct);
    for e in &built.entries {
        assert!(e.dxil.is_none());
        let spirv = e.spirv.as_ref().expect("SPIR-V in the cache");
        spirv_val(spirv, "direct-build").unwrap_or_else(|err| panic!("{:016X}: {err}", e.key));
    }
    o.spirv_backend = SpirvBackend::Dxc;
    assert!(matches!(shrec::build::run(&o), Err(FatalError::Dxc(_))), "the DXC back end does look for DXC");
    log_uncaptured(&format!("spirv direct: built the {} corpus shaders with --targets spirv --spirv-backend direct and no DXC", built.entries.len()));
}

/// The cache tells a consumer which entries need float controls: built with
/// `--spirv-float-controls`, every AGAL entry's `ShrecEntryInfo::flags` (C++) and `Entry::flags`
/// (Rust) is `SHREC_ENTRY_SPIRV_FLOAT_CONTROLS` (1); built without it, 0.
#[test]
fn cache_entries_flag_float_controls() {
    use shrec::build::{BuildOptions, SpirvBackend};
    let dir = common::tmpdir("spirv-direct-entry-flags");
    for float_controls in [true, false] {
        for out in ["cache.cpp", "cache.rs"] {
            let out = dir.join(format!("{float_controls}-{out}"));
            let mut o = BuildOptions::new(repo().join("tests/corpus/agal"), out.clone());
            o.targets = vec![Target::Spirv];
            o.spirv_backend = SpirvBackend::Direct;
            o.spirv_float_controls = float_controls;
            o.cache_dir = None;
            o.dxc = dxc::LocateOptions { explicit: Some(dir.join("nonexistent/libdxcompiler.so")), offline: true, notes: None };
            let built = shrec::build::run(&o).expect("a direct SPIR-V build");
            assert!(!built.entries.is_empty());
            let text = std::fs::read_to_string(&out).unwrap();
            let want = if float_controls { shrec::cache::ENTRY_SPIRV_FLOAT_CONTROLS } else { 0 };
            let flags: Vec<u32> = if out.extension().unwrap() == "cpp" {
                let table = text.split("g_shrecEntryInfo[] = {").nth(1).unwrap().split("};").next().unwrap();
                table
                    .lines()
                    .filter_map(|l| l.trim().strip_prefix('{'))
                    .map(|row| row.split(',').nth(4).unwrap().trim().trim_end_matches('}').trim().parse().unwrap())
                    .collect()
            } else {
                text.split(", flags: ").skip(1).map(|rest| rest.split(',').next().unwrap().parse().unwrap()).collect()
            };
            assert_eq!(flags.len(), built.entries.len(), "{}", out.display());
            assert!(flags.iter().all(|&f| f == want), "{}: {flags:?}", out.display());
        }
    }
}

/// The default back end (`SpirvBackend::Auto`, `--spirv-backend` not given) is the direct one:
/// a SPIR-V-only build of the AGAL corpus needs no DXC. Given an HLSL hook (here `-D`), it is
/// DXC's (the same build then looks for DXC, which is not there), and `--spirv-float-controls`
/// with a hook is refused before any work.
#[test]
fn default_back_end_is_direct_unless_a_hook_needs_dxc() {
    use shrec::build::{BuildOptions, FatalError, SpirvBackend};
    let dir = common::tmpdir("spirv-direct-default");
    let mut o = BuildOptions::new(repo().join("tests/corpus/agal"), dir.join("cache.rs"));
    assert_eq!(o.spirv_backend, SpirvBackend::Auto);
    o.targets = vec![Target::Spirv];
    o.cache_dir = None;
    o.dxc = dxc::LocateOptions { explicit: Some(dir.join("nonexistent/libdxcompiler.so")), offline: true, notes: None };
    let built = shrec::build::run(&o).expect("the default SPIR-V back end needs no DXC");
    assert_eq!(built.entries.len(), corpus("agal").len());
    assert!(built.entries.iter().all(|e| e.spirv.is_some()));
    o.hooks = shrec::hooks::Hooks::new(None, &["SHREC_PROJECT_HOOK=1".to_string()], None, Vec::new()).unwrap();
    assert_eq!(o.spirv_backend.resolve(&o.hooks), SpirvBackend::Dxc);
    assert!(matches!(shrec::build::run(&o), Err(FatalError::Dxc(_))), "a -D hook makes DXC write the SPIR-V");
    o.spirv_float_controls = true;
    assert!(matches!(shrec::build::run(&o), Err(FatalError::FloatControls)));
    o.spirv_backend = SpirvBackend::Direct;
    shrec::build::run(&o).expect("an explicit direct back end keeps float controls with a hook");
}

/// The command line takes `--spirv-backend direct` and exits 0 without DXC.
#[test]
fn command_line_direct_backend_without_dxc() {
    let dir = common::tmpdir("spirv-direct-cli");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shrec"))
        .arg("build")
        .arg(repo().join("tests/corpus/agal"))
        .arg("-o")
        .arg(dir.join("cache.cpp"))
        .args(["--targets", "spirv", "--spirv-backend", "direct", "--no-cache", "--offline", "--quiet", "--dxc"])
        .arg(dir.join("nonexistent/libdxcompiler.so"))
        .env_remove("SHREC_DXC")
        .output()
        .expect("run shrec");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("cache.cpp").is_file());
}

/// `Options::float_controls` (`--spirv-float-controls`): the extension, the capability and the
/// execution mode `SignedZeroInfNanPreserve 32` are declared, and every AGAL module still
/// passes spirv-val.
#[test]
fn float_controls_declare_signed_zero_inf_nan_preserve() {
    let opts = direct::Options { float_controls: true, ..Default::default() };
    let shaders = corpus("agal");
    for (name, t) in &shaders {
        let spirv = bytes(&direct::write(&t.module, &opts).unwrap());
        spirv_val(&spirv, "agal-float-controls").unwrap_or_else(|e| panic!("{name}: {e}"));
        let i = reflect(&spirv);
        assert!(i.execution_modes.contains("SignedZeroInfNanPreserve 32"), "{name}: {:?}", i.execution_modes);
        assert!(i.capabilities.contains("SignedZeroInfNanPreserve"), "{name}");
        let m = load(&spirv);
        assert!(m.extensions.iter().any(|e| e.operands[0] == Operand::LiteralString("SPV_KHR_float_controls".into())), "{name}");
    }
    // without the option, none of it (the DXC-equivalent module)
    let plain = reflect(&bytes(&direct::write(&shaders[0].1.module, &direct::Options::default()).unwrap()));
    assert!(!plain.capabilities.contains("SignedZeroInfNanPreserve"));
}
