//! The protocol inventory's commands: building it from run folders
//! (`streamcheck protocol build|add`, [`build`]) and judging a release from one run
//! (`streamcheck verdict`, [`verdict`]).

pub mod build;
pub mod verdict;
