//! Splitting a CSV file into uploads under the service's size bound, at row boundaries (a
//! quoted value may span lines), each part starting with the file's header.

use crate::client::CliError;

/// One record of the original file: the line where it starts and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The line of the file where the record starts (the header is line 1).
    pub line: u64,
    pub bytes: std::ops::Range<usize>,
}

/// A part to upload: the header plus whole records, and the original line of each record.
#[derive(Debug, Clone)]
pub struct Part {
    pub body: Vec<u8>,
    /// The original line of each of the part's records, in order.
    pub lines: Vec<u64>,
    /// The same records' lines within the part (what the plan of the part reports).
    pub part_lines: Vec<u64>,
}

impl Part {
    fn new(head: &[u8]) -> Part {
        Part {
            body: head.to_vec(),
            lines: Vec::new(),
            part_lines: Vec::new(),
        }
    }

    /// The original line of a line number the plan of this part reports.
    pub fn original_line(&self, part_line: u64) -> u64 {
        self.part_lines
            .iter()
            .position(|l| *l == part_line)
            .and_then(|i| self.lines.get(i).copied())
            .unwrap_or(part_line)
    }
}

/// A record's bytes without line endings around it (the reader may count the LF of a CRLF
/// as the start of the next record).
fn trimmed(data: &[u8], start: usize, end: usize) -> std::ops::Range<usize> {
    let mut end = end.min(data.len());
    let mut start = start.min(end);
    while start < end && matches!(data[start], b'\r' | b'\n') {
        start += 1;
    }
    while end > start && matches!(data[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    start..end
}

/// The header and the records of a file, by byte range without line endings (a UTF-8 BOM is
/// dropped; blank lines belong to no record).
pub fn records(file: &[u8]) -> (std::ops::Range<usize>, Vec<Record>) {
    let bom = if file.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&file[bom..]);
    let mut record = ::csv::ByteRecord::new();
    let mut header = bom..bom;
    let mut out = Vec::new();
    let mut first = true;
    // Lines counted up to `counted`, so that counting stays linear in the file's size.
    let (mut counted, mut newlines) = (0usize, 0u64);
    let mut true_line = |start: usize| {
        newlines += file[counted..start].iter().filter(|b| **b == b'\n').count() as u64;
        counted = start;
        newlines + 1
    };
    loop {
        let before = usize::try_from(reader.position().byte()).unwrap_or(0) + bom;
        match reader.read_byte_record(&mut record) {
            Ok(true) => {
                let end = usize::try_from(reader.position().byte()).unwrap_or(file.len()) + bom;
                let start = record
                    .position()
                    .map_or(before, |p| usize::try_from(p.byte()).unwrap_or(0) + bom);
                let bytes = trimmed(file, start, end);
                if first {
                    header = bytes;
                    first = false;
                } else {
                    out.push(Record {
                        line: true_line(bytes.start),
                        bytes,
                    });
                }
            }
            Ok(false) => break,
            Err(_) => {
                // An unreadable record ends the walk; the rest of the file travels as one last
                // record, so the service (and the plan) see the same bytes and say what is wrong.
                let bytes = trimmed(file, before, file.len());
                if !bytes.is_empty() {
                    out.push(Record {
                        line: true_line(bytes.start),
                        bytes,
                    });
                }
                break;
            }
        }
    }
    (header, out)
}

/// Splits `file` into parts of at most `max_bytes` each, every line ending CRLF. Fails when
/// one row with the header cannot fit in a part.
pub fn split(file: &[u8], max_bytes: usize) -> Result<Vec<Part>, CliError> {
    let (header, rows) = records(file);
    if rows.is_empty() {
        // Nothing to split: the file as it is (perhaps empty); the service decides.
        let mut part = Part::new(file);
        part.lines.clear();
        return Ok(vec![part]);
    }
    let mut head = file[header].to_vec();
    head.extend_from_slice(b"\r\n");
    let mut parts = Vec::new();
    let mut current = Part::new(&head);
    for record in &rows {
        let mut row = file[record.bytes.clone()].to_vec();
        row.extend_from_slice(b"\r\n");
        if head.len() + row.len() > max_bytes {
            return Err(CliError::other(format!(
                "line {}: this row is {} bytes; with the header it cannot fit in one upload of at most {max_bytes} bytes",
                record.line,
                row.len()
            )));
        }
        if current.body.len() + row.len() > max_bytes {
            parts.push(std::mem::replace(&mut current, Part::new(&head)));
        }
        current.body.extend_from_slice(&row);
        current.lines.push(record.line);
    }
    parts.push(current);
    for part in &mut parts {
        part.part_lines = records(&part.body).1.iter().map(|r| r.line).collect();
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> String {
        let mut s = "id,name,password\r\n".to_owned();
        for i in 0..n {
            s.push_str(&format!("\"\",\"Room {i}\nsecond line\",\"pw\"\r\n"));
        }
        s
    }

    #[test]
    fn parts_stay_under_the_bound_repeat_the_header_and_keep_every_row() {
        let file = rows(100);
        let parts = split(file.as_bytes(), 500).unwrap();
        assert!(parts.len() > 3);
        let mut lines: Vec<u64> = Vec::new();
        let mut bodies = String::new();
        for part in &parts {
            assert!(part.body.len() <= 500);
            let text = String::from_utf8(part.body.clone()).unwrap();
            assert!(text.starts_with("id,name,password\r\n"));
            bodies.push_str(&text["id,name,password\r\n".len()..]);
            lines.extend(&part.lines);
        }
        assert_eq!(bodies, file["id,name,password\r\n".len()..]);
        let expected: Vec<u64> = (0..100).map(|i| 2 + 2 * i).collect();
        assert_eq!(lines, expected, "records spanning two lines");
        let second = &parts[1];
        assert_eq!(
            second.part_lines[0], 2,
            "the record's own line, as the service's plan gives it"
        );
        assert_eq!(second.original_line(4), second.lines[1]);
    }

    #[test]
    fn a_small_file_is_one_part_as_it_is() {
        let file = "\u{feff}id,name\n,A\n,B";
        let parts = split(file.as_bytes(), 1000).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].body, b"id,name\r\n,A\r\n,B\r\n");
        assert_eq!(parts[0].lines, [2, 3]);
        let parts = split(b"", 1000).unwrap();
        assert_eq!(parts.len(), 1);
        assert!(parts[0].body.is_empty());
    }

    #[test]
    fn a_row_too_big_for_any_part_is_refused() {
        let file = format!("id,name\n,{}\n", "x".repeat(100));
        let e = split(file.as_bytes(), 50).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
