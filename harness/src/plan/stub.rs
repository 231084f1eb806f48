//! The stub script a trial's run serves, before its sandbox exists: the scenario's script
//! with its tools named as the target names them, and the built-in rule that answers the
//! dialect's own side request (Claude Code's session title, Qwen Code's memory
//! extraction). The sandbox fills in `$WORKSPACE` and `$HOME`.

use crate::dialect::Dialect;
use crate::scenario::Scenario;
use crate::toolmap::ToolMap;
use stub_api::Script;

/// The script of `scenario`'s stub on a target of `dialect` naming tools as `tools` says,
/// its sandbox paths still `$WORKSPACE` and `$HOME`.
pub fn script(scenario: &Scenario, dialect: Dialect, tools: &ToolMap) -> Script {
    let mut script = tools.translate(&scenario.file.stub);
    let side = dialect.conventions().side_request_rule();
    if let Some(rule) = side.filter(|r| !script.builtin_rules.contains(r)) {
        script.builtin_rules.push(rule);
    }
    script
}
