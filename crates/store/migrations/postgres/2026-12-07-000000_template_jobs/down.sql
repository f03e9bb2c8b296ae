DROP TABLE template_job_rooms;
DROP TABLE template_jobs;
