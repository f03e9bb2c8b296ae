//! Reading an upload: the size bound, the header, and each row's cells.
//!
//! The first line is the header; column names are matched case-insensitively against the
//! endpoint's field names plus `id` and `password`, in any order; an unknown or repeated
//! column makes the whole upload `Invalid`. Values follow RFC 4180 (double quotes; commas,
//! quotes and newlines inside quotes). Every cell but `password` loses the export's formula
//! guard ([`super::columns::restore`]). A row that cannot be read is kept with its reason, so
//! the plan reports it at its line.

use super::columns::{Column, STANDARD_COLUMNS, restore};
use crate::endpoint::Field;
use crate::enums::shorten;
use crate::error::{Error, ErrorKind};
use crate::ids::{EndpointId, ListenerServiceId};
use std::collections::HashSet;

/// The size bound of one upload: 1 MiB. Larger files are split by the client.
pub const MAX_BYTES: usize = 1024 * 1024;

/// `PayloadTooLarge` for an upload over [`MAX_BYTES`].
pub fn too_large() -> Error {
    Error::new(
        ErrorKind::PayloadTooLarge,
        format!("A CSV upload may be at most {MAX_BYTES} bytes; split the file into smaller ones."),
    )
    .with("limitBytes", MAX_BYTES)
}

/// A parsed upload: the header's columns and every data row.
#[derive(Debug, Clone)]
pub struct CsvUpload {
    pub(super) columns: Vec<Column>,
    pub(super) rows: Vec<Row>,
}

/// Why a row could not be read as cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MalformedRow {
    /// The CSV reader's own complaint (e.g. a quote left open).
    Unreadable(String),
    /// The row has another number of cells than the header.
    FieldCount {
        found: usize,
        expected: usize,
    },
    NotUtf8,
}

impl std::fmt::Display for MalformedRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MalformedRow::Unreadable(e) => write!(f, "unreadable row: {e}"),
            MalformedRow::FieldCount { found, expected } => {
                write!(f, "the row has {found} fields; the header has {expected}")
            }
            MalformedRow::NotUtf8 => f.write_str("the row is not valid UTF-8"),
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) line: u64,
    pub(super) cells: Result<Vec<String>, MalformedRow>,
}

/// The line of `bytes` (as given to the csv reader) that a record at `position` starts on.
/// After a CRLF the reader's position is still on the `\n`, whose line it has not counted yet.
pub fn record_line(bytes: &[u8], position: &::csv::Position) -> u64 {
    let at_newline = usize::try_from(position.byte())
        .ok()
        .and_then(|i| bytes.get(i))
        == Some(&b'\n');
    position.line() + u64::from(at_newline)
}

impl CsvUpload {
    /// Parses an upload. Fails as a whole only when it is too large or its header is wrong.
    pub fn parse(bytes: &[u8]) -> Result<CsvUpload, Error> {
        if bytes.len() > MAX_BYTES {
            return Err(too_large());
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let mut records = reader.byte_records();
        let header = match records.next() {
            Some(Ok(header)) => header,
            Some(Err(e)) => return Err(Error::invalid(format!("CSV header: {e}"))),
            None => {
                return Err(Error::invalid(
                    "CSV: the file is empty; a header row is required",
                ));
            }
        };
        let columns = parse_header(&header)?;
        let mut rows = Vec::new();
        for record in records {
            match record {
                Ok(record) => {
                    let line = record.position().map_or(0, |p| record_line(bytes, p));
                    if record
                        .iter()
                        .all(|cell| cell.iter().all(u8::is_ascii_whitespace))
                    {
                        continue; // a blank line, perhaps with separators only
                    }
                    rows.push(Row {
                        line,
                        cells: decode_cells(&record, &columns),
                    });
                }
                Err(e) => {
                    let line = e.position().map_or(0, |p| record_line(bytes, p));
                    rows.push(Row {
                        line,
                        cells: Err(MalformedRow::Unreadable(e.to_string())),
                    });
                }
            }
        }
        Ok(CsvUpload { columns, rows })
    }

    /// The number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The well-formed ids the rows name: what [`super::CsvContext::existing`] must be read
    /// for.
    pub fn ids(&self) -> Vec<EndpointId> {
        self.distinct(Column::Id, |cell| EndpointId::parse(cell).ok())
    }

    /// The well-formed listener service ids the rows name (offline validation assumes them).
    pub fn listener_ids(&self) -> Vec<ListenerServiceId> {
        self.distinct(Column::Field(Field::ListenerServiceId), |cell| {
            ListenerServiceId::parse(cell).ok()
        })
    }

    /// The distinct values of `column` that `read` accepts, in file order.
    fn distinct<T: Clone + Eq + std::hash::Hash>(
        &self,
        column: Column,
        read: impl Fn(&str) -> Option<T>,
    ) -> Vec<T> {
        let Some(index) = self.columns.iter().position(|c| *c == column) else {
            return Vec::new();
        };
        let mut seen = HashSet::new();
        self.rows
            .iter()
            .filter_map(|row| row.cells.as_ref().ok())
            .filter_map(|cells| read(cells[index].trim()))
            .filter(|value| seen.insert(value.clone()))
            .collect()
    }

    /// The row's cell in `column`, if the file has that column and the row could be read.
    pub(super) fn cell<'r>(&self, row: &'r Row, column: Column) -> Option<&'r str> {
        let index = self.columns.iter().position(|c| *c == column)?;
        row.cells.as_ref().ok().map(|cells| cells[index].as_str())
    }

    /// The row's field cells, in header order.
    pub(super) fn field_cells<'r>(
        &'r self,
        row: &'r Row,
    ) -> impl Iterator<Item = (Field, &'r str)> + 'r {
        let cells = row.cells.as_deref().unwrap_or(&[]);
        self.columns
            .iter()
            .zip(cells)
            .filter_map(|(column, cell)| match column {
                Column::Field(field) => Some((*field, cell.as_str())),
                _ => None,
            })
    }
}

fn parse_header(header: &::csv::ByteRecord) -> Result<Vec<Column>, Error> {
    let mut columns = Vec::with_capacity(header.len());
    for raw in header {
        let name =
            std::str::from_utf8(raw).map_err(|_| Error::invalid("CSV header: not valid UTF-8"))?;
        let column = Column::from_header(name).ok_or_else(|| {
            Error::invalid(format!(
                "CSV header: unknown column '{}'; the columns are {} and the other endpoint fields",
                shorten(name.trim()),
                STANDARD_COLUMNS.join(", ")
            ))
        })?;
        if columns.contains(&column) {
            return Err(Error::invalid(format!(
                "CSV header: column '{}' appears twice",
                shorten(name.trim())
            )));
        }
        columns.push(column);
    }
    Ok(columns)
}

/// The row's cells as text. Every cell but `password` loses the formula guard; a password is
/// taken exactly as written.
fn decode_cells(
    record: &::csv::ByteRecord,
    columns: &[Column],
) -> Result<Vec<String>, MalformedRow> {
    if record.len() != columns.len() {
        return Err(MalformedRow::FieldCount {
            found: record.len(),
            expected: columns.len(),
        });
    }
    record
        .iter()
        .zip(columns)
        .map(|(cell, column)| {
            let text = std::str::from_utf8(cell).map_err(|_| MalformedRow::NotUtf8)?;
            Ok(match column {
                Column::Password => text.to_owned(),
                _ => restore(text).to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors_fail_the_whole_upload() {
        for bad in ["", "id,name,colour\n", "id,name,NAME\n"] {
            let e = CsvUpload::parse(bad.as_bytes()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Invalid, "{bad:?}");
        }
        let ok = CsvUpload::parse("\u{feff}ID, Name ,IpAddress\n".as_bytes()).unwrap();
        assert!(ok.is_empty());
    }

    #[test]
    fn size_bound_is_checked_before_parsing() {
        let big = vec![b'a'; MAX_BYTES + 1];
        let e = CsvUpload::parse(&big).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PayloadTooLarge);
        assert_eq!(e.details()["limitBytes"], MAX_BYTES);
        let mut exact = STANDARD_COLUMNS.join(",").into_bytes();
        exact.resize(MAX_BYTES, b'\n');
        assert!(CsvUpload::parse(&exact).is_ok());
    }

    #[test]
    fn ids_lists_each_named_id_once() {
        let u = CsvUpload::parse(b"id,name\ne1,A\ne1,B\n,C\n../x,D\ne2,E\n").unwrap();
        let ids: Vec<_> = u.ids().iter().map(|i| i.as_str().to_owned()).collect();
        assert_eq!(ids, ["e1", "e2"]);
    }

    #[test]
    fn blank_lines_are_not_rows_and_ragged_rows_keep_their_reason() {
        let u = CsvUpload::parse(b"id,name,password\n,A\n\n,B,pw\n,,\n").unwrap();
        assert_eq!(
            u.len(),
            2,
            "the blank line and the separators-only line are not rows"
        );
        assert_eq!(
            u.rows[0].cells,
            Err(MalformedRow::FieldCount {
                found: 2,
                expected: 3
            })
        );
        assert_eq!(u.rows[0].line, 2);
        assert_eq!(u.rows[1].line, 4);
    }

    #[test]
    fn the_guard_is_dropped_everywhere_but_in_passwords() {
        let u = CsvUpload::parse(b"name,location,password\n\"'=Room\",\"'quoted'\",\"'=pw\"\n")
            .unwrap();
        let row = &u.rows[0];
        assert_eq!(u.cell(row, Column::Field(Field::Name)), Some("=Room"));
        assert_eq!(
            u.cell(row, Column::Field(Field::Location)),
            Some("'quoted'")
        );
        assert_eq!(u.cell(row, Column::Password), Some("'=pw"));
    }
}
