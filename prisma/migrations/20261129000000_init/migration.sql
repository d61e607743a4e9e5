-- CreateTable
CREATE TABLE `AiJob` (
    `id` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `jobType` VARCHAR(64) NOT NULL,
    `triggerType` VARCHAR(32) NOT NULL,
    `targetType` VARCHAR(64) NOT NULL,
    `targetId` VARCHAR(128) NOT NULL,
    `idempotencyKey` VARCHAR(128) NULL,
    `inputHash` CHAR(64) NOT NULL,
    `lifecycleStatus` ENUM('queued', 'running', 'succeeded', 'failed', 'cancelled') NOT NULL DEFAULT 'queued',
    `queueName` VARCHAR(32) NOT NULL,
    `priority` INTEGER NOT NULL,
    `attemptCount` INTEGER NOT NULL DEFAULT 0,
    `maxAttempts` INTEGER NOT NULL,
    `timeoutMs` INTEGER NOT NULL,
    `inputSchemaVersion` VARCHAR(32) NOT NULL,
    `outputSchemaVersion` VARCHAR(32) NOT NULL,
    `promptKey` VARCHAR(64) NOT NULL,
    `promptVersion` VARCHAR(32) NOT NULL,
    `modelTier` VARCHAR(32) NOT NULL,
    `modelProvider` VARCHAR(64) NULL,
    `modelName` VARCHAR(128) NULL,
    `credentialMode` ENUM('platform_key', 'user_deepseek_key') NOT NULL,
    `credentialId` VARCHAR(26) NULL,
    `lockedBy` VARCHAR(128) NULL,
    `lockedAt` DATETIME(3) NULL,
    `lockUntil` DATETIME(3) NULL,
    `leaseVersion` INTEGER NOT NULL DEFAULT 0,
    `cancelRequestedAt` DATETIME(3) NULL,
    `progress` INTEGER NOT NULL DEFAULT 0,
    `startedAt` DATETIME(3) NULL,
    `finishedAt` DATETIME(3) NULL,
    `errorCode` VARCHAR(64) NULL,
    `publicErrorMessage` VARCHAR(512) NULL,
    `internalErrorMessage` TEXT NULL,
    `outputHash` CHAR(64) NULL,
    `parentJobId` VARCHAR(26) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `updatedAt` DATETIME(3) NOT NULL,

    INDEX `AiJob_lifecycleStatus_lockUntil_idx`(`lifecycleStatus`, `lockUntil`),
    INDEX `AiJob_userId_lifecycleStatus_jobType_idx`(`userId`, `lifecycleStatus`, `jobType`),
    INDEX `AiJob_userId_createdAt_idx`(`userId`, `createdAt`),
    INDEX `AiJob_jobType_lifecycleStatus_createdAt_idx`(`jobType`, `lifecycleStatus`, `createdAt`),
    INDEX `AiJob_queueName_lifecycleStatus_createdAt_idx`(`queueName`, `lifecycleStatus`, `createdAt`),
    INDEX `AiJob_lifecycleStatus_createdAt_idx`(`lifecycleStatus`, `createdAt`),
    INDEX `AiJob_createdAt_idx`(`createdAt`),
    INDEX `AiJob_parentJobId_idx`(`parentJobId`),
    UNIQUE INDEX `AiJob_userId_jobType_idempotencyKey_key`(`userId`, `jobType`, `idempotencyKey`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `AiJobSnapshot` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `schemaVersion` VARCHAR(32) NOT NULL,
    `content` JSON NOT NULL,
    `contentHash` CHAR(64) NOT NULL,
    `redactionVersion` INTEGER NOT NULL,
    `expiresAt` DATETIME(3) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `AiJobSnapshot_jobId_key`(`jobId`),
    INDEX `AiJobSnapshot_expiresAt_idx`(`expiresAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `AiJobArtifact` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `artifactType` VARCHAR(64) NOT NULL,
    `artifactId` VARCHAR(64) NOT NULL,
    `ordinal` INTEGER NOT NULL DEFAULT 0,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `AiJobArtifact_jobId_artifactType_artifactId_key`(`jobId`, `artifactType`, `artifactId`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `AiJobTransition` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `fromStatus` ENUM('queued', 'running', 'succeeded', 'failed', 'cancelled') NULL,
    `toStatus` ENUM('queued', 'running', 'succeeded', 'failed', 'cancelled') NOT NULL,
    `actor` VARCHAR(128) NOT NULL,
    `reason` VARCHAR(255) NULL,
    `errorCode` VARCHAR(64) NULL,
    `leaseVersion` INTEGER NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `AiJobTransition_jobId_createdAt_idx`(`jobId`, `createdAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `OutboxEvent` (
    `id` VARCHAR(26) NOT NULL,
    `eventType` VARCHAR(64) NOT NULL,
    `aggregateType` VARCHAR(32) NOT NULL,
    `aggregateId` VARCHAR(26) NOT NULL,
    `dedupeKey` VARCHAR(191) NOT NULL,
    `payload` JSON NOT NULL,
    `queueName` VARCHAR(32) NULL,
    `messageGroupId` VARCHAR(128) NULL,
    `status` ENUM('pending', 'processing', 'published', 'failed', 'dead') NOT NULL DEFAULT 'pending',
    `attemptCount` INTEGER NOT NULL DEFAULT 0,
    `availableAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `lockedBy` VARCHAR(128) NULL,
    `lockedAt` DATETIME(3) NULL,
    `publishedAt` DATETIME(3) NULL,
    `lastError` VARCHAR(1024) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `updatedAt` DATETIME(3) NOT NULL,

    UNIQUE INDEX `OutboxEvent_dedupeKey_key`(`dedupeKey`),
    INDEX `OutboxEvent_status_availableAt_idx`(`status`, `availableAt`),
    INDEX `OutboxEvent_status_lockedAt_idx`(`status`, `lockedAt`),
    INDEX `OutboxEvent_aggregateType_aggregateId_idx`(`aggregateType`, `aggregateId`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `AiUsageLog` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `attemptNo` INTEGER NOT NULL,
    `provider` VARCHAR(64) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `credentialMode` ENUM('platform_key', 'user_deepseek_key') NOT NULL,
    `promptTokens` INTEGER NOT NULL DEFAULT 0,
    `completionTokens` INTEGER NOT NULL DEFAULT 0,
    `totalTokens` INTEGER NOT NULL DEFAULT 0,
    `costUsd` DECIMAL(14, 8) NOT NULL DEFAULT 0,
    `priceVersion` VARCHAR(32) NOT NULL,
    `latencyMs` INTEGER NOT NULL,
    `errorCode` VARCHAR(64) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    INDEX `AiUsageLog_jobId_attemptNo_idx`(`jobId`, `attemptNo`),
    INDEX `AiUsageLog_userId_createdAt_idx`(`userId`, `createdAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `UserModelCredential` (
    `id` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `provider` VARCHAR(32) NOT NULL,
    `keyCiphertext` VARBINARY(4096) NOT NULL,
    `dataKeyCiphertext` VARBINARY(1024) NOT NULL,
    `iv` VARBINARY(16) NOT NULL,
    `authTag` VARBINARY(16) NOT NULL,
    `kmsKeyId` VARCHAR(255) NOT NULL,
    `fingerprint` VARCHAR(64) NOT NULL,
    `status` ENUM('active', 'revoked') NOT NULL DEFAULT 'active',
    `revokedAt` DATETIME(3) NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    `updatedAt` DATETIME(3) NOT NULL,

    INDEX `UserModelCredential_userId_provider_status_idx`(`userId`, `provider`, `status`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- AddForeignKey
ALTER TABLE `AiJob` ADD CONSTRAINT `AiJob_parentJobId_fkey` FOREIGN KEY (`parentJobId`) REFERENCES `AiJob`(`id`) ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `AiJobSnapshot` ADD CONSTRAINT `AiJobSnapshot_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `AiJobArtifact` ADD CONSTRAINT `AiJobArtifact_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `AiJobTransition` ADD CONSTRAINT `AiJobTransition_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `AiUsageLog` ADD CONSTRAINT `AiUsageLog_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
