/**
 * A lint for SQL that must run on MySQL 8.0 (Aurora MySQL 3) and MariaDB 10.11 alike, and never pin an RDS Proxy
 * session, run by `npm test` (test/db/sql-lint.test.ts):
 * - migrations: every statement parses as MySQL (node-sql-parser's MySQL grammar, which has none of MariaDB's
 *   extensions), no MariaDB-only DDL, and every CREATE TABLE names a collation both servers know;
 * - the application's SQL (string and template literals of lib/ that read as SQL): no RETURNING, sequences, user
 *   variables or `:=`, no SET outside the allow-list of docs/deploy.md, no MariaDB-only function or clause, no
 *   named lock outside the migrator, no temporary table or table lock.
 */
import pkg from 'node-sql-parser';
import ts from 'typescript';
import { SET_ALLOW_LIST, withoutLiterals } from './pinning-rules.ts';

const { Parser } = pkg;
const parser = new Parser();

export interface LintProblem {
  file: string;
  rule: string;
  text: string;
}

/** Constructs neither server may receive from us, with why; checked on migrations and application SQL alike. */
const FORBIDDEN: readonly { rule: string; pattern: RegExp }[] = [
  { rule: 'RETURNING (MariaDB only)', pattern: /\bRETURNING\b/i },
  { rule: 'sequences (MariaDB only)', pattern: /\b(NEXTVAL|LASTVAL|SETVAL)\s*\(|\bNEXT\s+VALUE\s+FOR\b|\bCREATE\s+SEQUENCE\b/i },
  { rule: 'user variable (pins an RDS Proxy session)', pattern: /(^|[^@\w`])@[A-Za-z_$][\w$]*/ },
  { rule: ':= assignment (user variables; deprecated in MySQL 8)', pattern: /:=/ },
  { rule: 'CREATE OR REPLACE (MariaDB only for tables and indexes)', pattern: /\bCREATE\s+OR\s+REPLACE\s+(TABLE|INDEX)\b/i },
  { rule: 'IF [NOT] EXISTS on a column or index (MariaDB only)', pattern: /\b(ADD|DROP|MODIFY|CHANGE)\s+(COLUMN\s+|INDEX\s+|KEY\s+|UNIQUE\s+(INDEX\s+|KEY\s+)?)?IF\s+(NOT\s+)?EXISTS\b|\b(CREATE\s+(UNIQUE\s+)?INDEX|DROP\s+INDEX)\s+IF\s+(NOT\s+)?EXISTS\b/i },
  { rule: 'FOR UPDATE WAIT n / LIMIT ROWS EXAMINED / FETCH FIRST (MariaDB only)', pattern: /\bFOR\s+UPDATE\s+WAIT\s+\d|\bROWS\s+EXAMINED\b|\bFETCH\s+(FIRST|NEXT)\b/i },
  {
    rule: 'MariaDB-only function',
    pattern: /\b(JSON_DETAILED|JSON_LOOSE|JSON_COMPACT|JSON_EXISTS|JSON_QUERY|JSON_NORMALIZE|JSON_EQUALS|COLUMN_CREATE|COLUMN_GET|COLUMN_ADD|COLUMN_DELETE|COLUMN_LIST|COLUMN_JSON|SFORMAT|NATURAL_SORT_KEY|ADD_MONTHS|TO_CHAR|SYS_GUID|ROWNUM|DECODE_ORACLE|KDF|VEC_FROMTEXT|VEC_DISTANCE)\s*\(/i,
  },
  { rule: 'temporary table or table lock (pins an RDS Proxy session)', pattern: /\bCREATE\s+TEMPORARY\b|\bLOCK\s+TABLES?\b/i },
];

/** Collations both servers have: MySQL 8's utf8mb4_0900_* and MariaDB 11's uca1400 ones are missing on the other. */
const PORTABLE_COLLATION = /^utf8mb4_(unicode_ci|unicode_520_ci|general_ci|bin)$/i;

function forbiddenIn(file: string, text: string): LintProblem[] {
  return FORBIDDEN.filter((f) => f.pattern.test(text)).map((f) => ({ file, rule: f.rule, text: text.slice(0, 200) }));
}

/** Problems of one migration file (`name` for the report, `sql` its text). */
export function lintMigration(name: string, sql: string): LintProblem[] {
  const problems = forbiddenIn(name, withoutLiterals(sql).replace(/--[^\n]*/g, ''));
  let statements: unknown[];
  try {
    const ast = parser.astify(sql, { database: 'MySQL' });
    statements = Array.isArray(ast) ? ast : [ast];
  } catch (err) {
    return [...problems, { file: name, rule: 'does not parse as MySQL 8 (node-sql-parser, MySQL grammar)', text: String((err as Error).message).slice(0, 300) }];
  }
  for (const statement of statements as { type?: string; keyword?: string; table?: { table?: string }[]; table_options?: { keyword: string; value: { value: string } }[] | null }[]) {
    if (statement.type !== 'create' || statement.keyword !== 'table') continue;
    const table = statement.table?.[0]?.table ?? '?';
    const collation = statement.table_options?.find((o) => o.keyword === 'collate')?.value.value;
    if (!collation) problems.push({ file: name, rule: 'CREATE TABLE names no collation', text: `CREATE TABLE ${table}` });
    else if (!PORTABLE_COLLATION.test(collation)) problems.push({ file: name, rule: 'collation unknown to MySQL 8 or MariaDB 10.11', text: `CREATE TABLE ${table} … COLLATE ${collation}` });
  }
  return problems;
}

/**
 * Reads as SQL: a statement keyword starts it (or a piece after a `;`), or it has the keywords of a clause (upper
 * case, as lib/ writes SQL).
 */
const SQL_START = /^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH|SET|START TRANSACTION|COMMIT|ROLLBACK|CREATE|ALTER|DROP|SHOW|SIGNAL)\b/;
const SQL_CLAUSE = /\b(FROM|WHERE|JOIN|GROUP BY|ORDER BY|VALUES|ON DUPLICATE KEY)\b/;

/** Every string and template literal of a TypeScript source, a template's substitutions written as `__EXPR__`. */
function literalsOf(file: string, source: string): string[] {
  const texts: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node)) texts.push(node.head.text + node.templateSpans.map((s) => `__EXPR__${s.literal.text}`).join(''));
    if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true));
  return texts;
}

/** The literals of a TypeScript source that read as SQL (see above). */
export function sqlLiteralsOf(file: string, source: string): string[] {
  return literalsOf(file, source).filter((literal) => literal.split(';').some((piece) => SQL_START.test(piece)) || SQL_CLAUSE.test(literal));
}

/** Problems of the SQL in one lib/ source file. `GET_LOCK` is allowed where `allowNamedLocks` (the migrator). */
export function lintApplicationSql(file: string, source: string, allowNamedLocks = false): LintProblem[] {
  const problems: LintProblem[] = [];
  for (const literal of sqlLiteralsOf(file, source)) {
    const text = withoutLiterals(literal);
    problems.push(...forbiddenIn(file, text));
    if (!allowNamedLocks && /\b(GET_LOCK|RELEASE_LOCK)\s*\(/i.test(text)) problems.push({ file, rule: 'named lock outside the migrator (pins an RDS Proxy session)', text: literal.slice(0, 200) });
    for (const statement of text.split(';').map((s) => s.replace(/\s+/g, ' ').trim().toUpperCase())) {
      if (!/^SET\b/.test(statement)) continue;
      if (!SET_ALLOW_LIST.some((a) => a.pattern.test(statement))) problems.push({ file, rule: 'SET outside the allow-list (docs/deploy.md)', text: statement.slice(0, 200) });
    }
  }
  return problems;
}
