//! `streamcheck show ID`: a scenario's file as written, bundled or the project's own, to
//! read what it pins or to copy it (`streamcheck show basics/text-reply > mine.yaml`).

use super::setup::Location;
use super::Verdict;
use streamcheck::catalogue;
use streamcheck::error::{Error, Result};
use streamcheck::scenario;

#[derive(clap::Args)]
pub struct ShowArgs {
    /// The scenario's id, as `streamcheck list` prints it (e.g. basics/text-reply).
    pub id: String,
}

impl ShowArgs {
    /// Prints the file on stdout and where it is on stderr. Every bundled scenario can be
    /// shown, whatever the project file's `bundled` takes; the project's own file of the
    /// same id is the one shown, as it is the one that runs.
    pub fn exec(&self, loc: &Location) -> Result<Verdict> {
        let path = find(&loc.setup()?, &self.id)?;
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        eprintln!("# {}", path.display());
        print!("{text}");
        Ok(Verdict::AllGood)
    }
}

/// The file of scenario `id` (`basics/text-reply`, `.yaml` allowed): the project's own
/// one of that id over the bundled one; an error naming near ids when none has it.
pub fn find(setup: &super::setup::Setup, id: &str) -> Result<std::path::PathBuf> {
    let id = id.trim_end_matches(".yaml");
    let mut found = None;
    let mut near = Vec::new();
    for dir in setup.scenario_roots() {
        for path in catalogue::discover(&dir).paths {
            let this = scenario::id_of(&path, &dir);
            if this == id {
                found = Some(path);
            } else if this.contains(id) {
                near.push(this);
            }
        }
    }
    found.ok_or_else(|| {
        near.sort();
        near.truncate(10);
        let hint = if near.is_empty() {
            "`streamcheck list` prints every id".to_string()
        } else {
            format!("ids containing it: {}", near.join(", "))
        };
        Error::Usage(format!("no scenario `{id}`: {hint}"))
    })
}
