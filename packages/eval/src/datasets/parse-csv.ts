import { AgentFlowError } from '@agentflow/core';

/**
 * Parses RFC 4180 CSV: fields separated by commas, optionally quoted; a quoted field may
 * hold commas, newlines and doubled quotes (`""`). Returns the rows as arrays of fields;
 * a trailing empty line is dropped. CRLF and LF line ends both work.
 */
export function parseCsv(text: string, source = 'CSV'): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let fieldStarted = false;
  let line = 1;
  let quoteLine = 0;
  const input = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let index = 0; index < input.length; index++) {
    const char = input[index] as string;
    if (quoted) {
      if (char === '"') {
        if (input[index + 1] === '"') {
          field += '"';
          index++;
        } else {
          quoted = false;
        }
      } else {
        if (char === '\n') line++;
        field += char;
      }
      continue;
    }
    if (char === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
      quoteLine = line;
    } else if (char === ',') {
      row.push(field);
      field = '';
      fieldStarted = false;
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[index + 1] === '\n') index++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      fieldStarted = false;
      line++;
    } else {
      // A quote inside an unquoted field is kept as text, as most writers expect.
      field += char;
      fieldStarted = true;
    }
  }
  if (quoted) {
    throw new AgentFlowError({
      code: 'PARSE_ERROR',
      message: `${source}: a quoted field opened on line ${quoteLine} is never closed.`,
      details: { source, line: quoteLine },
    });
  }
  if (fieldStarted || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Parses CSV with a header row into records keyed by column name. */
export function parseCsvRecords(text: string, source = 'CSV'): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text, source);
  if (!header) return [];
  return rows
    .filter((row) => !(row.length === 1 && row[0] === ''))
    .map((row, index) => {
      if (row.length !== header.length) {
        throw new AgentFlowError({
          code: 'PARSE_ERROR',
          message: `${source}: data row ${index + 1} has ${row.length} fields, expected ${header.length} (${header.join(', ')}).`,
          details: { source, row: index + 1, fields: row.length, expected: header.length },
        });
      }
      return Object.fromEntries(header.map((name, column) => [name, row[column] as string]));
    });
}
