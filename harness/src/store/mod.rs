//! A run folder as stored: `results.json` (every trial with its status and divergences,
//! [`Results`]), `results.jsonl` (the index: the same trials, a line each, appended as they
//! finish) and `outputs/<stem>.json` (what each trial printed, [`SavedTrial`]). The one
//! place that knows these files: [`RunWriter`] writes them, [`RunReader`] reads them back.
//! Summaries, JUnit, HTML and the per-trial reports are renderings (`report/`).

mod error;
mod files;
mod reader;
pub mod results;
pub mod saved;
mod writer;

pub use error::StoreError;
pub use files::{timestamp, write_atomic};
pub use reader::RunReader;
pub use results::{Counts, Results, TargetInfo};
pub use saved::SavedTrial;
pub use writer::{copy_if_exists, copy_saved, write_index, write_results, RunWriter};
