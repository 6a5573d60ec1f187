//! Wii U GX2 shaders in GFD and SHARCFB containers (translation comes with its issue).

pub mod gfd;
pub mod shader_struct;
pub mod sharc;
