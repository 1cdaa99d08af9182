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
