//! The command line's modules (part of the `shrec` executable, not of the library).

pub(crate) mod args;
pub(crate) mod build;
pub(crate) mod github;
pub(crate) mod progress;
