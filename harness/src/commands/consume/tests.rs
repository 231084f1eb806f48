//! The consumers here are one-line shell programs, so what they refuse is plain.

use super::*;
use crate::pattern::Pattern;
use std::time::Duration;

fn consumer(command: &str) -> Consumer {
    Consumer {
        name: "t".into(),
        command: command.into(),
        dir: std::env::temp_dir(),
        timeout: Duration::from_secs(20),
        each: None,
        serve: None,
    }
}

fn input(lines: &[&str]) -> Input {
    Input {
        scenario: "basics/x".into(),
        target: "claude-code@2.1.330".into(),
        release: "2.1.330".into(),
        run: None,
        lines: lines.iter().map(|l| l.to_string()).collect(),
        not_fed: None,
        exit_code: Some(0),
        replay: Err(host::NotReplayable::NoFile),
        file: None,
    }
}

const PRINTED: [&str; 3] = [
    r#"{"type":"system","subtype":"init","session_id":"s"}"#,
    r#"{"type":"assistant","message":{"content":[]},"session_id":"s"}"#,
    r#"{"type":"result","subtype":"success","session_id":"s"}"#,
];

/// Exits 1 on the first line whose `type` is not one it knows.
const STRICT: &str = r#"while IFS= read -r l; do case "$l" in '{"type":"system"'*|'{"type":"assistant"'*|'{"type":"result"'*) ;; *) echo "unknown: $l" >&2; exit 1;; esac; done"#;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_strict_consumer_passes_the_real_output_and_fails_a_new_frame_type_at_its_line() {
    let c = consumer(STRICT);
    let i = input(&PRINTED);
    let rt = rt();
    let real = rt.block_on(feed_one(&c, &i, None)).unwrap();
    assert_eq!(real, Outcome::Passed { understood: None });
    let Outcome::Failed(f) = rt
        .block_on(feed_one(&c, &i, Some(Probe::NewFrameType)))
        .unwrap()
    else {
        panic!("the new frame type should fail it")
    };
    assert_eq!(f.failure, Failure::Exit { code: 1 });
    assert_eq!(
        f.at_line,
        Some(2),
        "the probe's frame is line 2, after init"
    );
    assert!(f.line.unwrap().contains("probe_new_frame"));
    assert!(
        f.stderr.contains("unknown: {\"type\":\"probe_new_frame\""),
        "{}",
        f.stderr
    );
}

#[test]
fn a_failure_without_a_hint_is_located_by_the_shortest_prefix_it_fails_on() {
    // Fails on the result line (line 3) of the real output.
    let c = consumer(r#"while IFS= read -r l; do case "$l" in *'"result"'*) exit 3;; esac; done"#);
    let Outcome::Failed(f) = rt().block_on(feed_one(&c, &input(&PRINTED), None)).unwrap() else {
        panic!("it exits 3 on the result")
    };
    assert_eq!((f.failure, f.at_line), (Failure::Exit { code: 3 }, Some(3)));
    // A consumer that fails whatever it is given says so.
    let Outcome::Failed(f) = rt()
        .block_on(feed_one(
            &consumer("cat >/dev/null; exit 2"),
            &input(&PRINTED),
            None,
        ))
        .unwrap()
    else {
        panic!("exit 2")
    };
    assert_eq!(f.at_line, Some(0));
}

#[test]
fn a_crash_a_hang_and_a_command_that_cannot_run_are_told_apart() {
    let rt = rt();
    let i = input(&PRINTED);
    let Outcome::Failed(f) = rt
        .block_on(feed_one(
            &consumer("cat >/dev/null; kill -SEGV $$"),
            &i,
            None,
        ))
        .unwrap()
    else {
        panic!("a signal is a crash")
    };
    assert_eq!(
        f.failure,
        Failure::Signal {
            signal: libc::SIGSEGV
        }
    );
    let hang = Consumer {
        timeout: Duration::from_millis(300),
        ..consumer("cat >/dev/null; sleep 30")
    };
    let Outcome::Failed(f) = rt.block_on(feed_one(&hang, &i, None)).unwrap() else {
        panic!("a hang is a timeout")
    };
    assert!(matches!(f.failure, Failure::Timeout { .. }));
    assert_eq!(f.at_line, Some(3), "a timeout names the last line written");
    let err = rt
        .block_on(feed_one(&consumer("no-such-consumer-xyz"), &i, None))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("could not be run") && err.contains("no-such-consumer-xyz"),
        "{err}"
    );
}

#[test]
fn each_line_a_consumer_prints_is_held_to_its_pattern() {
    let mut c = consumer(
        r#"while IFS= read -r l; do echo '{"understood":true}'; done; echo '{"understood":false}'"#,
    );
    c.each = Some(Pattern::compile(&serde_json::json!({"understood": true})).unwrap());
    let Outcome::Failed(f) = rt().block_on(feed_one(&c, &input(&PRINTED), None)).unwrap() else {
        panic!("its last line does not match")
    };
    assert!(
        matches!(&f.failure, Failure::Output { line: 4, why } if why.contains("understood")),
        "{:?}",
        f.failure
    );
    c.command = r#"while IFS= read -r l; do echo '{"understood":true}'; done"#.into();
    assert_eq!(
        rt().block_on(feed_one(&c, &input(&PRINTED), None)).unwrap(),
        Outcome::Passed {
            understood: Some(3)
        }
    );
}

#[test]
fn a_tolerant_consumer_passes_every_probe_and_a_one_read_parser_fails_the_split_write() {
    let tolerant = consumer("cat >/dev/null");
    let probes = Probe::ALL.to_vec();
    let fed = rt()
        .block_on(consume(
            &[tolerant],
            &[input(&PRINTED)],
            &probes,
            None,
            2,
            false,
        ))
        .unwrap();
    assert_eq!(fed.len(), 1 + Probe::ALL.len());
    for f in &fed {
        assert!(
            matches!(f.outcome, Outcome::Passed { .. } | Outcome::NotApplicable),
            "{:?}: {:?}",
            f.probe,
            f.outcome
        );
    }
    assert_eq!(
        fed.iter()
            .find(|f| f.probe == Some(Probe::NewStreamEvent))
            .unwrap()
            .outcome,
        Outcome::NotApplicable,
        "no stream_event to add one after"
    );
    // Reads stdin in raw chunks and wants each chunk to end a line.
    let chunky = consumer(
        r#"python3 -c "
import os,sys
while True:
    b=os.read(0,1<<16)
    if not b: break
    if not b.endswith(b'\n'): sys.exit(4)
""#,
    );
    let i = input(&PRINTED);
    let rt = rt();
    assert_eq!(
        rt.block_on(feed_one(&chunky, &i, None)).unwrap(),
        Outcome::Passed { understood: None }
    );
    let Outcome::Failed(f) = rt
        .block_on(feed_one(&chunky, &i, Some(Probe::SplitWrite)))
        .unwrap()
    else {
        panic!("a frame in two reads should fail a one-read parser")
    };
    assert_eq!(f.failure, Failure::Exit { code: 4 });
}

#[test]
fn a_trial_whose_stdout_is_not_stream_json_is_not_fed_and_says_why() {
    let mut saved_lines = input(&["hello", PRINTED[2]]);
    saved_lines.not_fed = Some("x".into());
    let out = rt()
        .block_on(feed_one(&consumer("exit 1"), &saved_lines, None))
        .unwrap();
    assert_eq!(out, Outcome::NotFed { why: "x".into() });
}

/// Answers each framed feed: a fail when a line holds `probe`, else a pass of 99 frames.
const WORKER: &str = r#"while IFS= read -r h; do n=${h#*:}; n=${n%\}}; bad=0; i=0; while [ $i -lt $n ]; do IFS= read -r l; case "$l" in *probe*) bad=1;; esac; i=$((i+1)); done; if [ $bad = 1 ]; then echo '{"ok":false,"at_line":1}'; else echo '{"ok":true,"understood":99}'; fi; done"#;

fn served(worker: &str) -> Consumer {
    let each = Pattern::compile(&serde_json::json!({"type": "$string"})).unwrap();
    Consumer {
        serve: Some(Arc::new(worker::Serve::new(
            worker::Protocol::Feeds,
            worker.into(),
            std::env::temp_dir(),
        ))),
        each: Some(each),
        ..consumer(STRICT)
    }
}

#[test]
fn a_worker_passes_feeds_and_a_feed_it_does_not_pass_is_judged_afresh_by_the_command() {
    let rt = rt();
    let (c, i) = (served(WORKER), input(&PRINTED));
    for _ in 0..2 {
        // The same worker takes the second feed: its own count comes back each time.
        assert_eq!(
            rt.block_on(feed_one(&c, &i, None)).unwrap(),
            Outcome::Passed {
                understood: Some(99)
            }
        );
    }
    let Outcome::Failed(f) = rt
        .block_on(feed_one(&c, &i, Some(Probe::NewFrameType)))
        .unwrap()
    else {
        panic!("the worker failed it, and so does the command")
    };
    assert_eq!(f.failure, Failure::Exit { code: 1 });
    assert_eq!(f.at_line, Some(2), "located by the command: {f:?}");
    assert!(f.stderr.contains("unknown"), "the command's stderr: {f:?}");
    // A worker that dies: every feed goes to the command.
    assert_eq!(
        rt.block_on(feed_one(&served("exit 3"), &i, None)).unwrap(),
        Outcome::Passed {
            understood: Some(0)
        }
    );
}

/// Runs `consumer` on `input` as printed; a feed still running after a bound far past the
/// consumer's timeout is a hang of the harness, not an outcome.
fn fed_within(consumer: &Consumer, input: &Input) -> Outcome {
    let bound = consumer.timeout + Duration::from_secs(20);
    rt().block_on(async { tokio::time::timeout(bound, feed_one(consumer, input, None)).await })
        .unwrap_or_else(|_| panic!("`{}` hung the feed", consumer.command))
        .unwrap()
}

#[test]
fn a_consumer_that_leaves_a_background_process_is_a_finding_and_the_process_is_killed() {
    use crate::process_group::testing::left_running;
    // Its sleep holds stdout and stderr open; the other's holds nothing but stays.
    for (marker, command) in [
        ("sleep 300.2468", "cat >/dev/null; sleep 300.2468 &"),
        (
            "sleep 300.1357",
            "cat >/dev/null; sleep 300.1357 >/dev/null 2>&1 &",
        ),
    ] {
        let c = Consumer {
            timeout: Duration::from_secs(1),
            ..consumer(command)
        };
        let Outcome::Failed(f) = fed_within(&c, &input(&PRINTED)) else {
            panic!("`{command}` exits 0 but leaves its sleep running")
        };
        assert_eq!(f.failure, Failure::LeftRunning { seconds: 1 }, "{command}");
        assert!(f
            .failure
            .to_string()
            .contains("left a background process running"));
        assert_eq!(left_running(marker), Vec::<String>::new(), "{command}");
    }
    // One that fails is judged by its exit, and its sleep killed at once.
    let c = Consumer {
        timeout: Duration::from_secs(600),
        ..consumer("cat >/dev/null; sleep 300.3579 & exit 2")
    };
    let Outcome::Failed(f) = fed_within(&c, &input(&PRINTED)) else {
        panic!("it exits 2")
    };
    assert_eq!(f.failure, Failure::Exit { code: 2 });
    assert_eq!(left_running("sleep 300.3579"), Vec::<String>::new());
    // A child that ends by itself before the timeout is the consumer's business.
    let c = consumer("cat >/dev/null; (sleep 0.1; echo done >&2) &");
    assert_eq!(
        fed_within(&c, &input(&PRINTED)),
        Outcome::Passed { understood: None }
    );
}

#[test]
fn a_consumer_that_never_reads_its_stdin_ends_at_its_timeout_or_its_exit() {
    use crate::process_group::testing::left_running;
    // Far more than a pipe holds: the writer blocks until the consumer is killed.
    let pad = "x".repeat(16 * 1024);
    let big: Vec<String> = (0..16)
        .map(|i| format!(r#"{{"type":"assistant","i":{i},"pad":"{pad}"}}"#))
        .collect();
    let big = input(&big.iter().map(String::as_str).collect::<Vec<_>>());
    let hang = Consumer {
        timeout: Duration::from_millis(300),
        ..consumer("exec sleep 301.9753")
    };
    let Outcome::Failed(f) = fed_within(&hang, &big) else {
        panic!("it never exits")
    };
    assert!(matches!(f.failure, Failure::Timeout { .. }), "{f:?}");
    assert_eq!(left_running("sleep 301.9753"), Vec::<String>::new());
    // One that exits at once without reading: the rest of the feed is not written.
    assert_eq!(
        fed_within(&consumer("exit 0"), &big),
        Outcome::Passed { understood: None }
    );
}

#[test]
fn a_consumer_that_closes_its_stdout_early_is_judged_by_its_exit() {
    let i = input(&PRINTED);
    assert_eq!(
        fed_within(&consumer("exec >&-; cat >/dev/null"), &i),
        Outcome::Passed { understood: None }
    );
    let Outcome::Failed(f) = fed_within(&consumer("exec >&-; cat >/dev/null; exit 5"), &i) else {
        panic!("it exits 5")
    };
    assert_eq!(f.failure, Failure::Exit { code: 5 });
    let mut printing = consumer(r#"echo '{"type":"x"}'; exec >&-; cat >/dev/null"#);
    printing.each = Some(Pattern::compile(&serde_json::json!({"type": "$string"})).unwrap());
    assert_eq!(
        fed_within(&printing, &i),
        Outcome::Passed {
            understood: Some(1)
        }
    );
}

#[test]
fn fail_fast_stops_at_the_first_failed_feed() {
    let strict = consumer(STRICT);
    let inputs = [input(&PRINTED), input(&PRINTED), input(&PRINTED)];
    let probes = [Probe::NewFrameType];
    let all = rt()
        .block_on(consume(
            std::slice::from_ref(&strict),
            &inputs,
            &probes,
            None,
            1,
            false,
        ))
        .unwrap();
    let failed = |fed: &[Fed]| {
        (fed.iter())
            .filter(|f| matches!(f.outcome, Outcome::Failed(_)))
            .count()
    };
    assert_eq!((all.len(), failed(&all)), (6, 3));
    let fast = rt()
        .block_on(consume(&[strict], &inputs, &probes, None, 1, true))
        .unwrap();
    assert_eq!(failed(&fast), 1, "{fast:?}");
    assert!(fast.len() < 6, "{fast:?}");
}

#[test]
fn a_finding_carries_the_command_that_reproduces_it_and_what_the_probe_changed() {
    let grep_bot = consumer(r#"grep -q '^{"type":"result"'"#);
    let mut i = input(&PRINTED);
    i.file = Some(std::path::PathBuf::from(
        "runs/x/outputs/basics/x.claude-code.json",
    ));
    let rt = rt();
    assert_eq!(
        rt.block_on(feed_one(&grep_bot, &i, None)).unwrap(),
        Outcome::Passed { understood: None }
    );
    let Outcome::Failed(f) = rt
        .block_on(feed_one(&grep_bot, &i, Some(Probe::KeysReordered)))
        .unwrap()
    else {
        panic!("a reordered result line fails the grep bot")
    };
    assert_eq!(f.at_line, Some(0), "nothing it is given makes it pass");
    let missing = f.missing.as_deref().unwrap();
    assert!(
        missing.contains("probe `keys-reordered` changed, line") && missing.contains("as printed"),
        "{missing}"
    );
    assert_eq!(
        f.reproduce.as_deref(),
        Some(
            r#"streamcheck replay-cli --trial runs/x/outputs/basics/x.claude-code.json --probe keys-reordered -- -p hi | grep -q '^{"type":"result"'"#
        )
    );
}

#[test]
fn the_stderr_excerpt_is_the_error_not_the_last_line() {
    let node = "file:///x/naive.mjs:3\n  JSON.parse(chunk)\nSyntaxError: Unexpected end of JSON input\n    at JSON.parse (<anonymous>)\n    at Socket.<anonymous> (naive.mjs:3:8)\n    at more\n\nNode.js v20.20.2\n";
    assert_eq!(
        render::error_excerpt(node).as_deref(),
        Some("SyntaxError: Unexpected end of JSON input / at JSON.parse (<anonymous>) / at Socket.<anonymous> (naive.mjs:3:8)")
    );
    assert_eq!(
        render::error_excerpt("just this\nand that\n").as_deref(),
        Some("and that")
    );
    assert_eq!(render::error_excerpt("\n"), None);
}

#[test]
fn a_probe_cell_does_not_count_a_trial_that_fails_as_printed() {
    let fed = |probe: Option<Probe>, trial: &str, failed: bool| Fed {
        consumer: "c".into(),
        scenario: trial.into(),
        trial: trial.into(),
        target: "claude-code".into(),
        release: "2.1.330".into(),
        probe,
        outcome: match failed {
            false => Outcome::Passed { understood: None },
            true => Outcome::Failed(Finding {
                failure: Failure::Exit { code: 1 },
                at_line: Some(1),
                line: None,
                stderr: String::new(),
                missing: None,
                reproduce: None,
            }),
        },
    };
    let c = Consumed {
        command: String::new(),
        duration_ms: 0,
        consumers: vec![],
        probes: vec![],
        fed: vec![
            fed(None, "a", true),
            fed(Some(Probe::KeysReordered), "a", true),
            fed(None, "b", false),
            fed(Some(Probe::KeysReordered), "b", false),
        ],
    };
    let cells = render::matrix(&c);
    let probed = cells[&(
        "c".into(),
        render::Version::of("2.1.330"),
        Some(Probe::KeysReordered),
    )];
    assert_eq!(
        (probed.passed, probed.failed),
        (1, 0),
        "only b counts under the probe"
    );
    let printed = cells[&("c".into(), render::Version::of("2.1.330"), None)];
    assert_eq!((printed.passed, printed.failed), (1, 1));
}
