//! The written form of `cases:` (see `scenario::cases`, which expands it), apart so that
//! the scenario file's type can name it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// `cases:` as written: a list of items, each a named parameter set or a `product`; or a
/// single `{product: ...}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Cases {
    // A list first: a struct would take a list as its fields in order.
    List(Vec<CaseItem>),
    Product(Product),
}

/// One item of `cases:`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CaseItem {
    /// `{product: {a: [1, 2], b: {short: "...", long: "..."}}}`: one case per combination,
    /// named `a=1,b=short` (a list's values by their JSON text, a map's by their keys).
    Product(Product),
    /// `{name: "request_id=null", field: request_id, value: null}`: one case; `name` is
    /// optional (default `field=request_id,value=null`); `expect` (optional) holds blocks
    /// this case adds to the file's `expect:`, e.g. a version block
    /// (`{"claude-code@<2.1.100": {frames_patch: ...}}`), or this case's own bound on the
    /// file's block (`{claude-code: {min_version: 2.1.302}}`); every other key is a parameter.
    /// A value `{$repeat: "ab", times: 1000}` is that string repeated.
    Set(BTreeMap<String, Json>),
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Product {
    /// Parameter -> its values: a list, or a map of value names to values.
    #[schemars(with = "BTreeMap<String, ParamValues>")]
    pub product: serde_yaml::Mapping,
}

/// The values of one parameter of a product.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum ParamValues {
    List(Vec<Json>),
    Named(BTreeMap<String, Json>),
}

/// True when a file's text may declare `cases:` (a top-level key), without parsing it.
pub fn may_have_cases(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("cases:"))
}
