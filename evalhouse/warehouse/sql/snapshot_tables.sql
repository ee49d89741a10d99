-- The relations of the warehouse's main schema of one kind ('BASE TABLE' or 'VIEW'), each with
-- its columns in declaration order and its primary key (NULL when it has none). A snapshot
-- writes, sorts and later diffs every table by what this returns, so a table added by a new
-- migration is included without code changes.
SELECT
    t.table_name AS name,
    (SELECT list([c.column_name, c.data_type] ORDER BY c.ordinal_position)
     FROM information_schema.columns c
     WHERE c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema
       AND c.table_name = t.table_name) AS columns,
    (SELECT any_value(k.constraint_column_names)
     FROM duckdb_constraints() k
     WHERE k.database_name = t.table_catalog AND k.schema_name = t.table_schema
       AND k.table_name = t.table_name AND k.constraint_type = 'PRIMARY KEY') AS primary_key
FROM information_schema.tables t
WHERE t.table_catalog = current_database() AND t.table_schema = 'main' AND t.table_type = ?
ORDER BY t.table_name;
