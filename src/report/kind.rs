//! The kind of a shader's failure: a small, stable vocabulary for machines (the report's
//! `error_kind`, docs/report-json.md), derived from the typed errors of the front ends, the IR
//! validator, DXC and its worker processes. Every match here is exhaustive, so a new error
//! variant must be given a kind where it is added.

use crate::dxc::CompileError;
use crate::dxc_worker::WorkerError;
use crate::formats::agal::error::{AgalError, TokenError};
use crate::formats::container_fault::ContainerFault;
use crate::formats::gx2::error::Gx2Error;
use crate::formats::pica::error::PicaError;
use crate::formats::xenos::error::XenosError;
use crate::formats::{Family, ShaderError};
use crate::ir::ValidationError;

/// Why a shader failed, as a kind; [`FailureKind::name`] is its `error_kind` in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The container's bytes could not be read again for the build (the file changed or went
    /// away; an archive member failed to decompress).
    InputRead,
    /// The family's container (or AGAL's header) is malformed.
    Container(Family),
    /// The microcode is malformed: an encoding no table has, a clause or address past the end,
    /// an unbalanced loop.
    Microcode(Family),
    /// Valid input that shrec does not translate: an opcode the table rejects, an instruction in
    /// a form or place the translation does not cover.
    Unsupported(Family),
    /// The IR validator refused the translation by one of its rules (a front-end bug).
    IrValidation,
    /// One of shrec's resource caps (`crate::limits`): microcode size, DVLEs per DVLB.
    LimitInput,
    /// The IR's resource caps: statements, nesting depth.
    LimitIr,
    /// The generated HLSL is over `--max-hlsl-bytes`.
    LimitHlsl,
    /// The shader's `--override-dir` file could not be read or declares an invalid mask.
    Override,
    /// DXC rejected the HLSL (its diagnostics are in the reason).
    DxcCompile,
    /// DXC's library or compiler objects could not be made in this thread.
    DxcLibrary,
    /// DXC returned code that is not what was asked for.
    DxcOutput,
    /// A DXC worker passed its time limit (CPU time, or the wall-clock backstop).
    DxcTimeLimit,
    /// A DXC worker ran out of its address space.
    DxcMemoryLimit,
    /// A DXC worker died otherwise (a crash inside DXC).
    DxcCrash,
    /// A DXC worker process could not be started (or this OS has none).
    DxcWorker,
    /// The direct SPIR-V back end (`--spirv-backend direct`) does not cover a construct of the
    /// shader's IR yet, or cannot take an `--override-dir` HLSL replacement.
    SpirvUnsupported,
}

const FAMILIES: [Family; 4] = [Family::Xenos, Family::Gx2, Family::Pica, Family::Agal];

impl FailureKind {
    /// Every kind, in the order docs/report-json.md lists them.
    pub fn all() -> Vec<FailureKind> {
        let mut v = vec![FailureKind::InputRead];
        for f in FAMILIES {
            v.extend([FailureKind::Container(f), FailureKind::Microcode(f), FailureKind::Unsupported(f)]);
        }
        v.extend([
            FailureKind::IrValidation,
            FailureKind::LimitInput,
            FailureKind::LimitIr,
            FailureKind::LimitHlsl,
            FailureKind::Override,
            FailureKind::DxcCompile,
            FailureKind::DxcLibrary,
            FailureKind::DxcOutput,
            FailureKind::DxcTimeLimit,
            FailureKind::DxcMemoryLimit,
            FailureKind::DxcCrash,
            FailureKind::DxcWorker,
            FailureKind::SpirvUnsupported,
        ]);
        v
    }

    /// The stable name: `<area>.<kind>`, lower case.
    pub fn name(self) -> &'static str {
        // (family, [container, microcode, unsupported])
        const PER_FAMILY: [(Family, [&str; 3]); 4] = [
            (Family::Xenos, ["xenos.container", "xenos.microcode", "xenos.unsupported"]),
            (Family::Gx2, ["gx2.container", "gx2.microcode", "gx2.unsupported"]),
            (Family::Pica, ["pica.container", "pica.microcode", "pica.unsupported"]),
            (Family::Agal, ["agal.container", "agal.microcode", "agal.unsupported"]),
        ];
        let of = |f: Family, i: usize| PER_FAMILY.iter().find(|(g, _)| *g == f).map_or("unknown", |(_, n)| n[i]);
        match self {
            FailureKind::InputRead => "input.read",
            FailureKind::Container(f) => of(f, 0),
            FailureKind::Microcode(f) => of(f, 1),
            FailureKind::Unsupported(f) => of(f, 2),
            FailureKind::IrValidation => "ir.validation",
            FailureKind::LimitInput => "limit.input",
            FailureKind::LimitIr => "limit.ir",
            FailureKind::LimitHlsl => "limit.hlsl",
            FailureKind::Override => "override",
            FailureKind::DxcCompile => "dxc.compile",
            FailureKind::DxcLibrary => "dxc.library",
            FailureKind::DxcOutput => "dxc.output",
            FailureKind::DxcTimeLimit => "dxc.time_limit",
            FailureKind::DxcMemoryLimit => "dxc.memory_limit",
            FailureKind::DxcCrash => "dxc.crash",
            FailureKind::DxcWorker => "dxc.worker",
            FailureKind::SpirvUnsupported => "spirv.unsupported",
        }
    }

    /// The kind of a front end's (or the IR validator's) error.
    pub fn of_shader_error(e: &ShaderError) -> FailureKind {
        match e {
            ShaderError::Gx2(e) => Self::of_gx2(e),
            ShaderError::Agal(e) => Self::of_agal(e),
            ShaderError::Pica(e) => Self::of_pica(e),
            ShaderError::Xenos(e) => Self::of_xenos(e),
            ShaderError::Ir(e) => Self::of_ir(e),
            ShaderError::MicrocodeCap { .. } => FailureKind::LimitInput,
        }
    }

    fn of_container(family: Family, fault: &ContainerFault) -> FailureKind {
        match fault {
            ContainerFault::ResourceCap(_) => FailureKind::LimitInput,
            ContainerFault::Unsupported(_) => FailureKind::Unsupported(family),
            ContainerFault::Signature(_)
            | ContainerFault::Header(_)
            | ContainerFault::OutOfBounds(_)
            | ContainerFault::BadValue(_)
            | ContainerFault::NoSuchShader(_)
            | ContainerFault::WrongContainer(_) => FailureKind::Container(family),
        }
    }

    fn of_gx2(e: &Gx2Error) -> FailureKind {
        match e {
            Gx2Error::Container { fault, .. } => Self::of_container(Family::Gx2, fault),
            Gx2Error::NoEnd { .. }
            | Gx2Error::UnknownOpcode { .. }
            | Gx2Error::ClausePastEnd { .. }
            | Gx2Error::GroupPastClause { .. }
            | Gx2Error::SlotTaken { .. }
            | Gx2Error::LiteralsPastClause { .. } => FailureKind::Microcode(Family::Gx2),
            Gx2Error::Rejected { .. } | Gx2Error::Unsupported { .. } | Gx2Error::Structure { .. } => FailureKind::Unsupported(Family::Gx2),
            Gx2Error::CopyProgram(inner) => Self::of_gx2(inner),
        }
    }

    fn of_pica(e: &PicaError) -> FailureKind {
        match e {
            PicaError::Container { fault, .. } => Self::of_container(Family::Pica, fault),
            PicaError::UnusedOpcode { .. } | PicaError::DescriptorPastTable { .. } => FailureKind::Microcode(Family::Pica),
            PicaError::Unsupported { .. } => FailureKind::Unsupported(Family::Pica),
        }
    }

    fn of_agal(e: &AgalError) -> FailureKind {
        match e {
            AgalError::BadHeader
            | AgalError::BelowMinimum { .. }
            | AgalError::Version { .. }
            | AgalError::ProgramType { .. }
            | AgalError::PartialToken { .. } => FailureKind::Container(Family::Agal),
            AgalError::Token { reason: TokenError::Rejected { .. }, .. } | AgalError::WritesOnlyW { .. } | AgalError::Rejected { .. } => {
                FailureKind::Unsupported(Family::Agal)
            }
            AgalError::TooManyTokens { .. } | AgalError::Token { .. } => FailureKind::Microcode(Family::Agal),
        }
    }

    fn of_xenos(e: &XenosError) -> FailureKind {
        match e {
            XenosError::Container { .. } => FailureKind::Container(Family::Xenos),
            XenosError::EmptyMicrocode { .. }
            | XenosError::ExecPastEnd { .. }
            | XenosError::UnknownAluOpcode { .. }
            | XenosError::LoopTooDeep { .. }
            | XenosError::EndloopWithoutLoop { .. } => FailureKind::Microcode(Family::Xenos),
            XenosError::Unsupported { .. } | XenosError::Rejected { .. } | XenosError::Shader { .. } => FailureKind::Unsupported(Family::Xenos),
        }
    }

    fn of_ir(e: &ValidationError) -> FailureKind {
        match e {
            ValidationError::TooManyStatements { .. } | ValidationError::TooDeep { .. } => FailureKind::LimitIr,
            // Every other rule of the validator names a front-end bug (an IR the front end
            // should never have built), so a rule added later is one too.
            _ => FailureKind::IrValidation,
        }
    }

    /// The kind of DXC's error.
    pub fn of_compile(e: &CompileError) -> FailureKind {
        match e {
            CompileError::Rejected(_) => FailureKind::DxcCompile,
            CompileError::Library(_) => FailureKind::DxcLibrary,
            CompileError::Output(_) => FailureKind::DxcOutput,
        }
    }

    /// The kind of a DXC worker's failure.
    pub fn of_worker(e: &WorkerError) -> FailureKind {
        match e {
            WorkerError::WallClock { .. } | WorkerError::CpuTime { .. } => FailureKind::DxcTimeLimit,
            WorkerError::MemoryLimit { .. } => FailureKind::DxcMemoryLimit,
            WorkerError::Crashed { .. } => FailureKind::DxcCrash,
            WorkerError::Start { .. } | WorkerError::Unsupported => FailureKind::DxcWorker,
        }
    }
}
