//! The files of one divergent trial: markdown for people, JSON, stdout and the journal.

use super::formats::Formats;
use super::frame_diff;
use crate::divergence::compact;
use crate::normalize::redact;
use crate::runner::Trial;
use crate::store::results::trial_stem;
use crate::store::write_atomic;
use crate::text::Table;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// Writes `<stem>.stdout.jsonl`, `<stem>.journal.ndjson` and, as `formats` say,
/// `<stem>.json` and `<stem>.md`.
pub fn write_trial_report(dir: &Path, trial: &Trial, formats: Formats) -> io::Result<()> {
    let stem = dir.join(trial_stem(trial));
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
    write_atomic(&with("stdout.jsonl"), &trial.output.raw)?;
    let mut journal = Vec::new();
    for e in &trial.journal {
        journal.extend_from_slice(e.to_ndjson().as_bytes());
        journal.push(b'\n');
    }
    write_atomic(&with("journal.ndjson"), &journal)?;
    if formats.json {
        write_detail_json(&with("json"), trial)?;
    }
    if formats.md {
        write_atomic(&with("md"), trial_md(trial).as_bytes())?;
    }
    Ok(())
}

fn write_detail_json(path: &Path, trial: &Trial) -> io::Result<()> {
    let mut detail = serde_json::to_value(trial)?;
    detail["stderr"] = json!(trial.stderr.text());
    detail["bad_lines"] = serde_json::to_value(&trial.output.bad_lines)?;
    detail["requests"] = json!(trial.journal.iter().map(request_brief).collect::<Vec<_>>());
    write_atomic(path, serde_json::to_string_pretty(&detail)?.as_bytes())
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
        t.key.scenario, t.key.target, t.key.target_version
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
    divergences_md(&mut s, t);
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
    requests_md(&mut s, t);
    let _ = writeln!(
        s,
        "\n## Files\n\n- [{stem_name}.stdout.jsonl]({stem_name}.stdout.jsonl): stdout as printed{}\n- [{stem_name}.journal.ndjson]({stem_name}.journal.ndjson): every request in full\n- [{stem_name}.json]({stem_name}.json): this report, machine-readable",
        if t.output.raw_truncated { " (cut at 16 MiB)" } else { "" }
    );
    s
}

/// The numbered divergences, each located by frame, stdout line and JSON path.
fn divergences_md(s: &mut String, t: &Trial) {
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
        if let Some(why) = &d.known {
            let _ = writeln!(
                s,
                "   - known divergence (listed, not what fails this trial): {why}"
            );
        }
    }
}

/// The table of requests the CLI sent, when it sent any.
fn requests_md(s: &mut String, t: &Trial) {
    if !t.journal.is_empty() {
        s.push_str("\n## Requests the CLI sent\n\n");
        let mut table = Table::new([
            "#",
            "request",
            "model",
            "answered by",
            "status",
            "messages",
            "last message blocks",
        ]);
        for e in &t.journal {
            let b = request_brief(e);
            table.row([
                b["seq"].to_string(),
                b["request"].as_str().unwrap_or("").to_string(),
                b["model"].as_str().unwrap_or("-").to_string(),
                b["answered_by"].as_str().unwrap_or("").to_string(),
                b["status"].to_string(),
                b["messages"].to_string(),
                b["last_blocks"].as_str().unwrap_or("").to_string(),
            ]);
        }
        s.push_str(&table.finish());
    }
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
