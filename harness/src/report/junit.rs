//! `junit.xml`: one test suite per target, plus one for scenario files that failed to load.

use crate::runner::Status;
use crate::store::results::Results;
use std::time::Duration;

pub(super) fn junit_xml(r: &Results) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("streamcheck");
    for t in &r.targets {
        let mut suite = TestSuite::new(t.name.clone());
        for x in r.trials.iter().filter(|x| x.key.target == t.name) {
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
                Status::Unavailable(why) => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                    st.set_message(format!("target unavailable: {why}"));
                    st
                }
                Status::Skipped(why) | Status::Known(why) => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(why.clone());
                    st
                }
            };
            let mut case = TestCase::new(x.key.scenario.clone(), status);
            case.set_classname(format!(
                "{}.{}",
                t.name,
                x.key.scenario.split('/').next().unwrap_or("")
            ));
            case.set_time(Duration::from_millis(x.duration_ms));
            if !x.protocol.is_empty() {
                let lines: Vec<String> = x.protocol.iter().map(|f| f.to_string()).collect();
                case.set_system_out(lines.join("\n"));
            }
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
