//! What a CLI printed and how it ended, as data: stdout split into frames and bad lines,
//! stderr kept at both ends ([`output`]), and the exit ([`exit`]). A leaf: everything
//! that reads a trial's output reads these types.

pub mod exit;
pub mod output;

pub use exit::{Exit, Termination};
pub use output::{Frame, Output, Stderr};
