DROP TABLE endpoint_inventories;
