/**
 * RFC 4180 CSV as promptfoo and dataset exports write it: a header row, `"` quoting with `""` for a quote,
 * CRLF or LF, a UTF-8 byte order mark ignored. Rows become `{ column: value }`; a short row leaves the missing
 * columns '' and a long row is refused (the file is wrong, not the case).
 */
export interface CsvRow {
  /** 1-based line of the row's first character, for messages. */
  readonly line: number;
  readonly values: Readonly<Record<string, string>>;
}

export function parseCsv(text: string, file: string): CsvRow[] {
  const records = splitRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, file);
  if (records.length === 0) return [];
  const header = records[0].fields.map((h) => h.trim());
  const rows: CsvRow[] = [];
  for (const record of records.slice(1)) {
    if (record.fields.length === 1 && record.fields[0] === '') continue; // blank line
    if (record.fields.length > header.length) throw new Error(`${file}:${record.line}: ${record.fields.length} fields, the header has ${header.length}`);
    const values: Record<string, string> = {};
    header.forEach((h, i) => (values[h] = record.fields[i] ?? ''));
    rows.push({ line: record.line, values });
  }
  return rows;
}

function splitRecords(text: string, file: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let i = 0;
  const endRecord = () => {
    fields.push(field);
    records.push({ line: start, fields });
    fields = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else field += c;
    i++;
  }
  if (quoted) throw new Error(`${file}:${start}: a quoted field is not closed`);
  if (field !== '' || fields.length > 0) endRecord();
  return records;
}
