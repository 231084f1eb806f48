//! [`CasesError`]: why a file's `cases:` matrix cannot be expanded, naming the case or its
//! index; [`CaseValueError`]: why one parameter's value cannot be used. Each message is the
//! sentence a user sees after the scenario file's name.

use serde_json::Value as Json;

/// What is wrong with a file's `cases:`.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// The file is not a mapping.
    #[error("a scenario file is a mapping")]
    NotAMapping,
    /// `cases:` of neither form.
    #[error("cases: {0}: write a list of parameter sets (`- {{name: ..., param: value}}`) or `{{product: {{param: [values]}}}}`")]
    Form(#[source] serde_yaml::Error),
    /// The rest of the file uses no parameter.
    #[error("cases: the file uses no `{{{{parameter}}}}`: every case would be the same scenario")]
    NoPlaceholder,
    /// A `{{p}}` the case gives no value for.
    #[error(
        "case `{case}`: `{{{{{parameter}}}}}` is used in the file but the case gives no `{parameter}` (it gives {})",
        .given.join(", ")
    )]
    MissingParameter {
        case: String,
        parameter: String,
        given: Vec<String>,
    },
    /// A parameter no `{{p}}` uses.
    #[error("case `{case}`: parameter `{parameter}` is used nowhere in the file (no `{{{{{parameter}}}}}`)")]
    UnusedParameter { case: String, parameter: String },
    /// `cases: []`.
    #[error("cases: an empty list: give at least one case")]
    Empty,
    /// A `name` that is not a string.
    #[error("cases[{index}]: `name` takes a string, found {found}")]
    NameNotString { index: usize, found: Json },
    /// A case's `expect` that is not a map of blocks.
    #[error("cases[{index}]: `expect` takes the blocks this case adds to the file's `expect:` (`{{\"claude-code@<2.1.100\": {{...}}}}`), found {found}")]
    ExpectNotBlocks { index: usize, found: Json },
    /// A case with a name and nothing else.
    #[error("cases[{index}]{}: the case names no parameter", named(.name))]
    NoParameter { index: usize, name: Option<String> },
    /// A value in a list of parameter sets that cannot be used.
    #[error("cases[{index}].{parameter}: {source}")]
    Value {
        index: usize,
        parameter: String,
        #[source]
        source: CaseValueError,
    },
    /// A value in a `product` that cannot be used.
    #[error("cases[{index}].product.{parameter}: {source}")]
    ProductValue {
        index: usize,
        parameter: String,
        #[source]
        source: CaseValueError,
    },
    /// `product: {}`.
    #[error("cases[{index}].product names no parameter")]
    EmptyProduct { index: usize },
    /// A `product` key that is not a string.
    #[error("cases[{index}].product: a parameter name is a string")]
    ProductName { index: usize },
    /// A `product` parameter with neither a list nor a map of values.
    #[error("cases[{index}].product.{parameter}: give a list of values or a map of named values")]
    ProductForm { index: usize, parameter: String },
    /// A `product` parameter with no value.
    #[error("cases[{index}].product.{parameter}: no values")]
    NoValues { index: usize, parameter: String },
    /// A name made of the values that is too long to read (`start` is how it begins).
    #[error("cases[{index}]: the case's name would be `{start}…`: give it a short `name` (or name the values: a map instead of a list)")]
    NameTooLong { index: usize, start: String },
    /// A name of spaces only.
    #[error("a case has an empty name")]
    EmptyName,
    /// A name with a character a scenario id or a report file name cannot hold.
    #[error("case `{name}`: a case name cannot hold {found:?} (it is part of the scenario id and of report file names)")]
    NameHolds { name: String, found: char },
    /// Two cases of one name.
    #[error("case `{name}` is named twice: case names make the scenario ids and must be unique")]
    NamedTwice { name: String },
    /// A case's `expect` blocks in a file without `expect:`.
    #[error("case `{case}`: gives `expect` blocks, but the file has no `expect:` mapping to add them to")]
    NoExpect { case: String },
    /// A case's own bound on a block where the file gives that bound.
    #[error("case `{case}`: `expect.{key}.{bound}` is in the file for every case already")]
    BoundTwice {
        case: String,
        key: String,
        bound: String,
    },
    /// A case's block the file already has.
    #[error("case `{case}`: `expect.{key}` is in the file for every case already: give the case a version block of its own instead")]
    BlockTwice { case: String, key: String },
}

/// Why a parameter's value cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaseValueError {
    /// `$repeat` of another shape.
    #[error("write `{{$repeat: \"text\", times: N}}`")]
    Repeat,
    /// A value YAML holds and JSON does not.
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// A key of a map of named values that is not a string.
    #[error("a value name is a string")]
    NameNotString,
}

/// ` (`name`)` after a case's index, when it has a name.
fn named(name: &Option<String>) -> String {
    name.as_ref()
        .map(|n| format!(" (`{n}`)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let (case, p) = (|| "c".to_string(), || "p".to_string());
        let found = || Json::from(3);
        let cases: Vec<(CasesError, &str)> = vec![
            (CasesError::NotAMapping, "a scenario file is a mapping"),
            (
                CasesError::NoPlaceholder,
                "cases: the file uses no `{{parameter}}`: every case would be the same scenario",
            ),
            (
                CasesError::MissingParameter { case: case(), parameter: p(), given: vec!["a".into(), "b".into()] },
                "case `c`: `{{p}}` is used in the file but the case gives no `p` (it gives a, b)",
            ),
            (
                CasesError::UnusedParameter { case: case(), parameter: p() },
                "case `c`: parameter `p` is used nowhere in the file (no `{{p}}`)",
            ),
            (CasesError::Empty, "cases: an empty list: give at least one case"),
            (
                CasesError::NameNotString { index: 1, found: found() },
                "cases[1]: `name` takes a string, found 3",
            ),
            (
                CasesError::ExpectNotBlocks { index: 1, found: found() },
                "cases[1]: `expect` takes the blocks this case adds to the file's `expect:` (`{\"claude-code@<2.1.100\": {...}}`), found 3",
            ),
            (
                CasesError::NoParameter { index: 1, name: Some("empty".into()) },
                "cases[1] (`empty`): the case names no parameter",
            ),
            (
                CasesError::NoParameter { index: 1, name: None },
                "cases[1]: the case names no parameter",
            ),
            (
                CasesError::Value { index: 0, parameter: p(), source: CaseValueError::Repeat },
                "cases[0].p: write `{$repeat: \"text\", times: N}`",
            ),
            (
                CasesError::ProductValue { index: 0, parameter: p(), source: CaseValueError::NameNotString },
                "cases[0].product.p: a value name is a string",
            ),
            (CasesError::EmptyProduct { index: 0 }, "cases[0].product names no parameter"),
            (CasesError::ProductName { index: 0 }, "cases[0].product: a parameter name is a string"),
            (
                CasesError::ProductForm { index: 0, parameter: p() },
                "cases[0].product.p: give a list of values or a map of named values",
            ),
            (CasesError::NoValues { index: 0, parameter: p() }, "cases[0].product.p: no values"),
            (
                CasesError::NameTooLong { index: 2, start: "a=1".into() },
                "cases[2]: the case's name would be `a=1…`: give it a short `name` (or name the values: a map instead of a list)",
            ),
            (CasesError::EmptyName, "a case has an empty name"),
            (
                CasesError::NameHolds { name: "a/b".into(), found: '/' },
                "case `a/b`: a case name cannot hold '/' (it is part of the scenario id and of report file names)",
            ),
            (
                CasesError::NamedTwice { name: "a".into() },
                "case `a` is named twice: case names make the scenario ids and must be unique",
            ),
            (
                CasesError::NoExpect { case: case() },
                "case `c`: gives `expect` blocks, but the file has no `expect:` mapping to add them to",
            ),
            (
                CasesError::BoundTwice { case: case(), key: "claude-code".into(), bound: "min_version".into() },
                "case `c`: `expect.claude-code.min_version` is in the file for every case already",
            ),
            (
                CasesError::BlockTwice { case: case(), key: "claude-code".into() },
                "case `c`: `expect.claude-code` is in the file for every case already: give the case a version block of its own instead",
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
        let form = || serde_yaml::from_str::<u8>("x").unwrap_err();
        assert_eq!(
            CasesError::Form(form()).to_string(),
            format!("cases: {}: write a list of parameter sets (`- {{name: ..., param: value}}`) or `{{product: {{param: [values]}}}}`", form())
        );
    }
}
