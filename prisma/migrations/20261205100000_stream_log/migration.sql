-- The live-job stream log (docs/streaming.md, "The stream log"). A job's log is its status entries (its
-- AiJobTransition rows, each now with the position `seq` it has in the log) and its chunks (AiJobStreamChunk:
-- what a running attempt previews of its output), ordered by one `seq` per job.
--
-- No row is added per transition: the audit row a transition already writes is its status entry. Jobs created
-- before this migration keep `seq` NULL on their earlier transitions; their log starts at their next one.

-- `seq` of the job's latest status entry: each transition sets it past every `seq` the job has, in its
-- compare-and-set (an instant ADD COLUMN on MySQL 8 and MariaDB 10.11).
ALTER TABLE `AiJob` ADD COLUMN `statusSeq` INTEGER NOT NULL DEFAULT 0;

ALTER TABLE `AiJobTransition`
    ADD COLUMN `seq` INTEGER NULL,
    ADD COLUMN `attempt` INTEGER NULL,
    ADD COLUMN `publicMessage` VARCHAR(512) NULL,
    ADD COLUMN `retryAt` DATETIME(3) NULL;

-- A job's status entries by position (the read of `GET /api/ai/jobs/{jobId}/stream`), unique: no two entries of
-- a job share a `seq`. It replaces (jobId, createdAt), which no query needed beyond its leading jobId (the
-- foreign key's index, which this one now is: created before the old one is dropped).
CREATE UNIQUE INDEX `AiJobTransition_jobId_seq_key` ON `AiJobTransition`(`jobId`, `seq`);
DROP INDEX `AiJobTransition_jobId_createdAt_idx` ON `AiJobTransition`;

-- Chunks by (job, seq): appended in order by the lease holder, read in order from a position, deleted by
-- retention oldest job first (job ids are ULIDs: creation order).
CREATE TABLE `AiJobStreamChunk` (
    `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    `seq` INTEGER NOT NULL,
    `attempt` INTEGER NOT NULL,
    `type` ENUM('text', 'item') NOT NULL,
    `field` VARCHAR(64) NOT NULL,
    `itemIndex` INTEGER NULL,
    `content` TEXT NOT NULL,
    `createdAt` DATETIME(3) NOT NULL,

    PRIMARY KEY (`jobId`, `seq`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

ALTER TABLE `AiJobStreamChunk` ADD CONSTRAINT `AiJobStreamChunk_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
