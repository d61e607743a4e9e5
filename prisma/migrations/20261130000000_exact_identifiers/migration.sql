-- Identifier columns compare exactly (utf8mb4_bin), not under the tables' default utf8mb4_unicode_ci.
--
-- Why: under unicode_ci, `userId = 'alice'` also matched 'ALICE' (and 'Alicé'), so two JWT subjects that
-- differ only in case shared idempotency keys, job lists and stored provider keys. Job and outbox ids are
-- ULIDs, and every primary-key lookup, IN list and join on them paid for Unicode collation weights: a profile
-- of the outbox dispatcher put ~20% of MariaDB's CPU in collation code.
--
-- Foreign keys pin the collation of both ends, so they are dropped, the columns changed, and the keys added
-- back exactly as before. Changing a collation rebuilds the table (writes wait meanwhile): run it before
-- the tables grow, or in a maintenance window.

-- DropForeignKey
ALTER TABLE `AiJob` DROP FOREIGN KEY `AiJob_parentJobId_fkey`;
ALTER TABLE `AiJobSnapshot` DROP FOREIGN KEY `AiJobSnapshot_jobId_fkey`;
ALTER TABLE `AiJobArtifact` DROP FOREIGN KEY `AiJobArtifact_jobId_fkey`;
ALTER TABLE `AiJobTransition` DROP FOREIGN KEY `AiJobTransition_jobId_fkey`;
ALTER TABLE `AiUsageLog` DROP FOREIGN KEY `AiUsageLog_jobId_fkey`;
ALTER TABLE `FeynmanEvaluation` DROP FOREIGN KEY `FeynmanEvaluation_jobId_fkey`;
ALTER TABLE `QuizQuestion` DROP FOREIGN KEY `QuizQuestion_jobId_fkey`;
ALTER TABLE `Flashcard` DROP FOREIGN KEY `Flashcard_jobId_fkey`;

-- AlterTable
ALTER TABLE `AiJob`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `targetId` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `idempotencyKey` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    MODIFY `credentialId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    MODIFY `parentJobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    MODIFY `lockedBy` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL;

ALTER TABLE `AiJobSnapshot`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `AiJobArtifact`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `AiJobTransition`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `OutboxEvent`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `aggregateId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `dedupeKey` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `messageGroupId` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    MODIFY `lockedBy` VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL;

ALTER TABLE `AiUsageLog`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `UserModelCredential`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `FeynmanEvaluation`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `QuizQuestion`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

ALTER TABLE `Flashcard`
    MODIFY `id` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `jobId` VARCHAR(26) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY `userId` VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

-- AddForeignKey
ALTER TABLE `AiJob` ADD CONSTRAINT `AiJob_parentJobId_fkey` FOREIGN KEY (`parentJobId`) REFERENCES `AiJob`(`id`) ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE `AiJobSnapshot` ADD CONSTRAINT `AiJobSnapshot_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE `AiJobArtifact` ADD CONSTRAINT `AiJobArtifact_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE `AiJobTransition` ADD CONSTRAINT `AiJobTransition_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE `AiUsageLog` ADD CONSTRAINT `AiUsageLog_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE `FeynmanEvaluation` ADD CONSTRAINT `FeynmanEvaluation_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE `QuizQuestion` ADD CONSTRAINT `QuizQuestion_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE `Flashcard` ADD CONSTRAINT `Flashcard_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
