//! CPU time and memory from the kernel: this process and its reaped children
//! (getrusage), the whole machine (`/proc/stat`), and the facts a result is read against.

use std::process::Command;
use std::time::{Duration, Instant};

/// CPU time of this process and of its reaped children, and of the whole machine.
pub struct Meter {
    at: Instant,
    ours: Duration,
    machine_busy: f64,
}

impl Meter {
    pub fn start() -> Meter {
        Meter {
            at: Instant::now(),
            ours: self_cpu() + children_cpu(),
            machine_busy: machine_busy_secs(),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.at.elapsed()
    }

    /// Share of the machine (0..1) busy with processes other than this one and its children.
    pub fn others_busy(&self) -> f64 {
        let ours = (self_cpu() + children_cpu()).saturating_sub(self.ours);
        let all = machine_busy_secs() - self.machine_busy;
        ((all - ours.as_secs_f64()) / (self.elapsed().as_secs_f64() * cores() as f64)).max(0.0)
    }
}

fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

pub fn self_cpu() -> Duration {
    rusage(libc::RUSAGE_SELF)
}

/// CPU of every child (and their descendants) reaped so far.
pub fn children_cpu() -> Duration {
    rusage(libc::RUSAGE_CHILDREN)
}

pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// Busy CPU seconds of the whole machine since boot (all but idle and iowait).
fn machine_busy_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = stat.lines().next() else {
        return 0.0;
    };
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal
    let busy: u64 = [0, 1, 2, 5, 6, 7].iter().filter_map(|&i| f.get(i)).sum();
    busy as f64 / clock_ticks()
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn machine_facts(before: &str, after: &str, took: Duration, others: f64) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or("?".into(), |kb| {
            format!("{:.0} GB", kb as f64 / 1024.0 / 1024.0)
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "none".into());
    format!(
        "Machine: {} cores ({model}), {mem} RAM, Linux {}, node {node}; {} build. Load average {before} before, {after} after; the bench took {:.0} s, during which other processes kept {:.0} % of the machine busy.\n",
        cores(),
        kernel.trim(),
        if cfg!(debug_assertions) {
            "DEBUG (numbers are not representative: use --release)"
        } else {
            "release"
        },
        took.as_secs_f64(),
        others * 100.0,
    )
}
