//! `streamcheck protocol`: the protocol inventory (`targets/<dialect>/protocol.yaml`)
//! built from run folders or widened by one, and what is generated from it: the
//! reference (`docs/protocol/<dialect>.md`) and a release's JSON Schema.

use super::setup::Location;
use super::Verdict;
use std::path::{Path, PathBuf};
use streamcheck::commands::protocol::build::Runs;
use streamcheck::error::{Error, Result};
use streamcheck::file_error::FileError;
use streamcheck::protocol::sdk::Sdk;
use streamcheck::protocol::{
    check, inventory, render, requests, requests_render, schema, Inventory, Policy, ProtocolError,
};
use streamcheck::report::write_atomic;

#[derive(clap::Args)]
pub struct ProtocolArgs {
    #[command(subcommand)]
    cmd: ProtocolCmd,
}

#[derive(clap::Subcommand)]
enum ProtocolCmd {
    /// Build each dialect's inventory anew from run folders (their results.json and outputs/),
    /// e.g. the supported sample, the pin and the newest release.
    Build {
        #[arg(long, required = true, num_args = 1..)]
        from: Vec<PathBuf>,
    },
    /// Add the releases of run folders to the inventory (a release already in it is widened).
    Add {
        #[arg(required = true)]
        runs: Vec<PathBuf>,
    },
    /// Check the saved trials of run folders against the inventory again (nothing runs)
    /// and print each finding once with its trials; exit 1 when one fails under the policy.
    Check {
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "report")]
        protocol: Policy,
    },
    /// Write the JSON Schema of what a release prints (one definition per frame kind).
    Schema {
        /// The release (a version of the dialect).
        #[arg(long)]
        release: String,
        #[arg(long, default_value = "claude-code")]
        dialect: String,
        /// The SDK's declared message types: a key is required only where they require it
        /// too (default: targets/<dialect>/sdk/sdk-message.schema.json when it exists).
        #[arg(long)]
        sdk: Option<PathBuf>,
        /// Write here instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compare a release with the TypeScript Agent SDK's declared `StdoutMessage` (a JSON
    /// Schema made by typescript-json-schema in tools/sdk-types): kinds and keys printed
    /// but not declared, declared types and control requests never printed.
    Sdk {
        /// The SDK's schema (tools/sdk-types/README.md says how it is made).
        #[arg(long)]
        schema: PathBuf,
        #[arg(long)]
        release: String,
        #[arg(long, default_value = "claude-code")]
        dialect: String,
    },
    /// Write the reference (docs/protocol/<dialect>.md) from the inventory again.
    Doc {
        #[arg(long, default_value = "claude-code")]
        dialect: String,
        /// Also write it as one HTML page with a search box here (`#q=WORDS` in its
        /// address fills the box).
        #[arg(long)]
        html: Option<PathBuf>,
    },
}

impl ProtocolArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let root = loc.setup()?.project.root;
        match self.cmd {
            ProtocolCmd::Build { from } => write_from(&root, &from, false),
            ProtocolCmd::Add { runs } => write_from(&root, &runs, true),
            ProtocolCmd::Schema {
                release,
                dialect,
                sdk,
                out,
            } => {
                let inv = load(&root, &dialect)?;
                let version = semver::Version::parse(&release)
                    .map_err(|e| Error::Usage(format!("--release `{release}`: {e}")))?;
                let sdk_file = sdk.or_else(|| {
                    let default = root.join(schema::sdk_file(&dialect));
                    default.exists().then_some(default)
                });
                let sdk_value = match &sdk_file {
                    Some(path) => Some(read_json(path)?),
                    None => None,
                };
                let sdk = match &sdk_value {
                    Some(v) => Some(Sdk::new(v)?),
                    None => None,
                };
                let schema = schema::schema(&inv, &version, sdk.as_ref())?;
                let text = serde_json::to_string_pretty(&schema).expect("JSON") + "\n";
                match out {
                    Some(path) => {
                        write_atomic(&path, text.as_bytes()).map_err(|e| Error::io(&path, e))?
                    }
                    None => print!("{text}"),
                }
                Ok(Verdict::AllGood)
            }
            ProtocolCmd::Check { runs, protocol } => {
                let mut trials = Vec::new();
                for dir in &runs {
                    trials.extend(streamcheck::commands::protocol::build::recheck(
                        &root, dir, protocol,
                    )?);
                }
                let findings = streamcheck::runner::protocol::run_findings(&trials);
                for (f, t) in &findings {
                    println!("{}", check::line(f, t));
                }
                let failing = findings.iter().filter(|(f, _)| f.fails(protocol)).count();
                println!(
                    "{} findings ({failing} failing under --protocol {protocol:?}) in {} trials",
                    findings.len(),
                    trials.len()
                );
                Ok(Verdict::divergence_if(failing > 0))
            }
            ProtocolCmd::Sdk {
                schema,
                release,
                dialect,
            } => {
                let inv = load(&root, &dialect)?;
                let version = semver::Version::parse(&release)
                    .map_err(|e| Error::Usage(format!("--release `{release}`: {e}")))?;
                let value = read_json(&schema)?;
                let c = streamcheck::protocol::sdk::compare(&inv, &version, &value)
                    .map_err(|e| ProtocolError::Sdk(FileError::new(&schema, e)))?;
                let show = |title: &str, items: &[String]| {
                    println!("{title} ({}):", items.len());
                    for i in items {
                        println!("  {i}");
                    }
                };
                show("frame kinds printed, no declared type", &c.undeclared_kinds);
                show("keys printed, not declared", &c.undeclared_keys);
                show(
                    "declared types no scenario made the CLI print",
                    &c.unprinted,
                );
                show(
                    "declared keys of printed kinds no frame carried",
                    &c.unprinted_keys,
                );
                show(
                    "control request subtypes declared (sent by either side) the CLI never sent",
                    &c.unsent_requests,
                );
                Ok(Verdict::AllGood)
            }
            ProtocolCmd::Doc { dialect, html } => {
                let inv = load(&root, &dialect)?;
                let page = write_doc(&root, &inv)?;
                if let Some(path) = html {
                    let title = format!("The {dialect} stream-json protocol, as printed");
                    let text = streamcheck::protocol::html::page(&page, &title);
                    write_atomic(&path, text.as_bytes()).map_err(|e| Error::io(&path, e))?;
                    println!("{}", path.display());
                }
                Ok(Verdict::AllGood)
            }
        }
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
}

fn load(root: &Path, dialect: &str) -> Result<Inventory> {
    let path = root.join(inventory::file_of(dialect));
    if !path.exists() {
        return Err(Error::Usage(format!(
            "no inventory for {dialect} ({}): build one with `streamcheck protocol build --from RUN...`",
            inventory::file_of(dialect).display()
        )));
    }
    Ok(Inventory::load(&path)?)
}

fn write_from(root: &Path, dirs: &[PathBuf], add: bool) -> Result<Verdict> {
    let runs = Runs::read(dirs)?;
    if runs.by.is_empty() {
        return Err(Error::Usage(
            "the run folders hold no trial that ran".into(),
        ));
    }
    for dialect in runs.by.keys() {
        let path = root.join(inventory::file_of(dialect));
        let requests_path = root.join(requests::file_of(dialect));
        let base = |path: &Path| match add && path.exists() {
            true => Inventory::load(path).map(Some).map_err(Error::from),
            false => Ok(None),
        };
        let inv = runs.inventory(dialect, base(&path)?);
        let sent = runs.request_inventory(dialect, base(&requests_path)?);
        write_atomic(&path, inv.to_yaml().as_bytes()).map_err(|e| Error::io(&path, e))?;
        write_atomic(&requests_path, requests::to_yaml(&sent).as_bytes())
            .map_err(|e| Error::io(&requests_path, e))?;
        let examples_path = root.join(render::examples_file(dialect));
        let mut examples = match add {
            true => render::Examples::load(&examples_path)?,
            false => render::Examples::default(),
        };
        examples.update(&runs.examples[dialect]);
        write_atomic(&examples_path, examples.to_jsonl().as_bytes())
            .map_err(|e| Error::io(&examples_path, e))?;
        write_doc(root, &inv)?;
        let releases: Vec<String> = inv.releases.iter().map(|r| r.to_string()).collect();
        println!(
            "{}: {} frame kinds, {} key paths, {} releases ({}), from {} trials",
            path.strip_prefix(root).unwrap_or(&path).display(),
            inv.kinds.len(),
            inv.key_paths(),
            releases.len(),
            releases.join(", "),
            runs.trials
        );
        println!(
            "{}: {} request kinds, {} key paths, {} tool schemas",
            requests_path
                .strip_prefix(root)
                .unwrap_or(&requests_path)
                .display(),
            sent.kinds.len(),
            sent.key_paths(),
            (sent.lists.keys())
                .filter(|l| l.starts_with("input_schema["))
                .count()
        );
    }
    Ok(Verdict::AllGood)
}

/// Writes the reference; its text.
fn write_doc(root: &Path, inv: &Inventory) -> Result<String> {
    let page = requests_render::page(root, inv)?;
    let path = root.join(render::doc_file(&inv.dialect));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    write_atomic(&path, page.as_bytes()).map_err(|e| Error::io(&path, e))?;
    Ok(page)
}
