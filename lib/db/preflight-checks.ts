/**
 * The preflight's checks (./preflight.ts) as a table: each reads what the application's connection saw and
 * returns its problems, each with what was found, what is expected and what the operator should do. The
 * expected values are lib/db/server-settings.ts, the same the stack's parameter groups set.
 */
import {
  CHARACTER_SET, CLIENT_SQL_MODES, COLLATION, FORBIDDEN_SQL_MODES, SERVER_TIME_ZONE, SESSION_TIME_ZONE, SQL_MODES, TRANSACTION_ISOLATION,
} from './server-settings.ts';

/** One thing the server does not do as the application needs. */
export interface PreflightProblem {
  check: string;
  found: string;
  expected: string;
  /** What it breaks and what to do about it. */
  action: string;
}

/** What the preflight read from one of the application's connections. */
export interface PreflightObservation {
  multiStatementsNegotiated: boolean;
  /** Why the multi-statement query failed or answered wrongly; null when it worked. */
  multiStatementError: string | null;
  settings: {
    sqlMode: string; sessionTimeZone: string; serverTimeZone: string; systemTimeZone: string; offsetSeconds: number;
    charsetClient: string; charsetConnection: string; charsetResults: string; charsetServer: string;
    charsetDatabase: string; collationDatabase: string; maxAllowedPacket: number; version: string; isolation: string;
  };
  /** Why the largest statement failed; null when the server took all of it; 'skipped' when not sent. */
  largeStatement: string | null;
  largestStatementBytes: number;
}

export interface PreflightCheck {
  name: string;
  problems(o: PreflightObservation): PreflightProblem[];
}

const PARAMETERS = 'the stack\'s parameter groups (lib/db/server-settings.ts, infra/data-layer.ts)';
const NEW_SESSIONS = 'A changed dynamic parameter reaches only sessions opened after the change: reboot the writer (and readers) so that RDS Proxy reconnects, then deploy again.';

const multiStatements: PreflightCheck = {
  name: 'multi-statements',
  problems: (o) => {
    if (o.multiStatementsNegotiated && o.multiStatementError === null) return [];
    return [{
      check: 'multi-statements',
      found: o.multiStatementsNegotiated ? `the capability negotiated, but a two-statement query failed: ${o.multiStatementError}`
        : `CLIENT_MULTI_STATEMENTS not negotiated (the server's or proxy's greeting does not offer it, and the driver dropped it)${o.multiStatementError ? `; a two-statement query failed: ${o.multiStatementError}` : ''}`,
      expected: 'the capability negotiated and a two-statement query answered with two result sets',
      action: 'Every create, claim and projection sends several statements in one query and would fail with a syntax error. Check that DATABASE_HOST is the RDS Proxy endpoint of engine family MYSQL and the cluster is Aurora MySQL 3; if the proxy does not pass multi-statements through, the functions cannot run behind it (docs/deploy.md, "Preflight").',
    }];
  },
};

const sqlMode: PreflightCheck = {
  name: 'sql_mode',
  problems: ({ settings }) => {
    const found = new Set(settings.sqlMode.split(',').map((m) => m.trim().toUpperCase()).filter(Boolean));
    const missing = SQL_MODES.filter((m) => !found.has(m));
    const allowed: readonly string[] = [...SQL_MODES, ...CLIENT_SQL_MODES];
    const extra = [...found].filter((m) => !allowed.includes(m));
    if (missing.length === 0 && extra.length === 0) return [];
    const forbidden = extra.filter((m) => (FORBIDDEN_SQL_MODES as readonly string[]).includes(m));
    const breaks = [
      forbidden.includes('NO_BACKSLASH_ESCAPES') ? 'NO_BACKSLASH_ESCAPES breaks the driver\'s escaping of every value (quotes are escaped with a backslash)' : '',
      missing.some((m) => m.startsWith('STRICT')) ? 'without strict mode a value too long or out of range is silently cut instead of refused' : '',
      missing.includes('ONLY_FULL_GROUP_BY') ? 'without ONLY_FULL_GROUP_BY the server accepts what CI refuses' : '',
    ].filter(Boolean).join('; ');
    return [{
      check: 'sql_mode',
      found: `"${settings.sqlMode}"${missing.length ? ` (missing ${missing.join(', ')})` : ''}${extra.length ? ` (extra ${extra.join(', ')})` : ''}`,
      expected: `"${SQL_MODES.join(',')}"`,
      action: `${breaks ? `${breaks}. ` : ''}Set sql_mode in ${PARAMETERS}. ${NEW_SESSIONS}`,
    }];
  },
};

const UTC_NAMES = new Set(['UTC', '+00:00', 'Etc/UTC', 'Z']);

const timeZone: PreflightCheck = {
  name: 'time zone',
  problems: ({ settings: s }) => {
    const problems: PreflightProblem[] = [];
    if (s.sessionTimeZone !== SESSION_TIME_ZONE || s.offsetSeconds !== 0) {
      problems.push({
        check: 'session time zone', found: `"${s.sessionTimeZone}" (NOW() − UTC_TIMESTAMP() = ${s.offsetSeconds} s)`, expected: `"${SESSION_TIME_ZONE}", offset 0`,
        action: 'The driver sets the session time zone on connect (timezone: \'Z\', lib/db/database-url.ts); timestamps would be written and read shifted. Check that nothing (an init_connect, the proxy\'s initialization query) sets another.',
      });
    }
    const server = s.serverTimeZone === 'SYSTEM' ? s.systemTimeZone : s.serverTimeZone;
    if (!UTC_NAMES.has(server)) {
      problems.push({
        check: 'server time zone', found: `"${s.serverTimeZone}"${s.serverTimeZone === 'SYSTEM' ? ` (system: "${s.systemTimeZone}")` : ''}`, expected: `"${SERVER_TIME_ZONE}"`,
        action: `Server-side defaults (CURRENT_TIMESTAMP in sessions that set no zone, the migration history) would not be UTC. Set time_zone in ${PARAMETERS}.`,
      });
    }
    return problems;
  },
};

const characterSet: PreflightCheck = {
  name: 'character set',
  problems: ({ settings: s }) => {
    const found = {
      character_set_client: s.charsetClient, character_set_connection: s.charsetConnection, character_set_results: s.charsetResults,
      character_set_server: s.charsetServer, character_set_database: s.charsetDatabase, collation_database: s.collationDatabase,
    };
    const expected: Record<keyof typeof found, string> = {
      character_set_client: CHARACTER_SET, character_set_connection: CHARACTER_SET, character_set_results: CHARACTER_SET,
      character_set_server: CHARACTER_SET, character_set_database: CHARACTER_SET, collation_database: COLLATION,
    };
    const wrong = (Object.keys(found) as (keyof typeof found)[]).filter((k) => found[k] !== expected[k]);
    if (wrong.length === 0) return [];
    return [{
      check: 'character set and collation',
      found: wrong.map((k) => `${k}=${found[k]}`).join(', '), expected: wrong.map((k) => `${k}=${expected[k]}`).join(', '),
      action: `Text outside ${CHARACTER_SET} (emoji, many scripts) would be refused or turned into "?". The connection's character set is negotiated by the driver; the server's and the database's come from ${PARAMETERS} when the database is created: for an existing database, ALTER DATABASE \`<name>\` CHARACTER SET ${CHARACTER_SET} COLLATE ${COLLATION}.`,
    }];
  },
};

const isolation: PreflightCheck = {
  name: 'isolation',
  problems: ({ settings: s }) => (s.isolation === TRANSACTION_ISOLATION ? [] : [{
    check: 'default isolation', found: `"${s.isolation}"`, expected: `"${TRANSACTION_ISOLATION}"`,
    action: `Every transaction but the outbox claims assumes REPEATABLE READ. Set transaction_isolation in ${PARAMETERS}. ${NEW_SESSIONS}`,
  }]),
};

const maxAllowedPacket: PreflightCheck = {
  name: 'max_allowed_packet',
  problems: ({ settings: s, largeStatement, largestStatementBytes }) => {
    if (s.maxAllowedPacket < largestStatementBytes || largeStatement === 'skipped') {
      return [{
        check: 'max_allowed_packet', found: `${s.maxAllowedPacket} bytes`, expected: `at least ${largestStatementBytes} bytes`,
        action: `The largest statements the application sends (a long projection, a large usage report) would be refused. Set max_allowed_packet in ${PARAMETERS}. ${NEW_SESSIONS}`,
      }];
    }
    return largeStatement === null ? [] : [{
      check: 'largest statement', found: `a statement of ${largestStatementBytes} bytes failed: ${largeStatement}`, expected: 'the server (through the proxy) takes it whole',
      action: 'Something between the functions and the server refuses or cuts large statements although max_allowed_packet allows them: check the proxy and the network path (docs/deploy.md, "Preflight").',
    }];
  },
};

/** Every check, in the order they are reported. */
export const PREFLIGHT_CHECKS: readonly PreflightCheck[] = [multiStatements, sqlMode, timeZone, characterSet, isolation, maxAllowedPacket];
