//! What is wrong in a container whose structure shrec parses by hand (GX2 GFD and SHARCFB with
//! their GX2 shader structs, PICA200 DVLB): the kind of fault, typed so that callers and tests can
//! match it, with the parser's sentence naming the field and values. The family's error
//! ([`super::gx2::error::Gx2Error::Container`], [`super::pica::error::PicaError::Container`]) adds
//! the offset. (Xenos containers have their own, fully structured [`super::xenos::error::ContainerError`].)

use std::fmt::Display;

/// The kind of a container fault; the text says which field, where and what value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContainerFault {
    /// The signature (magic) the format or one of its parts starts with is missing.
    #[error("{0}")]
    Signature(String),
    /// A header field the format fixes has another value (header size, version).
    #[error("{0}")]
    Header(String),
    /// A structure, array, string or data range runs past the bytes that hold it, or a
    /// pointer does not resolve inside them.
    #[error("{0}")]
    OutOfBounds(String),
    /// A field holds a value no writer of the format produces (unknown type or mode, an
    /// implausible count, a register out of range, an unterminated name, a missing part).
    #[error("{0}")]
    BadValue(String),
    /// The shader index asked for is not in the container.
    #[error("{0}")]
    NoSuchShader(String),
    /// The container is not of this family (a caller passed another kind).
    #[error("{0}")]
    WrongContainer(String),
    /// More of something than shrec's resource caps allow (`crate::limits`).
    #[error("{0}")]
    ResourceCap(String),
    /// A format of the family that shrec recognises but does not translate.
    #[error("{0}")]
    Unsupported(String),
}

impl ContainerFault {
    /// The same fault, its text prefixed with `prefix: ` (the part of the container it was
    /// found in: a block, a SHARCFB binary).
    pub fn prefixed(self, prefix: impl Display) -> ContainerFault {
        let add = |s: String| format!("{prefix}: {s}");
        match self {
            ContainerFault::Signature(s) => ContainerFault::Signature(add(s)),
            ContainerFault::Header(s) => ContainerFault::Header(add(s)),
            ContainerFault::OutOfBounds(s) => ContainerFault::OutOfBounds(add(s)),
            ContainerFault::BadValue(s) => ContainerFault::BadValue(add(s)),
            ContainerFault::NoSuchShader(s) => ContainerFault::NoSuchShader(add(s)),
            ContainerFault::WrongContainer(s) => ContainerFault::WrongContainer(add(s)),
            ContainerFault::ResourceCap(s) => ContainerFault::ResourceCap(add(s)),
            ContainerFault::Unsupported(s) => ContainerFault::Unsupported(add(s)),
        }
    }
}
