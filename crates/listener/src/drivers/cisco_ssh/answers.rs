//! Reading the codec's JSON answers out of the shell's byte stream: objects may arrive split
//! across reads or several in one read, with text (prompts, `OK`) between them.

use serde_json::Value;

/// Takes the first complete JSON object out of `buffer`, dropping what precedes it. Braces
/// inside strings do not count.
pub fn take_object(buffer: &mut Vec<u8>) -> Option<Value> {
    let start = buffer.iter().position(|b| *b == b'{')?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, byte) in buffer.iter().enumerate().skip(start) {
        if in_string {
            match (escaped, *byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match *byte {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    let object: Vec<u8> = buffer.drain(..=i).skip(start).collect();
                    return serde_json::from_slice(&object).ok();
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `buffer` holds a line that is exactly `OK` (the shell's acknowledgement).
pub fn take_ok(buffer: &mut Vec<u8>) -> bool {
    // Lines are split on the bytes, so that what is drained is counted in bytes, not in the
    // characters of a lossy reading (an invalid byte reads as the 3-byte U+FFFD).
    let mut offset = 0;
    for line in buffer.split_inclusive(|b| *b == b'\n') {
        offset += line.len();
        if line.ends_with(b"\n") && String::from_utf8_lossy(line).trim() == "OK" {
            buffer.drain(..offset);
            return true;
        }
    }
    false
}

/// What a command's answer says: `Ok` or the reason it failed.
pub enum Outcome {
    Ok,
    /// `status` not OK, with the reason the codec gave.
    Failed {
        status: String,
        reason: String,
    },
}

/// The outcome of `{"CommandResponse": {"XxxResult": {"status": …, "Reason": {"Value": …}}}}`.
pub fn outcome(answer: &Value) -> Outcome {
    let result = answer
        .get("CommandResponse")
        .and_then(Value::as_object)
        .and_then(|o| o.values().next());
    let status = result
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if status.eq_ignore_ascii_case("OK") {
        return Outcome::Ok;
    }
    let reason = result
        .and_then(|r| r.get("Reason"))
        .and_then(|r| r.get("Value"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    Outcome::Failed {
        status: if status.is_empty() {
            "(none)".into()
        } else {
            status.to_owned()
        },
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_taken_whole_whatever_the_reads() {
        let mut buffer = b"OK\r\n{\"a\": \"}{\", \"b\": {\"c\": 1}}\r\n{\"d\"".to_vec();
        let first = take_object(&mut buffer).expect("first");
        assert_eq!(first["a"], "}{");
        assert_eq!(first["b"]["c"], 1);
        assert!(
            take_object(&mut buffer).is_none(),
            "the second is not complete yet"
        );
        buffer.extend_from_slice(b": 2}");
        assert_eq!(take_object(&mut buffer).expect("second")["d"], 2);
    }

    #[test]
    fn ok_lines_and_outcomes() {
        let mut buffer = b"*r Login successful\r\n\r\nOK\r\nrest".to_vec();
        assert!(take_ok(&mut buffer));
        assert_eq!(buffer, b"rest");
        // An invalid UTF-8 byte before the OK line made the lossy text longer than the bytes,
        // and what followed OK was drained with it (fuzz target cisco_tsh checks what is left).
        let mut invalid = b"\xff\xfe\r\nOK\r\n{\"a\": 1}".to_vec();
        assert!(take_ok(&mut invalid));
        assert_eq!(invalid, b"{\"a\": 1}");
        let mut partial = b"O".to_vec();
        assert!(!take_ok(&mut partial));
        let ok = serde_json::json!({"CommandResponse": {"DialResult": {"status": "OK"}}});
        assert!(matches!(outcome(&ok), Outcome::Ok));
        let denied = serde_json::json!({"CommandResponse": {"Result": {"status": "Error", "Reason": {"Value": "Permission denied"}}}});
        assert!(
            matches!(outcome(&denied), Outcome::Failed { reason, .. } if reason == "Permission denied")
        );
    }
}
