//! AGAL (in progress)
