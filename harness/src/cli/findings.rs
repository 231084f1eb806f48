//! `streamcheck findings`: docs/findings.md, generated from a dialect's `findings.yaml` and
//! the known-divergence entries marked `finding:` ([`streamcheck::findings`]).

use super::setup::Location;
use super::Verdict;
use streamcheck::error::{Error, Result};
use streamcheck::findings::render_doc;
use streamcheck::known::KnownList;
use streamcheck::report::write_atomic;

/// Where the page is written, in the project's checkout.
pub const DOC: &str = "docs/findings.md";

#[derive(clap::Args)]
pub struct FindingsArgs {
    /// Write docs/findings.md instead of printing it.
    #[arg(long)]
    pub write: bool,
    /// Exit 1 when docs/findings.md differs from what the files generate.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
}

impl FindingsArgs {
    pub fn exec(&self, loc: &Location) -> Result<Verdict> {
        let root = loc.setup()?.project.root;
        let source = "targets/claude-code";
        let file = format!("{source}/known-divergences.yaml");
        let known = KnownList::load(&root.join(&file), &file).map_err(Error::Usage)?;
        let text = render_doc(&known, source);
        let path = root.join(DOC);
        if self.write {
            write_atomic(&path, text.as_bytes()).map_err(|e| Error::io(&path, e))?;
            eprintln!("wrote {DOC} ({} findings)", known.findings.items.len());
            return Ok(Verdict::AllGood);
        }
        if self.check {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            if committed != text {
                eprintln!("{DOC} differs from what {source}/findings.yaml and the entries generate: run `streamcheck findings --write`");
            }
            return Ok(Verdict::divergence_if(committed != text));
        }
        print!("{text}");
        Ok(Verdict::AllGood)
    }
}
