import { JudgeError, MAX_JUDGE_REPEATS_FOR_CALIBRATION, judgePassed, selfAgreement, type JudgePort, type JudgeRequest } from '@evals/domain';

/**
 * Calibration with repeats (issue 13): besides its agreement with the humans (measured on the first call of
 * each item, as a gate's single call is), the judge is asked `repeats - 1` more times per item and its
 * self-agreement is reported - the share of items whose k verdicts agree, with its Wilson interval - so a
 * judge that agrees with humans by luck of the draw shows it.
 */
export interface CalibrationSelfAgreement {
  readonly repeats: number;
  readonly items: number;
  readonly agreeing: number;
  readonly rate: number | null;
  readonly lower: number;
  readonly upper: number;
  /** The extra calls' cost (the first calls are in the report's `judge`). */
  readonly extra_calls: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cost_usd: number;
}

/** `repeats` of a calibration request: absent -> 1 (no self-agreement); else an integer in [2, 10], or a problem. */
export function calibrationRepeats(raw: unknown): { readonly repeats: number } | { readonly problem: string } {
  if (raw === undefined || raw === null) return { repeats: 1 };
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 2 || raw > MAX_JUDGE_REPEATS_FOR_CALIBRATION) {
    return { problem: `repeats must be an integer from 2 to ${MAX_JUDGE_REPEATS_FOR_CALIBRATION}` };
  }
  return { repeats: raw };
}

/**
 * Asks the judge `repeats - 1` more times per item and measures its self-agreement against the first
 * verdicts (`first[i]`). A repeat that errors votes fail (J3), as in a run.
 */
export async function measureSelfAgreement(
  judge: Pick<JudgePort, 'judge'>,
  items: ReadonlyArray<{ readonly request: JudgeRequest; readonly minScore: number }>,
  first: ReadonlyArray<'pass' | 'fail'>,
  repeats: number,
): Promise<CalibrationSelfAgreement | null> {
  if (repeats < 2) return null;
  let calls = 0;
  let input = 0;
  let output = 0;
  let cost = 0;
  const votes = await Promise.all(
    items.map(async (item, i) => {
      const more = await Promise.all(
        Array.from({ length: repeats - 1 }, () =>
          judge.judge(item.request).then(
            (v) => v,
            (e: unknown) => (e instanceof JudgeError ? e : new JudgeError('judge_unavailable', 'the judge call failed unexpectedly')),
          ),
        ),
      );
      const mine: Array<'pass' | 'fail'> = [first[i]!];
      for (const r of more) {
        calls++;
        const usage = r instanceof JudgeError ? r.details.usage : r.usage;
        input += usage?.input_tokens ?? 0;
        output += usage?.output_tokens ?? 0;
        cost += r instanceof JudgeError ? (r.details.cost_usd ?? 0) : r.cost_usd;
        mine.push(!(r instanceof JudgeError) && judgePassed(r, item.minScore) ? 'pass' : 'fail');
      }
      return mine;
    }),
  );
  const agreement = selfAgreement(votes);
  return { repeats, ...agreement, extra_calls: calls, input_tokens: input, output_tokens: output, cost_usd: cost };
}
