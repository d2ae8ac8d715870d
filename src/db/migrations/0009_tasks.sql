-- Background tasks (TmsTask, spec §2 and §3, decision D10.3; our decisions P80–P89 in docs/decisions.md).
-- Every row carries client_id (D1.1); a task's file lives in task_file_chunk, so every service process sharing
-- the database can stream it back. Times are kept to the millisecond, as the API shows them, so a date filter
-- given a date the API returned matches that very task.
CREATE TABLE task (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint REFERENCES organization (id),
  user_id bigint NOT NULL REFERENCES app_user (id),
  type text NOT NULL,
  name text,
  entity_id bigint,
  service text,
  -- The language of `message` (the creating user's, P85).
  lang text NOT NULL CHECK (lang IN ('ru', 'en')),
  -- json, not jsonb: the text comes back exactly as it was given (key order included).
  properties json,
  status text NOT NULL DEFAULT 'CREATED' CHECK (
    status IN ('CREATED', 'RUNNING', 'FINISHED', 'ERROR', 'RESTARTING', 'INTERRUPTING', 'INTERRUPTED')
  ),
  progress integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  processed_quantity integer NOT NULL DEFAULT 0 CHECK (processed_quantity >= 0),
  -- Runs started so far; a run writes only while the row still carries its number (P82).
  attempt integer NOT NULL DEFAULT 0,
  retry_number integer NOT NULL DEFAULT 0,
  retry_date timestamptz(3),
  message text,
  message_params json,
  -- The last unexpected error of a run, for operators; never returned by the API.
  failure text,
  -- The pg-boss job that runs the task next (or now); a job with another id is stale.
  job_id uuid NOT NULL,
  -- Stamped by the running process every TASK_HEARTBEAT_SECONDS; a stale stamp means the process died (P83).
  heartbeat_date timestamptz(3),
  file_name text,
  file_content_type text,
  file_size bigint,
  -- The run whose chunks make the file.
  file_attempt integer,
  created_date timestamptz(3) NOT NULL DEFAULT now(),
  start_date timestamptz(3),
  finish_date timestamptz(3)
);
CREATE INDEX task_client_idx ON task (client_id, id DESC);
CREATE INDEX task_client_created_idx ON task (client_id, created_date);
-- The sweep's two questions: which unfinished tasks lost their process or their job, which finished ones expired.
CREATE INDEX task_unfinished_idx ON task (status, heartbeat_date)
  WHERE status IN ('CREATED', 'RUNNING', 'RESTARTING', 'INTERRUPTING');
CREATE INDEX task_finished_idx ON task (finish_date) WHERE status IN ('FINISHED', 'ERROR', 'INTERRUPTED');

-- A task's file as ordered chunks of about 1 MiB, per run: a run that lost its task never mixes its bytes with
-- the run that replaced it. Deleted with the task.
CREATE TABLE task_file_chunk (
  task_id bigint NOT NULL REFERENCES task (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  number integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (task_id, attempt, number)
);
-- Files are mostly compressed already (XLSX is a zip): store them out of line without another compression pass.
ALTER TABLE task_file_chunk ALTER COLUMN data SET STORAGE EXTERNAL;
