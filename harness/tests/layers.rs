//! No source file imports one that imports it back, directly or through others; and in
//! the library, no file imports from a room on a higher floor than its own ([`LAYERS`]).
//!
//! Each crate's files are read with `syn`; every `use` and every path in code that starts
//! with `crate`, `self` or `super` is an arrow from its file to the file of the deepest
//! module it names (`crate::runner::Exit` names `runner/mod.rs`, `crate::printed::exit::Exit`
//! names `runner/exit.rs`). A `mod x;` declaration is not an arrow: a parent may declare its
//! children. Test code (`#[cfg(test)]` items and `*tests.rs` files) is left out. Any
//! strongly connected group of two or more files fails, with the arrows that close it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// One crate: its root file and the folder its modules live in.
struct Crate {
    name: &'static str,
    root: &'static str,
    /// Files and folders beside the root that belong to another crate built from the
    /// same folder.
    excluded: &'static [&'static str],
    /// When not empty, the only files and folders beside the root that are this crate's.
    only: &'static [&'static str],
}

const CRATES: &[Crate] = &[
    Crate {
        name: "streamcheck (lib)",
        root: "harness/src/lib.rs",
        excluded: &["main.rs", "cli"],
        only: &[],
    },
    Crate {
        name: "streamcheck (bin)",
        root: "harness/src/main.rs",
        excluded: &[],
        only: &["main.rs", "cli"],
    },
    Crate {
        name: "stub-api",
        root: "stub-api/src/lib.rs",
        excluded: &["main.rs"],
        only: &[],
    },
];

/// The library's rooms, ground floor first: a room may import from its own floor and
/// the floors below, never from above. A room missing here fails the test, so a new one
/// is given its floor.
const LAYERS: &[&[&str]] = &[
    // words: what every room speaks
    &[
        "text",
        "file_error",
        "frame",
        "pattern",
        "toolmap",
        "version_range",
        "trial_id",
        "process_group",
    ],
    &["divergence", "normalize"],
    // what a CLI printed; the dialects as data and behaviour
    &["printed", "dialect"],
    &["matcher", "invariants", "client", "sdk_contract"],
    // the protocol inventory: what each release prints, as data
    &["protocol"],
    // the formats: scenario files, per-dialect lists, the project file
    &[
        "scenario",
        "expectation",
        "catalogue",
        "known",
        "findings",
        "config",
    ],
    // installing targets and fixtures; the one error type, which wraps each seam's below it
    &["install", "fixtures", "error"],
    // everything decided for a trial
    &["plan"],
    // running a plan
    &["runner"],
    // a run folder as stored, and its renderings
    &["store"],
    &["report"],
    &["suite"],
    // engines more than one command runs: the release search, recording expectations
    &["boundary", "recording"],
    &["commands"],
];

type ModPath = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The module path a file defines: `runner/exit.rs` and `runner/exit/mod.rs` are
/// `runner::exit`; the crate root is the empty path.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap();
    let stem = file.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.ends_with("tests.rs")
}

/// Every non-test source file of `krate`, by the module path it defines.
fn files_of(krate: &Crate) -> BTreeMap<ModPath, PathBuf> {
    let root = workspace().join(krate.root);
    let dir = root.parent().unwrap().to_path_buf();
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&dir).unwrap().to_path_buf();
            let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
            let outside = !krate.only.is_empty() && !krate.only.contains(&first.as_str());
            if krate.excluded.contains(&first.as_str()) || outside {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
                let is_other_root = path != root
                    && path.parent() == Some(dir.as_path())
                    && matches!(rel.to_str(), Some("lib.rs" | "main.rs"));
                if !is_other_root {
                    out.insert(module_of(&rel), path);
                }
            }
        }
    }
    out
}

/// Collects the module paths a file names, as absolute paths from the crate root.
struct Names {
    /// The module the visitor stands in (the file's, plus inline `mod x { }` it entered).
    here: ModPath,
    /// Every module of the crate: a path may start with a child module's bare name.
    modules: BTreeSet<ModPath>,
    named: BTreeSet<(ModPath, String)>,
}

fn is_test_item(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl Names {
    /// `segments` resolved against where the visitor stands, if it starts at the crate.
    fn absolute(&self, segments: &[String]) -> Option<ModPath> {
        let mut base = self.here.clone();
        let mut rest = segments;
        match rest.first()?.as_str() {
            "crate" => {
                base.clear();
                rest = &rest[1..];
            }
            "self" => rest = &rest[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            first => {
                let mut child = base.clone();
                child.push(first.to_string());
                if !self.modules.contains(&child) {
                    return None;
                }
            }
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn name(&mut self, segments: &[String], item: &str) {
        if let Some(path) = self.absolute(segments) {
            self.named.insert((path, item.to_string()));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                self.name(&full, &n.ident.to_string());
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                self.name(&full, &r.ident.to_string());
            }
            syn::UseTree::Glob(_) => self.name(prefix, "*"),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_test_item(&u.attrs) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test_item(&m.attrs) || m.content.is_none() {
            return;
        }
        self.here.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.here.pop();
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_item(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test_item(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }

    /// `pub(crate)`, `pub(super)`: a visibility names no item.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(last) = segments.last() {
            self.name(&segments, last);
        }
        syn::visit::visit_path(self, p);
    }
}

/// The file a module path lands in: the deepest prefix of it that is a file of the crate.
fn file_of<'a>(files: &'a BTreeMap<ModPath, PathBuf>, path: &[String]) -> Option<&'a ModPath> {
    (0..=path.len())
        .rev()
        .find_map(|n| files.get_key_value(&path[..n]).map(|(k, _)| k))
}

type Arrows = BTreeMap<ModPath, BTreeMap<ModPath, BTreeSet<String>>>;

fn arrows_of(files: &BTreeMap<ModPath, PathBuf>) -> Arrows {
    let mut arrows = Arrows::new();
    for (module, path) in files {
        let text = std::fs::read_to_string(path).unwrap();
        let ast = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: cannot parse: {e}", path.display()));
        let mut names = Names {
            here: module.clone(),
            modules: files.keys().cloned().collect(),
            named: BTreeSet::new(),
        };
        names.visit_file(&ast);
        for (named, item) in names.named {
            if let Some(target) = file_of(files, &named) {
                if target != module {
                    arrows
                        .entry(module.clone())
                        .or_default()
                        .entry(target.clone())
                        .or_default()
                        .insert(item);
                }
            }
        }
    }
    arrows
}

/// Tarjan's strongly connected components with two or more members.
fn circles(arrows: &Arrows, nodes: &[ModPath]) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        arrows: &'a Arrows,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.arrows.get(v).into_iter().flat_map(|m| m.keys()) {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        arrows,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn describe(files: &BTreeMap<ModPath, PathBuf>, arrows: &Arrows, group: &[ModPath]) -> String {
    let rel = |m: &ModPath| {
        files[m]
            .strip_prefix(workspace())
            .unwrap()
            .display()
            .to_string()
    };
    let mut lines = vec![format!(
        "circle of {} files: {}",
        group.len(),
        group.iter().map(rel).collect::<Vec<_>>().join(", ")
    )];
    for from in group {
        for (to, items) in arrows.get(from).into_iter().flatten() {
            if group.contains(to) {
                let items: Vec<_> = items.iter().map(String::as_str).collect();
                lines.push(format!(
                    "  {} -> {}: {}",
                    rel(from),
                    rel(to),
                    items.join(", ")
                ));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn no_source_file_imports_one_that_imports_it_back() {
    let mut report = Vec::new();
    for krate in CRATES {
        let files = files_of(krate);
        assert!(files.len() > 1, "{}: no files found", krate.name);
        let arrows = arrows_of(&files);
        let nodes: Vec<ModPath> = files.keys().cloned().collect();
        for group in circles(&arrows, &nodes) {
            report.push(format!(
                "{}: {}",
                krate.name,
                describe(&files, &arrows, &group)
            ));
        }
    }
    assert!(
        report.is_empty(),
        "import circles:\n{}",
        report.join("\n\n")
    );
}

#[test]
fn the_reader_sees_arrows_and_closes_circles() {
    // The checker itself: known arrows are seen (`crate::` and a child's bare name), and a
    // back arrow closes a circle.
    let files = files_of(&CRATES[0]);
    let arrows = arrows_of(&files);
    let process: ModPath = vec!["runner".into(), "process".into()];
    let exit: ModPath = vec!["printed".into(), "exit".into()];
    let printed: ModPath = vec!["printed".into()];
    let runner: ModPath = vec!["runner".into()];
    assert!(
        arrows[&process].contains_key(&exit),
        "process.rs takes Exit from exit.rs"
    );
    assert!(
        arrows[&runner].contains_key(&printed),
        "runner/mod.rs re-exports printed::Exit"
    );
    let mut two = Arrows::new();
    let arrow = |two: &mut Arrows, from: &ModPath, to: &ModPath| {
        let items = two.entry(from.clone()).or_default().entry(to.clone());
        items.or_default().insert("Exit".into());
    };
    arrow(&mut two, &process, &exit);
    assert!(circles(&two, &[process.clone(), exit.clone()]).is_empty());
    arrow(&mut two, &exit, &process);
    assert_eq!(
        circles(&two, &[process.clone(), exit.clone()]),
        vec![vec![exit, process]]
    );
}

fn floor_of(room: &str) -> Option<usize> {
    LAYERS.iter().position(|floor| floor.contains(&room))
}

#[test]
fn no_library_file_imports_from_a_higher_floor() {
    let files = files_of(&CRATES[0]);
    let arrows = arrows_of(&files);
    let mut report = Vec::new();
    for module in files.keys().filter(|m| !m.is_empty()) {
        if floor_of(&module[0]).is_none() {
            report.push(format!("room `{}` has no floor in LAYERS", module[0]));
        }
    }
    for (from, targets) in &arrows {
        let (Some(a), false) = (from.first(), from.is_empty()) else {
            continue;
        };
        for (to, items) in targets {
            let Some(b) = to.first() else { continue };
            if let (Some(fa), Some(fb)) = (floor_of(a), floor_of(b)) {
                if fb > fa {
                    let items: Vec<_> = items.iter().map(String::as_str).collect();
                    report.push(format!(
                        "{} (floor {fa}) imports {} from {} (floor {fb})",
                        files[from].strip_prefix(workspace()).unwrap().display(),
                        items.join(", "),
                        files[to].strip_prefix(workspace()).unwrap().display()
                    ));
                }
            }
        }
    }
    report.sort();
    report.dedup();
    assert!(report.is_empty(), "upward imports:\n{}", report.join("\n"));
}

#[test]
fn an_upward_import_is_seen() {
    // The checker itself: the runner's arrow to the planner crosses floors downward, so
    // the same arrow the other way would be reported.
    let arrows = arrows_of(&files_of(&CRATES[0]));
    let runner: ModPath = vec!["runner".into()];
    let plan: ModPath = vec!["plan".into()];
    assert!(
        arrows[&runner].contains_key(&plan),
        "runner/mod.rs plans trials"
    );
    assert!(floor_of("plan") < floor_of("runner"));
    assert_eq!(floor_of("nowhere"), None);
}

/// The command a module belongs to (`commands/record/review.rs` is `record`'s).
fn command_of(module: &[String]) -> Option<&str> {
    match module {
        [room, command, ..] if room == "commands" => Some(command),
        _ => None,
    }
}

/// Each arrow from one command's files to another command's, as `from -> to (items)`.
fn between_commands(arrows: &Arrows) -> Vec<String> {
    let mut found = Vec::new();
    for (from, targets) in arrows {
        for (to, items) in targets {
            if let (Some(a), Some(b)) = (command_of(from), command_of(to)) {
                if a != b {
                    let items: Vec<_> = items.iter().map(String::as_str).collect();
                    found.push(format!(
                        "commands/{} -> commands/{} ({})",
                        from[1..].join("/"),
                        to[1..].join("/"),
                        items.join(", ")
                    ));
                }
            }
        }
    }
    found
}

/// Every command has a floor of its own: what two commands share lives in a room below
/// `commands/` (`boundary`, `recording`), so a change to one command's code cannot
/// change another's behaviour.
#[test]
fn no_command_imports_another() {
    let found = between_commands(&arrows_of(&files_of(&CRATES[0])));
    assert!(
        found.is_empty(),
        "one command imports another's code (move what they share below commands/):\n{}",
        found.join("\n")
    );
}

#[test]
fn an_import_between_commands_is_seen() {
    // The checker itself, on arrows as `arrows_of` makes them: one between two commands
    // is reported, one inside a command or to a room below is not.
    let m = |p: &str| -> ModPath { p.split('/').map(String::from).collect() };
    let mut arrows = Arrows::new();
    let from = arrows.entry(m("commands/record/first")).or_default();
    from.entry(m("commands/compare/trials"))
        .or_default()
        .insert("refusal".into());
    from.entry(m("commands/record"))
        .or_default()
        .insert("x".into());
    from.entry(m("recording/recorded"))
        .or_default()
        .insert("Recorded".into());
    assert_eq!(
        between_commands(&arrows),
        ["commands/record/first -> commands/compare/trials (refusal)"]
    );
    let files = files_of(&CRATES[0]);
    assert!(
        files.contains_key(&m("commands/record")),
        "modules are found as paths"
    );
}

/// A visitor's `visit_item_mod` and `visit_item_fn` that pass over test code.
macro_rules! outside_tests {
    ($ast:lifetime) => {
        fn visit_item_mod(&mut self, m: &$ast syn::ItemMod) {
            if !is_test_item(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }

        fn visit_item_fn(&mut self, f: &$ast syn::ItemFn) {
            if !is_test_item(&f.attrs) {
                syn::visit::visit_item_fn(self, f);
            }
        }
    };
}

/// The places in library code (test code left out) that print or end the process.
struct Speaks {
    found: Vec<String>,
    file: PathBuf,
}

impl<'ast> Visit<'ast> for Speaks {
    outside_tests!('ast);

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = m.path.segments.last().map(|s| s.ident.to_string());
        if let Some(name) = name.as_deref().filter(|n| PRINTS.contains(n)) {
            let line = m.path.segments[0].ident.span().start().line;
            self.found
                .push(format!("{}:{line}: {name}!", self.file.display()));
        }
        // A macro's body is tokens, not code syn reads (`tokio::select! { .. }`).
        self.tokens(m.tokens.clone());
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let names: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if names.ends_with(&["process".into(), "exit".into()]) {
            let line = p.segments[0].ident.span().start().line;
            self.found
                .push(format!("{}:{line}: process::exit", self.file.display()));
        }
        syn::visit::visit_path(self, p);
    }
}

const PRINTS: &[&str] = &["print", "println", "eprint", "eprintln", "dbg"];

impl Speaks {
    /// `println!(..)` and `process::exit` among the tokens of a macro's body.
    fn tokens(&mut self, stream: proc_macro2::TokenStream) {
        use proc_macro2::TokenTree;
        let trees: Vec<TokenTree> = stream.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            let next = |n: usize| trees.get(i + n).map(ToString::to_string);
            match t {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) => {
                    let name = id.to_string();
                    let line = id.span().start().line;
                    if PRINTS.contains(&name.as_str()) && next(1).as_deref() == Some("!") {
                        self.found
                            .push(format!("{}:{line}: {name}!", self.file.display()));
                    }
                    if name == "process"
                        && next(1).as_deref() == Some(":")
                        && next(3).as_deref() == Some("exit")
                    {
                        self.found
                            .push(format!("{}:{line}: process::exit", self.file.display()));
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn the_library_neither_prints_nor_ends_the_process() {
    // What the library says goes through `log` (the binary's `cli/` prints it) and how a
    // command ends is the binary's exit-code policy: a library call must not take either.
    let mut found = Vec::new();
    for path in files_of(&CRATES[0]).values().filter(|p| !is_test_file(p)) {
        let text = std::fs::read_to_string(path).unwrap();
        let file = syn::parse_file(&text).unwrap();
        let rel = path.strip_prefix(workspace()).unwrap().to_path_buf();
        let mut speaks = Speaks {
            found: Vec::new(),
            file: rel,
        };
        speaks.visit_file(&file);
        found.extend(speaks.found);
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The names of a run folder's stored files: only `store/` builds paths from them.
const RUN_FILES: &[&str] = &["results.json", "results.jsonl", "outputs"];

/// Whether a string literal builds a path to a run folder's stored files (a message that
/// mentions one mid-sentence does not).
fn names_a_run_file(lit: &str) -> bool {
    RUN_FILES
        .iter()
        .any(|f| lit == *f || lit.ends_with(&format!("/{f}")) || lit.starts_with(&format!("{f}/")))
}

/// The string literals in code (test code and doc comments left out) that name a run
/// folder's stored files.
struct RunFilePaths {
    found: Vec<String>,
    file: PathBuf,
}

impl RunFilePaths {
    fn literal(&mut self, text: &str, line: usize) {
        if names_a_run_file(text) {
            (self.found).push(format!("{}:{line}: {text:?}", self.file.display()));
        }
    }

    fn tokens(&mut self, stream: proc_macro2::TokenStream) {
        for t in stream {
            match t {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Literal(l) => {
                    if let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&l.to_string()) {
                        self.literal(&s.value(), l.span().start().line);
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for RunFilePaths {
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    outside_tests!('ast);

    fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
        self.literal(&s.value(), s.span().start().line);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
    }
}

fn run_file_paths(path: &Path, text: &str) -> Vec<String> {
    let file = syn::parse_file(text).unwrap();
    let mut v = RunFilePaths {
        found: Vec::new(),
        file: path.to_path_buf(),
    };
    v.visit_file(&file);
    v.found
}

#[test]
fn only_the_store_names_a_run_folders_files() {
    // `store/` writes and reads a run folder (`RunWriter`, `RunReader`): a command that
    // joins `outputs/` or `results.json` itself bypasses the format's version checks and
    // the index a cut-short run is read from.
    let store = workspace().join("harness/src/store");
    let mut found = Vec::new();
    for krate in &CRATES[..2] {
        for path in files_of(krate).values().filter(|p| !p.starts_with(&store)) {
            let text = std::fs::read_to_string(path).unwrap();
            let rel = path.strip_prefix(workspace()).unwrap();
            found.extend(run_file_paths(rel, &text));
        }
    }
    assert!(
        found.is_empty(),
        "build these paths in store/:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_run_file_path_outside_the_store_is_seen() {
    let src = r#"
        /// Reads results.json and outputs/ (a doc comment is not a path).
        fn read(dir: &Path) {
            let a = dir.join("results.json");
            let b = format!("{}/{}", dir.display(), "outputs/x.json");
            let c = Path::new("run/results.jsonl");
            let d = "a run folder has no outputs/ folder";
        }
        #[cfg(test)]
        mod tests { fn t() { let _ = "results.json"; } }
    "#;
    let found = run_file_paths(Path::new("x.rs"), src);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].starts_with("x.rs:4:"), "{found:?}");
}

/// The paths in code (test code left out) whose last name starts with `load`: a loader of
/// project data (a scenario, rules, a known list, an inventory, versions, a profile).
struct Loads {
    found: Vec<String>,
    file: PathBuf,
}

impl<'ast> Visit<'ast> for Loads {
    outside_tests!('ast);

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if let Some(last) = p.segments.last() {
            if last.ident.to_string().starts_with("load") {
                let line = last.ident.span().start().line;
                let path: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
                (self.found).push(format!(
                    "{}:{line}: {}",
                    self.file.display(),
                    path.join("::")
                ));
            }
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if m.method.to_string().starts_with("load") {
            let line = m.method.span().start().line;
            (self.found).push(format!("{}:{line}: .{}()", self.file.display(), m.method));
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

fn loads(path: &Path, text: &str) -> Vec<String> {
    let file = syn::parse_file(text).unwrap();
    let mut v = Loads {
        found: Vec::new(),
        file: path.to_path_buf(),
    };
    v.visit_file(&file);
    v.found
}

#[test]
fn the_runner_loads_nothing_the_plan_did_not_give_it() {
    // Everything a trial needs from the project (its expectation, rules, known entries,
    // client profile, the protocol inventories) is read when it is planned, so `plan`
    // shows what the runner will do and a file that does not load fails before launch.
    let runner = workspace().join("harness/src/runner");
    let mut found = Vec::new();
    for path in files_of(&CRATES[0])
        .values()
        .filter(|p| p.starts_with(&runner))
    {
        let text = std::fs::read_to_string(path).unwrap();
        found.extend(loads(path.strip_prefix(workspace()).unwrap(), &text));
    }
    assert!(
        found.is_empty(),
        "read these when planning:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_load_in_the_runner_is_seen() {
    let src = r#"
        fn run(root: &Path) {
            let inv = crate::protocol::inventory::load(root, "claude-code");
            let rules = Rules::load_at(root);
            let known = project.load("known-divergences.yaml");
        }
        #[cfg(test)]
        mod tests { fn t() { let _ = Inventory::load(x); } }
    "#;
    let found = loads(Path::new("x.rs"), src);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found[0].ends_with("crate::protocol::inventory::load"),
        "{found:?}"
    );
}
