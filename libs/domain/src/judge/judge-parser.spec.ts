import { parseJudgeReply, parsePairwiseReply, MAX_REPLY_CHARS } from './judge-parser';

const REASONING = 'The output states the capital correctly and answers the question asked. It meets the rubric.';

describe('parseJudgeReply (J2, J3)', () => {
  const table: Array<[string, string, ReturnType<typeof parseJudgeReply>]> = [
    ['verdict last', `${REASONING}\n{"verdict": "pass", "score": 0.9}`, { ok: true, verdict: 'pass', score: 0.9 }],
    ['fail verdict last', `${REASONING}\n{"verdict":"fail","score":0}`, { ok: true, verdict: 'fail', score: 0 }],
    ['score 1 with trailing whitespace', `${REASONING}\n{"verdict": "pass", "score": 1}\n\n  `, { ok: true, verdict: 'pass', score: 1 }],
    ['code fence around the verdict', `${REASONING}\n\`\`\`json\n{"verdict": "pass", "score": 0.75}\n\`\`\`\n`, { ok: true, verdict: 'pass', score: 0.75 }],
    ['pretty-printed verdict object', `${REASONING}\n{\n  "verdict": "fail",\n  "score": 0.2\n}`, { ok: true, verdict: 'fail', score: 0.2 }],
    ['multiple verdict objects: the last wins', `Draft: {"verdict": "fail", "score": 0.1}\n${REASONING}\n{"verdict": "pass", "score": 0.8}`, { ok: true, verdict: 'pass', score: 0.8 }],
    ['extra keys ignored', `${REASONING}\n{"verdict": "pass", "score": 0.6, "confidence": "high"}`, { ok: true, verdict: 'pass', score: 0.6 }],
    ['verdict before the reasoning', `{"verdict": "pass", "score": 0.9}\n${REASONING}`, { ok: false, reason: 'verdict_not_last' }],
    ['extra text after the verdict', `${REASONING}\n{"verdict": "pass", "score": 0.9}\nHope this helps!`, { ok: false, reason: 'verdict_not_last' }],
    ['bare verdict, no reasoning', '{"verdict": "pass", "score": 0.9}', { ok: false, reason: 'no_reasoning' }],
    ['bare verdict in a fence, no reasoning', '```json\n{"verdict": "pass", "score": 0.9}\n```', { ok: false, reason: 'no_reasoning' }],
    ['malformed JSON (missing brace)', `${REASONING}\n{"verdict": "pass", "score": 0.9`, { ok: false, reason: 'malformed_verdict' }],
    ['malformed JSON (single quotes)', `${REASONING}\n{'verdict': 'pass', 'score': 0.9}`, { ok: false, reason: 'no_verdict' }],
    ['malformed last verdict after a well-formed draft', `Draft {"verdict": "fail", "score": 0.1}. ${REASONING}\n{"verdict": "pass", "score": }`, { ok: false, reason: 'malformed_verdict' }],
    ['no verdict at all', REASONING, { ok: false, reason: 'no_verdict' }],
    ['empty reply', '   ', { ok: false, reason: 'empty_reply' }],
    ['score above 1', `${REASONING}\n{"verdict": "pass", "score": 1.5}`, { ok: false, reason: 'invalid_score' }],
    ['score below 0', `${REASONING}\n{"verdict": "fail", "score": -0.1}`, { ok: false, reason: 'invalid_score' }],
    ['score as a string', `${REASONING}\n{"verdict": "pass", "score": "0.9"}`, { ok: false, reason: 'invalid_score' }],
    ['score missing', `${REASONING}\n{"verdict": "pass"}`, { ok: false, reason: 'missing_score' }],
    ['score null', `${REASONING}\n{"verdict": "pass", "score": null}`, { ok: false, reason: 'invalid_score' }],
    ['unknown verdict', `${REASONING}\n{"verdict": "maybe", "score": 0.5}`, { ok: false, reason: 'invalid_verdict' }],
    ['verdict in capitals', `${REASONING}\n{"verdict": "PASS", "score": 0.9}`, { ok: false, reason: 'invalid_verdict' }],
    ['verdict as a boolean', `${REASONING}\n{"verdict": true, "score": 0.9}`, { ok: false, reason: 'invalid_verdict' }],
    ['verdict nested in another object', `${REASONING}\n{"result": {"verdict": "pass", "score": 0.9}}`, { ok: false, reason: 'verdict_not_last' }],
  ];

  it.each(table)('%s', (_name, reply, expected) => {
    expect(parseJudgeReply(reply)).toEqual(expected);
  });

  it('J3: nothing unparseable is ever a pass', () => {
    for (const [, reply, expected] of table) {
      const parsed = parseJudgeReply(reply);
      if (!expected.ok) expect(parsed.ok).toBe(false);
    }
  });

  it('refuses non-string and oversized replies', () => {
    expect(parseJudgeReply(undefined)).toEqual({ ok: false, reason: 'empty_reply' });
    expect(parseJudgeReply(42)).toEqual({ ok: false, reason: 'empty_reply' });
    const huge = `${'x'.repeat(MAX_REPLY_CHARS)}\n{"verdict": "pass", "score": 1}`;
    expect(parseJudgeReply(huge)).toEqual({ ok: false, reason: 'reply_too_long' });
  });

  it('J2, D1: returns only the verdict and score, never the reasoning', () => {
    const parsed = parseJudgeReply(`REASONING-MARKER-123 says it is fine.\n{"verdict": "pass", "score": 0.9}`);
    expect(Object.keys(parsed).sort()).toEqual(['ok', 'score', 'verdict']);
    expect(JSON.stringify(parsed)).not.toContain('REASONING-MARKER-123');
    const failed = parseJudgeReply('REASONING-MARKER-123 {"verdict": "pass", "score": 9}');
    expect(JSON.stringify(failed)).not.toContain('REASONING-MARKER-123');
  });

  it('stays fast on an adversarial reply full of braces and keys', () => {
    const noise = '{"verdict" {'.repeat(5000) + '}'.repeat(5000);
    const started = process.hrtime.bigint();
    expect(parseJudgeReply(`${noise}\n{"verdict": "pass", "score": 0.5}`).ok).toBe(true);
    expect(parseJudgeReply(noise).ok).toBe(false);
    // Bounded work: the search caps occurrences and braces examined (not a timing assertion on a budget,
    // just a guard against a quadratic blow-up that would take minutes).
    expect(Number(process.hrtime.bigint() - started) / 1e9).toBeLessThan(10);
  });
});

describe('parsePairwiseReply (J5)', () => {
  it.each([
    ['first', `${REASONING}\n{"winner": "first"}`, { ok: true, winner: 'first' }],
    ['second', `${REASONING}\n{"winner": "second"}`, { ok: true, winner: 'second' }],
    ['tie', `${REASONING}\n{"winner":"tie"}`, { ok: true, winner: 'tie' }],
    ['decision first', `{"winner": "first"}\n${REASONING}`, { ok: false, reason: 'verdict_not_last' }],
    ['unknown winner', `${REASONING}\n{"winner": "A"}`, { ok: false, reason: 'invalid_winner' }],
    ['malformed', `${REASONING}\n{"winner": "first"`, { ok: false, reason: 'malformed_verdict' }],
    ['none', REASONING, { ok: false, reason: 'no_verdict' }],
  ] as const)('%s', (_name, reply, expected) => {
    expect(parsePairwiseReply(reply)).toEqual(expected);
  });
});
