import { describe, expect, it } from 'vitest';
import { insertRowsStatements } from '../../lib/db/sql.ts';

describe('insertRowsStatements', () => {
  it('puts consecutive rows with the same columns in one multi-row INSERT, in their order', () => {
    const at = new Date(0);
    const statements = insertRowsStatements('QuizQuestion', [
      { id: 'a', ordinal: 0, createdAt: at },
      { id: 'b', ordinal: 1, createdAt: at },
    ]);
    expect(statements).toEqual([{ sql: 'INSERT INTO `QuizQuestion` (`id`, `ordinal`, `createdAt`) VALUES (?, ?, ?), (?, ?, ?)', values: ['a', 0, at, 'b', 1, at] }]);
  });

  it('starts a new statement where the defined columns change, and leaves undefined values to defaults', () => {
    const statements = insertRowsStatements('T', [{ a: 1, b: 2 }, { a: 3, b: undefined }, { a: 4 }, { a: 5, b: null }]);
    expect(statements).toEqual([
      { sql: 'INSERT INTO `T` (`a`, `b`) VALUES (?, ?)', values: [1, 2] },
      { sql: 'INSERT INTO `T` (`a`) VALUES (?), (?)', values: [3, 4] },
      { sql: 'INSERT INTO `T` (`a`, `b`) VALUES (?, ?)', values: [5, null] },
    ]);
  });

  it('makes no statement of no rows', () => {
    expect(insertRowsStatements('T', [])).toEqual([]);
  });
});
