-- Full-text search on the call's row: the words of all its turns in one tsvector, so that a
-- search for several words said in different turns is one GIN lookup on calls, newest first,
-- instead of one lookup per word over the turns. Filled for the calls already stored.
ALTER TABLE calls ADD COLUMN words TSVECTOR NOT NULL DEFAULT ''::tsvector;
UPDATE calls c SET words = to_tsvector('simple', coalesce((
  SELECT string_agg(CASE WHEN t.role = 'assistant' THEN coalesce(t.generated, t.text) ELSE t.text END, ' ' ORDER BY t.seq)
  FROM turns t WHERE t.call_id = c.call_id), ''));
CREATE INDEX calls_words ON calls USING GIN (words);
DROP INDEX turns_words;
