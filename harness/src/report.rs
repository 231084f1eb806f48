//! Reports: one file set per divergent trial, plus a summary, junit.xml and
//! results.json for the whole run, rewritten atomically after every trial so an
//! interrupted run still leaves a complete account of what ran.

use crate::divergence::compact;
use crate::normalize::redact;
use crate::pattern::{Captures, Pattern, Vars};
use crate::runner::{Status, Trial};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const SCHEMA_VERSION: u32 = 1;

// Its home is normalize.rs; re-exported for compare.rs, which still imports it from here.
pub use crate::normalize::redact_str;

/// A target as the run saw it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    pub name: String,
    pub version: Option<String>,
    /// Why it could not run, if it could not.
    pub unavailable: Option<String>,
}

/// `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub started_at: String,
    pub duration_ms: u64,
    pub complete: bool,
    pub targets: Vec<TargetInfo>,
    pub counts: Counts,
    /// Scenario files that could not be loaded.
    pub scenario_errors: Vec<String>,
    pub trials: Vec<Trial>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Failed as the target's known-divergence list expects.
    pub known: usize,
    pub errors: usize,
}

impl Counts {
    pub fn of(trials: &[Trial], errors: usize) -> Counts {
        let mut c = Counts {
            errors,
            ..Counts::default()
        };
        for t in trials {
            match t.status {
                Status::Passed => c.passed += 1,
                Status::Failed => c.failed += 1,
                Status::Skipped(_) => c.skipped += 1,
                Status::Known(_) => c.known += 1,
            }
        }
        c
    }

    /// The closing line CI tooling reads.
    pub fn line(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// Writes a run's reports into one folder as trials finish.
pub struct ReportWriter {
    dir: PathBuf,
    started: SystemTime,
    results: Results,
}

impl ReportWriter {
    /// `reports/runs/<timestamp>/`, with `reports/runs/latest` pointing at it.
    pub fn default_dir(root: &Path) -> PathBuf {
        root.join("reports/runs")
            .join(timestamp(SystemTime::now()).replace(':', ""))
    }

    pub fn create(
        dir: &Path,
        targets: Vec<TargetInfo>,
        scenario_errors: Vec<String>,
    ) -> io::Result<ReportWriter> {
        std::fs::create_dir_all(dir)?;
        if let Some(parent) = dir.parent() {
            if parent.file_name().is_some_and(|n| n == "runs") {
                let latest = parent.join("latest");
                let _ = std::fs::remove_file(&latest);
                #[cfg(unix)]
                let _ = std::os::unix::fs::symlink(dir.file_name().unwrap_or_default(), &latest);
            }
        }
        let started = SystemTime::now();
        let mut w = ReportWriter {
            dir: dir.to_path_buf(),
            started,
            results: Results {
                schema_version: SCHEMA_VERSION,
                started_at: timestamp(started),
                duration_ms: 0,
                complete: false,
                counts: Counts::of(&[], scenario_errors.len()),
                targets,
                scenario_errors,
                trials: Vec::new(),
            },
        };
        w.write_run_files()?;
        Ok(w)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds a finished trial: its own report if it diverged, then the run files again.
    pub fn record(&mut self, trial: Trial) -> io::Result<()> {
        if trial.status == Status::Failed {
            write_trial_report(&self.dir, &trial)?;
        }
        if !matches!(trial.status, Status::Skipped(_)) {
            write_saved_trial(&self.dir, &trial)?;
        }
        self.results.trials.push(trial);
        self.write_run_files()
    }

    pub fn finish(&mut self) -> io::Result<&Results> {
        self.results.complete = true;
        self.write_run_files()?;
        Ok(&self.results)
    }

    pub fn results(&self) -> &Results {
        &self.results
    }

    fn write_run_files(&mut self) -> io::Result<()> {
        let r = &mut self.results;
        r.trials
            .sort_by(|a, b| (&a.scenario, &a.target).cmp(&(&b.scenario, &b.target)));
        r.counts = Counts::of(&r.trials, r.scenario_errors.len());
        r.duration_ms = self.started.elapsed().unwrap_or_default().as_millis() as u64;
        write_results(&self.dir, r)
    }
}

/// Merges several runs' results (e.g. CI shards) into `out`: one summary, junit.xml and
/// results.json, with the per-trial reports copied over.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Results, String> {
    if dirs.is_empty() {
        return Err("merge: name the report folders to merge".into());
    }
    let mut merged: Option<Results> = None;
    for d in dirs {
        let path = d.join("results.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let r: Results =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if r.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "{}: schema_version {} (this streamcheck reads {})",
                path.display(),
                r.schema_version,
                SCHEMA_VERSION
            ));
        }
        for t in r.trials.iter().filter(|t| t.status == Status::Failed) {
            // Carry the per-trial report files over.
            let stem = trial_stem(t);
            for ext in ["md", "json", "stdout.jsonl", "journal.ndjson"] {
                let from = d.join(format!("{stem}.{ext}"));
                if from.exists() {
                    let to = out.join(format!("{stem}.{ext}"));
                    if let Some(p) = to.parent() {
                        std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
                    }
                    std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
                }
            }
        }
        merged = Some(match merged {
            None => r,
            Some(mut m) => {
                for t in r.targets {
                    if !m.targets.iter().any(|x| x.name == t.name) {
                        m.targets.push(t);
                    }
                }
                m.trials.extend(r.trials);
                for e in r.scenario_errors {
                    if !m.scenario_errors.contains(&e) {
                        m.scenario_errors.push(e);
                    }
                }
                m.duration_ms = m.duration_ms.max(r.duration_ms);
                m.complete &= r.complete;
                m.started_at = m.started_at.min(r.started_at);
                m
            }
        });
    }
    let mut m = merged.expect("at least one folder");
    m.trials
        .sort_by(|a, b| (&a.scenario, &a.target).cmp(&(&b.scenario, &b.target)));
    m.counts = Counts::of(&m.trials, m.scenario_errors.len());
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    write_results(out, &m).map_err(|e| e.to_string())?;
    Ok(m)
}

/// Writes summary.md, junit.xml and results.json for `results` (also used by `merge`).
pub fn write_results(dir: &Path, r: &Results) -> io::Result<()> {
    write_atomic(
        &dir.join("results.json"),
        serde_json::to_string_pretty(r)?.as_bytes(),
    )?;
    write_atomic(&dir.join("summary.md"), summary_md(r).as_bytes())?;
    write_atomic(&dir.join("junit.xml"), junit_xml(r).as_bytes())
}

/// Write to a temp file in the same folder, then rename over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `outputs/<stem>.json`: what `audit --from` needs to check the trial again.
fn write_saved_trial(dir: &Path, trial: &Trial) -> io::Result<()> {
    let saved = crate::runner::saved::SavedTrial::of(trial);
    let path = dir
        .join(crate::runner::saved::DIR)
        .join(format!("{}.json", trial_stem(trial)));
    write_atomic(&path, &serde_json::to_vec(&saved)?)
}

/// `<scenario id>.<target>` under the report dir: the scenario folders are kept.
pub fn trial_stem(trial: &Trial) -> String {
    format!(
        "{}.{}",
        trial.scenario,
        trial.target.replace(['/', ':'], "_")
    )
}

fn summary_md(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# streamcheck run {}\n", r.started_at);
    let _ = writeln!(
        s,
        "**{}**{}, {} scenario file error(s), {:.1} s\n",
        r.counts.line(),
        if r.complete { "" } else { " (run incomplete)" },
        r.counts.errors,
        r.duration_ms as f64 / 1000.0
    );
    let _ = writeln!(s, "| target | version | |\n|---|---|---|");
    for t in &r.targets {
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            t.name,
            t.version.as_deref().unwrap_or("-"),
            t.unavailable.as_deref().unwrap_or("ok")
        );
    }
    if !r.scenario_errors.is_empty() {
        let _ = writeln!(s, "\n## Scenario files with errors\n");
        for e in &r.scenario_errors {
            let _ = writeln!(s, "- `{e}`");
        }
    }
    let targets: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(s, "\n## Results\n");
    let _ = write!(s, "| scenario |");
    for t in &targets {
        let _ = write!(s, " {t} |");
    }
    let _ = write!(s, "\n|---|");
    for _ in &targets {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    let mut scenarios: Vec<&str> = r.trials.iter().map(|t| t.scenario.as_str()).collect();
    scenarios.dedup();
    for sc in scenarios {
        let _ = write!(s, "| {sc} |");
        for t in &targets {
            let cell = match r.trials.iter().find(|x| x.scenario == sc && x.target == *t) {
                None => "-".to_string(),
                Some(x) => match &x.status {
                    Status::Passed => format!("ok ({} ms)", x.duration_ms),
                    Status::Failed => format!(
                        "**FAILED** ({}) [report]({}.md)",
                        x.divergences
                            .first()
                            .map(|d| d.kind.as_str())
                            .unwrap_or("?"),
                        trial_stem(x)
                    ),
                    Status::Skipped(why) => format!("skipped: {}", why.replace('|', "\\|")),
                    Status::Known(why) => format!("known divergence: {}", why.replace('|', "\\|")),
                },
            };
            let _ = write!(s, " {cell} |");
        }
        let _ = writeln!(s);
    }
    s
}

fn junit_xml(r: &Results) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("streamcheck");
    for t in &r.targets {
        let mut suite = TestSuite::new(t.name.clone());
        for x in r.trials.iter().filter(|x| x.target == t.name) {
            let status = match &x.status {
                Status::Passed => TestCaseStatus::success(),
                Status::Failed => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    if let Some(d) = x.divergences.first() {
                        st.set_message(format!("{}: {}", d.kind, d.message));
                        st.set_type(d.kind.as_str());
                    }
                    st.set_description(
                        x.divergences
                            .iter()
                            .map(|d| d.to_string())
                            .collect::<Vec<_>>()
                            .join("\n\n"),
                    );
                    st
                }
                Status::Skipped(why) | Status::Known(why) => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(why.clone());
                    st
                }
            };
            let mut case = TestCase::new(x.scenario.clone(), status);
            case.set_classname(format!(
                "{}.{}",
                t.name,
                x.scenario.split('/').next().unwrap_or("")
            ));
            case.set_time(Duration::from_millis(x.duration_ms));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    for e in &r.scenario_errors {
        let mut suite = TestSuite::new("scenario-files");
        let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
        st.set_message(e.clone());
        suite.add_test_case(TestCase::new(
            e.split(':').next().unwrap_or(e).to_string(),
            st,
        ));
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit serialization failed: {e} -->"))
}

/// Writes `<stem>.md`, `<stem>.json`, `<stem>.stdout.jsonl` and `<stem>.journal.ndjson`.
pub fn write_trial_report(dir: &Path, trial: &Trial) -> io::Result<()> {
    let stem = dir.join(trial_stem(trial));
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
    write_atomic(&with("stdout.jsonl"), &trial.output.raw)?;
    let mut journal = Vec::new();
    for e in &trial.journal {
        journal.extend_from_slice(e.to_ndjson().as_bytes());
        journal.push(b'\n');
    }
    write_atomic(&with("journal.ndjson"), &journal)?;
    let mut detail = serde_json::to_value(trial)?;
    detail["stderr"] = json!(trial.stderr.text());
    detail["bad_lines"] = serde_json::to_value(&trial.output.bad_lines)?;
    detail["requests"] = json!(trial.journal.iter().map(request_brief).collect::<Vec<_>>());
    write_atomic(
        &with("json"),
        serde_json::to_string_pretty(&detail)?.as_bytes(),
    )?;
    write_atomic(&with("md"), trial_md(trial).as_bytes())
}

fn trial_md(t: &Trial) -> String {
    let mut s = String::new();
    let stem_name = Path::new(&trial_stem(t))
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "# FAILED: {} on {} {}\n",
        t.scenario, t.target, t.target_version
    );
    let _ = writeln!(s, "> {}\n", t.description);
    let exit = &t.exit;
    let _ = writeln!(
        s,
        "- scenario file: `{}`\n- exit: {exit}\n- duration: {} ms\n- frames: {}, bad stdout lines: {}, stderr: {} bytes\n",
        t.scenario_path,
        t.duration_ms,
        t.output.frames.len(),
        t.output.bad_lines.len(),
        t.stderr.total_bytes
    );
    if let (Some(first), Some(last)) = (t.output.frames.first(), t.output.frames.last()) {
        let mut arrivals: Vec<u64> = t.output.frames.iter().map(|f| f.at_ms).collect();
        arrivals.dedup();
        let _ = writeln!(
            s,
            "- frames arrived from {} ms to {} ms after start, in {} separate reads ({})\n",
            first.at_ms,
            last.at_ms,
            arrivals.len(),
            if arrivals.len() == 1 && t.output.frames.len() > 1 {
                "one burst"
            } else {
                "streamed"
            }
        );
    }
    let _ = writeln!(s, "## Divergences\n");
    for (i, d) in t.divergences.iter().enumerate() {
        let mut loc = Vec::new();
        if let Some(f) = d.frame {
            loc.push(format!("frame {f}"));
        }
        if let Some(l) = d.line {
            loc.push(format!("stdout line {l}"));
        }
        if let Some(p) = &d.path {
            loc.push(format!("`{p}`"));
        }
        let _ = writeln!(
            s,
            "{}. **{}**{}: {}",
            i + 1,
            d.kind,
            if loc.is_empty() {
                String::new()
            } else {
                format!(" at {}", loc.join(", "))
            },
            d.message
        );
        if let Some(e) = &d.expected {
            let _ = writeln!(s, "   - expected: `{}`", compact(&redact(e, &t.vars)));
        }
        if let Some(a) = &d.actual {
            let _ = writeln!(s, "   - actual: `{}`", compact(&redact(a, &t.vars)));
        }
    }
    if !t.expected_frames.is_empty() || !t.output.frames.is_empty() {
        let _ = writeln!(
            s,
            "\n## Expected frames vs actual (volatile values redacted, actual frames cut to the keys the patterns name)\n\n```diff\n{}```",
            frame_diff(&t.expected_frames, &t.output.frames.iter().map(|f| f.value.clone()).collect::<Vec<_>>(), &t.vars)
        );
    }
    let _ = writeln!(s, "\n## Command\n\n```sh\n{}\n```", t.command_line);
    let lines = t.stderr.last_lines(20);
    if !lines.is_empty() {
        let _ = writeln!(
            s,
            "\n## stderr (last {} lines)\n\n```\n{}\n```",
            lines.len(),
            lines.join("\n")
        );
    }
    if !t.journal.is_empty() {
        let _ = writeln!(s, "\n## Requests the CLI sent\n\n| # | request | model | answered by | status | messages | last message blocks |\n|---|---|---|---|---|---|---|");
        for e in &t.journal {
            let b = request_brief(e);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                b["seq"],
                b["request"].as_str().unwrap_or(""),
                b["model"].as_str().unwrap_or("-"),
                b["answered_by"].as_str().unwrap_or(""),
                b["status"],
                b["messages"],
                b["last_blocks"].as_str().unwrap_or("")
            );
        }
    }
    let _ = writeln!(
        s,
        "\n## Files\n\n- [{stem_name}.stdout.jsonl]({stem_name}.stdout.jsonl): stdout as printed{}\n- [{stem_name}.journal.ndjson]({stem_name}.journal.ndjson): every request in full\n- [{stem_name}.json]({stem_name}.json): this report, machine-readable",
        if t.output.raw_truncated { " (cut at 16 MiB)" } else { "" }
    );
    s
}

/// One line per request for reports: what it was and what answered it.
pub fn request_brief(e: &stub_api::JournalEntry) -> Value {
    let body = e.body();
    let messages = body.get("messages").and_then(Value::as_array);
    let last_blocks = messages
        .and_then(|m| m.last())
        .map(|m| match &m["content"] {
            Value::String(_) => "text".to_string(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["type"].as_str())
                .collect::<Vec<_>>()
                .join(", "),
            _ => "-".into(),
        })
        .unwrap_or_default();
    let answered = match &e.answer {
        stub_api::Answer::Step { step, repeat } if *repeat > 0 => {
            format!("step {step} (repeat {repeat})")
        }
        stub_api::Answer::Step { step, .. } => format!("step {step}"),
        stub_api::Answer::Background { rule } => format!("background: {rule}"),
        stub_api::Answer::Side => "side traffic".into(),
        stub_api::Answer::Unscripted { .. } => "UNSCRIPTED".into(),
    };
    json!({
        "seq": e.seq,
        "request": format!("{} {}", e.method, e.path),
        "model": e.model,
        "answered_by": answered,
        "status": e.status,
        "messages": messages.map_or(0, Vec::len),
        "last_blocks": last_blocks,
    })
}

/// A unified diff of the expected patterns against the actual frames. Each actual
/// frame is cut to the keys of the pattern at the same position, and parts that
/// a placeholder accepts are shown as the placeholder, so only real differences remain.
pub fn frame_diff(expected: &[Value], actual: &[Value], vars: &Vars) -> String {
    let flat: Vec<&Value> = expected
        .iter()
        .flat_map(|e| match e.get("any_order").and_then(Value::as_array) {
            Some(runs) if e.as_object().is_some_and(|m| m.len() == 1) => runs
                .iter()
                .flat_map(|r| match r {
                    Value::Array(seq) => seq.iter().collect::<Vec<_>>(),
                    single => vec![single],
                })
                .collect(),
            _ => vec![e],
        })
        .collect();
    let aligner = Aligner::new(&flat);
    let mut operators = OperatorCache::default();
    let left: String = flat.iter().map(|p| format!("{}\n", p)).collect();
    let right: String = actual
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let shown = match aligner.pattern_for(i, a) {
                Some(p) => redact(&cut_to_pattern(a, p, vars, &mut operators), vars),
                None => headline(a),
            };
            format!("{shown}\n")
        })
        .collect();
    // Myers is quadratic when the sides differ a lot (100k frames); past the deadline it
    // falls back to a coarser but still correct diff.
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .timeout(Duration::from_millis(500))
        .diff_lines(&left, &right)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}

/// The pattern to show each frame against: the one at the same position if it is about
/// the same kind of frame (type, subtype), else the first pattern about that kind.
struct Aligner<'a> {
    flat: &'a [&'a Value],
    /// First pattern per (type, subtype or "" when the pattern names none).
    first: HashMap<(String, String), &'a Value>,
}

impl<'a> Aligner<'a> {
    fn new(flat: &'a [&'a Value]) -> Self {
        let mut first = HashMap::new();
        for p in flat {
            if let Some(ty) = p.get("type").and_then(Value::as_str) {
                let sub = p.get("subtype").and_then(Value::as_str).unwrap_or("");
                first.entry((ty.to_string(), sub.to_string())).or_insert(*p);
            }
        }
        Aligner { flat, first }
    }

    fn pattern_for(&self, i: usize, frame: &Value) -> Option<&'a Value> {
        let same_kind = |p: &Value| {
            p.get("type").is_some()
                && ["type", "subtype"].iter().all(|k| {
                    p.get(k)
                        .is_none_or(|want| !want.is_string() || frame.get(k) == Some(want))
                })
        };
        if let Some(p) = self.flat.get(i).filter(|p| same_kind(p)) {
            return Some(p);
        }
        let ty = frame.get("type").and_then(Value::as_str)?.to_string();
        let sub = frame
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        self.first
            .get(&(ty.clone(), sub))
            .or_else(|| self.first.get(&(ty, String::new())))
            .copied()
    }
}

fn headline(v: &Value) -> Value {
    let mut m = Map::new();
    for k in ["type", "subtype"] {
        if let Some(x) = v.get(k) {
            m.insert(k.into(), x.clone());
        }
    }
    Value::Object(m)
}

/// Operator patterns compiled once per diff: the same few patterns are shown against
/// every frame, and compiling them per frame was most of the differ's time.
#[derive(Default)]
struct OperatorCache(HashMap<*const Value, Option<Pattern>>);

impl OperatorCache {
    fn accepts(&mut self, pattern: &Value, actual: &Value, vars: &Vars) -> bool {
        let compiled = self
            .0
            .entry(pattern as *const Value)
            .or_insert_with(|| Pattern::compile(pattern).ok());
        compiled
            .as_ref()
            .is_some_and(|p| p.is_match(actual, vars, &Captures::new()))
    }
}

/// `actual` cut to the keys `pattern` names; where an operator accepts what is there,
/// the operator is shown instead, so only real differences remain.
fn cut_to_pattern(actual: &Value, pattern: &Value, vars: &Vars, ops: &mut OperatorCache) -> Value {
    let placeholder = pattern
        .as_str()
        .is_some_and(|s| s.starts_with('$') && !s.starts_with("$$"));
    if placeholder || crate::pattern::is_operator(pattern) {
        let capture_like = pattern
            .as_object()
            .is_some_and(|m| m.contains_key("$capture") || m.contains_key("$ref"));
        return if capture_like || ops.accepts(pattern, actual, vars) {
            pattern.clone()
        } else {
            actual.clone()
        };
    }
    match (actual, pattern) {
        (Value::Object(a), Value::Object(p)) => Value::Object(
            p.iter()
                .filter_map(|(k, sub)| {
                    a.get(k)
                        .map(|x| (k.clone(), cut_to_pattern(x, sub, vars, ops)))
                })
                .collect(),
        ),
        (Value::Array(a), Value::Array(p)) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| match p.get(i) {
                    Some(sub) => cut_to_pattern(x, sub, vars, ops),
                    None => x.clone(),
                })
                .collect(),
        ),
        _ => actual.clone(),
    }
}

/// `2026-11-22T00:33:42Z`, from a system time (UTC).
pub fn timestamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_iso8601() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_secs(1_795_307_622)),
            "2026-11-22T00:33:42Z"
        );
    }

    #[test]
    fn diff_shows_only_real_differences() {
        let expected = vec![
            json!({"type": "system", "subtype": "init", "session_id": "$uuid"}),
            json!({"type": "result", "result": "Hello!"}),
        ];
        let actual = vec![
            json!({"type": "system", "subtype": "init", "session_id": "5595b838-7570-4bb3-8c62-876337d757b6", "tools": ["Bash"]}),
            json!({"type": "result", "result": "Hello?", "duration_ms": 3}),
        ];
        let d = frame_diff(&expected, &actual, &Vars::default());
        assert!(
            d.contains("-{\"type\":\"result\",\"result\":\"Hello!\"}"),
            "{d}"
        );
        assert!(
            d.contains("+{\"type\":\"result\",\"result\":\"Hello?\"}"),
            "{d}"
        );
        assert!(!d.contains("-{\"type\":\"system\""), "{d}");
        assert!(!d.contains("tools"), "{d}");
    }
}
