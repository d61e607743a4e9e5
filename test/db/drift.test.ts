import { readFile } from 'node:fs/promises';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl, withDatabase } from '../../lib/db/database-url.ts';
import { migrateDatabase } from '../../lib/db/migrator.ts';
import { rawDb } from '../helpers/db.ts';
import {
  diffSchemaShapes,
  normalizeSchemaText,
  readDatabaseShape,
  readGeneratedClient,
  schemaShapeFromClient,
  SchemaModelMismatchError,
  type GeneratedClientSource,
  type SchemaShape,
} from '../helpers/schema-model.ts';

const SCHEMA_FILE = new URL('../../prisma/schema.prisma', import.meta.url);

let client: GeneratedClientSource;
let expected: SchemaShape;
let migrated: SchemaShape;

beforeAll(async () => {
  client = await readGeneratedClient();
  expected = schemaShapeFromClient(client);
  migrated = await readDatabaseShape(await rawDb(), parseDatabaseUrl(process.env.DATABASE_URL ?? '').database);
});

describe('schema drift: schema.prisma vs a freshly migrated database', () => {
  it('the generated client was generated from the current schema.prisma (else run `npm run generate`)', async () => {
    const onDisk = await readFile(SCHEMA_FILE, 'utf8');
    expect(normalizeSchemaText(client.inlineSchema)).toBe(normalizeSchemaText(onDisk));
  });

  it('reads every model of the generated client as a table', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(client.runtimeDataModel.models).sort());
    expect(expected.AiJob?.primaryKey).toEqual(['id']);
    expect(expected.AiJob?.columns.find((c) => c.name === 'idempotencyKey')).toEqual({ name: 'idempotencyKey', nullable: true });
    expect(expected.AiJob?.uniques).toContainEqual(['userId', 'jobType', 'idempotencyKey']);
    expect(expected.AiJobSnapshot?.uniques).toContainEqual(['jobId']);
  });

  it('tables, columns, nullability, primary keys, unique and plain indexes match the migrations', () => {
    expect(diffSchemaShapes(expected, migrated)).toEqual([]);
  });

  it('identifiers compare exactly: ids, user ids and keys are utf8mb4_bin (case and accents matter)', async () => {
    const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLUMN_TYPE AS type, COLLATION_NAME AS collation FROM information_schema.COLUMNS
       WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> '_prisma_migrations'
         AND (COLUMN_TYPE = 'varchar(26)' OR COLUMN_NAME IN ('userId', 'idempotencyKey', 'dedupeKey', 'lockedBy', 'messageGroupId', 'targetId'))`,
    );
    // Every ULID column (ids and references) and every identifier column of every table, not a sample.
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(rows.filter((r) => r.collation !== 'utf8mb4_bin').map((r) => `${r.t}.${r.c} ${r.collation}`)).toEqual([]);
  });

  it('keeps every foreign key to AiJob.id, with its rules, across the collation change', async () => {
    const [rows] = await (await rawDb()).query<mysql.RowDataPacket[]>(
      `SELECT CONCAT(TABLE_NAME, ' ', DELETE_RULE, ' ', UPDATE_RULE) AS fk FROM information_schema.REFERENTIAL_CONSTRAINTS
       WHERE CONSTRAINT_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME = 'AiJob' ORDER BY TABLE_NAME`,
    );
    expect(rows.map((r) => r.fk)).toEqual([
      'AiJob SET NULL CASCADE', 'AiJobArtifact RESTRICT CASCADE', 'AiJobSnapshot RESTRICT CASCADE', 'AiJobStreamChunk RESTRICT CASCADE', 'AiJobTransition RESTRICT CASCADE',
      'AiUsageLog RESTRICT CASCADE', 'FeynmanEvaluation RESTRICT CASCADE', 'Flashcard RESTRICT CASCADE', 'QuizQuestion RESTRICT CASCADE',
    ]);
  });
});

describe('the drift comparer', () => {
  it('reports a field added to the model but not migrated', () => {
    const altered = structuredClone(expected);
    altered.OutboxEvent!.columns.push({ name: 'traceId', nullable: true });
    expect(diffSchemaShapes(altered, migrated)).toEqual([
      'OutboxEvent.traceId: field in schema.prisma, no such column in the database',
    ]);
  });

  it('reports changed nullability, a dropped @unique, a new @@index and a missing table', () => {
    const altered = structuredClone(expected);
    altered.AiJob!.columns.find((c) => c.name === 'idempotencyKey')!.nullable = false;
    altered.OutboxEvent!.uniques = [];
    altered.AiUsageLog!.indexes.push(['provider', 'model']);
    altered.Tenant = { columns: [{ name: 'id', nullable: false }], primaryKey: ['id'], uniques: [], indexes: [] };
    expect(diffSchemaShapes(altered, migrated)).toEqual([
      'AiJob.idempotencyKey: schema.prisma says NOT NULL, the database column is NULL',
      'AiUsageLog: index (provider, model) in schema.prisma, missing from the database',
      'OutboxEvent: unique index (dedupeKey) in the database, not in schema.prisma',
      'table Tenant: in schema.prisma, missing from the database',
    ]);
  });

  it('reads a new optional field, @map, @unique and @@unique from the schema text', () => {
    const schema = client.inlineSchema.replace(
      /(model OutboxEvent \{\n)/,
      '$1  traceId String? @unique @map("trace_id") @db.VarChar(64)\n  @@unique([eventType, aggregateId])\n',
    );
    const fields = client.runtimeDataModel.models.OutboxEvent!.fields;
    const runtimeDataModel = structuredClone(client.runtimeDataModel);
    runtimeDataModel.models.OutboxEvent!.fields = [...fields, { name: 'traceId', kind: 'scalar' }];
    const shape = schemaShapeFromClient({ inlineSchema: schema, runtimeDataModel });
    expect(diffSchemaShapes(shape, migrated)).toEqual([
      'OutboxEvent.trace_id: field in schema.prisma, no such column in the database',
      'OutboxEvent: unique index (trace_id) in schema.prisma, missing from the database',
      'OutboxEvent: unique index (eventType, aggregateId) in schema.prisma, missing from the database',
    ]);
  });

  it('refuses a schema text that disagrees with the generated data model, so a parser slip cannot hide drift', () => {
    const schema = client.inlineSchema.replace(/(model OutboxEvent \{\n)/, '$1  traceId String?\n');
    expect(() => schemaShapeFromClient({ ...client, inlineSchema: schema })).toThrow(SchemaModelMismatchError);
    expect(() => schemaShapeFromClient({ ...client, inlineSchema: schema })).toThrow(/OutboxEvent: client fields/);
  });
});

describe('the drift comparer on a migrated then altered database', () => {
  const serverUrl = process.env.DATABASE_URL ?? '';
  const scratch = `aijobs_test_drift_${process.pid}_${Date.now().toString(36)}`;
  let admin: mysql.Connection;

  beforeAll(async () => {
    const s = parseDatabaseUrl(serverUrl);
    admin = await mysql.createConnection({ host: s.host, port: s.port, user: s.user, password: s.password });
    await migrateDatabase(withDatabase(serverUrl, scratch));
  });

  afterAll(async () => {
    if (process.env.KEEP_TEST_DATABASES !== '1') await admin?.query(`DROP DATABASE IF EXISTS \`${scratch}\``);
    await admin?.end();
  });

  it('matches before it is altered', async () => {
    expect(diffSchemaShapes(expected, await readDatabaseShape(admin, scratch))).toEqual([]);
  });

  it('reports a column added, a column made nullable, a unique index added and a table added by hand', async () => {
    await admin.query(`ALTER TABLE \`${scratch}\`.AiJobArtifact ADD COLUMN note VARCHAR(64) NULL`);
    await admin.query(`ALTER TABLE \`${scratch}\`.AiJobArtifact MODIFY artifactType VARCHAR(64) NULL`);
    await admin.query(`CREATE UNIQUE INDEX AiJobArtifact_note_key ON \`${scratch}\`.AiJobArtifact (note, ordinal)`);
    await admin.query(`CREATE TABLE \`${scratch}\`.Stray (id INT PRIMARY KEY)`);
    expect(diffSchemaShapes(expected, await readDatabaseShape(admin, scratch))).toEqual([
      'AiJobArtifact.artifactType: schema.prisma says NOT NULL, the database column is NULL',
      'AiJobArtifact.note: column in the database, no such field in schema.prisma',
      'AiJobArtifact: unique index (note, ordinal) in the database, not in schema.prisma',
      'table Stray: in the database, not in schema.prisma',
    ]);
  });

  it('reports a column and an index dropped by hand', async () => {
    await admin.query(`ALTER TABLE \`${scratch}\`.AiUsageLog DROP COLUMN errorCode`);
    await admin.query(`DROP INDEX AiUsageLog_userId_createdAt_idx ON \`${scratch}\`.AiUsageLog`);
    const diff = diffSchemaShapes(expected, await readDatabaseShape(admin, scratch));
    expect(diff).toContain('AiUsageLog.errorCode: field in schema.prisma, no such column in the database');
    expect(diff).toContain('AiUsageLog: index (userId, createdAt) in schema.prisma, missing from the database');
  });
});
