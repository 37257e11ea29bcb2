-- Indexes PostgreSQL can use for the queries FerretDB v1.24 sends it, made from the indexes the
-- models declare. Run by the launcher at every start of its embedded PostgreSQL (idempotent).
--
-- Why: FerretDB keeps each collection as a table of one jsonb column, `_jsonb`, and sends an
-- equality filter on a top-level field down as `_jsonb->'field' @> '<value>'` (sort, skip and
-- limit stay in FerretDB). For every MongoDB index it creates a btree on `_jsonb->'field'`, and a
-- btree cannot serve `@>`, so every query, a find by _id included, scans the whole table. A GIN
-- index on the same expression with `jsonb_path_ops` serves `@>`. This event trigger adds one for
-- each field of each index FerretDB creates, at the moment it creates it, so the indexes declared
-- in the models (and the _id index of every collection) stay the one source of truth.
--
-- FerretDB passes the field name as a bind parameter, so a generic plan could not match an
-- expression index: the server runs with plan_cache_mode=force_custom_plan (see postgres.ts).
--
-- fastupdate is off: with it, GIN queues new entries in a pending list that every query reads
-- from end to end until a vacuum merges it, so a find by _id slowed with each post written since
-- (3.2-4.0 ms a find at 50,000 posts just inserted, 1.5 ms once the list was merged). Each insert
-- now updates the index at once; a jsonb_path_ops entry is one hash per value.

SET client_min_messages = warning;

CREATE OR REPLACE FUNCTION ferretdb_gin_for_new_index() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
  created record;
  idx record;
  expr text;
  gin_name text;
BEGIN
  FOR created IN
    SELECT objid FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE INDEX'
  LOOP
    SELECT i.indexrelid, i.indrelid, i.indnatts, c.relname AS tablename, n.nspname AS schemaname,
           am.amname
      INTO idx
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_am am ON am.oid = ic.relam
     WHERE i.indexrelid = created.objid;
    -- Our own GIN indexes come through here too; FerretDB's metadata table is not a collection.
    CONTINUE WHEN idx.amname <> 'btree' OR idx.tablename LIKE '\_ferretdb\_%';
    FOR k IN 1..idx.indnatts LOOP
      expr := pg_get_indexdef(idx.indexrelid, k, true);
      -- Only a top-level field, as FerretDB writes it: (_jsonb -> 'field'::text).
      CONTINUE WHEN expr !~ '^\(?_jsonb -> ''[^'']+''::text\)?$';
      gin_name := left(idx.tablename, 40) || '_' || left(md5(expr), 12) || '_gin';
      BEGIN
        EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %I.%I USING gin ((%s) jsonb_path_ops) WITH (fastupdate = off)',
                       gin_name, idx.schemaname, idx.tablename, expr);
      EXCEPTION WHEN OTHERS THEN
        -- A missing GIN index costs speed, not correctness: never fail FerretDB's own index.
        RAISE WARNING 'ferretdb_gin_for_new_index: % on %.%: %', expr, idx.schemaname, idx.tablename, SQLERRM;
      END;
    END LOOP;
  END LOOP;
END;
$$;

DROP EVENT TRIGGER IF EXISTS ferretdb_gin_for_new_index;
CREATE EVENT TRIGGER ferretdb_gin_for_new_index ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION ferretdb_gin_for_new_index();

-- Indexes made before fastupdate was turned off (an older .data/dev): turn it off, and merge
-- what their pending lists hold.
DO $$
DECLARE
  gin record;
BEGIN
  FOR gin IN
    SELECT ic.oid::regclass AS name
      FROM pg_class ic
      JOIN pg_am am ON am.oid = ic.relam
     WHERE ic.relkind = 'i' AND am.amname = 'gin' AND ic.relname LIKE '%\_gin'
       AND NOT coalesce(ic.reloptions @> ARRAY['fastupdate=off'], false)
  LOOP
    EXECUTE format('ALTER INDEX %s SET (fastupdate = off)', gin.name);
    PERFORM gin_clean_pending_list(gin.name);
  END LOOP;
END;
$$;
