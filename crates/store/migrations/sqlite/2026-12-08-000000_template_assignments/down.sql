DROP TABLE template_assignments;
