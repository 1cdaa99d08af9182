/** X5: exit codes that tell a failed evaluation from a broken setup (docs/cli.md). */
export const EXIT = {
  PASS: 0,
  /** The evaluation ran and failed: the gate failed, the run regressed, or it is below the pass threshold. */
  FAILED: 1,
  /**
   * Usage, configuration or input error: a bad option, a bad suite, a missing file, a bad server URL, a
   * refused credential, or the service refusing our input (HTTP 400, 401, 403, 404, 409, 413, 422...).
   */
  USAGE: 2,
  /** The service or a dependency could not be reached: connection refused, DNS, timeout, HTTP 5xx, 503. */
  UNREACHABLE: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The command was used wrongly: an unknown option, a missing or malformed flag, flags that do not go
 * together. Only these get the `usage:` footer; a refused suite or outputs file (also exit 2) was given
 * correctly, so repeating the usage line would only hide what is wrong with its content.
 */
export class UsageError extends CliError {
  constructor(message: string) {
    super(EXIT.USAGE, message);
  }
}

/**
 * The exit code for an HTTP answer that is not a success. 4xx is something about our request (exit 2),
 * except 408 and 429, which say the service is too slow or too busy right now (exit 3, like 5xx: retry
 * later, nothing to fix in the command).
 */
export function exitForHttpStatus(status: number): number {
  if (status >= 200 && status < 300) return EXIT.PASS;
  if (status === 408 || status === 429) return EXIT.UNREACHABLE;
  if (status >= 500) return EXIT.UNREACHABLE;
  return EXIT.USAGE;
}

/** An HTTP refusal or failure, with what the server said (`{code, message, field}`), never our request body. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly serverMessage: string | undefined,
    readonly field: string | undefined,
    readonly url: string,
    readonly body: unknown,
  ) {
    super(exitForHttpStatus(status), describe(status, code, serverMessage, field, url));
  }
}

function describe(status: number, code: string | undefined, message: string | undefined, field: string | undefined, url: string): string {
  const head = `${url} answered HTTP ${status}${code ? ` ${code}` : ''}`;
  const parts = [head, message ? `: ${message}` : '', field ? ` (field: ${field})` : ''];
  let hint = '';
  if (status === 401) hint = '\n  hint: set EVALS_API_KEY (or --api-key) to a key the service accepts';
  else if (status === 403) hint = '\n  hint: the API key is valid but its tier does not allow this (an override needs the admin tier)';
  else if (status >= 500 || status === 408 || status === 429) hint = '\n  the service or one of its dependencies is unavailable; retry later';
  return parts.join('') + hint;
}

/** The service could not be reached at all: no HTTP answer. */
export class UnreachableError extends CliError {
  constructor(message: string) {
    super(EXIT.UNREACHABLE, message);
  }
}
