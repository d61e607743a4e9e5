-- AiJob lists read an index in order and stop at the page (docs/data-at-scale.md, "AiJob indexes"): they are
-- ordered by (createdAt DESC, id DESC), and each list filter has an index whose columns end in createdAt
-- (InnoDB appends the primary key id, so the tie-break is in the index too).

-- Admin list without filters, or by creation time alone (also queue / error code, read in order and filtered).
CREATE INDEX `AiJob_createdAt_idx` ON `AiJob`(`createdAt`);
-- Admin list by status; the reaper's queued / running reads (open jobs only).
CREATE INDEX `AiJob_lifecycleStatus_createdAt_idx` ON `AiJob`(`lifecycleStatus`, `createdAt`);
-- Admin list by type and status; opt-in job retention (a type's oldest finished jobs first).
CREATE INDEX `AiJob_jobType_lifecycleStatus_createdAt_idx` ON `AiJob`(`jobType`, `lifecycleStatus`, `createdAt`);
-- A user's list by status (and type); the creation limit's count of a user's active jobs.
CREATE INDEX `AiJob_userId_lifecycleStatus_createdAt_idx` ON `AiJob`(`userId`, `lifecycleStatus`, `createdAt`);

-- Replaced by the (…, createdAt) indexes above.
DROP INDEX `AiJob_jobType_lifecycleStatus_idx` ON `AiJob`;
DROP INDEX `AiJob_userId_lifecycleStatus_jobType_idx` ON `AiJob`;
-- The reaper's reads of running jobs use (lifecycleStatus, createdAt) (open jobs only); this index was
-- rewritten by every lease and heartbeat (lockUntil moves with each).
DROP INDEX `AiJob_lifecycleStatus_lockUntil_idx` ON `AiJob`;
