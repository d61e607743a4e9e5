/**
 * Local stand-in for the EventBridge route when no EventBridge emulator runs: each job event is printed as
 * one line (type, job id — never the detail's other fields) and counted as sent.
 */
import type { OutboxRoute } from '../../outbox/routes.ts';

export function logEventRoute(log: (line: string) => void): OutboxRoute {
  return {
    async send(rows) {
      for (const row of rows) log(`event ${row.eventType} job=${row.aggregateId}`);
      return rows.map((row) => ({ id: row.id, result: 'sent' as const }));
    },
  };
}
