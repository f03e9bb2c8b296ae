-- Template jobs (issue #36 item 2): applying a template to rooms, or undoing that, one room at
-- a time, resumable by whichever instance holds the job's claim.
CREATE TABLE template_jobs (
    id TEXT PRIMARY KEY,
    enterprise_id TEXT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    -- No foreign key: a job's report outlives its template.
    template_id TEXT NOT NULL,
    template_name TEXT NOT NULL,
    -- 'apply' or 'undo'; an undo names the apply job it undoes.
    kind TEXT NOT NULL,
    undo_of TEXT,
    -- 'running' or 'finished'.
    state TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    finished_ms BIGINT,
    -- The instance running the job, until lease_until_ms unless it renews its claim.
    lease_owner TEXT,
    lease_until_ms BIGINT NOT NULL
);
-- The enterprise's list, newest first.
CREATE INDEX template_jobs_enterprise_created ON template_jobs (enterprise_id, created_ms);
-- The resumer's search for running jobs whose claim lapsed.
CREATE INDEX template_jobs_state_lease ON template_jobs (state, lease_until_ms);
-- One running job per enterprise, also when two instances start one at the same moment.
CREATE UNIQUE INDEX template_jobs_one_running ON template_jobs (enterprise_id)
    WHERE state = 'running';

-- A job's rooms, in the order they are done. steps and state are the JSON texts of
-- roomlink_domain::template::job_json, which the store keeps without reading.
CREATE TABLE template_job_rooms (
    job_id TEXT NOT NULL REFERENCES template_jobs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    endpoint_id TEXT NOT NULL,
    name TEXT NOT NULL,
    steps TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (job_id, position)
);
