DROP TRIGGER call_sessions_usage_changed_to;
DROP TRIGGER call_sessions_usage_changed_from;
DROP TRIGGER call_sessions_usage_removed;
DROP TRIGGER call_sessions_usage_added;
DROP INDEX call_sessions_long;
DROP INDEX call_sessions_enterprise_started;
DROP TABLE usage_room_spans;
DROP TABLE usage_hours;
