-- Room usage rollups (docs/operations.md "Room usage"; roomlink_domain::usage::rollup): the sums
-- of call_sessions a usage question reads instead of the sessions of its whole days. Kept equal
-- to the sessions by the triggers below, whatever writes or deletes a session (status writes,
-- retention, a room's or an enterprise's deletion), in the same transaction. A session counts
-- under the UTC day and hour it started: its call as soon as it opens, its time in call once it
-- ends. A call of no length (seen on and off at the same time) counts nowhere, as in the
-- reference (roomlink_domain::usage::sum_sessions).

-- Calls and time in call per enterprise, day (since the epoch) and hour of the day (0-23): the
-- figures by day, hour and weekday.
CREATE TABLE usage_hours (
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    day BIGINT NOT NULL,
    hour BIGINT NOT NULL,
    calls BIGINT NOT NULL,
    ms BIGINT NOT NULL,
    PRIMARY KEY (enterprise_id, day, hour)
);

-- Calls, time in call and distinct days used per room over spans of 1, 8 and 64 days, each
-- starting on a multiple of its length (days since the epoch): a year's figures per room read
-- about 20 rows a room instead of every session.
CREATE TABLE usage_room_spans (
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    span_days BIGINT NOT NULL,
    first_day BIGINT NOT NULL,
    endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    calls BIGINT NOT NULL,
    ms BIGINT NOT NULL,
    days BIGINT NOT NULL,
    PRIMARY KEY (enterprise_id, span_days, first_day, endpoint_id)
);

-- The sessions at a question's edges are read one by one: those that started within its
-- first or last day, by this index ...
CREATE INDEX call_sessions_enterprise_started ON call_sessions (enterprise_id, started_ms);
-- ... and those that began before it and go on into it: the short ones started at most four
-- hours before (the index above), the long ones by this one (LONG_CALL_MS in the domain).
CREATE INDEX call_sessions_long ON call_sessions (enterprise_id, started_ms)
    WHERE ended_ms - started_ms > 14400000;

-- What is already recorded, written in the primary keys' order (as time writes them), so
-- that a range of days reads few pages.
INSERT INTO usage_hours
    SELECT enterprise_id, started_ms / 86400000, (started_ms / 3600000) % 24, COUNT(*),
           SUM(COALESCE(ended_ms - started_ms, 0))
    FROM call_sessions WHERE ended_ms IS NULL OR ended_ms > started_ms GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
INSERT INTO usage_room_spans
    SELECT enterprise_id, 1, started_ms / 86400000, endpoint_id, COUNT(*),
           SUM(COALESCE(ended_ms - started_ms, 0)), 1
    FROM call_sessions WHERE ended_ms IS NULL OR ended_ms > started_ms GROUP BY 1, 3, 4 ORDER BY 1, 3, 4;
INSERT INTO usage_room_spans
    SELECT enterprise_id, 8, first_day / 8 * 8, endpoint_id, SUM(calls), SUM(ms), COUNT(*)
    FROM usage_room_spans WHERE span_days = 1 GROUP BY 1, 3, 4 ORDER BY 1, 3, 4;
INSERT INTO usage_room_spans
    SELECT enterprise_id, 64, first_day / 64 * 64, endpoint_id, SUM(calls), SUM(ms), COUNT(*)
    FROM usage_room_spans WHERE span_days = 1 GROUP BY 1, 3, 4 ORDER BY 1, 3, 4;

-- A session written, ended (or its end corrected) or deleted (retention, or its room or
-- enterprise went): the old row's figures go, the new row's come. SQLite triggers hold
-- statements, not procedures: adding and taking away are spelled out for each. Taking away
-- only updates, so that rows a cascade already removed stay removed.
CREATE TRIGGER call_sessions_usage_added AFTER INSERT ON call_sessions
WHEN NEW.ended_ms IS NULL OR NEW.ended_ms > NEW.started_ms BEGIN
    INSERT INTO usage_hours VALUES (NEW.enterprise_id, NEW.started_ms / 86400000,
        (NEW.started_ms / 3600000) % 24, 1, COALESCE(NEW.ended_ms - NEW.started_ms, 0))
        ON CONFLICT (enterprise_id, day, hour)
        DO UPDATE SET calls = calls + 1, ms = ms + excluded.ms;
    INSERT INTO usage_room_spans VALUES (NEW.enterprise_id, 1, NEW.started_ms / 86400000,
        NEW.endpoint_id, 1, COALESCE(NEW.ended_ms - NEW.started_ms, 0), 1)
        ON CONFLICT (enterprise_id, span_days, first_day, endpoint_id)
        DO UPDATE SET calls = calls + 1, ms = ms + excluded.ms;
    -- The room's first call of that day adds a day used to the longer spans.
    INSERT INTO usage_room_spans
        SELECT NEW.enterprise_id, span.days, NEW.started_ms / 86400000 / span.days * span.days,
               NEW.endpoint_id, 1, COALESCE(NEW.ended_ms - NEW.started_ms, 0), day.calls = 1
        FROM (SELECT 8 AS days UNION ALL SELECT 64) AS span,
             (SELECT calls FROM usage_room_spans WHERE span_days = 1
                AND enterprise_id = NEW.enterprise_id AND endpoint_id = NEW.endpoint_id
                AND first_day = NEW.started_ms / 86400000) AS day
        WHERE true
        ON CONFLICT (enterprise_id, span_days, first_day, endpoint_id)
        DO UPDATE SET calls = calls + 1, ms = ms + excluded.ms, days = days + excluded.days;
END;

CREATE TRIGGER call_sessions_usage_removed AFTER DELETE ON call_sessions
WHEN OLD.ended_ms IS NULL OR OLD.ended_ms > OLD.started_ms BEGIN
    UPDATE usage_hours SET calls = calls - 1,
        ms = ms - COALESCE(OLD.ended_ms - OLD.started_ms, 0)
        WHERE enterprise_id = OLD.enterprise_id AND day = OLD.started_ms / 86400000
          AND hour = (OLD.started_ms / 3600000) % 24;
    DELETE FROM usage_hours WHERE enterprise_id = OLD.enterprise_id AND day = OLD.started_ms / 86400000
          AND hour = (OLD.started_ms / 3600000) % 24 AND calls = 0;
    UPDATE usage_room_spans SET calls = calls - 1,
        ms = ms - COALESCE(OLD.ended_ms - OLD.started_ms, 0)
        WHERE enterprise_id = OLD.enterprise_id AND endpoint_id = OLD.endpoint_id
          AND ((span_days = 1 AND first_day = OLD.started_ms / 86400000));
    -- The room's last call of that day takes a day used from the longer spans.
    UPDATE usage_room_spans SET calls = calls - 1,
        ms = ms - COALESCE(OLD.ended_ms - OLD.started_ms, 0),
        days = days - COALESCE((SELECT calls = 0 FROM usage_room_spans AS day
            WHERE day.enterprise_id = OLD.enterprise_id AND day.endpoint_id = OLD.endpoint_id
              AND day.span_days = 1 AND day.first_day = OLD.started_ms / 86400000), 0)
        WHERE enterprise_id = OLD.enterprise_id AND endpoint_id = OLD.endpoint_id
          AND ((span_days = 8 AND first_day = OLD.started_ms / 86400000 / 8 * 8)
            OR (span_days = 64 AND first_day = OLD.started_ms / 86400000 / 64 * 64));
    DELETE FROM usage_room_spans WHERE enterprise_id = OLD.enterprise_id AND endpoint_id = OLD.endpoint_id
          AND ((span_days = 1 AND first_day = OLD.started_ms / 86400000)
            OR (span_days = 8 AND first_day = OLD.started_ms / 86400000 / 8 * 8)
            OR (span_days = 64 AND first_day = OLD.started_ms / 86400000 / 64 * 64)) AND calls = 0;
END;

CREATE TRIGGER call_sessions_usage_changed_from AFTER UPDATE ON call_sessions
WHEN OLD.ended_ms IS NULL OR OLD.ended_ms > OLD.started_ms BEGIN
    UPDATE usage_hours SET calls = calls - 1,
        ms = ms - COALESCE(OLD.ended_ms - OLD.started_ms, 0)
        WHERE enterprise_id = OLD.enterprise_id AND day = OLD.started_ms / 86400000
          AND hour = (OLD.started_ms / 3600000) % 24;
    DELETE FROM usage_hours WHERE enterprise_id = OLD.enterprise_id AND day = OLD.started_ms / 86400000
          AND hour = (OLD.started_ms / 3600000) % 24 AND calls = 0;
    UPDATE usage_room_spans SET calls = calls - 1,
        ms = ms - COALESCE(OLD.ended_ms - OLD.started_ms, 0)
        WHERE enterprise_id = OLD.enterprise_id AND endpoint_id = OLD.endpoint_id
          AND ((span_days = 1 AND first_day = OLD.started_ms / 86400000));
    -- The room's last call of that day takes a day used from the longer spans.
    UPDATE usage_room_spans SET calls = calls - 1,
        ms = ms - COALESCE(OLD.ended_ms - OLD.started_ms, 0),
        days = days - COALESCE((SELECT calls = 0 FROM usage_room_spans AS day
            WHERE day.enterprise_id = OLD.enterprise_id AND day.endpoint_id = OLD.endpoint_id
              AND day.span_days = 1 AND day.first_day = OLD.started_ms / 86400000), 0)
        WHERE enterprise_id = OLD.enterprise_id AND endpoint_id = OLD.endpoint_id
          AND ((span_days = 8 AND first_day = OLD.started_ms / 86400000 / 8 * 8)
            OR (span_days = 64 AND first_day = OLD.started_ms / 86400000 / 64 * 64));
    DELETE FROM usage_room_spans WHERE enterprise_id = OLD.enterprise_id AND endpoint_id = OLD.endpoint_id
          AND ((span_days = 1 AND first_day = OLD.started_ms / 86400000)
            OR (span_days = 8 AND first_day = OLD.started_ms / 86400000 / 8 * 8)
            OR (span_days = 64 AND first_day = OLD.started_ms / 86400000 / 64 * 64)) AND calls = 0;
END;

CREATE TRIGGER call_sessions_usage_changed_to AFTER UPDATE ON call_sessions
WHEN NEW.ended_ms IS NULL OR NEW.ended_ms > NEW.started_ms BEGIN
    INSERT INTO usage_hours VALUES (NEW.enterprise_id, NEW.started_ms / 86400000,
        (NEW.started_ms / 3600000) % 24, 1, COALESCE(NEW.ended_ms - NEW.started_ms, 0))
        ON CONFLICT (enterprise_id, day, hour)
        DO UPDATE SET calls = calls + 1, ms = ms + excluded.ms;
    INSERT INTO usage_room_spans VALUES (NEW.enterprise_id, 1, NEW.started_ms / 86400000,
        NEW.endpoint_id, 1, COALESCE(NEW.ended_ms - NEW.started_ms, 0), 1)
        ON CONFLICT (enterprise_id, span_days, first_day, endpoint_id)
        DO UPDATE SET calls = calls + 1, ms = ms + excluded.ms;
    -- The room's first call of that day adds a day used to the longer spans.
    INSERT INTO usage_room_spans
        SELECT NEW.enterprise_id, span.days, NEW.started_ms / 86400000 / span.days * span.days,
               NEW.endpoint_id, 1, COALESCE(NEW.ended_ms - NEW.started_ms, 0), day.calls = 1
        FROM (SELECT 8 AS days UNION ALL SELECT 64) AS span,
             (SELECT calls FROM usage_room_spans WHERE span_days = 1
                AND enterprise_id = NEW.enterprise_id AND endpoint_id = NEW.endpoint_id
                AND first_day = NEW.started_ms / 86400000) AS day
        WHERE true
        ON CONFLICT (enterprise_id, span_days, first_day, endpoint_id)
        DO UPDATE SET calls = calls + 1, ms = ms + excluded.ms, days = days + excluded.days;
END;
