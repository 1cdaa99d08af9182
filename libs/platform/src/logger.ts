import type { LoggerService } from '@nestjs/common';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Structured JSON logs, one object per line (X2). What may be logged is decided at the call site by
 * passing only ids, counts and codes; this logger additionally refuses free-form objects from Nest
 * internals by flattening them to their message, and never logs request or message bodies (D1).
 */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly app: string,
    private readonly level: Level = 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  ) {}

  event(level: Level, msg: string, fields: Record<string, string | number | boolean | null | undefined> = {}): void {
    if (ORDER[level] < ORDER[this.level]) return;
    this.write(JSON.stringify({ time: new Date().toISOString(), level, app: this.app, msg, ...fields }));
  }

  log(message: unknown, context?: string): void {
    this.event('info', text(message), { context });
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    this.event('error', text(message), { context: context ?? stackOrContext });
  }
  warn(message: unknown, context?: string): void {
    this.event('warn', text(message), { context });
  }
  debug(message: unknown, context?: string): void {
    this.event('debug', text(message), { context });
  }
  verbose(message: unknown, context?: string): void {
    this.event('debug', text(message), { context });
  }
}

function text(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Error) return `${message.name}: ${message.message}`;
  return '[object]';
}

/**
 * A service process's log lines written to stdout once per turn of the event loop, together (issue 28): a line a
 * run (`run scored`, `run compared`) was a write to a pipe each - a system call and a wake-up of the reader -
 * at 50 runs a second. A line is never held past the turn that logged it, and the lines of the last turn are
 * written at exit (`process.exit` included); a SIGKILL loses at most that turn's.
 */
export function stdoutByTurn(out: { write(text: string): unknown } = process.stdout, onExit: (flush: () => void) => void = (f) => process.on('exit', f)): (line: string) => void {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    out.write(text);
  };
  onExit(flush);
  return (line) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(`${line}\n`);
  };
}

