CREATE TABLE campaigns (
  campaign_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  settings TEXT NOT NULL,
  paused_reason TEXT,
  created_at TEXT NOT NULL,
  tokens DOUBLE PRECISION NOT NULL,
  tokens_at BIGINT NOT NULL
);
CREATE TABLE campaign_rows (
  campaign_id TEXT NOT NULL,
  row_no INTEGER NOT NULL,
  number TEXT NOT NULL,
  time_zone TEXT,
  variables TEXT NOT NULL,
  line INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at BIGINT NOT NULL,
  outcome TEXT,
  reason TEXT,
  claimed_by TEXT,
  lease_until BIGINT,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (campaign_id, row_no),
  UNIQUE (campaign_id, number)
);
CREATE INDEX campaign_rows_due ON campaign_rows (campaign_id, status, next_at, row_no);
CREATE INDEX campaign_rows_lease ON campaign_rows (status, lease_until);
CREATE TABLE campaign_attempts (
  campaign_id TEXT NOT NULL,
  row_no INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  instance TEXT NOT NULL,
  call_id TEXT,
  started_at BIGINT NOT NULL,
  ended_at BIGINT,
  outcome TEXT,
  reason TEXT,
  analysis TEXT,
  PRIMARY KEY (campaign_id, row_no, attempt)
);
CREATE INDEX campaign_attempts_call ON campaign_attempts (call_id);
-- Each bridge's calls in progress per campaign and when it last asked for rows: the concurrency
-- cap is counted over them (no count of the rows per claim), and a bridge takes its share of it.
CREATE TABLE campaign_bridges (
  campaign_id TEXT NOT NULL,
  instance TEXT NOT NULL,
  live INTEGER NOT NULL,
  seen_at BIGINT NOT NULL,
  PRIMARY KEY (campaign_id, instance)
);
