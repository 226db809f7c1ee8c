import { describe, expect, it } from 'vitest';
import { firstErrorLines } from '../../../../stages/swe5g/validate/validate.js';

const ESC = String.fromCharCode(27);

describe('firstErrorLines', () => {
  it('drops terminal colour codes but keeps bracketed text of the log; Go undefined: lines count', () => {
    const log = [
      '# command: go test ./sqorc',
      `${ESC}[1;31merror:${ESC}[0m handler.c:1: expected ';'`,
      'FAILED: [magma/orc8r/cloud/go/sqorc.test] [build failed]',
      'sqorc/error_checker_test.go:96:27: undefined: sqlite3.Error',
    ].join('\n');
    expect(firstErrorLines(log)).toEqual([
      "error: handler.c:1: expected ';'",
      'FAILED: [magma/orc8r/cloud/go/sqorc.test] [build failed]',
      'sqorc/error_checker_test.go:96:27: undefined: sqlite3.Error',
    ]);
  });

  it('gives the last non-empty lines when no line names an error', () => {
    expect(firstErrorLines('a\n[m]ok\n\nlast\n', 2)).toEqual(['[m]ok', 'last']);
  });
});
