-- The base tables of the main schema, in a fixed order (the warehouse state hash reads them).
SELECT table_name
FROM information_schema.tables
WHERE table_schema = 'main' AND table_type = 'BASE TABLE'
ORDER BY table_name;
