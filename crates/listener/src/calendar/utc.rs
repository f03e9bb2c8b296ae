//! xs:dateTime texts as EWS writes and reads them, to and from milliseconds since the epoch.

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (an era-based count: 400-year eras of
/// 146,097 days, years starting in March so that the leap day comes last).
fn days_from_date(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count (the inverse of [`days_from_date`]).
fn date_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-11-25T09:30:00Z` (whole seconds, UTC): what the requests send.
pub fn format(ms: i64) -> String {
    let days = ms.div_euclid(MS_PER_DAY);
    let in_day = ms.rem_euclid(MS_PER_DAY) / 1000;
    let (y, m, d) = date_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
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
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    if date_from_days(days_from_date(year, month, day)) != (year, month, day) {
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
    let local = days_from_date(year, month, day) * MS_PER_DAY
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
