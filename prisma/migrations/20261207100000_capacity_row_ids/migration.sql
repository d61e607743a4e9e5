-- The rows a reservation takes from get a short integer primary key, their natural key kept as a unique index.
-- A multi-table UPDATE (the reservation's guarded UPDATE, the settlement) collects the row ids of every table it
-- changes but the first in an internal temporary table keyed by the table's primary key; keys of up to ~1 KB
-- (utf8mb4 provider, model and user) made MariaDB create each on disk (an Aria table: files created, written and
-- removed per statement), five per job. Integer row ids keep them in memory. Nothing reads these rows by `id`.

-- AlterTable
ALTER TABLE `ProviderLimit` DROP PRIMARY KEY,
    ADD COLUMN `id` INTEGER NOT NULL AUTO_INCREMENT FIRST,
    ADD PRIMARY KEY (`id`),
    ADD UNIQUE INDEX `ProviderLimit_provider_model_key`(`provider`, `model`);

-- AlterTable
ALTER TABLE `ProviderWindow` DROP PRIMARY KEY,
    ADD COLUMN `id` BIGINT NOT NULL AUTO_INCREMENT FIRST,
    ADD PRIMARY KEY (`id`),
    ADD UNIQUE INDEX `ProviderWindow_provider_model_windowStart_key`(`provider`, `model`, `windowStart`);

-- AlterTable
ALTER TABLE `ProviderUserWindow` DROP PRIMARY KEY,
    ADD COLUMN `id` BIGINT NOT NULL AUTO_INCREMENT FIRST,
    ADD PRIMARY KEY (`id`),
    ADD UNIQUE INDEX `ProviderUserWindow_provider_model_windowStart_userId_key`(`provider`, `model`, `windowStart`, `userId`);
