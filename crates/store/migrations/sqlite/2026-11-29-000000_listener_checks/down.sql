DROP TABLE listener_checks;
