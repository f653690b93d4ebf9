-- Calls the bridge ended at shutdown were counted as the caller hanging up (the outcome was read
-- from the end reason then): their rows get the outcome they had, bridge_shutdown. Calls ended
-- from now on carry their outcome in their call-end.
UPDATE calls SET outcome = 'bridge_shutdown' WHERE end_reason = 'bridge shut down';
