-- Outbound calls (POST /calls): why dialling failed (the SIP status or Twilio's reason) and what
-- answering-machine detection decided (JSON: result, decidedAfterMs, beepEndedAtMs).
ALTER TABLE calls ADD COLUMN dial_reason TEXT;
ALTER TABLE calls ADD COLUMN amd TEXT;
CREATE INDEX calls_by_direction ON calls (direction, started_at);
