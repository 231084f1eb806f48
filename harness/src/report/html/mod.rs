//! `index.html`: one self-contained page per report folder (inline CSS and script, no
//! network), rendered with minijinja from templates under `templates/`.
//!
//! Everything a CLI printed reaches the page either through the template engine's HTML
//! escaping or as JSON inside `<script type="application/json">` blocks (see
//! [`script_json`]), which the page's script reads and shows with `textContent` only.

pub mod page;
mod run;
pub mod timeline;
pub mod trial;

pub use page::{relative_link, script_json};
pub use run::write_run;
