-- A claimed outbox row (`processing`) now keeps its lease end in `availableAt` (claim time + lock TTL), so the
-- dispatcher finds expired claims through `(status, availableAt)`, the index it already uses for due rows,
-- and the second status index goes. Each claim and each publish then rewrites one secondary index entry
-- instead of two.

-- Rows claimed before this migration carry their old due time: give them the lease they were claimed with
-- (60 s), so they are not released early.
UPDATE `OutboxEvent`
SET `availableAt` = DATE_ADD(`lockedAt`, INTERVAL 60 SECOND)
WHERE `status` = 'processing' AND `lockedAt` IS NOT NULL;

-- DropIndex
DROP INDEX `OutboxEvent_status_lockedAt_idx` ON `OutboxEvent`;
