-- Call records: one row per call, its events in order (the record as it happened), its spoken
-- turns with the per-turn metrics, the turns' words for full-text search, and end-of-call report
-- delivery. Outbound calls come later through a migration (direction and dial outcome are here).
CREATE TABLE calls (
  call_id TEXT PRIMARY KEY,
  -- The bridge instance that took the call (BRIDGE_INSTANCE, default the host name).
  instance TEXT NOT NULL,
  transport TEXT NOT NULL,
  direction TEXT NOT NULL DEFAULT 'inbound',
  from_number TEXT,
  to_number TEXT,
  -- The agent that answered, once agents exist; NULL until then.
  agent TEXT,
  -- ISO 8601 UTC with milliseconds (Date.toISOString), so text order is time order.
  started_at TEXT NOT NULL,
  ended_at TEXT,
  end_reason TEXT,
  outcome TEXT,
  duration_ms INTEGER,
  turns INTEGER NOT NULL DEFAULT 0,
  -- Where the recording is: the instance that wrote it and its path there.
  recording_instance TEXT,
  recording_path TEXT,
  -- Outbound calls: how dialling went (later).
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
  -- The event exactly as the session recorded it (JSON).
  body TEXT NOT NULL,
  PRIMARY KEY (call_id, seq)
) WITHOUT ROWID;

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
  eou_delay_ms REAL,
  asr_ms REAL,
  llm_ttft_ms REAL,
  tts_first_audio_ms REAL,
  voice_to_voice_ms REAL,
  barge_in_ms REAL,
  PRIMARY KEY (call_id, seq)
) WITHOUT ROWID;

-- The words of every turn (either side), for GET /calls?q=.
CREATE VIRTUAL TABLE turn_words USING fts5 (call_id UNINDEXED, text, tokenize = 'unicode61');

CREATE TABLE reports (
  report_id TEXT PRIMARY KEY,
  call_id TEXT NOT NULL,
  -- pending, delivered, rejected
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  updated_at TEXT NOT NULL
);
CREATE INDEX reports_by_call ON reports (call_id);

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
