//! SMOL-V codec (in progress)
