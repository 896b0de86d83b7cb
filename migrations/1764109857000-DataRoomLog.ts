import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The data room as its own append-only table (issue 57 item 1). It was read from the live tables, so
 * deleting a metric took its books' settlements and voids with it and a rename rewrote older rows.
 * Now a row is written by trigger in the transaction of the act (every write path, batch SQL
 * included), with the names as they were then, and nothing updates it. The one delete allowed is a
 * workspace's own deletion (spec: a deleted workspace leaves no rows behind).
 */
const US = (at: string) => `(extract(epoch FROM ${at}) * 1000000)::bigint`;

export class DataRoomLog1764109857000 implements MigrationInterface {
  name = 'DataRoomLog1764109857000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data_room_actions (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      key text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('metric','reading','proposal','settlement','void')),
      at timestamptz NOT NULL,
      us bigint NOT NULL,
      agent_id text,
      metric_id uuid,
      metric_name text,
      field text,
      from_text text,
      to_text text,
      old_value double precision,
      value double precision,
      na boolean NOT NULL DEFAULT false,
      as_of timestamptz,
      note text,
      proposal_id uuid,
      title text,
      decision text,
      spam boolean NOT NULL DEFAULT false,
      market_id uuid,
      target_date text,
      branch text,
      settled_early boolean NOT NULL DEFAULT false,
      reason text,
      PRIMARY KEY (workspace_id, key))`);
    await q.query(`CREATE INDEX data_room_actions_page ON data_room_actions (workspace_id, us DESC, key DESC)`);
    await q.query(`CREATE FUNCTION data_room_actions_keep() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN RAISE EXCEPTION 'data_room_actions is append-only'; END IF;
        IF EXISTS (SELECT 1 FROM workspaces WHERE id = OLD.workspace_id AND deleting_at IS NULL) THEN
          RAISE EXCEPTION 'data_room_actions rows go only with their workspace';
        END IF;
        RETURN OLD;
      END $$`);
    await q.query(`CREATE TRIGGER data_room_actions_kept BEFORE UPDATE OR DELETE ON data_room_actions FOR EACH ROW EXECUTE FUNCTION data_room_actions_keep()`);

    await q.query(`CREATE FUNCTION data_room_revision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO data_room_actions (workspace_id, key, kind, at, us, agent_id, metric_id, metric_name, field, from_text, to_text)
        VALUES (NEW.workspace_id, 'metric:' || NEW.id, 'metric', NEW.at, ${US('NEW.at')}, NEW.agent_id, NEW.metric_id,
                CASE WHEN NEW.field = 'name' THEN NEW.new_value ELSE (SELECT name FROM metrics WHERE id = NEW.metric_id) END,
                NEW.field, NEW.old_value, NEW.new_value)
        ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER data_room_revision AFTER INSERT ON metric_revisions FOR EACH ROW EXECUTE FUNCTION data_room_revision()`);

    await q.query(`CREATE FUNCTION data_room_reading() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO data_room_actions (workspace_id, key, kind, at, us, agent_id, metric_id, metric_name, old_value, value, na, as_of, note)
        VALUES (NEW.workspace_id, 'reading:' || NEW.id, 'reading', NEW.at, ${US('NEW.at')}, NEW.agent_id, NEW.metric_id, NEW.metric_name,
                NEW.old_value, NEW.new_value, NEW.na, NEW.as_of, NEW.note)
        ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER data_room_reading AFTER INSERT ON metric_updates FOR EACH ROW EXECUTE FUNCTION data_room_reading()`);

    await q.query(`CREATE FUNCTION data_room_decision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO data_room_actions (workspace_id, key, kind, at, us, agent_id, proposal_id, title, decision, spam)
        VALUES (NEW.workspace_id, 'proposal:' || NEW.id, 'proposal', NEW.decided_at, ${US('NEW.decided_at')}, NEW.decided_by, NEW.id,
                NEW.title, NEW.status, NEW.spam)
        ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER data_room_decision AFTER UPDATE OF decided_at ON proposals FOR EACH ROW
      WHEN (OLD.decided_at IS NULL AND NEW.decided_at IS NOT NULL) EXECUTE FUNCTION data_room_decision()`);

    // Only a change of status fires it: the trades' updates of a book never name status.
    await q.query(`CREATE FUNCTION data_room_book_end() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE k text := CASE WHEN NEW.status = 'resolved' THEN 'settlement' ELSE 'void' END;
      BEGIN
        INSERT INTO data_room_actions (workspace_id, key, kind, at, us, metric_id, metric_name, value, proposal_id, market_id, target_date, branch, settled_early, reason)
        VALUES (NEW.workspace_id, k || ':' || NEW.id, k, NEW.resolved_at, ${US('NEW.resolved_at')}, NEW.metric_id,
                (SELECT name FROM metrics WHERE id = NEW.metric_id), NEW.resolved_value, NEW.proposal_id, NEW.id, NEW.target_date, NEW.branch,
                NEW.settled_early, CASE WHEN NEW.status = 'resolved' THEN NEW.settle_reason ELSE NEW.void_reason END)
        ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER data_room_book_end AFTER UPDATE OF status ON markets FOR EACH ROW
      WHEN (NEW.status IN ('resolved','voided') AND OLD.status IS DISTINCT FROM NEW.status AND NEW.resolved_at IS NOT NULL)
      EXECUTE FUNCTION data_room_book_end()`);

    // What was logged before: copied with the names it has now (the best the old rows can give).
    await q.query(`INSERT INTO data_room_actions (workspace_id, key, kind, at, us, agent_id, metric_id, metric_name, field, from_text, to_text)
      SELECT r.workspace_id, 'metric:' || r.id, 'metric', r.at, ${US('r.at')}, r.agent_id, r.metric_id,
             CASE WHEN r.field = 'name' THEN r.new_value ELSE mt.name END, r.field, r.old_value, r.new_value
        FROM metric_revisions r LEFT JOIN metrics mt ON mt.id = r.metric_id`);
    await q.query(`INSERT INTO data_room_actions (workspace_id, key, kind, at, us, agent_id, metric_id, metric_name, old_value, value, na, as_of, note)
      SELECT u.workspace_id, 'reading:' || u.id, 'reading', u.at, ${US('u.at')}, u.agent_id, u.metric_id, u.metric_name, u.old_value, u.new_value, u.na, u.as_of, u.note
        FROM metric_updates u`);
    await q.query(`INSERT INTO data_room_actions (workspace_id, key, kind, at, us, agent_id, proposal_id, title, decision, spam)
      SELECT p.workspace_id, 'proposal:' || p.id, 'proposal', p.decided_at, ${US('p.decided_at')}, p.decided_by, p.id, p.title, p.status, p.spam
        FROM proposals p WHERE p.decided_at IS NOT NULL`);
    await q.query(`INSERT INTO data_room_actions (workspace_id, key, kind, at, us, metric_id, metric_name, value, proposal_id, market_id, target_date, branch, settled_early, reason)
      SELECT mk.workspace_id, (CASE WHEN mk.status = 'resolved' THEN 'settlement' ELSE 'void' END) || ':' || mk.id,
             CASE WHEN mk.status = 'resolved' THEN 'settlement' ELSE 'void' END, mk.resolved_at, ${US('mk.resolved_at')}, mk.metric_id, mt.name,
             mk.resolved_value, mk.proposal_id, mk.id, mk.target_date, mk.branch, mk.settled_early,
             CASE WHEN mk.status = 'resolved' THEN mk.settle_reason ELSE mk.void_reason END
        FROM markets mk LEFT JOIN metrics mt ON mt.id = mk.metric_id
       WHERE mk.status IN ('resolved','voided') AND mk.resolved_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS data_room_book_end ON markets`);
    await q.query(`DROP TRIGGER IF EXISTS data_room_decision ON proposals`);
    await q.query(`DROP TRIGGER IF EXISTS data_room_reading ON metric_updates`);
    await q.query(`DROP TRIGGER IF EXISTS data_room_revision ON metric_revisions`);
    await q.query(`DROP TABLE IF EXISTS data_room_actions`);
    for (const f of ['data_room_book_end', 'data_room_decision', 'data_room_reading', 'data_room_revision', 'data_room_actions_keep']) await q.query(`DROP FUNCTION IF EXISTS ${f}()`);
  }
}
