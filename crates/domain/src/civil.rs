//! Dates of the proleptic Gregorian calendar as days since 1970-01-01, and back: one home for
//! every adapter that writes or reads UTC times without a date library (the calendar readers,
//! the listener's drivers and Exchange reader, roomlinkctl's tables). The count goes by
//! 400-year eras of 146,097 days, with years starting in March so the leap day comes last.

pub const MS_PER_DAY: i64 = 86_400_000;

/// Days from 1970-01-01 to `year-month-day` (negative before it). `month` is 1 to 12.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` after 1970-01-01: (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Whether `year-month-day` is a date of the calendar (2026-02-29 is not).
pub fn is_date(year: i64, month: i64, day: i64) -> bool {
    (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && civil_from_days(days_from_civil(year, month, day)) == (year, month, day)
}

/// An instant's UTC date and time of day, to the whole second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcParts {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

impl UtcParts {
    /// `ms` milliseconds since the epoch (fractions of a second dropped, toward the past).
    pub fn of(ms: i64) -> Self {
        let (year, month, day) = civil_from_days(ms.div_euclid(MS_PER_DAY));
        let second_of_day = ms.rem_euclid(MS_PER_DAY) / 1000;
        UtcParts {
            year,
            month,
            day,
            hour: second_of_day / 3600,
            minute: second_of_day / 60 % 60,
            second: second_of_day % 60,
        }
    }

    /// `2026-11-25T09:30:00Z`.
    pub fn rfc3339(&self) -> String {
        let UtcParts {
            year,
            month,
            day,
            hour,
            minute,
            second,
        } = self;
        format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_both_ways() {
        for (date, days) in [
            ((1970, 1, 1), 0),
            ((1969, 12, 31), -1),
            ((2000, 2, 29), 11_016),
            ((2026, 11, 25), 20_782),
            ((1600, 3, 1), -135_080),
        ] {
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
            assert_eq!(civil_from_days(days), date, "{days}");
        }
        // Every day of four centuries round-trips and follows the one before.
        let mut previous = civil_from_days(-146_098);
        for days in -146_097..146_097 {
            let date = civil_from_days(days);
            assert_eq!(days_from_civil(date.0, date.1, date.2), days);
            assert!(date > previous, "{date:?} after {previous:?}");
            previous = date;
        }
    }

    #[test]
    fn only_real_dates_are_dates() {
        assert!(is_date(2024, 2, 29));
        assert!(!is_date(2026, 2, 29));
        assert!(!is_date(1900, 2, 29));
        assert!(is_date(2000, 2, 29));
        assert!(!is_date(2026, 4, 31));
        assert!(!is_date(2026, 13, 1));
        assert!(!is_date(2026, 1, 0));
    }

    #[test]
    fn instants_in_utc() {
        let at = UtcParts::of(1_795_619_223_000);
        assert_eq!(at.rfc3339(), "2026-11-25T15:07:03Z");
        assert_eq!(UtcParts::of(-1).rfc3339(), "1969-12-31T23:59:59Z");
        assert_eq!(UtcParts::of(999).rfc3339(), "1970-01-01T00:00:00Z");
    }
}
