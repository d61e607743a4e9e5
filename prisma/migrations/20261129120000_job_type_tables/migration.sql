-- CreateTable
CREATE TABLE `FeynmanEvaluation` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `concept` VARCHAR(255) NOT NULL,
    `score` INTEGER NOT NULL,
    `gaps` JSON NOT NULL,
    `feedback` TEXT NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `FeynmanEvaluation_jobId_key`(`jobId`),
    INDEX `FeynmanEvaluation_userId_createdAt_idx`(`userId`, `createdAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `QuizQuestion` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `ordinal` INTEGER NOT NULL,
    `question` TEXT NOT NULL,
    `options` JSON NOT NULL,
    `answerIndex` INTEGER NOT NULL,
    `explanation` TEXT NOT NULL,
    `difficulty` VARCHAR(16) NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `QuizQuestion_jobId_ordinal_key`(`jobId`, `ordinal`),
    INDEX `QuizQuestion_userId_createdAt_idx`(`userId`, `createdAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- CreateTable
CREATE TABLE `Flashcard` (
    `id` VARCHAR(26) NOT NULL,
    `jobId` VARCHAR(26) NOT NULL,
    `userId` VARCHAR(64) NOT NULL,
    `ordinal` INTEGER NOT NULL,
    `front` TEXT NOT NULL,
    `back` TEXT NOT NULL,
    `createdAt` DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),

    UNIQUE INDEX `Flashcard_jobId_ordinal_key`(`jobId`, `ordinal`),
    INDEX `Flashcard_userId_createdAt_idx`(`userId`, `createdAt`),
    PRIMARY KEY (`id`)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;

-- AddForeignKey
ALTER TABLE `FeynmanEvaluation` ADD CONSTRAINT `FeynmanEvaluation_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `QuizQuestion` ADD CONSTRAINT `QuizQuestion_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE `Flashcard` ADD CONSTRAINT `Flashcard_jobId_fkey` FOREIGN KEY (`jobId`) REFERENCES `AiJob`(`id`) ON DELETE RESTRICT ON UPDATE CASCADE;
