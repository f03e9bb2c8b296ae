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

-- Adds a session to a room's rollups (sign 1) or takes it away (-1). Taking away only
-- updates, so that rows a cascade already removed stay removed.
CREATE FUNCTION usage_rollup_apply(s call_sessions, sign BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    on_day BIGINT := s.started_ms / 86400000;
    spent BIGINT := COALESCE(s.ended_ms - s.started_ms, 0);
    day_calls BIGINT;
    day_change BIGINT;
BEGIN
    IF s.ended_ms <= s.started_ms THEN
        RETURN;
    END IF;
    IF sign > 0 THEN
        INSERT INTO usage_room_spans AS u
            VALUES (s.enterprise_id, 1, on_day, s.endpoint_id, 1, spent, 1)
            ON CONFLICT (enterprise_id, span_days, first_day, endpoint_id)
            DO UPDATE SET calls = u.calls + 1, ms = u.ms + EXCLUDED.ms
            RETURNING calls INTO day_calls;
        -- The room's first call of that day adds a day used to the longer spans.
        day_change := CASE WHEN day_calls = 1 THEN 1 ELSE 0 END;
        INSERT INTO usage_room_spans AS u VALUES
            (s.enterprise_id, 8, on_day / 8 * 8, s.endpoint_id, 1, spent, day_change),
            (s.enterprise_id, 64, on_day / 64 * 64, s.endpoint_id, 1, spent, day_change)
            ON CONFLICT (enterprise_id, span_days, first_day, endpoint_id)
            DO UPDATE SET calls = u.calls + 1, ms = u.ms + EXCLUDED.ms,
                days = u.days + EXCLUDED.days;
        RETURN;
    END IF;
    UPDATE usage_room_spans SET calls = calls - 1, ms = ms - spent
        WHERE enterprise_id = s.enterprise_id AND span_days = 1 AND first_day = on_day
          AND endpoint_id = s.endpoint_id
        RETURNING calls INTO day_calls;
    -- The room's last call of that day takes a day used from the longer spans.
    day_change := CASE WHEN day_calls = 0 THEN 1 ELSE 0 END;
    UPDATE usage_room_spans SET calls = calls - 1, ms = ms - spent, days = days - day_change
        WHERE enterprise_id = s.enterprise_id AND endpoint_id = s.endpoint_id
          AND ((span_days = 8 AND first_day = on_day / 8 * 8)
            OR (span_days = 64 AND first_day = on_day / 64 * 64));
    DELETE FROM usage_room_spans
        WHERE enterprise_id = s.enterprise_id AND endpoint_id = s.endpoint_id AND calls = 0
          AND ((span_days = 1 AND first_day = on_day)
            OR (span_days = 8 AND first_day = on_day / 8 * 8)
            OR (span_days = 64 AND first_day = on_day / 64 * 64));
END;
$$;

-- A session written, ended (or its end corrected) or deleted (retention, or its room or
-- enterprise went): the old row's figures go, the new row's come.
CREATE FUNCTION usage_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    on_day BIGINT;
BEGIN
    -- The common change, a call ending: only its time in call moves, in one statement.
    IF TG_OP = 'UPDATE' AND NEW.enterprise_id = OLD.enterprise_id
        AND NEW.endpoint_id = OLD.endpoint_id AND NEW.started_ms = OLD.started_ms
        AND (OLD.ended_ms IS NULL OR OLD.ended_ms > OLD.started_ms)
        AND (NEW.ended_ms IS NULL OR NEW.ended_ms > NEW.started_ms) THEN
        on_day := NEW.started_ms / 86400000;
        UPDATE usage_room_spans
            SET ms = ms + COALESCE(NEW.ended_ms - NEW.started_ms, 0)
                - COALESCE(OLD.ended_ms - OLD.started_ms, 0)
            WHERE enterprise_id = NEW.enterprise_id AND endpoint_id = NEW.endpoint_id
              AND ((span_days = 1 AND first_day = on_day)
                OR (span_days = 8 AND first_day = on_day / 8 * 8)
                OR (span_days = 64 AND first_day = on_day / 64 * 64));
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM usage_rollup_apply(OLD, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM usage_rollup_apply(NEW, 1);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER call_sessions_usage_rollup
    AFTER INSERT OR DELETE OR UPDATE ON call_sessions
    FOR EACH ROW EXECUTE FUNCTION usage_rollup();

-- The enterprise's hours change once per statement, by the sum of its rows: a status write
-- that opens or ends many calls in the same hour updates that hour's row once, not once a call
-- (PostgreSQL writes a new version of a row at each update, and finding the latest of
-- thousands in one transaction grows with their number: 10,000 calls in one hour took 15 s
-- row by row). An hour whose calls all went keeps its row with no calls; the questions skip it.
CREATE FUNCTION usage_hours_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO usage_hours AS u
            SELECT enterprise_id, started_ms / 86400000, (started_ms / 3600000) % 24, COUNT(*),
                   SUM(COALESCE(ended_ms - started_ms, 0))
            FROM added WHERE ended_ms IS NULL OR ended_ms > started_ms GROUP BY 1, 2, 3
            ON CONFLICT (enterprise_id, day, hour)
            DO UPDATE SET calls = u.calls + EXCLUDED.calls, ms = u.ms + EXCLUDED.ms;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO usage_hours AS u
            SELECT enterprise_id, day, hour, SUM(calls), SUM(ms) FROM (
                SELECT enterprise_id, started_ms / 86400000 AS day,
                       (started_ms / 3600000) % 24 AS hour, 1 AS calls,
                       COALESCE(ended_ms - started_ms, 0) AS ms
                FROM added WHERE ended_ms IS NULL OR ended_ms > started_ms
                UNION ALL
                SELECT enterprise_id, started_ms / 86400000, (started_ms / 3600000) % 24, -1,
                       -COALESCE(ended_ms - started_ms, 0)
                FROM removed WHERE ended_ms IS NULL OR ended_ms > started_ms
            ) AS changed GROUP BY 1, 2, 3
            ON CONFLICT (enterprise_id, day, hour)
            DO UPDATE SET calls = u.calls + EXCLUDED.calls, ms = u.ms + EXCLUDED.ms;
    ELSE
        UPDATE usage_hours AS u SET calls = u.calls - gone.calls, ms = u.ms - gone.ms
            FROM (SELECT enterprise_id, started_ms / 86400000 AS day,
                         (started_ms / 3600000) % 24 AS hour, COUNT(*) AS calls,
                         SUM(COALESCE(ended_ms - started_ms, 0)) AS ms
                  FROM removed WHERE ended_ms IS NULL OR ended_ms > started_ms
                  GROUP BY 1, 2, 3) AS gone
            WHERE u.enterprise_id = gone.enterprise_id AND u.day = gone.day
              AND u.hour = gone.hour;
    END IF;
    RETURN NULL;
END;
$$;

-- A trigger with transition tables serves one kind of statement.
CREATE TRIGGER call_sessions_usage_hours_added
    AFTER INSERT ON call_sessions REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION usage_hours_follow();
CREATE TRIGGER call_sessions_usage_hours_changed
    AFTER UPDATE ON call_sessions REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION usage_hours_follow();
CREATE TRIGGER call_sessions_usage_hours_removed
    AFTER DELETE ON call_sessions REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION usage_hours_follow();
