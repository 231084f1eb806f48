//! Searching the published releases for where a behaviour starts or ends: installing
//! each release once per run and running scenarios on it ([`probe`]), and one
//! scenario's binary search, told what each probe saw ([`search`]). `bisect` and
//! `ranges --prove` are its two commands.
//!
//! - [`probe`]: installing releases once per run, the cache under its cap, running
//!   scenarios and judging a finished trial against another release's expectation
//! - [`search`]: one scenario's binary search
//! - [`error`]: why a release could not be probed, or a trial judged

pub mod error;
pub mod probe;
pub mod search;

pub use error::ProbeError;
pub use probe::{ProbeOptions, Prober};
