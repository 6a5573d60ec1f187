//! Reference interpreters of the four source ISAs: they execute a decoded shader the way the
//! console does, and the harness compares their results with the translated shader run on Vulkan.
pub mod agal;
pub mod cube_face;
pub mod gx2;
pub mod pica;
pub mod xenos;
