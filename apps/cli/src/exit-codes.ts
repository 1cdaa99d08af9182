/** X5: exit codes that tell a failed evaluation from a broken setup (docs/cli.md). */
export const EXIT = {
  PASS: 0,
  /** The evaluation ran and failed: regressed, or below the pass threshold. */
  FAILED: 1,
  /** Usage, configuration or input error (a bad suite, a missing file). */
  USAGE: 2,
  /** The service or a dependency could not be reached. */
  UNREACHABLE: 3,
} as const;

export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}
