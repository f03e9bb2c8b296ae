//! The results table: medians, ratios, goals, and the generated part of `docs/benchmarks.md`.

use super::profile::Profile;
use std::fmt::Write as _;
use std::path::Path;

/// The pairs' table.
pub const PAIRS: Section = Section {
    begin: "<!-- bench-results:begin (written by `cargo xtask bench`) -->",
    end: "<!-- bench-results:end -->",
    heading: "Latest results",
};

/// A generated part of `docs/benchmarks.md`: its markers, and the heading it is appended under
/// while the markers are missing.
pub struct Section {
    pub begin: &'static str,
    pub end: &'static str,
    pub heading: &'static str,
}

impl Section {
    /// `current` with what lies between the markers replaced by `body`.
    pub fn replace(&self, current: &str, body: &str) -> String {
        let (begin, end) = (self.begin, self.end);
        let generated = format!("{begin}\n\n{}\n\n{end}", body.trim());
        match (current.find(begin), current.find(end)) {
            (Some(start), Some(stop)) if stop > start => format!(
                "{}{generated}{}",
                &current[..start],
                &current[stop + end.len()..]
            ),
            _ => format!(
                "{}\n\n## {}\n\n{generated}\n",
                current.trim_end(),
                self.heading
            ),
        }
    }
}

/// Writes `body` into `docs` between the section's markers.
pub fn write_section(docs: &Path, section: &Section, body: &str) -> Result<(), String> {
    let current = std::fs::read_to_string(docs).unwrap_or_default();
    std::fs::write(docs, section.replace(&current, body))
        .map_err(|e| format!("{}: {e}", docs.display()))
}

/// The short hash of the checked-out commit, for a table's footer.
pub fn git_head(root: &Path) -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The value at quantile `q` (0..=1) of `sorted`, nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    })
}

pub enum Verdict {
    Met,
    NotMet,
    NotMeasured(String),
    /// Reported for information, against no goal.
    NoGoal,
}

/// One line of the table.
pub struct Row {
    pub pair: String,
    pub what: String,
    pub roomlink: String,
    pub other: String,
    pub result: String,
    /// The p99 latencies of both sides (wrk's `--latency`), or "-" where wrk is not used.
    pub p99: String,
    pub goal: String,
    pub verdict: Verdict,
}

impl Row {
    pub fn unavailable(pair: &str, what: &str, goal: &str, why: String) -> Row {
        Row {
            pair: pair.to_owned(),
            what: what.to_owned(),
            roomlink: "not available".to_owned(),
            other: "not available".to_owned(),
            result: "not available".to_owned(),
            p99: "-".to_owned(),
            goal: goal.to_owned(),
            verdict: Verdict::NotMeasured(why),
        }
    }

    /// Sets the p99 column from the medians of both sides (`b` absent: one side only).
    pub fn with_p99(mut self, a: f64, b: Option<f64>) -> Row {
        self.p99 = match b {
            Some(b) => format!("{} / {} ms", num(a), num(b)),
            None => format!("{} ms / -", num(a)),
        };
        self
    }
}

/// The samples behind a median, for the details list.
pub struct Samples {
    pub label: String,
    pub unit: &'static str,
    pub values: Vec<f64>,
}

#[derive(Default)]
pub struct Report {
    pub context: Vec<(String, String)>,
    pub rows: Vec<Row>,
    pub samples: Vec<Samples>,
    pub notes: Vec<String>,
    /// With `--profile`: how the profiles were taken (or why not), then one per pair.
    pub profiling: Option<String>,
    pub profiles: Vec<Profile>,
}

impl Report {
    pub fn samples(&mut self, label: &str, unit: &'static str, values: &[f64]) {
        self.samples.push(Samples {
            label: label.to_owned(),
            unit,
            values: values.to_vec(),
        });
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for (key, value) in &self.context {
            let _ = writeln!(out, "- {key}: {value}");
        }
        out.push('\n');
        out.push_str(
            "| # | measurement | roomlink (median) | compared with (median) | result | p99 roomlink / compared (median) | goal | met? |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        // By pair number (stable: a pair's rows keep their order), whatever order they ran in.
        let mut rows: Vec<&Row> = self.rows.iter().collect();
        rows.sort_by_key(|r| r.pair.parse::<u32>().unwrap_or(u32::MAX));
        for row in rows {
            let verdict = match &row.verdict {
                Verdict::Met => "met".to_owned(),
                Verdict::NotMet => "**not met**".to_owned(),
                Verdict::NotMeasured(_) => "not measured".to_owned(),
                Verdict::NoGoal => "-".to_owned(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                row.pair, row.what, row.roomlink, row.other, row.result, row.p99, row.goal, verdict
            );
        }
        let unmeasured: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| match &r.verdict {
                Verdict::NotMeasured(why) => Some(format!("- pair {} ({}): {why}", r.pair, r.what)),
                _ => None,
            })
            .collect();
        if !unmeasured.is_empty() {
            out.push_str("\nNot measured:\n\n");
            for line in unmeasured {
                let _ = writeln!(out, "{line}");
            }
        }
        if !self.notes.is_empty() {
            out.push_str("\nNotes from this run:\n\n");
            for note in &self.notes {
                let _ = writeln!(out, "- {note}");
            }
        }
        if !self.samples.is_empty() {
            out.push_str("\nEvery sample (in run order; A and B alternate):\n\n");
            for s in &self.samples {
                let values: Vec<String> = s.values.iter().map(|v| format!("{v:.2}")).collect();
                let _ = writeln!(out, "- {} ({}): {}", s.label, s.unit, values.join(", "));
            }
        }
        if let Some(how) = &self.profiling {
            out.push_str(&self.profiles_markdown(how));
        }
        out
    }

    fn profiles_markdown(&self, how: &str) -> String {
        let mut out = String::from("\n### Profiles (top frames by self time, side A)\n\n");
        let _ = writeln!(out, "{how}");
        let mut profiles: Vec<&Profile> = self.profiles.iter().collect();
        profiles.sort_by_key(|p| p.pair.parse::<u32>().unwrap_or(u32::MAX));
        let one_line = |text: &str| text.trim().replace('\n', " / ");
        for profile in profiles {
            let _ = if profile.what.is_empty() {
                writeln!(out, "\n#### Pair {}\n", profile.pair)
            } else {
                writeln!(out, "\n#### Pair {}: {}\n", profile.pair, profile.what)
            };
            let summary = match &profile.outcome {
                Ok(summary) => summary,
                Err(why) => {
                    let _ = writeln!(out, "No profile: {}.", one_line(why));
                    continue;
                }
            };
            let samples = summary
                .samples
                .map_or_else(String::new, |n| format!(", {n} samples"));
            let _ = writeln!(
                out,
                "{:.1} s recorded{samples}; data: `{}`.",
                summary.seconds,
                summary.data.display()
            );
            match &summary.flame {
                Some(Ok(svg)) => {
                    let _ = writeln!(out, "Flame graph: `{}`.", svg.display());
                }
                Some(Err(why)) => {
                    let _ = writeln!(out, "No flame graph: {}.", one_line(why));
                }
                None => {}
            }
            if let Some(why) = &summary.action_error {
                let _ = writeln!(
                    out,
                    "The profiled run failed before its end: {}.",
                    one_line(why)
                );
            }
            out.push_str("\n```text\n");
            for frame in &summary.frames {
                let _ = writeln!(out, "{:>6.2}%  {}", frame.percent, frame.symbol);
            }
            out.push_str("```\n");
        }
        out
    }
}

/// Formats a number with a sensible precision.
pub fn num(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_replaced_between_its_markers_or_appended() {
        let section = Section {
            begin: "<!-- s:begin -->",
            end: "<!-- s:end -->",
            heading: "Scale curves",
        };
        let docs = "# B\n\n## Scale curves\n\ntext\n\n<!-- s:begin -->\nnot yet run\n<!-- s:end -->\n\n## Next\n";
        let updated = section.replace(docs, "| a |\n");
        assert!(updated.contains("<!-- s:begin -->\n\n| a |\n\n<!-- s:end -->\n\n## Next"));
        assert!(!updated.contains("not yet run"));
        let appended = section.replace("# B\n", "| a |");
        assert!(
            appended.ends_with("## Scale curves\n\n<!-- s:begin -->\n\n| a |\n\n<!-- s:end -->\n")
        );
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&values, 0.5), 50.0);
        assert_eq!(quantile(&values, 0.99), 99.0);
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn profiles_section() {
        use super::super::profile::{Frame, Summary};
        let mut report = Report {
            profiling: Some("How.".to_owned()),
            ..Report::default()
        };
        report.profiles.push(Profile {
            pair: "9".into(),
            what: String::new(),
            outcome: Err("perf\nrefused".into()),
        });
        report.profiles.push(Profile {
            pair: "3".into(),
            what: "status".into(),
            outcome: Ok(Summary {
                seconds: 3.04,
                samples: Some(2900),
                frames: vec![Frame {
                    percent: 7.5,
                    symbol: "[.] memcpy".into(),
                }],
                data: "target/bench/perf/pair3.data".into(),
                flame: None,
                action_error: None,
            }),
        });
        let text = report.markdown();
        let section = &text[text.find("### Profiles").unwrap()..];
        assert_eq!(
            section,
            "### Profiles (top frames by self time, side A)\n\nHow.\n\n#### Pair 3: status\n\n\
             3.0 s recorded, 2900 samples; data: `target/bench/perf/pair3.data`.\n\n```text\n  7.50%  [.] memcpy\n```\n\n\
             #### Pair 9\n\nNo profile: perf / refused.\n"
        );
        assert!(!Report::default().markdown().contains("### Profiles"));
    }

    #[test]
    fn rows_by_pair_number() {
        let mut report = Report::default();
        for (pair, what) in [("9", "nine"), ("6", "six a"), ("10", "ten"), ("6", "six b")] {
            report
                .rows
                .push(Row::unavailable(pair, what, "-", "why".to_owned()));
        }
        let table = report.markdown();
        let order: Vec<usize> = ["six a", "six b", "nine", "ten"]
            .iter()
            .map(|w| table.find(&format!("| {w} |")).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{table}");
    }
}
