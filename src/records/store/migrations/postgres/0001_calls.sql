-- Call records (the same tables as SQLite's 0001_calls.sql, in PostgreSQL's types): one row per
-- call, its events in order, its turns with the per-turn metrics and their words for full-text
-- search, and end-of-call report delivery. Outbound calls come later through a migration.
CREATE TABLE calls (
  call_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  transport TEXT NOT NULL,
  direction TEXT NOT NULL DEFAULT 'inbound',
  from_number TEXT,
  to_number TEXT,
  agent TEXT,
  -- ISO 8601 UTC text with milliseconds, as in SQLite: text order is time order, cursors are exact.
  started_at TEXT NOT NULL,
  ended_at TEXT,
  end_reason TEXT,
  outcome TEXT,
  duration_ms BIGINT,
  turns INTEGER NOT NULL DEFAULT 0,
  recording_instance TEXT,
  recording_path TEXT,
  dial_outcome TEXT
);
CREATE INDEX calls_by_start ON calls (started_at, call_id);
CREATE INDEX calls_by_from ON calls (from_number, started_at);
CREATE INDEX calls_by_to ON calls (to_number, started_at);
CREATE INDEX calls_by_live ON calls (instance) WHERE ended_at IS NULL;

CREATE TABLE events (
  call_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  at TEXT NOT NULL,
  body JSONB NOT NULL,
  PRIMARY KEY (call_id, seq)
);

CREATE TABLE turns (
  call_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  at TEXT NOT NULL,
  text TEXT NOT NULL,
  source TEXT,
  speaker TEXT,
  generated TEXT,
  interrupted INTEGER,
  tools TEXT,
  error TEXT,
  eou_delay_ms DOUBLE PRECISION,
  asr_ms DOUBLE PRECISION,
  llm_ttft_ms DOUBLE PRECISION,
  tts_first_audio_ms DOUBLE PRECISION,
  voice_to_voice_ms DOUBLE PRECISION,
  barge_in_ms DOUBLE PRECISION,
  -- What the turn adds to the search: the caller's words, or what the agent generated.
  words TSVECTOR NOT NULL,
  PRIMARY KEY (call_id, seq)
);
CREATE INDEX turns_words ON turns USING GIN (words);

CREATE TABLE reports (
  report_id TEXT PRIMARY KEY,
  call_id TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  updated_at TEXT NOT NULL
);
CREATE INDEX reports_by_call ON reports (call_id);

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- The bridges on this database and when each last said it was alive (lost instances' calls are
-- ended by the next bridge that notices).
CREATE TABLE instances (
  instance TEXT PRIMARY KEY,
  seen_at TIMESTAMPTZ NOT NULL
);
