//! xs:dateTime texts as EWS writes and reads them, to and from milliseconds since the epoch.

use roomlink_domain::civil::{MS_PER_DAY, UtcParts, days_from_civil, is_date};

/// `2026-11-25T09:30:00Z` (whole seconds, UTC): what the requests send.
pub fn format(ms: i64) -> String {
    UtcParts::of(ms).rfc3339()
}

/// An xs:dateTime with a zone (`Z` or `±hh:mm`), fractions of a second allowed, to
/// milliseconds. `None` for anything else, a time without a zone included: a local time
/// would be a guess.
pub fn parse(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, rest) = text.split_once('T')?;
    let mut parts = date.splitn(3, '-');
    let year: i64 = digits(parts.next()?, 4)?;
    let month = digits(parts.next()?, 2)?;
    let day = digits(parts.next()?, 2)?;
    if !is_date(year, month, day) {
        return None;
    }
    let (clock, offset_ms) = if let Some(clock) = rest.strip_suffix('Z') {
        (clock, 0)
    } else {
        let at = rest.rfind(['+', '-'])?;
        let (clock, zone) = rest.split_at(at);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let (h, m) = zone[1..].split_once(':')?;
        let (h, m) = (digits(h, 2)?, digits(m, 2)?);
        if h > 14 || m > 59 {
            return None;
        }
        (clock, sign * (h * 60 + m) * 60_000)
    };
    let (hms, fraction) = match clock.split_once('.') {
        Some((hms, fraction)) => (hms, Some(fraction)),
        None => (clock, None),
    };
    let mut hms = hms.splitn(3, ':');
    let hour = digits(hms.next()?, 2)?;
    let minute = digits(hms.next()?, 2)?;
    let second = digits(hms.next()?, 2)?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let millis = match fraction {
        None => 0,
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            let padded: String = f.chars().chain("000".chars()).take(3).collect();
            padded.parse::<i64>().ok()?
        }
        Some(_) => return None,
    };
    let local = days_from_civil(year, month, day) * MS_PER_DAY
        + ((hour * 60 + minute) * 60 + second) * 1000
        + millis;
    Some(local - offset_ms)
}

/// Exactly `len` ASCII digits.
fn digits(text: &str, len: usize) -> Option<i64> {
    (text.len() == len && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_utc() {
        // 2027-01-15T08:00:00Z
        let ms = 1_799_971_200_000;
        assert_eq!(format(ms), "2027-01-15T00:00:00Z");
        assert_eq!(parse("2027-01-15T00:00:00Z"), Some(ms));
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        assert_eq!(parse("2024-02-29T12:00:00Z"), Some(1_709_208_000_000));
        assert_eq!(format(1_709_208_000_000), "2024-02-29T12:00:00Z");
    }

    #[test]
    fn offsets_and_fractions_are_read() {
        assert_eq!(
            parse("2027-01-15T01:30:00+01:30"),
            parse("2027-01-15T00:00:00Z")
        );
        assert_eq!(
            parse("2027-01-14T19:00:00-05:00"),
            parse("2027-01-15T00:00:00Z")
        );
        assert_eq!(
            parse("2027-01-15T00:00:00.25Z").unwrap() - parse("2027-01-15T00:00:00Z").unwrap(),
            250
        );
    }

    #[test]
    fn local_and_broken_times_are_refused() {
        for bad in [
            "2027-01-15T00:00:00",
            "2027-02-30T00:00:00Z",
            "2027-01-15 00:00:00Z",
            "2027-1-15T00:00:00Z",
            "2027-01-15T24:00:00Z",
            "2027-01-15T00:00:00+15:00",
            "2027-01-15T00:00:00.Z",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
