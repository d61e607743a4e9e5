-- Stored user keys (docs/data-at-scale.md, "Retention"; docs/security.md, "Stored keys"): every PUT of a key adds
-- a row and revokes the previous one, so the table grows with each replacement.

-- Retention deletes revoked keys some days after their revocation, oldest first, through this range.
CREATE INDEX `UserModelCredential_status_revokedAt_idx` ON `UserModelCredential`(`status`, `revokedAt`);
-- The per-user limit on key writes counts a user's rows of the last hour.
CREATE INDEX `UserModelCredential_userId_createdAt_idx` ON `UserModelCredential`(`userId`, `createdAt`);
