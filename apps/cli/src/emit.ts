import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Io } from './command';
import { CliError, EXIT } from './exit-codes';
import { styles } from './format';
import { renderJunit } from './junit';
import { renderMarkdown } from './markdown';
import { renderReport, type EvalReport } from './report';

/**
 * The common ending of the commands that produce a verdict (`run`, `gate`, `gate status`, `score`): write
 * the JUnit file and the Markdown summary when asked, print the raw JSON (--json) or the table, and return
 * the exit code of the verdict (0 pass, 1 fail).
 */
export function emitReport(io: Io, report: EvalReport, raw: unknown, values: { json?: boolean; junit?: string; summary?: string }): number {
  if (values.junit) writeFile(io, values.junit, renderJunit(report), '--junit', false);
  if (values.summary) writeFile(io, values.summary, renderMarkdown(report, { dashboardUrl: io.env.EVALS_PUBLIC_URL }), '--summary', true);
  if (values.json) io.out(JSON.stringify(raw, null, 2));
  else io.out(renderReport(report, styles(io.env, io.isTty)));
  return report.verdict === 'pass' ? EXIT.PASS : EXIT.FAILED;
}

/**
 * JUnit replaces the file; the summary is appended, as CI job summaries expect (`$GITHUB_STEP_SUMMARY`
 * collects every step's Markdown). The parent directory is created.
 */
export function writeFile(io: Io, file: string, content: string, flag: string, append: boolean): void {
  const target = path.resolve(io.cwd, file);
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (append) fs.appendFileSync(target, content, 'utf8');
    else fs.writeFileSync(target, content, 'utf8');
  } catch (error) {
    throw new CliError(EXIT.USAGE, `cannot write ${flag} file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}
