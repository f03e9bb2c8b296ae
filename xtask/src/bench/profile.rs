//! `cargo xtask bench --profile`: `perf record` of roomlink during an extra, unmeasured run of
//! side A of a pair, and the frames with the most self time (`perf report --no-children`).
//! Optionally a flame graph, when inferno's two commands are on `PATH`.

use super::procs::{self, Service};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Frames kept per pair.
pub const TOP_FRAMES: usize = 12;
/// Frames under this share of the samples are left out by `perf report`.
const PERCENT_LIMIT: &str = "1";
/// The sampling rate, per thread of roomlink and per second of its CPU time.
const FREQUENCY: &str = "499";
/// Stack bytes copied per sample for DWARF unwinding.
const CALL_GRAPH: &str = "dwarf,16384";
/// perf writes its data and build ids after the interrupt; dwarf stacks make that slow.
const FINISH_TIMEOUT: Duration = Duration::from_secs(180);
const REPORT_TIMEOUT: Duration = Duration::from_secs(600);

/// The profile of one pair, or why there is none.
pub struct Profile {
    pub pair: String,
    pub what: String,
    pub outcome: Result<Summary, String>,
}

pub struct Summary {
    pub seconds: f64,
    /// From perf record's last line (`... (N samples)`).
    pub samples: Option<u64>,
    pub frames: Vec<Frame>,
    pub data: PathBuf,
    /// The flame graph written, or why not (`None`: inferno is not on `PATH`).
    pub flame: Option<Result<PathBuf, String>>,
    /// The extra run of side A failed (the frames are of what ran until then).
    pub action_error: Option<String>,
}

#[derive(Debug, PartialEq)]
pub struct Frame {
    pub percent: f64,
    /// `[.] symbol` (user space) or `[k] symbol` (kernel), as perf prints it.
    pub symbol: String,
}

/// `perf --version`, or why perf cannot be used.
pub fn check(scratch: &Path) -> Result<String, String> {
    let mut version = Command::new("perf");
    version.arg("--version");
    let finished = procs::run(version, None, Duration::from_secs(30), scratch)
        .map_err(|e| {
            format!(
                "perf is not available ({e}); install linux-perf (Debian) or linux-tools (Ubuntu)"
            )
        })?
        .ok("perf --version")?;
    Ok(finished.stdout.trim().to_owned())
}

/// `kernel.perf_event_paranoid`, to name in an error.
fn paranoid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|v| format!("kernel.perf_event_paranoid = {}", v.trim()))
        .unwrap_or_else(|_| "kernel.perf_event_paranoid unreadable".to_owned())
}

/// `perf record` of process `pid` into `data` while `action` runs, then `perf report`.
pub fn profile(
    pid: u32,
    data: &Path,
    flame: &Path,
    log: &Path,
    scratch: &Path,
    action: impl FnOnce() -> Result<(), String>,
) -> Result<Summary, String> {
    if let Some(dir) = data.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // Checked here rather than left to perf: its refusal is only seen by the timed check below,
    // which a loaded machine can outlast.
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return Err(format!("no process {pid} to profile"));
    }
    let _ = std::fs::remove_file(data);
    let mut command = Command::new("perf");
    command
        .args(["record", "-F", FREQUENCY, "-g", "--call-graph", CALL_GRAPH])
        .args(["-p", &pid.to_string()])
        .arg("-o")
        .arg(data);
    let mut perf = Service::start("perf record", command, log)?;
    // perf attaches in well under this; a refusal (permissions, no such process) ends it.
    sleep(Duration::from_millis(300));
    perf.check_alive()
        .map_err(|e| format!("perf record failed ({}): {e}", paranoid()))?;
    let started = Instant::now();
    let action_error = action().err();
    let seconds = started.elapsed().as_secs_f64();
    perf.interrupt();
    perf.wait_exit(FINISH_TIMEOUT)?;
    let written = perf.log_text();
    let Some(last) = written.lines().find(|l| l.contains("Captured and wrote")) else {
        return Err(format!(
            "perf record wrote no data ({}); its output:\n{}",
            paranoid(),
            written.trim()
        ));
    };
    let samples = samples_written(last);

    let mut report = Command::new("perf");
    report
        .arg("report")
        .arg("-i")
        .arg(data)
        .args(["--stdio", "--no-children", "--sort", "symbol", "-g", "none"])
        .args(["--percent-limit", PERCENT_LIMIT]);
    let reported = procs::run(report, None, REPORT_TIMEOUT, scratch)?.ok("perf report")?;
    let frames = top_frames(&reported.stdout, TOP_FRAMES);
    if frames.is_empty() {
        return Err(format!(
            "perf report listed no frames over {PERCENT_LIMIT}%: {}",
            reported.stderr.trim()
        ));
    }
    let flame = (on_path("inferno-collapse-perf") && on_path("inferno-flamegraph"))
        .then(|| flame_graph(data, flame, scratch));
    Ok(Summary {
        seconds,
        samples,
        frames,
        data: data.to_path_buf(),
        flame,
        action_error,
    })
}

/// `perf script | inferno-collapse-perf | inferno-flamegraph > flame`.
fn flame_graph(data: &Path, flame: &Path, scratch: &Path) -> Result<PathBuf, String> {
    let mut command = Command::new("bash");
    command
        .args([
            "-o",
            "pipefail",
            "-c",
            r#"perf script -i "$1" | inferno-collapse-perf | inferno-flamegraph > "$2""#,
            "bash",
        ])
        .arg(data)
        .arg(flame);
    procs::run(command, None, REPORT_TIMEOUT, scratch)?.ok("perf script | inferno")?;
    match std::fs::metadata(flame) {
        Ok(m) if m.len() > 0 => Ok(flame.to_path_buf()),
        _ => Err(format!("{} is empty", flame.display())),
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// `[ perf record: Captured and wrote 12.994 MB perf.data (819 samples) ]` -> 819.
fn samples_written(line: &str) -> Option<u64> {
    let (_, rest) = line.rsplit_once('(')?;
    rest.split_whitespace().next()?.parse().ok()
}

/// The `limit` frames with the most self time in `perf report --stdio -g none` output, lines
/// like `    13.90%  [.] symbol   -   -` (perf may append IPC columns after two spaces or more).
pub fn top_frames(report: &str, limit: usize) -> Vec<Frame> {
    let mut frames: Vec<Frame> = report
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|line| {
            let line = line.trim();
            let (percent, rest) = line.split_once('%')?;
            let percent: f64 = percent.trim().parse().ok()?;
            let rest = rest.trim_start();
            if !rest.starts_with('[') {
                return None;
            }
            let symbol = rest.split("  ").next()?.trim();
            Some(Frame {
                percent,
                symbol: symbol.to_owned(),
            })
        })
        .collect();
    frames.sort_by(|a, b| b.percent.total_cmp(&a.percent));
    frames.truncate(limit);
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "# To display the perf.data header info, please use --header/--header-only options.
#
# Samples: 1K of event 'cpu-clock:ppp'
# Event count (approx.): 2811623224
#
# Overhead  Symbol                                     IPC   [IPC Coverage]
# ........  .........................................  ....................
#
     2.00%  [.] __sigsetjmp                            -      -            
    13.90%  [.] <alloc::vec::Vec<T> as core::ops::drop::Drop>::drop                       -      -            
     4.78%  [k] __x64_sys_write
     1.07%  [.] 0x000000000000dee6                     -      -            


#
# (Tip: To separate samples by time use perf report --sort time,overhead,sym)
";

    #[test]
    fn reads_the_frames_by_self_time() {
        let frames = top_frames(REPORT, 3);
        assert_eq!(
            frames,
            vec![
                Frame {
                    percent: 13.90,
                    symbol: "[.] <alloc::vec::Vec<T> as core::ops::drop::Drop>::drop".into()
                },
                Frame {
                    percent: 4.78,
                    symbol: "[k] __x64_sys_write".into()
                },
                Frame {
                    percent: 2.00,
                    symbol: "[.] __sigsetjmp".into()
                },
            ]
        );
        assert_eq!(top_frames(REPORT, 12).len(), 4);
        assert!(top_frames("# only comments\n", 12).is_empty());
    }

    #[test]
    fn a_failing_perf_is_an_error_and_skips_the_run() {
        let dir = std::env::temp_dir().join(format!("xtask-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut ran = false;
        // No such process: an error, and no extra run, however slow the machine.
        let outcome = profile(
            u32::MAX - 1,
            &dir.join("p.data"),
            &dir.join("f.svg"),
            &dir.join("perf.log"),
            &dir,
            || {
                ran = true;
                Ok(())
            },
        );
        assert!(outcome.is_err());
        assert!(!ran);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_the_samples_written() {
        assert_eq!(
            samples_written(
                "[ perf record: Captured and wrote 12.994 MB /tmp/p.data (819 samples) ]"
            ),
            Some(819)
        );
        assert_eq!(
            samples_written("[ perf record: Captured and wrote 0.005 MB p.data ]"),
            None
        );
    }
}
