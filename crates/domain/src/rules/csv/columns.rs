//! The file's columns and how a cell is written: what both the upload ([`super::parse`]) and
//! the export ([`super::export`]) agree on.
//!
//! Formula guard: a cell that a spreadsheet would evaluate (it begins with `=`, `+`, `-`, `@`,
//! TAB or CR) is written with a leading apostrophe, and so is a cell that already begins with
//! an apostrophe followed by one of those or by another apostrophe, so the guard stays
//! reversible. The upload removes exactly one such apostrophe ([`restore`]). Plain numbers such
//! as `-12.5` (a negative elevation) are left alone: spreadsheets read them as numbers, never
//! as formulas.

use crate::endpoint::Field;
use std::borrow::Cow;

/// The columns of the specification's header, in its order.
pub const STANDARD_COLUMNS: [&str; 14] = [
    "id",
    "name",
    "ipaddress",
    "port",
    "listenerserviceid",
    "controlprotocol",
    "signalingprotocol",
    "dialstyle",
    "addressstyle",
    "username",
    "password",
    "calendarid",
    "calendartype",
    "customdata",
];

/// A column of the file: `id`, `password`, an endpoint field, or what the room reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Column {
    Id,
    Password,
    Field(Field),
    Reported(ReportedColumn),
}

/// The read-only columns an export with inventory adds after the endpoint's own: what the
/// room said about itself at its last inventory read. An upload accepts and ignores them, so
/// such a file still loads unchanged; they are not provisioned, so nothing can be set there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedColumn {
    Model,
    SerialNumber,
    SoftwareVersion,
    SoftwareReleaseDate,
    UptimeSeconds,
    Peripherals,
    PeripheralsDisconnected,
    ReadAt,
    LastFailure,
}

impl ReportedColumn {
    pub const ALL: [ReportedColumn; 9] = [
        ReportedColumn::Model,
        ReportedColumn::SerialNumber,
        ReportedColumn::SoftwareVersion,
        ReportedColumn::SoftwareReleaseDate,
        ReportedColumn::UptimeSeconds,
        ReportedColumn::Peripherals,
        ReportedColumn::PeripheralsDisconnected,
        ReportedColumn::ReadAt,
        ReportedColumn::LastFailure,
    ];

    /// The header cell: `inventory.` and the lower-case name, as the other columns are.
    pub const fn header(self) -> &'static str {
        match self {
            ReportedColumn::Model => "inventory.model",
            ReportedColumn::SerialNumber => "inventory.serialnumber",
            ReportedColumn::SoftwareVersion => "inventory.softwareversion",
            ReportedColumn::SoftwareReleaseDate => "inventory.softwarereleasedate",
            ReportedColumn::UptimeSeconds => "inventory.uptimeseconds",
            ReportedColumn::Peripherals => "inventory.peripherals",
            ReportedColumn::PeripheralsDisconnected => "inventory.peripheralsdisconnected",
            ReportedColumn::ReadAt => "inventory.readat",
            ReportedColumn::LastFailure => "inventory.lastfailure",
        }
    }
}

impl Column {
    /// A header cell, matched case-insensitively and without surrounding blanks.
    pub(super) fn from_header(name: &str) -> Option<Column> {
        let lower = name.trim().to_ascii_lowercase();
        match lower.as_str() {
            "id" => Some(Column::Id),
            "password" => Some(Column::Password),
            _ => Field::from_csv_name(name).map(Column::Field).or_else(|| {
                ReportedColumn::ALL
                    .into_iter()
                    .find(|c| c.header() == lower)
                    .map(Column::Reported)
            }),
        }
    }

    /// Every column in export order: the standard ones, then the remaining fields in wire
    /// order (lower-case), so no field is lost on the way out and back in.
    pub(super) fn export_order() -> Vec<(String, Column)> {
        let mut out: Vec<(String, Column)> = STANDARD_COLUMNS
            .iter()
            .filter_map(|name| Some(((*name).to_owned(), Column::from_header(name)?)))
            .collect();
        for field in Field::ALL {
            if !out.iter().any(|(_, c)| *c == Column::Field(*field)) {
                out.push((
                    field.json_name().to_ascii_lowercase(),
                    Column::Field(*field),
                ));
            }
        }
        out
    }
}

/// The characters that make a spreadsheet treat a cell as a formula (OWASP's list).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// What the guard prefixes.
const GUARD: char = '\'';

fn starts_with_formula(text: &str) -> bool {
    text.starts_with(FORMULA_STARTS)
}

fn needs_escape_of_guard(text: &str) -> bool {
    text.strip_prefix(GUARD)
        .is_some_and(|rest| starts_with_formula(rest) || rest.starts_with(GUARD))
}

/// `-?digits(.digits)?`: what the number fields write, and harmless in a spreadsheet.
fn is_plain_number(text: &str) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && digits(fraction)
}

/// The cell as written to the file: guarded when a spreadsheet would run it as a formula.
pub fn neutralize(text: &str) -> Cow<'_, str> {
    if (starts_with_formula(text) && !is_plain_number(text)) || needs_escape_of_guard(text) {
        Cow::Owned(format!("{GUARD}{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The inverse of [`neutralize`], applied by the upload to every cell but `password`: one
/// leading apostrophe is dropped when a formula character or another apostrophe follows it.
pub fn restore(cell: &str) -> &str {
    if needs_escape_of_guard(cell) {
        &cell[GUARD.len_utf8()..]
    } else {
        cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_is_reversible_and_leaves_plain_values_alone() {
        let cases = [
            ("=1+2", "'=1+2"),
            ("+33 1 23", "'+33 1 23"),
            ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("'=already", "''=already"),
            ("''", "'''"),
            ("'quoted'", "'quoted'"),
            ("-12.5", "-12.5"),
            ("-3", "-3"),
            ("-1.", "'-1."),
            ("-", "'-"),
            ("Room = 1", "Room = 1"),
            ("", ""),
            ("Zürich", "Zürich"),
        ];
        for (value, written) in cases {
            assert_eq!(neutralize(value), written, "{value:?}");
            assert_eq!(restore(written), value, "{written:?}");
        }
    }

    #[test]
    fn headers_match_in_any_case_and_every_field_is_exported_once() {
        assert_eq!(Column::from_header(" ID "), Some(Column::Id));
        assert_eq!(
            Column::from_header("IpAddress"),
            Some(Column::Field(Field::IpAddress))
        );
        assert_eq!(Column::from_header("colour"), None);
        let order = Column::export_order();
        let names: Vec<&str> = order.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(&names[..STANDARD_COLUMNS.len()], STANDARD_COLUMNS);
        assert_eq!(order.len(), Field::ALL.len() + 2);
        for field in Field::ALL {
            let times = order
                .iter()
                .filter(|(_, c)| *c == Column::Field(*field))
                .count();
            assert_eq!(times, 1, "{field:?}");
        }
    }
}
