-- Data at scale (issue 12): rollups that make the admin stats and usage reports bounded reads, the indexes
-- they and retention need, and the AiJob indexes no query plan used (see docs/data-at-scale.md).

-- Finished jobs per hour × type × terminal state, for hours the maintenance run has closed.
CREATE TABLE `AiJobFinishedHourly` (
    `hour` DATETIME(3) NOT NULL,
    `jobType` VARCHAR(64) NOT NULL,
    `lifecycleStatus` ENUM('queued', 'running', 'succeeded', 'failed', 'cancelled') NOT NULL,
    `jobs` INTEGER NOT NULL,

    PRIMARY KEY (`hour`, `jobType`, `lifecycleStatus`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- All-time finished jobs per type × terminal state, up to the same watermark.
CREATE TABLE `AiJobFinishedTotal` (
    `jobType` VARCHAR(64) NOT NULL,
    `lifecycleStatus` ENUM('queued', 'running', 'succeeded', 'failed', 'cancelled') NOT NULL,
    `jobs` BIGINT NOT NULL,

    PRIMARY KEY (`jobType`, `lifecycleStatus`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- Usage ledger per UTC day × job type × provider/model × credential mode.
CREATE TABLE `AiUsageDaily` (
    `day` DATE NOT NULL,
    `jobType` VARCHAR(64) NOT NULL,
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `credentialMode` ENUM('platform_key', 'user_deepseek_key') NOT NULL,
    `calls` INTEGER NOT NULL,
    `promptTokens` BIGINT NOT NULL,
    `completionTokens` BIGINT NOT NULL,
    `totalTokens` BIGINT NOT NULL,
    `costUsd` DECIMAL(18, 8) NOT NULL,

    PRIMARY KEY (`day`, `jobType`, `provider`, `model`, `credentialMode`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- The same per user.
CREATE TABLE `AiUsageUserDaily` (
    `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    `day` DATE NOT NULL,
    `jobType` VARCHAR(64) NOT NULL,
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `credentialMode` ENUM('platform_key', 'user_deepseek_key') NOT NULL,
    `calls` INTEGER NOT NULL,
    `promptTokens` BIGINT NOT NULL,
    `completionTokens` BIGINT NOT NULL,
    `totalTokens` BIGINT NOT NULL,
    `costUsd` DECIMAL(18, 8) NOT NULL,

    INDEX `AiUsageUserDaily_day_idx`(`day`),
    PRIMARY KEY (`userId`, `day`, `jobType`, `provider`, `model`, `credentialMode`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- How far each rollup has aggregated: everything before `coveredUntil` is in the rollup tables.
CREATE TABLE `AiRollupWatermark` (
    `name` VARCHAR(64) NOT NULL,
    `coveredUntil` DATETIME(3) NOT NULL,
    `updatedAt` DATETIME(3) NOT NULL,

    PRIMARY KEY (`name`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- AiJob: finished-per-window counts and open-state counts (status, finishedAt, jobType: covering) replace
-- (status, createdAt); (jobType, status) replaces (jobType, status, createdAt): InnoDB appends the primary
-- key, so the admin list `WHERE jobType = ? AND status = ? ORDER BY id DESC LIMIT n` reads the index
-- backwards without sorting every match, and opt-in deletion finds a type's oldest jobs first.
-- No query used the queueName or createdAt-only indexes.
CREATE INDEX `AiJob_lifecycleStatus_finishedAt_jobType_idx` ON `AiJob`(`lifecycleStatus`, `finishedAt`, `jobType`);
CREATE INDEX `AiJob_jobType_lifecycleStatus_idx` ON `AiJob`(`jobType`, `lifecycleStatus`);
DROP INDEX `AiJob_lifecycleStatus_createdAt_idx` ON `AiJob`;
DROP INDEX `AiJob_jobType_lifecycleStatus_createdAt_idx` ON `AiJob`;
DROP INDEX `AiJob_queueName_lifecycleStatus_createdAt_idx` ON `AiJob`;
DROP INDEX `AiJob_createdAt_idx` ON `AiJob`;

-- The usage rollup reads the ledger by time (closed days, and today live).
CREATE INDEX `AiUsageLog_createdAt_idx` ON `AiUsageLog`(`createdAt`);
