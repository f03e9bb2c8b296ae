//! The pure part of `bench-scale`: growth exponents between sizes and the results table.

use std::fmt::Write as _;

/// How far a size-independent measure may move from the smallest size to the largest and still
/// count as flat (issue 37: 10 %). Reported, never asserted.
pub const FLAT_WITHIN: f64 = 0.10;

/// One measured quantity at every size (`None` where it could not be measured).
pub struct Row {
    pub label: String,
    pub unit: &'static str,
    pub decimals: usize,
    /// A per-request cost that should not depend on the list's length.
    pub flat_goal: bool,
    pub values: Vec<Option<f64>>,
}

/// `log(v2 / v1) / log(n2 / n1)`: about 0 when the value does not grow with the size, about 1
/// when it grows in proportion. `None` when a value is not positive or the sizes are equal.
pub fn growth_exponent(n1: usize, v1: f64, n2: usize, v2: f64) -> Option<f64> {
    let ratio = n2 as f64 / n1 as f64;
    if n1 == 0 || n2 == 0 || v1 <= 0.0 || v2 <= 0.0 || (ratio.ln()).abs() < 1e-12 {
        return None;
    }
    let exponent = (v2 / v1).ln() / ratio.ln();
    exponent.is_finite().then_some(exponent)
}

/// The relative change from the first value to the last (0.05 is +5 %).
pub fn change(values: &[Option<f64>]) -> Option<f64> {
    let first = values.first().copied().flatten()?;
    let last = values.last().copied().flatten()?;
    (first > 0.0 && values.len() > 1).then(|| last / first - 1.0)
}

/// `1,000`, `100,000`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1k`, `10k`, `1.5k`, `999`.
fn short(n: usize) -> String {
    if n >= 1000 && n.is_multiple_of(100) {
        let k = n as f64 / 1000.0;
        if n.is_multiple_of(1000) {
            format!("{}k", n / 1000)
        } else {
            format!("{k:.1}k")
        }
    } else {
        n.to_string()
    }
}

/// The Markdown table: one row per measure, its value at every size, the growth exponent
/// between consecutive sizes and, for the per-request measures, whether it stayed flat.
pub fn render(sizes: &[usize], rows: &[Row]) -> String {
    let mut out = String::from("| measure |");
    for n in sizes {
        let _ = write!(out, " N = {} |", thousands(*n));
    }
    for pair in sizes.windows(2) {
        let _ = write!(out, " exponent {}→{} |", short(pair[0]), short(pair[1]));
    }
    let span = match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) if sizes.len() > 1 => format!("{}→{}", short(*a), short(*b)),
        _ => "first→last".to_owned(),
    };
    let _ = writeln!(
        out,
        " change {span} | flat within {:.0} %? |",
        FLAT_WITHIN * 100.0
    );
    out.push_str("|---|");
    for _ in 0..(sizes.len() + sizes.len().saturating_sub(1) + 2) {
        out.push_str("---|");
    }
    out.push('\n');
    for row in rows {
        let _ = write!(out, "| {} ({}) |", row.label, row.unit);
        for i in 0..sizes.len() {
            match row.values.get(i).copied().flatten() {
                Some(v) => {
                    let _ = write!(out, " {v:.*} |", row.decimals);
                }
                None => out.push_str(" n/a |"),
            }
        }
        for i in 1..sizes.len() {
            let exponent = match (
                row.values.get(i - 1).copied().flatten(),
                row.values.get(i).copied().flatten(),
            ) {
                (Some(v1), Some(v2)) => growth_exponent(sizes[i - 1], v1, sizes[i], v2),
                _ => None,
            };
            match exponent {
                Some(e) => {
                    let _ = write!(out, " {e:+.2} |");
                }
                None => out.push_str(" n/a |"),
            }
        }
        let delta = change(&row.values);
        match delta {
            Some(d) => {
                let _ = write!(out, " {:+.1} % |", d * 100.0);
            }
            None => out.push_str(" n/a |"),
        }
        let verdict = match (row.flat_goal, delta) {
            (false, _) => "",
            (true, None) => " n/a",
            (true, Some(d)) if d.abs() <= FLAT_WITHIN => " yes",
            (true, Some(_)) => " **no**",
        };
        let _ = writeln!(out, "{verdict} |");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponents_are_zero_when_flat_and_one_when_linear() {
        let flat = growth_exponent(1_000, 5.0, 10_000, 5.0).unwrap();
        assert!(flat.abs() < 1e-12);
        let linear = growth_exponent(1_000, 2.0, 100_000, 200.0).unwrap();
        assert!((linear - 1.0).abs() < 1e-12);
        let square = growth_exponent(10, 1.0, 100, 100.0).unwrap();
        assert!((square - 2.0).abs() < 1e-12);
        let falling = growth_exponent(1_000, 10.0, 10_000, 1.0).unwrap();
        assert!((falling + 1.0).abs() < 1e-12);
        assert!(growth_exponent(1_000, 0.0, 10_000, 1.0).is_none());
        assert!(growth_exponent(1_000, 1.0, 1_000, 2.0).is_none());
        assert!(growth_exponent(0, 1.0, 1_000, 2.0).is_none());
    }

    #[test]
    fn changes_go_from_the_first_value_to_the_last() {
        let d = change(&[Some(100.0), None, Some(108.0)]).unwrap();
        assert!((d - 0.08).abs() < 1e-12);
        assert!(change(&[Some(100.0)]).is_none());
        assert!(change(&[None, Some(1.0)]).is_none());
    }

    #[test]
    fn sizes_are_written_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(short(1_000), "1k");
        assert_eq!(short(100_000), "100k");
        assert_eq!(short(1_500), "1.5k");
        assert_eq!(short(250), "250");
    }

    #[test]
    fn the_table_has_values_exponents_and_verdicts() {
        let rows = [
            Row {
                label: "GET one endpoint p50".into(),
                unit: "ms",
                decimals: 2,
                flat_goal: true,
                values: vec![Some(1.0), Some(1.05), Some(1.2)],
            },
            Row {
                label: "whole list".into(),
                unit: "s",
                decimals: 1,
                flat_goal: false,
                values: vec![Some(0.1), None, Some(10.0)],
            },
        ];
        let table = render(&[1_000, 10_000, 100_000], &rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            "| measure | N = 1,000 | N = 10,000 | N = 100,000 | exponent 1k→10k | exponent 10k→100k | change 1k→100k | flat within 10 %? |"
        );
        // Every line has the same number of cells.
        let cells = |l: &str| l.matches('|').count();
        assert!(lines.iter().all(|l| cells(l) == cells(lines[0])));
        assert_eq!(
            lines[2],
            "| GET one endpoint p50 (ms) | 1.00 | 1.05 | 1.20 | +0.02 | +0.06 | +20.0 % | **no** |"
        );
        assert_eq!(
            lines[3],
            "| whole list (s) | 0.1 | n/a | 10.0 | n/a | n/a | +9900.0 % | |"
        );
    }

    #[test]
    fn one_size_has_no_exponents() {
        let rows = [Row {
            label: "x".into(),
            unit: "ms",
            decimals: 0,
            flat_goal: true,
            values: vec![Some(3.0)],
        }];
        let table = render(&[1_000], &rows);
        assert!(table.contains("change first→last"));
        assert!(table.lines().nth(2).unwrap().ends_with("| 3 | n/a | n/a |"));
    }
}
