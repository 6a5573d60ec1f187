//! Where the error type every front end returns used to live; it is defined in
//! [`crate::formats::error`] (beside the typed GX2 / PICA errors it wraps, so the module graph
//! has no cycle) and re-exported here for existing users.

pub use crate::formats::error::ShaderError;
