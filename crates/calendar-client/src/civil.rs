//! UTC date-times in iCalendar's basic format (`20261125T093000Z`) and RFC 3339's
//! (`2026-11-25T10:30:00+01:00`), and milliseconds since the epoch, both ways, without a date
//! library: the proleptic Gregorian calendar's day count.

use roomlink_domain::civil::{MS_PER_DAY, UtcParts, days_from_civil, is_date};

/// `ms` as `YYYYMMDDTHHMMSSZ` (seconds truncated).
pub(crate) fn format_utc(ms: i64) -> String {
    let t = UtcParts::of(ms);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `YYYYMMDD` as the milliseconds of its midnight, UTC.
pub(crate) fn parse_date(text: &str) -> Option<i64> {
    if text.len() != 8 {
        return None;
    }
    let (y, m, d) = (
        digits(text.get(..4)?)?,
        digits(text.get(4..6)?)?,
        digits(text.get(6..)?)?,
    );
    if !is_date(y, m, d) {
        return None;
    }
    Some(days_from_civil(y, m, d) * MS_PER_DAY)
}

/// `YYYYMMDDTHHMMSSZ` as milliseconds; `None` for anything else, local times included.
pub(crate) fn parse_utc(text: &str) -> Option<i64> {
    let rest = text.strip_suffix('Z')?;
    let (date, time) = rest.split_once('T')?;
    if time.len() != 6 {
        return None;
    }
    let (h, min, s) = (
        digits(time.get(..2)?)?,
        digits(time.get(2..4)?)?,
        digits(time.get(4..)?)?,
    );
    if h > 23 || min > 59 || s > 60 {
        return None;
    }
    Some(parse_date(date)? + ((h * 60 + min) * 60 + s) * 1000)
}

/// An RFC 5545 DURATION (`PT1H30M`, `P1D`, `P2W`, `-PT5M`) in milliseconds.
pub(crate) fn parse_duration(text: &str) -> Option<i64> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'-' => (-1, &text[1..]),
        b'+' => (1, &text[1..]),
        _ => (1, text),
    };
    let rest = rest.strip_prefix('P')?;
    let mut total = 0i64;
    let mut number = String::new();
    let mut in_time = false;
    let mut units = 0;
    for c in rest.chars() {
        match c {
            '0'..='9' => number.push(c),
            'T' if number.is_empty() => in_time = true,
            unit => {
                let n = digits(&number)?;
                number.clear();
                let seconds = match (unit, in_time) {
                    ('W', false) => 7 * 86_400,
                    ('D', false) => 86_400,
                    ('H', true) => 3600,
                    ('M', true) => 60,
                    ('S', true) => 1,
                    _ => return None,
                };
                total = total.checked_add(n.checked_mul(seconds * 1000)?)?;
                units += 1;
            }
        }
    }
    (number.is_empty() && units > 0).then_some(sign * total)
}

/// `ms` as an RFC 3339 date-time in UTC, `2026-11-25T09:30:00Z` (seconds truncated).
pub(crate) fn format_rfc3339(ms: i64) -> String {
    UtcParts::of(ms).rfc3339()
}

/// An RFC 3339 date-time with its offset (`2026-11-25T10:00:00+01:00`, `...Z`, fractions of a
/// second of any length, read to the millisecond) as milliseconds, UTC.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let (local, offset) = split_date_time(text)?;
    let offset_ms = match offset.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = digits(std::str::from_utf8(&[*h1, *h2]).ok()?)?;
            let minutes = digits(std::str::from_utf8(&[*m1, *m2]).ok()?)?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let ms = (hours * 60 + minutes) * 60_000;
            if *sign == b'-' { -ms } else { ms }
        }
        _ => return None,
    };
    Some(local - offset_ms)
}

/// A date-time without an offset (`2026-11-25T09:00:00.0000000`, how Microsoft Graph writes the
/// times of a `dateTimeTimeZone`) read as UTC; the caller knows the zone is UTC.
pub(crate) fn parse_rfc3339_as_utc(text: &str) -> Option<i64> {
    match split_date_time(text)? {
        (local, "") => Some(local),
        _ => None,
    }
}

/// An HTTP `Date` in the IMF-fixdate form servers must send (RFC 9110 §5.6.7, `Wed, 25 Nov
/// 2026 14:04:14 GMT`) as milliseconds; the obsolete forms are `None`.
pub(crate) fn parse_http_date(text: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = text.split(' ').collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if weekday.len() != 4 || !weekday.ends_with(',') || day.len() != 2 || year.len() != 4 {
        return None;
    }
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let (day, year) = (digits(day)?, digits(year)?);
    let [h, m, s] = time.split(':').collect::<Vec<_>>()[..] else {
        return None;
    };
    if [h, m, s].iter().any(|part| part.len() != 2) {
        return None;
    }
    let (h, m, s) = (digits(h)?, digits(m)?, digits(s)?);
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * MS_PER_DAY + ((h * 60 + m) * 60 + s) * 1000)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]` at the start of `text`: its milliseconds as if it were UTC,
/// and what follows it (the offset, if any).
fn split_date_time(text: &str) -> Option<(i64, &str)> {
    let bytes = text.as_bytes();
    if bytes.len() < 19
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let (y, m, d) = (
        digits(text.get(..4)?)?,
        digits(text.get(5..7)?)?,
        digits(text.get(8..10)?)?,
    );
    let (h, min, s) = (
        digits(text.get(11..13)?)?,
        digits(text.get(14..16)?)?,
        digits(text.get(17..19)?)?,
    );
    if !is_date(y, m, d) {
        return None;
    }
    if h > 23 || min > 59 || s > 60 {
        return None;
    }
    let mut rest = text.get(19..)?;
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 || len > 9 {
            return None;
        }
        let padded = format!("{:0<3}", fraction.get(..len.min(3))?);
        millis = digits(&padded)?;
        rest = fraction.get(len..)?;
    }
    let ms = days_from_civil(y, m, d) * MS_PER_DAY + ((h * 60 + min) * 60 + s) * 1000 + millis;
    Some((ms, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_round_trips_across_leap_days_and_centuries() {
        for (text, ms) in [
            ("19700101T000000Z", 0),
            ("20000229T120000Z", 951_825_600_000),
            ("20261125T093000Z", 1_795_599_000_000),
            ("19691231T235959Z", -1_000),
        ] {
            assert_eq!(parse_utc(text), Some(ms), "{text}");
            assert_eq!(format_utc(ms), text);
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Wed, 25 Nov 2026 09:30:00 GMT"),
            Some(1_795_599_000_000)
        );
        for text in [
            "Wednesday, 25-Nov-26 09:30:00 GMT",
            "Wed Nov 25 09:30:00 2026",
            "Wed, 25 Nov 2026 09:30:00 UTC",
            "Wed, 25 Foo 2026 09:30:00 GMT",
            "Wed, 25 Nov 2026 9:30:00 GMT",
            "",
        ] {
            assert_eq!(parse_http_date(text), None, "{text}");
        }
    }

    #[test]
    fn malformed_or_local_times_are_refused() {
        for text in [
            "20261125T093000",
            "20261325T093000Z",
            "2026112T093000Z",
            "20261125T253000Z",
            "20261125T0930Z",
            "",
            "éééééééé",
        ] {
            assert_eq!(parse_utc(text), None, "{text}");
        }
        assert_eq!(parse_date("20261125"), parse_utc("20261125T000000Z"));
        // Days a month does not have are refused, as RFC 3339 times are (they read as days of
        // the next month before; fuzz target ical checks that what parses formats back).
        for text in ["20261131", "20260229", "20261100"] {
            assert_eq!(parse_date(text), None, "{text}");
            assert_eq!(parse_utc(&format!("{text}T090000Z")), None, "{text}");
        }
        assert_eq!(parse_utc("20240229T090000Z"), Some(1_709_197_200_000));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("PT1H30M"), Some(5_400_000));
        assert_eq!(parse_duration("P1D"), Some(86_400_000));
        assert_eq!(parse_duration("P2W"), Some(1_209_600_000));
        assert_eq!(parse_duration("-PT5M"), Some(-300_000));
        assert_eq!(parse_duration("P1DT2H"), Some(93_600_000));
        for bad in ["", "PT", "P1H", "1H", "PT1X", "P99999999999999999999D"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc3339_with_offsets_and_fractions() {
        // 2026-11-25T09:00:00Z, as UTC, in Berlin's winter time and with a fraction.
        let nine = 1_795_597_200_000;
        assert_eq!(format_rfc3339(nine), "2026-11-25T09:00:00Z");
        assert_eq!(format_rfc3339(nine + 999), "2026-11-25T09:00:00Z");
        assert_eq!(format_rfc3339(-1_000), "1969-12-31T23:59:59Z");
        for (text, ms) in [
            ("2026-11-25T09:00:00Z", nine),
            ("2026-11-25t09:00:00z", nine),
            ("2026-11-25T10:00:00+01:00", nine),
            ("2026-11-25T04:30:00-04:30", nine),
            ("2026-11-24T23:00:00-10:00", nine),
            ("2026-11-25T09:00:00.25Z", nine + 250),
            ("2026-11-25T09:00:00.1239999+00:00", nine + 123),
            ("2000-02-29T00:00:00Z", 951_782_400_000),
        ] {
            assert_eq!(parse_rfc3339(text), Some(ms), "{text}");
        }
        assert_eq!(
            parse_rfc3339_as_utc("2026-11-25T09:00:00.0000000"),
            Some(nine)
        );
        assert_eq!(parse_rfc3339_as_utc("2026-11-25T09:00:00"), Some(nine));
    }

    #[test]
    fn malformed_rfc3339_is_refused() {
        for text in [
            "",
            "2026-11-25",
            "2026-11-25T09:00:00",
            "2026-11-25 09:00:00Z",
            "2026-11-25T09:00Z",
            "2026-02-29T09:00:00Z",
            "2026-11-31T09:00:00Z",
            "2026-13-01T09:00:00Z",
            "2026-11-25T24:00:00Z",
            "2026-11-25T09:00:00+1:00",
            "2026-11-25T09:00:00+24:00",
            "2026-11-25T09:00:00.Z",
            "2026-11-25T09:00:00.1234567890Z",
            "2026-11-25T09:00:00Z trailing",
            "2026-11-25T09:00:00+01:00:00",
            "20261125T090000Z",
            "ééééé-11-25T09:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(text), None, "{text}");
        }
        assert_eq!(parse_rfc3339_as_utc("2026-11-25T09:00:00Z"), None);
        assert_eq!(parse_rfc3339_as_utc("2026-11-25T09:00:00+01:00"), None);
    }
}
