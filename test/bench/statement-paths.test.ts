/**
 * bench:statement-costs measures one script of each path, found by bench/peers/statement-paths.ts's rules applied
 * to a whole round trip's statements (`pathOfStatements`): the scripts a job sends, as the general log shows them.
 */
import { describe, expect, it } from 'vitest';
import { pathOfStatements } from '../../bench/peers/statement-paths.ts';

const script = (...statements: string[]) => ['START TRANSACTION', ...statements, 'COMMIT'];

describe('pathOfStatements', () => {
  it('names the path of each script a job sends', () => {
    expect(pathOfStatements(script(
      "SELECT (SELECT 1 UNION ALL SELECT 1 FROM DUAL WHERE (SELECT COUNT(*) FROM AiJob WHERE userId = 'u' AND createdAt >= '2026-12-2 0:0:0' AND jobType = 'quiz_generation') >= 200) AS withinLimits",
      "INSERT INTO `AiJob` (`id`, `userId`) VALUES ('j', 'u')",
      "INSERT INTO `OutboxEvent` (`id`, `eventType`) VALUES ('o', 'ai.job.enqueue')",
    ), 'db')).toBe('create');
    expect(pathOfStatements(script(
      "UPDATE `AiJob` SET lifecycleStatus = 'running', leaseVersion = leaseVersion + 1 WHERE id = 'j'",
      "INSERT INTO `AiJobTransition` (id, jobId) SELECT 't', id FROM `AiJob` WHERE id = 'j'",
    ), 'db')).toBe('lock');
    expect(pathOfStatements(script(
      "INSERT INTO `ProviderLimit` (provider, model) VALUES ('mock', 'mock-chat') ON DUPLICATE KEY UPDATE rpm = rpm",
      "UPDATE `CapacityHold` h JOIN `ProviderLimit` l ON l.provider = h.provider SET h.state = 'held' WHERE h.holdKey = 'k'",
    ), 'db')).toBe('capacity');
    expect(pathOfStatements(script(
      "UPDATE `AiJob` SET lifecycleStatus = 'succeeded', finishedAt = '2026-12-2 0:0:1' WHERE id = 'j'",
      "INSERT INTO `AiUsageLog` (`id`) VALUES ('l')",
      "INSERT INTO `QuizQuestion` (`id`) VALUES ('q')",
    ), 'db')).toBe('project');
  });

  it('reads through the database qualifiers Prisma writes', () => {
    expect(pathOfStatements(['SELECT `db`.`AiJob`.`id` FROM `db`.`AiJob` WHERE `db`.`AiJob`.`id` = ?'], 'db')).toBe('run');
  });
});
