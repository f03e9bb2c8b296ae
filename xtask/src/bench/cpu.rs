//! How busy the machine's cores were over a stretch of time, from the first line of
//! `/proc/stat` (all processes, all cores). Pair 6 uses it to show how much of the cores the
//! token probe alone takes: the Basic flood's verifies can have at most the rest.

/// Cumulative CPU time of all cores, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CpuTimes {
    busy: u64,
    total: u64,
}

impl CpuTimes {
    /// Now; `None` where `/proc/stat` cannot be read (not Linux).
    pub(super) fn now() -> Option<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        parse(stat.lines().next()?)
    }

    /// The share of all cores' time that was busy between `earlier` and `self`, 0 to 1.
    pub(super) fn busy_share_since(&self, earlier: &CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total)?;
        let busy = self.busy.checked_sub(earlier.busy)?;
        (total > 0).then(|| busy as f64 / total as f64)
    }
}

/// `cpu  user nice system idle iowait irq softirq steal guest guest_nice`: busy is everything
/// but idle and iowait; guest time is already counted in user and nice.
fn parse(line: &str) -> Option<CpuTimes> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if ticks.len() < 5 {
        return None;
    }
    let total: u64 = ticks.iter().sum();
    let idle = ticks[3] + ticks[4];
    Some(CpuTimes {
        busy: total - idle,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_all_but_idle_and_iowait() {
        let before = parse("cpu  100 10 50 800 40 0 0 0 0 0").unwrap();
        let after = parse("cpu  400 10 150 1100 40 0 0 0 0 0").unwrap();
        assert_eq!(before.busy, 160);
        assert_eq!(after.busy_share_since(&before), Some(400.0 / 700.0));
        assert!(parse("cpu0 1 2 3 4 5").is_none());
        assert!(parse("cpu  1 2").is_none());
        assert_eq!(before.busy_share_since(&before), None);
    }
}

/// CPU time (user + system, in ticks) of the running processes with these names (`comm`),
/// and of the children this process has waited for (wrk, once its run is over).
#[derive(Debug, Clone, Default)]
pub(super) struct Usage {
    by_name: Vec<(&'static str, u64)>,
    children: u64,
}

/// The processes whose CPU a throughput pair accounts for, besides wrk.
pub(super) const SERVERS: [&str; 4] = ["roomlink", "postgres", "postgrest", "bench-peer"];

/// `/proc` reports CPU times in USER_HZ, fixed at 100 per second by the Linux ABI.
const TICKS_PER_SEC: f64 = 100.0;

impl Usage {
    /// Now; empty where `/proc` cannot be read.
    pub(super) fn now() -> Usage {
        let mut by_name: Vec<(&'static str, u64)> = SERVERS.iter().map(|n| (*n, 0)).collect();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                if let Some((comm, own, _)) = stat_times(&stat)
                    && let Some(slot) = by_name.iter_mut().find(|(n, _)| *n == comm)
                {
                    slot.1 += own;
                }
            }
        }
        let children = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| stat_times(&s).map(|(_, _, children)| children))
            .unwrap_or(0);
        Usage { by_name, children }
    }

    /// CPU microseconds per request since `earlier`, by process name (`wrk` for the waited-for
    /// children), leaving out those that used none.
    pub(super) fn per_request_since(
        &self,
        earlier: &Usage,
        requests: f64,
    ) -> Vec<(&'static str, f64)> {
        let micros = |ticks: u64| ticks as f64 / TICKS_PER_SEC * 1e6 / requests.max(1.0);
        let mut out: Vec<(&'static str, f64)> = self
            .by_name
            .iter()
            .zip(&earlier.by_name)
            .map(|((name, now), (_, then))| (*name, now.saturating_sub(*then)))
            .filter(|(_, ticks)| *ticks > 0)
            .map(|(name, ticks)| (name, micros(ticks)))
            .collect();
        let children = self.children.saturating_sub(earlier.children);
        if children > 0 {
            out.push(("wrk", micros(children)));
        }
        out
    }
}

/// CPU seconds (user + system) process `pid` has used so far; `None` once it is gone or where
/// `/proc` cannot be read.
pub(super) fn process_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_times(&stat).map(|(_, own, _)| own as f64 / TICKS_PER_SEC)
}

/// CPU seconds these processes have used so far, summed.
pub(super) fn cpu_seconds(pids: &[u32]) -> Option<f64> {
    pids.iter().map(|pid| process_seconds(*pid)).sum()
}

/// CPU seconds used between two readings.
pub(super) fn cpu_used(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    before.zip(after).map(|(b, a)| a - b)
}

/// From a `/proc/PID/stat` line: the command name, the process's own user + system ticks and
/// its waited-for children's. The name is in parentheses and may hold spaces, so fields are
/// counted from the last `)`: utime and stime are fields 14 and 15, cutime and cstime 16 and 17.
fn stat_times(stat: &str) -> Option<(&str, u64, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let fields: Vec<u64> = stat
        .get(close + 1..)?
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    match fields[..] {
        [utime, stime, cutime, cstime] => Some((comm, utime + stime, cutime + cstime)),
        _ => None,
    }
}

/// `roomlink 61 µs + postgres 24 µs + wrk 17 µs = 102 µs`, from per-request figures.
pub(super) fn describe(per_request: &[(&'static str, f64)]) -> String {
    // Processes idle on this side (a tick or two of background work) would only clutter.
    let parts: Vec<String> = per_request
        .iter()
        .filter(|(_, us)| *us >= 0.5)
        .map(|(name, us)| format!("{name} {us:.0} µs"))
        .collect();
    let total: f64 = per_request.iter().map(|(_, us)| us).sum();
    format!("{} = {total:.0} µs", parts.join(" + "))
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    #[test]
    fn reads_times_after_the_last_parenthesis() {
        let line = "4242 (bench (peer)) S 1 2 3 4 5 6 7 8 9 10 150 50 30 20 20 0 8 0 100 0";
        assert_eq!(stat_times(line), Some(("bench (peer)", 200, 50)));
        assert_eq!(stat_times("1 (x) S 1 2"), None);
    }

    #[test]
    fn a_running_process_has_used_some_cpu_and_a_gone_one_none() {
        let own = process_seconds(std::process::id()).expect("this test's own process");
        assert!(own >= 0.0);
        // Beyond the kernel's largest process id (2^22).
        assert_eq!(process_seconds(u32::MAX), None);
    }

    #[test]
    fn per_request_figures_leave_out_idle_processes() {
        let earlier = Usage {
            by_name: SERVERS.iter().map(|n| (*n, 10)).collect(),
            children: 5,
        };
        let mut later = earlier.clone();
        later.by_name[0].1 = 110; // roomlink: 1 s of CPU
        later.children = 55; // wrk: 0.5 s
        let per = later.per_request_since(&earlier, 10_000.0);
        assert_eq!(per, vec![("roomlink", 100.0), ("wrk", 50.0)]);
        assert_eq!(describe(&per), "roomlink 100 µs + wrk 50 µs = 150 µs");
    }
}

/// Per process name, the median over rounds of its per-request figure (0 in a round where it
/// used none), in the order names first appear.
pub(super) fn median_per_request(rounds: &[Vec<(&'static str, f64)>]) -> Vec<(&'static str, f64)> {
    let mut names: Vec<&'static str> = Vec::new();
    for (name, _) in rounds.iter().flatten() {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut values: Vec<f64> = rounds
                .iter()
                .map(|r| r.iter().find(|(n, _)| *n == name).map_or(0.0, |(_, v)| *v))
                .collect();
            values.sort_by(f64::total_cmp);
            (name, values[values.len() / 2])
        })
        .collect()
}
