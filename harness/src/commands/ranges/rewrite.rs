//! A proven range written back where it stands: a version block's key, a block's
//! `min_version`/`max_version` or a known entry's `versions`, set to the releases its proof
//! found. The proof of a rewritten range is carried over: the rewrite changes only range
//! text that proof established. The proofs of the other ranges of the same scenario are
//! not: each was judged with the trials held to the blocks as they were, and a block's
//! moved bound changes which expectation the releases it crossed are held to (an entry
//! proven where the block above applied would otherwise stay proven where it no longer
//! can match). The same holds for two ranges of one scenario rewritten together.

use super::enumerate::Range;
use super::proof::{Edge, Proof, ProofFile};
use super::subject::Subject;
use crate::version_range::VersionRange;
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Why a range could not be written back.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RewriteError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// The range a proof found, as written in a block key or an entry's `versions`
/// (`>=2.1.190, <2.1.290`; open on a side that reaches the first or newest release checked).
pub fn found_range(proof: &Proof) -> String {
    let lower = matches!(proof.below, Edge::Release(_)).then(|| format!(">={}", proof.first));
    let upper = match &proof.above {
        Edge::Release(v) => Some(format!("<{v}")),
        _ => None,
    };
    match (lower, upper) {
        (Some(l), Some(u)) => format!("{l}, {u}"),
        (Some(l), None) => l,
        (None, Some(u)) => u,
        (None, None) => format!(">={}", proof.first),
    }
}

/// One line of a file rewritten.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    pub to: String,
    /// Other lines the same edit rewrites (a known entry's `observed:`), 1-based.
    pub also: Vec<(usize, String)>,
    /// What the range is named by once rewritten.
    pub subject: Subject,
}

/// The edit that writes `proof`'s releases where `range` is written in `text`.
pub fn edit(range: &Range, proof: &Proof, text: &str) -> Result<Edit, RewriteError> {
    let fail = |line: usize, message: String| RewriteError {
        file: range.file.clone(),
        line,
        message,
    };
    let lines: Vec<&str> = text.lines().collect();
    let at = |n: usize| lines.get(n.wrapping_sub(1)).copied();
    let found = found_range(proof);
    let mut subject = range.subject.clone();
    let mut also = Vec::new();
    let (line, to) = match &mut subject {
        Subject::Block(key) => {
            let old = at(range.line).unwrap_or_default();
            if old.matches(key.as_str()).count() != 1 {
                return Err(fail(
                    range.line,
                    format!("the key `{key}` is not on this line once"),
                ));
            }
            let dialect = key.split('@').next().unwrap_or(key);
            let new_key = format!("{dialect}@{found}");
            let to = old.replacen(key.as_str(), &new_key, 1);
            *key = new_key;
            (range.line, to)
        }
        Subject::Bound { field, version, .. } => {
            let old = at(range.line).unwrap_or_default();
            // YAML (`min_version: X`) or a case item's JSON (`"min_version": "X"`).
            let start =
                (old.find(&format!("{field}:"))).or_else(|| old.find(&format!("\"{field}\":")));
            let Some(start) = start else {
                return Err(fail(range.line, format!("no `{field}:` on this line")));
            };
            let new = match field.as_str() {
                "min_version" => &proof.first,
                _ => &proof.last,
            };
            let (head, rest) = old.split_at(start);
            if !rest.contains(version.as_str()) {
                return Err(fail(
                    range.line,
                    format!("`{field}: {version}` is not on this line"),
                ));
            }
            let to = format!("{head}{}", rest.replacen(version.as_str(), new, 1));
            version.clone_from(new);
            (range.line, to)
        }
        Subject::Entry { versions, .. } => {
            let line = (range.line..)
                .take_while(|&n| n == range.line || at(n).is_some_and(|l| !l.starts_with("- ")))
                .find(|&n| at(n).is_some_and(|l| l.trim_start().starts_with("versions:")));
            let Some(n) = line else {
                return Err(fail(range.line, "the entry has no `versions:` line".into()));
            };
            let old = at(n).unwrap_or_default();
            let indent = &old[..old.len() - old.trim_start().len()];
            let comment = old.find(" #").map_or("", |c| &old[c..]);
            versions.clone_from(&found);
            if let Some(edit) = observed_within(range, proof, &found, &lines) {
                also.push(edit);
            }
            (n, format!("{indent}versions: \"{found}\"{comment}"))
        }
    };
    Ok(Edit {
        path: range.path.clone(),
        line,
        to,
        also,
        subject,
    })
}

/// A known entry's `observed:` line with only the releases inside `found` (the proven
/// range); none left, the proof's first and last release, which the search saw behave as the
/// entry says. `None`: nothing to change (or no one-line `observed:`).
fn observed_within(
    range: &Range,
    proof: &Proof,
    found: &str,
    lines: &[&str],
) -> Option<(usize, String)> {
    let entry = range.entry.as_ref()?;
    let within = VersionRange::parse(found).ok()?;
    let mut kept: Vec<String> = (entry.observed.iter())
        .filter(|v| within.contains(v))
        .map(ToString::to_string)
        .collect();
    if kept.len() == entry.observed.len() {
        return None;
    }
    if kept.is_empty() {
        kept.push(proof.first.clone());
        if proof.last != proof.first {
            kept.push(proof.last.clone());
        }
    }
    let n = (range.line..)
        .take_while(|&n| n == range.line || lines.get(n - 1).is_some_and(|l| !l.starts_with("- ")))
        .find(|&n| {
            lines
                .get(n - 1)
                .is_some_and(|l| l.trim_start().starts_with("observed: ["))
        })?;
    let old = lines[n - 1];
    let indent = &old[..old.len() - old.trim_start().len()];
    let comment = old.find("] #").map_or("", |c| &old[c + 1..]);
    Some((
        n,
        format!("{indent}observed: [{}]{comment}", kept.join(", ")),
    ))
}

/// The edits of `edits` (indices into `ranges`) that would break how the version blocks of
/// one scenario or case lie: two blocks apart or one inside the other before are so after
/// (a block nested in another moves with it, or the pair is left for a person). Each
/// refused edit's index, with why.
pub fn breaks_nesting(ranges: &[Range], edits: &BTreeMap<usize, Subject>) -> Vec<(usize, String)> {
    let block = |r: &Range, subject: &Subject| match subject {
        Subject::Block(key) => crate::expectation::ExpectKey::parse(key)
            .ok()
            .and_then(|k| k.range)
            .map(|v| (r.path.clone(), r.case.clone(), r.dialect, v)),
        _ => None,
    };
    let before: Vec<_> = ranges.iter().map(|r| block(r, &r.subject)).collect();
    let after: Vec<_> = (ranges.iter().enumerate())
        .map(|(i, r)| block(r, edits.get(&i).unwrap_or(&r.subject)))
        .collect();
    let mut refused = Vec::new();
    for (a, b) in (0..ranges.len()).flat_map(|a| (0..ranges.len()).map(move |b| (a, b))) {
        let (Some(ba), Some(bb), Some(aa), Some(ab)) =
            (&before[a], &before[b], &after[a], &after[b])
        else {
            continue;
        };
        if a == b || (ba.0.as_path(), &ba.1, ba.2) != (bb.0.as_path(), &bb.1, bb.2) {
            continue;
        }
        if !(edits.contains_key(&a) || edits.contains_key(&b)) {
            continue;
        }
        let why = if bb.3.holds(&ba.3) && !bb.3.same_versions(&ba.3) && !ab.3.holds(&aa.3) {
            format!("{} would no longer lie inside {}", aa.3, ab.3)
        } else if !ba.3.overlaps(&bb.3) && aa.3.overlaps(&ab.3) {
            format!("{} would overlap {}", aa.3, ab.3)
        } else {
            continue;
        };
        let also = "write the two blocks by hand, together";
        for i in [a, b].into_iter().filter(|i| edits.contains_key(i)) {
            if !refused.iter().any(|(r, _)| *r == i) {
                refused.push((
                    i,
                    format!(
                        "{} and {}: {why}: {also}",
                        ranges[a].describe(),
                        ranges[b].describe()
                    ),
                ));
            }
        }
    }
    refused
}

/// Applies `edits`, each file read and written once.
pub fn apply(edits: &[Edit]) -> std::io::Result<()> {
    let mut by_file: BTreeMap<&Path, Vec<&Edit>> = BTreeMap::new();
    for e in edits {
        by_file.entry(e.path.as_path()).or_default().push(e);
    }
    for (path, edits) in by_file {
        let text = std::fs::read_to_string(path)?;
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for e in edits {
            for (n, to) in
                std::iter::once((e.line, &e.to)).chain(e.also.iter().map(|(n, t)| (*n, t)))
            {
                if let Some(l) = lines.get_mut(n - 1) {
                    l.clone_from(to);
                }
            }
        }
        let mut out = lines.join("\n");
        if text.ends_with('\n') {
            out.push('\n');
        }
        std::fs::write(path, out)?;
    }
    Ok(())
}

/// What names one range across a rewrite: its file, case, subject and (for an entry) the
/// message it matches, which tells apart entries of one scenario, kind and range.
type Key = (String, Option<String>, Subject, Option<String>);

fn key(r: &Range, subject: &Subject) -> Key {
    let message = (r.entry.as_ref()).and_then(|e| e.message.as_ref().map(|m| m.to_string()));
    (r.file.clone(), r.case.clone(), subject.clone(), message)
}

/// What a rewrite did to the proofs of the ranges whose text or hash it changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Carried {
    /// Proofs of rewritten ranges, kept under the new subject and hash.
    pub carried: usize,
    /// Proofs dropped because a range of the same scenario was rewritten: to prove again.
    pub dropped: usize,
}

/// The proofs current in `files` for `before`, carried to the ranges of `after` (listed
/// again after the rewrite) that have none: each rewritten range's own, under its new
/// subject and hash, when it is the only rewritten range of its scenarios. `edited` gives,
/// per index of `before`, the subject a rewritten range has now. Every other proof whose
/// hash the rewrite changed is dropped (see the module's notes).
pub fn carry(
    before: &[Range],
    edited: &BTreeMap<usize, Subject>,
    after: &[Range],
    files: &mut BTreeMap<PathBuf, ProofFile>,
) -> Carried {
    let mut rewritten_in: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in edited.keys() {
        for s in &before[i].scenarios {
            *rewritten_in.entry(s.as_str()).or_default() += 1;
        }
    }
    let mut proven: BTreeMap<Key, (Proof, bool)> = BTreeMap::new();
    for (i, b) in before.iter().enumerate() {
        if let Some(proof) = files.get(&b.proofs).and_then(|f| f.current(b)) {
            let subject = edited.get(&i).unwrap_or(&b.subject);
            let alone = (b.scenarios.iter()).all(|s| rewritten_in.get(s.as_str()) == Some(&1));
            let keeps = edited.contains_key(&i) && alone;
            proven.insert(key(b, subject), (proof.clone(), keeps));
        }
    }
    let mut done = Carried::default();
    for a in after {
        let Some(file) = files.get_mut(&a.proofs) else {
            continue;
        };
        if file.current(a).is_some() {
            continue;
        }
        let Some((old, keeps)) = proven.get(&key(a, &a.subject)) else {
            continue;
        };
        file.proofs.retain(|p| p != old);
        if !keeps {
            done.dropped += 1;
            continue;
        }
        let mut moved = old.clone();
        moved.subject = a.subject.clone();
        moved.hash = a.hash.clone();
        file.put(moved);
        done.carried += 1;
    }
    done
}

/// Merges the entries of a known-divergences file that a rewrite made equal (the same in
/// everything but `observed`): the first keeps the releases all of them were observed on,
/// the others go. Returns how many went.
pub fn merge_equal_entries(path: &Path) -> std::io::Result<usize> {
    let text = std::fs::read_to_string(path)?;
    let Ok(values) = serde_yaml::from_str::<Vec<serde_yaml::Value>>(&text) else {
        return Ok(0);
    };
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (lines.iter().enumerate())
        .filter(|(_, l)| l.starts_with("- "))
        .map(|(n, _)| n)
        .collect();
    if starts.len() != values.len() {
        return Ok(0);
    }
    let observed = |v: &serde_yaml::Value| -> Vec<String> {
        let listed = v.get("observed").and_then(|o| o.as_sequence());
        (listed.into_iter().flatten())
            .map(|x| match x.as_str() {
                Some(s) => s.to_string(),
                None => serde_yaml::to_string(x)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            })
            .collect()
    };
    let mut first_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut union: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut gone: BTreeSet<usize> = BTreeSet::new();
    for (i, v) in values.iter().enumerate() {
        let mut same = v.clone();
        if let serde_yaml::Value::Mapping(m) = &mut same {
            m.remove("observed");
        }
        let id = serde_yaml::to_string(&same).unwrap_or_default();
        match first_of.get(&id) {
            None => {
                first_of.insert(id, i);
                union.insert(i, observed(v));
            }
            Some(&first) => {
                union.entry(first).or_default().extend(observed(v));
                gone.insert(i);
            }
        }
    }
    if gone.is_empty() {
        return Ok(0);
    }
    let end_of = |i: usize| starts.get(i + 1).copied().unwrap_or(lines.len());
    let mut out: Vec<String> = lines[..starts[0]].iter().map(|l| l.to_string()).collect();
    for (i, &start) in starts.iter().enumerate().filter(|(i, _)| !gone.contains(i)) {
        let mut releases = union.get(&i).cloned().unwrap_or_default();
        releases.sort_by_key(|v| crate::version_range::parse_version(v));
        releases.dedup();
        for line in &lines[start..end_of(i)] {
            match line.trim_start().starts_with("observed:") {
                true => {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    out.push(format!("{indent}observed: [{}]", releases.join(", ")));
                }
                false => out.push(line.to_string()),
            }
        }
    }
    let mut body = out.join("\n");
    if text.ends_with('\n') {
        body.push('\n');
    }
    std::fs::write(path, body)?;
    Ok(gone.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::version_range::VersionRange;

    fn proof(first: &str, below: Edge, last: &str, above: Edge) -> Proof {
        Proof {
            file: "f.yaml".into(),
            case: None,
            subject: Subject::Block("x".into()),
            hash: "h".into(),
            first: first.into(),
            last: last.into(),
            below,
            above,
            trials: vec![],
            runs_each: None,
        }
    }

    fn range(subject: Subject, line: usize) -> Range {
        Range {
            file: "f.yaml".into(),
            path: "f.yaml".into(),
            line,
            dialect: Dialect::default(),
            proofs: "ranges.yaml".into(),
            case: None,
            subject,
            versions: VersionRange::parse(">=0.0.0").unwrap(),
            hash: "h".into(),
            scenarios: vec![],
            entry: None,
        }
    }

    #[test]
    fn a_write_back_that_takes_a_nested_block_out_of_its_outer_one_is_refused() {
        let block = |key: &str, line| range(Subject::Block(format!("claude-code@{key}")), line);
        // control/reload-plugins: the outer block proven to end at 2.1.287, the one nested
        // in it still written to 2.1.289.
        let ranges = vec![
            block(">=2.1.161, <2.1.289", 21),
            block(">=2.1.216, <2.1.289", 25),
            block("<2.1.85", 28),
        ];
        let to = |i: usize, key: &str| (i, Subject::Block(format!("claude-code@{key}")));
        let outer_only = BTreeMap::from([to(0, ">=2.1.161, <2.1.287")]);
        let refused = breaks_nesting(&ranges, &outer_only);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].0, 0);
        assert!(
            refused[0]
                .1
                .contains(">=2.1.216, <2.1.289 would no longer lie inside >=2.1.161, <2.1.287"),
            "{}",
            refused[0].1
        );

        let together = BTreeMap::from([to(0, ">=2.1.161, <2.1.287"), to(1, ">=2.1.216, <2.1.287")]);
        assert_eq!(breaks_nesting(&ranges, &together), vec![]);

        let into_another = BTreeMap::from([to(2, "<2.1.170")]);
        let refused = breaks_nesting(&ranges, &into_another);
        assert!(
            refused.iter().all(|(i, _)| *i == 2) && !refused.is_empty(),
            "{refused:?}"
        );
        assert!(refused[0].1.contains("would overlap"), "{}", refused[0].1);

        let mut other_case = ranges.clone();
        other_case[1].case = Some("c".into());
        assert_eq!(
            breaks_nesting(&other_case, &outer_only),
            vec![],
            "a case's blocks are its own"
        );
    }

    #[test]
    fn a_found_range_is_open_where_it_reaches_the_first_or_newest_release() {
        let r = |v: &str| Edge::Release(v.into());
        let both = proof("2.1.190", r("2.1.189"), "2.1.289", r("2.1.290"));
        assert_eq!(found_range(&both), ">=2.1.190, <2.1.290");
        let low = proof("2.1.74", Edge::FirstChecked, "2.1.196", r("2.1.197"));
        assert_eq!(found_range(&low), "<2.1.197");
        let high = proof("2.1.309", r("2.1.308"), "2.1.332", Edge::NewestChecked);
        assert_eq!(found_range(&high), ">=2.1.309");
    }

    #[test]
    fn each_kind_of_range_is_rewritten_on_its_own_line() {
        let r = |v: &str| Edge::Release(v.into());
        let p = proof("2.1.190", r("2.1.189"), "2.1.289", r("2.1.290"));
        let text = "expect:\n  \"claude-code@>=2.1.197, <2.1.290\": # checked\n    exit_code: 0\n";
        let block = range(Subject::Block("claude-code@>=2.1.197, <2.1.290".into()), 2);
        let e = edit(&block, &p, text).unwrap();
        assert_eq!(
            (e.line, e.to.as_str()),
            (2, "  \"claude-code@>=2.1.190, <2.1.290\": # checked")
        );

        let text = "- scenario: a\n  kind: exit_code\n  versions: \">=2.1.198, <2.1.212\" # seen\n- scenario: b\n  versions: \"<1\"\n";
        let entry = Subject::Entry {
            scenario: "a".into(),
            kind: "exit_code".into(),
            versions: ">=2.1.198, <2.1.212".into(),
        };
        let e = edit(&range(entry, 1), &p, text).unwrap();
        assert_eq!(
            (e.line, e.to.as_str()),
            (3, "  versions: \">=2.1.190, <2.1.290\" # seen")
        );

        let text = "expect:\n  claude-code:\n    min_version: 2.1.309\n";
        let bound = Subject::Bound {
            key: "claude-code".into(),
            field: "min_version".into(),
            version: "2.1.309".into(),
        };
        let p = proof("2.1.305", r("2.1.304"), "2.1.332", Edge::NewestChecked);
        let e = edit(&range(bound.clone(), 3), &p, text).unwrap();
        assert_eq!((e.line, e.to.as_str()), (3, "    min_version: 2.1.305"));

        // A case item's own bound, written as JSON.
        let text = "cases:\n  - {\"name\": \"a\", \"expect\": {\"claude-code\": {\"min_version\": \"2.1.309\"}}}\n";
        let e = edit(&range(bound, 2), &p, text).unwrap();
        assert_eq!(
            (e.line, e.to.as_str()),
            (2, "  - {\"name\": \"a\", \"expect\": {\"claude-code\": {\"min_version\": \"2.1.305\"}}}")
        );
    }

    #[test]
    fn an_entrys_observed_releases_outside_its_proven_range_go_with_the_rewrite() {
        let r = |v: &str| Edge::Release(v.into());
        let text = "- scenario: a\n  kind: exit_code\n  versions: \"<2.1.208\"\n  observed: [2.1.74, 2.1.197] # runs\n  reason: r\n";
        let entry: crate::known::Entry = serde_yaml::from_str(
            "{scenario: a, kind: exit_code, versions: '<2.1.208', observed: [2.1.74, 2.1.197], reason: r}",
        )
        .unwrap();
        let subject = Subject::Entry {
            scenario: "a".into(),
            kind: "exit_code".into(),
            versions: "<2.1.208".into(),
        };
        let at = |first: &str, last: &str, above: &str| {
            let mut one = range(subject.clone(), 1);
            one.entry = Some(entry.clone());
            let below = match first {
                "2.1.74" => Edge::FirstChecked,
                _ => r("2.1.99"),
            };
            edit(&one, &proof(first, below, last, r(above)), text).unwrap()
        };
        // 2.1.197 no longer shows it: proven to end at 2.1.112.
        let e = at("2.1.74", "2.1.112", "2.1.113");
        assert_eq!(e.also, vec![(4, "  observed: [2.1.74] # runs".to_string())]);
        // Both outside: the releases the search saw.
        let e = at("2.1.100", "2.1.112", "2.1.113");
        assert_eq!(
            e.also,
            vec![(4, "  observed: [2.1.100, 2.1.112] # runs".to_string())]
        );
        // Both inside: nothing to change.
        assert_eq!(at("2.1.74", "2.1.207", "2.1.208").also, vec![]);
    }

    #[test]
    fn entries_a_rewrite_made_equal_are_merged_with_every_release_observed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known.yaml");
        let entry = |observed: &str, versions: &str| {
            format!("- scenario: a\n  kind: exit_code\n  versions: \"{versions}\"\n  observed: [{observed}]\n  reason: r\n")
        };
        let text = format!(
            "# head\n{}{}{}",
            entry("2.1.74", ">=2.1.74"),
            entry("2.1.330", ">=2.1.74"),
            entry("2.1.90", "<2.1.100")
        );
        std::fs::write(&path, &text).unwrap();
        assert_eq!(merge_equal_entries(&path).unwrap(), 1);
        let merged = std::fs::read_to_string(&path).unwrap();
        let want = format!(
            "# head\n{}{}",
            entry("2.1.74, 2.1.330", ">=2.1.74"),
            entry("2.1.90", "<2.1.100")
        );
        assert_eq!(merged, want);
        assert_eq!(merge_equal_entries(&path).unwrap(), 0);
    }

    #[test]
    fn a_key_not_on_its_line_is_an_error_naming_the_line() {
        let p = proof("1.0.0", Edge::FirstChecked, "1.0.1", Edge::NewestChecked);
        let block = range(Subject::Block("claude-code@<2".into()), 1);
        let err = edit(&block, &p, "expect: {}\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.to_string().starts_with("f.yaml:1:"), "{err}");
    }
}
