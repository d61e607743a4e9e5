-- Provider capacity and spend, shared by every consumer (docs/budgets.md). Every limit is a row, and taking from
-- it is one guarded UPDATE whose affected rows decide; expiry is a column a sweeper reads through an index.
-- Every column of these tables is an identifier or a number: the tables compare exactly (utf8mb4_bin).

-- Per provider and model: the limits (seeded from the stage's configuration, overridden by admins) and the state
-- every consumer shares: calls in flight, the cooldown after a 429, and the admitted rate's cut.
CREATE TABLE `ProviderLimit` (
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `rpm` INTEGER NOT NULL,
    `tpm` INTEGER NOT NULL,
    `maxInFlight` INTEGER NOT NULL,
    `source` VARCHAR(16) NOT NULL,
    `updatedBy` VARCHAR(128) NULL,
    `updatedAt` DATETIME(3) NOT NULL,
    `inFlight` INTEGER NOT NULL DEFAULT 0,
    `cooldownUntil` DATETIME(3) NULL,
    `rateFactor` INTEGER NOT NULL DEFAULT 1000,

    PRIMARY KEY (`provider`, `model`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- A model's minute window (the database's UTC minute): requests admitted and tokens reserved in it.
CREATE TABLE `ProviderWindow` (
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `windowStart` DATETIME(3) NOT NULL,
    `requests` INTEGER NOT NULL DEFAULT 0,
    `tokens` INTEGER NOT NULL DEFAULT 0,

    INDEX `ProviderWindow_windowStart_idx`(`windowStart`),
    PRIMARY KEY (`provider`, `model`, `windowStart`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- Requests admitted per user in a model's minute window: the fairness rank among waiting jobs.
CREATE TABLE `ProviderUserWindow` (
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `windowStart` DATETIME(3) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `requests` INTEGER NOT NULL DEFAULT 0,

    INDEX `ProviderUserWindow_windowStart_idx`(`windowStart`),
    PRIMARY KEY (`provider`, `model`, `windowStart`, `userId`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- One reservation (hold) of one provider call: what it took from the window, the calls in flight and each spend
-- counter (the counters' period keys; NULL where it was not charged), until it is settled or expires. `ahead*`: the
-- requests and tokens of due waiting jobs ranked before it, left free for them when it was taken.
CREATE TABLE `CapacityHold` (
    `id` VARCHAR(26) NOT NULL,
    `holdKey` VARCHAR(191) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `jobType` VARCHAR(64) NOT NULL,
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `windowStart` DATETIME(3) NULL,
    `tokens` INTEGER NOT NULL,
    `costUsd` DECIMAL(14, 8) NOT NULL,
    `userDay` DATE NULL,
    `userMonth` DATE NULL,
    `jobTypeDay` DATE NULL,
    `platformDay` DATE NULL,
    `aheadRequests` INTEGER NOT NULL DEFAULT 0,
    `aheadTokens` INTEGER NOT NULL DEFAULT 0,
    `state` VARCHAR(16) NOT NULL,
    `actualTokens` INTEGER NULL,
    `actualUsd` DECIMAL(14, 8) NULL,
    `expiresAt` DATETIME(3) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL,

    UNIQUE INDEX `CapacityHold_holdKey_key`(`holdKey`),
    INDEX `CapacityHold_expiresAt_idx`(`expiresAt`),
    INDEX `CapacityHold_jobId_idx`(`jobId`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- A job waiting for provider capacity or a spend cap: why, until when, and its rank (priority) among waiters.
CREATE TABLE `CapacityWait` (
    `jobId` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `provider` VARCHAR(64) NULL,
    `model` VARCHAR(128) NULL,
    `priority` INTEGER NOT NULL,
    `tokens` INTEGER NOT NULL DEFAULT 0,
    `reason` VARCHAR(32) NOT NULL,
    `dueAt` DATETIME(3) NOT NULL,
    `since` DATETIME(3) NOT NULL,
    `waits` INTEGER NOT NULL DEFAULT 0,
    `updatedAt` DATETIME(3) NOT NULL,

    INDEX `CapacityWait_provider_model_dueAt_idx`(`provider`, `model`, `dueAt`),
    INDEX `CapacityWait_dueAt_idx`(`dueAt`),
    PRIMARY KEY (`jobId`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- Spend caps in USD: `subject` '*' is the scope's default (from the stage's configuration, or an admin's), any
-- other subject an admin's override for that user or job type.
CREATE TABLE `SpendCap` (
    `scope` VARCHAR(16) NOT NULL,
    `subject` VARCHAR(64) NOT NULL,
    `capUsd` DECIMAL(14, 8) NOT NULL,
    `source` VARCHAR(16) NOT NULL,
    `updatedBy` VARCHAR(128) NULL,
    `updatedAt` DATETIME(3) NOT NULL,

    PRIMARY KEY (`scope`, `subject`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- Spend per scope × subject × UTC period (day or month): reserved by calls in flight, settled by calls done.
CREATE TABLE `SpendCounter` (
    `scope` VARCHAR(16) NOT NULL,
    `subject` VARCHAR(64) NOT NULL,
    `periodStart` DATE NOT NULL,
    `reservedUsd` DECIMAL(14, 8) NOT NULL DEFAULT 0,
    `settledUsd` DECIMAL(14, 8) NOT NULL DEFAULT 0,

    INDEX `SpendCounter_periodStart_idx`(`periodStart`),
    PRIMARY KEY (`scope`, `subject`, `periodStart`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
