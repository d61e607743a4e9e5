/**
 * The table shape the drift test compares: tables, columns, nullability, primary key, unique and plain
 * indexes. One side is read from the generated Prisma client (its embedded schema text, cross-checked
 * against its runtime data model), the other from a database's information_schema.
 */
import type mysql from 'mysql2/promise';
import { createPrismaClient } from '../../lib/db/client.ts';

export interface ColumnShape {
  name: string;
  nullable: boolean;
}

export interface TableShape {
  columns: ColumnShape[];
  /** Column names in key order; empty when the table has none. */
  primaryKey: string[];
  /** Unique indexes other than the primary key, each as its ordered column list. */
  uniques: string[][];
  /** Non-unique indexes, each as its ordered column list. */
  indexes: string[][];
}

/** Table name → shape. */
export type SchemaShape = Record<string, TableShape>;

/** What the generated client carries: the schema text it was generated from and its runtime data model. */
export interface GeneratedClientSource {
  inlineSchema: string;
  runtimeDataModel: RuntimeDataModel;
}

interface RuntimeDataModel {
  models: Record<string, { dbName: string | null; fields: { name: string; kind: string }[] }>;
}

/** The schema text and the generated client's description of the same schema disagree. */
export class SchemaModelMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaModelMismatchError';
  }
}

/**
 * Reads the schema text and runtime data model the generated client runs with. The client keeps both on
 * its engine config (Prisma internals, stable through 7.x); constructing a client does not connect.
 */
export async function readGeneratedClient(): Promise<GeneratedClientSource> {
  const client = createPrismaClient('mysql://unused@127.0.0.1:3306/unused');
  try {
    const config = (client as unknown as { _engineConfig?: Partial<GeneratedClientSource> })._engineConfig;
    if (typeof config?.inlineSchema !== 'string' || typeof config.runtimeDataModel?.models !== 'object') {
      throw new SchemaModelMismatchError(
        'the generated Prisma client no longer exposes _engineConfig.inlineSchema/runtimeDataModel; update test/helpers/schema-model.ts',
      );
    }
    return { inlineSchema: config.inlineSchema, runtimeDataModel: config.runtimeDataModel };
  } finally {
    await client.$disconnect();
  }
}

/** Whitespace-insensitive form of a schema text (Prisma re-aligns columns when it embeds the schema). */
export function normalizeSchemaText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

interface ParsedField {
  name: string;
  column: string;
  type: string;
  optional: boolean;
  list: boolean;
  id: boolean;
  unique: boolean;
  ignored: boolean;
}

interface ParsedModel {
  name: string;
  table: string;
  ignored: boolean;
  fields: ParsedField[];
  /** `@@id`, `@@unique`, `@@index` field lists, by attribute. */
  blockLists: { kind: 'id' | 'unique' | 'index'; fields: string[] }[];
}

/**
 * The expected table shape of a generated client. Fails with SchemaModelMismatchError if the schema text
 * and the runtime data model disagree on models, table names, fields or which fields are relations,
 * so a parsing mistake here cannot hide drift.
 */
export function schemaShapeFromClient(source: GeneratedClientSource): SchemaShape {
  const models = parseModels(source.inlineSchema);
  crossCheck(models, source.runtimeDataModel);
  const modelNames = new Set(models.map((m) => m.name));
  const shape: SchemaShape = {};
  for (const model of models) {
    const columns = model.fields.filter((f) => !modelNames.has(f.type));
    const columnOf = (field: string) => columns.find((f) => f.name === field)?.column ?? `<unknown field ${field}>`;
    const lists = (kind: 'id' | 'unique' | 'index') =>
      model.blockLists.filter((b) => b.kind === kind).map((b) => b.fields.map(columnOf));
    shape[model.table] = {
      columns: columns.map((f) => ({ name: f.column, nullable: f.optional })),
      primaryKey: [...columns.filter((f) => f.id).map((f) => f.column), ...lists('id').flat()],
      uniques: [...columns.filter((f) => f.unique).map((f) => [f.column]), ...lists('unique')],
      indexes: lists('index'),
    };
  }
  return shape;
}

function parseModels(schema: string): ParsedModel[] {
  const models: ParsedModel[] = [];
  let current: ParsedModel | undefined;
  let inOtherBlock = false;
  for (const raw of schema.split('\n')) {
    const line = stripComment(raw).trim();
    if (!line) continue;
    const open = /^(model|view|enum|type|generator|datasource)\s+(\w+)\s*\{$/.exec(line);
    if (open) {
      if (open[1] === 'model') current = { name: open[2]!, table: open[2]!, ignored: false, fields: [], blockLists: [] };
      else inOtherBlock = true;
      continue;
    }
    if (line === '}') {
      if (current) models.push(current);
      current = undefined;
      inOtherBlock = false;
      continue;
    }
    if (inOtherBlock || !current) continue;
    if (line.startsWith('@@')) parseBlockAttribute(current, line);
    else current.fields.push(parseField(line));
  }
  return models;
}

function parseField(line: string): ParsedField {
  const m = /^(\w+)\s+(Unsupported\("[^"]*"\)|\w+)(\[\])?(\?)?(.*)$/.exec(line);
  if (!m) throw new SchemaModelMismatchError(`cannot read field line: ${line}`);
  const attrs = m[5] ?? '';
  return {
    name: m[1]!,
    type: m[2]!,
    list: Boolean(m[3]),
    optional: Boolean(m[4]),
    column: /@map\(\s*(?:name:\s*)?"([^"]+)"/.exec(attrs)?.[1] ?? m[1]!,
    id: /(^|\s)@id\b/.test(attrs),
    unique: /(^|\s)@unique\b/.test(attrs),
    ignored: /(^|\s)@ignore\b/.test(attrs),
  };
}

function parseBlockAttribute(model: ParsedModel, line: string): void {
  const name = /^@@(\w+)/.exec(line)?.[1];
  if (name === 'map') model.table = /"([^"]+)"/.exec(line)?.[1] ?? model.table;
  if (name === 'ignore') model.ignored = true;
  if (name === 'id' || name === 'unique' || name === 'index') {
    const list = /\[([^\]]*)\]/.exec(line)?.[1];
    if (list === undefined) throw new SchemaModelMismatchError(`cannot read field list: ${line}`);
    // `a(sort: Desc)`, `b(length: 10)`: keep the field name only.
    const fields = list.split(',').map((f) => f.replace(/\(.*$/, '').trim()).filter(Boolean);
    model.blockLists.push({ kind: name, fields });
  }
}

/** Drops a `//` or `///` comment, leaving `//` inside string literals alone. */
function stripComment(line: string): string {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && inString) i++;
    else if (c === '"') inString = !inString;
    else if (c === '/' && line[i + 1] === '/' && !inString) return line.slice(0, i);
  }
  return line;
}

function crossCheck(models: ParsedModel[], dataModel: RuntimeDataModel): void {
  const problems: string[] = [];
  const parsed = new Map(models.filter((m) => !m.ignored).map((m) => [m.name, m]));
  const modelNames = new Set(models.map((m) => m.name));
  const known = Object.keys(dataModel.models);
  if (sorted(known).join() !== sorted(parsed.keys()).join()) {
    problems.push(`models: client has [${sorted(known)}], schema text has [${sorted(parsed.keys())}]`);
  }
  for (const [name, rt] of Object.entries(dataModel.models)) {
    const model = parsed.get(name);
    if (!model) continue;
    if ((rt.dbName ?? name) !== model.table) problems.push(`${name}: client maps to ${rt.dbName}, schema text to ${model.table}`);
    const fields = model.fields.filter((f) => !f.ignored && !f.type.startsWith('Unsupported('));
    const describe = (list: { name: string; relation: boolean }[]) =>
      sorted(list.map((f) => `${f.name}${f.relation ? ' (relation)' : ''}`)).join(', ');
    const fromClient = describe(rt.fields.map((f) => ({ name: f.name, relation: f.kind === 'object' })));
    const fromText = describe(fields.map((f) => ({ name: f.name, relation: modelNames.has(f.type) })));
    if (fromClient !== fromText) problems.push(`${name}: client fields [${fromClient}], schema text fields [${fromText}]`);
  }
  if (problems.length) throw new SchemaModelMismatchError(`schema text and generated data model disagree:\n${problems.join('\n')}`);
}

function sorted(values: Iterable<string>): string[] {
  return [...values].sort();
}

/** The shape of every base table in `database` except Prisma's migration history. */
export async function readDatabaseShape(conn: mysql.Connection, database: string): Promise<SchemaShape> {
  const [columns] = await conn.query<mysql.RowDataPacket[]>(
    `SELECT c.TABLE_NAME AS tableName, c.COLUMN_NAME AS columnName, c.IS_NULLABLE AS nullable
       FROM information_schema.COLUMNS c
       JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
      WHERE c.TABLE_SCHEMA = ? AND t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_NAME <> '_prisma_migrations'
      ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION`,
    [database],
  );
  const shape: SchemaShape = {};
  for (const r of columns) {
    const table = (shape[r.tableName] ??= { columns: [], primaryKey: [], uniques: [], indexes: [] });
    table.columns.push({ name: r.columnName, nullable: r.nullable === 'YES' });
  }
  const [stats] = await conn.query<mysql.RowDataPacket[]>(
    `SELECT TABLE_NAME AS tableName, INDEX_NAME AS indexName, NON_UNIQUE AS nonUnique, COLUMN_NAME AS columnName
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    [database],
  );
  // MySQL adds an index named after a foreign key that no declared index covers; Prisma does not model it.
  const [fks] = await conn.query<mysql.RowDataPacket[]>(
    `SELECT TABLE_NAME AS tableName, CONSTRAINT_NAME AS constraintName FROM information_schema.TABLE_CONSTRAINTS
      WHERE TABLE_SCHEMA = ? AND CONSTRAINT_TYPE = 'FOREIGN KEY'`,
    [database],
  );
  const implicit = new Set(fks.map((r) => `${r.tableName}.${r.constraintName}`));
  interface IndexRows { table: string; name: string; unique: boolean; columns: string[] }
  const grouped = new Map<string, IndexRows>();
  for (const r of stats) {
    const table = shape[r.tableName];
    if (!table || r.columnName === null) continue;
    const key = `${r.tableName}.${r.indexName}`;
    const index: IndexRows = grouped.get(key) ?? { table: r.tableName, name: r.indexName, unique: Number(r.nonUnique) === 0, columns: [] };
    index.columns.push(String(r.columnName));
    grouped.set(key, index);
  }
  for (const [key, index] of grouped) {
    const table = shape[index.table]!;
    if (index.name === 'PRIMARY') table.primaryKey = index.columns;
    else if (index.unique) table.uniques.push(index.columns);
    else if (!implicit.has(key)) table.indexes.push(index.columns);
  }
  return shape;
}

/**
 * Readable differences from `expected` (schema.prisma) to `actual` (the database); empty when they match.
 * Index lists compare as sets of ordered column lists (names are not compared).
 */
export function diffSchemaShapes(expected: SchemaShape, actual: SchemaShape): string[] {
  const out: string[] = [];
  for (const table of sorted(new Set([...Object.keys(expected), ...Object.keys(actual)]))) {
    const want = expected[table];
    const have = actual[table];
    if (!have) out.push(`table ${table}: in schema.prisma, missing from the database`);
    else if (!want) out.push(`table ${table}: in the database, not in schema.prisma`);
    else out.push(...diffTable(table, want, have));
  }
  return out;
}

function diffTable(table: string, want: TableShape, have: TableShape): string[] {
  const out: string[] = [];
  const haveColumns = new Map(have.columns.map((c) => [c.name, c]));
  const wantColumns = new Map(want.columns.map((c) => [c.name, c]));
  const nullability = (nullable: boolean) => (nullable ? 'NULL' : 'NOT NULL');
  for (const c of want.columns) {
    const h = haveColumns.get(c.name);
    if (!h) out.push(`${table}.${c.name}: field in schema.prisma, no such column in the database`);
    else if (h.nullable !== c.nullable) {
      out.push(`${table}.${c.name}: schema.prisma says ${nullability(c.nullable)}, the database column is ${nullability(h.nullable)}`);
    }
  }
  for (const c of have.columns) {
    if (!wantColumns.has(c.name)) out.push(`${table}.${c.name}: column in the database, no such field in schema.prisma`);
  }
  const pk = (cols: string[]) => (cols.length ? `(${cols.join(', ')})` : 'none');
  if (want.primaryKey.join() !== have.primaryKey.join()) {
    out.push(`${table}: primary key ${pk(want.primaryKey)} in schema.prisma, ${pk(have.primaryKey)} in the database`);
  }
  out.push(...diffIndexLists(table, 'unique index', want.uniques, have.uniques));
  out.push(...diffIndexLists(table, 'index', want.indexes, have.indexes));
  return out;
}

function diffIndexLists(table: string, what: string, want: string[][], have: string[][]): string[] {
  const key = (cols: string[]) => `(${cols.join(', ')})`;
  const wantKeys = new Set(want.map(key));
  const haveKeys = new Set(have.map(key));
  return [
    ...[...wantKeys].filter((k) => !haveKeys.has(k)).map((k) => `${table}: ${what} ${k} in schema.prisma, missing from the database`),
    ...[...haveKeys].filter((k) => !wantKeys.has(k)).map((k) => `${table}: ${what} ${k} in the database, not in schema.prisma`),
  ];
}
