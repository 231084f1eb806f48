//! What a report says about the command that made it: when, and the command line.

/// A folder name for now: the report timestamp without colons.
pub fn stamp() -> String {
    streamcheck::report::timestamp(std::time::SystemTime::now()).replace(':', "")
}

/// The command line that made a report, as a person would type it again.
pub fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                "streamcheck".into()
            } else {
                streamcheck::plan::launch::shell_quote(&a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
