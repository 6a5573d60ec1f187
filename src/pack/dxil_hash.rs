//! DXIL container hash (in progress)
