import { describe, expect, it } from 'vitest';
import { parseCsv, parseCsvRecords } from './parse-csv';

describe('parseCsv', () => {
  it('keeps commas, doubled quotes and newlines inside quoted fields', () => {
    const rows = parseCsv('id,text\n1,"a, b ""c""\nnext line"\n2,plain\n');
    expect(rows).toEqual([
      ['id', 'text'],
      ['1', 'a, b "c"\nnext line'],
      ['2', 'plain'],
    ]);
  });

  it('handles CRLF line ends, a BOM, empty fields and a missing final newline', () => {
    expect(parseCsv('\ufeffa,b\r\n,x\r\n"",')).toEqual([
      ['a', 'b'],
      ['', 'x'],
      ['', ''],
    ]);
  });

  it('names the line of a quote that is never closed', () => {
    expect(() => parseCsv('id,text\n1,ok\n2,"broken\nstill broken', 'bad.csv')).toThrow(/bad\.csv: a quoted field opened on line 3/);
  });

  it('maps rows to records and rejects a row with the wrong number of fields', () => {
    expect(parseCsvRecords('id,answer\nx,"1,000"\n')).toEqual([{ id: 'x', answer: '1,000' }]);
    expect(() => parseCsvRecords('id,answer\nx,1,2\n', 'f.csv')).toThrow(/f\.csv: data row 1 has 3 fields, expected 2/);
  });
});
