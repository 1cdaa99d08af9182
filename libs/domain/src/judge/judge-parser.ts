/**
 * Parsing a judge's reply (J2, J3). The prompt asks for reasoning first and the verdict LAST, as one JSON
 * object. The parser takes the last well-formed verdict object of the reply and accepts it only when
 *
 * - nothing but whitespace and closing code fences follows it (a verdict followed by more text - e.g. a
 *   verdict written before the reasoning - is refused: `verdict_not_last`);
 * - some reasoning precedes it (a bare verdict is refused: `no_reasoning`);
 * - `verdict` is exactly "pass" or "fail" and `score` a finite number in [0, 1].
 *
 * Anything else is unparseable, never a pass (J3). The parser returns the verdict and score only: the
 * reasoning is dropped here (J2, D1), and a failure reason comes from a fixed vocabulary that never quotes
 * the reply.
 */
import type { PassFail } from './judge.port';

export const REPLY_PARSE_FAILURES = [
  'empty_reply',
  'reply_too_long',
  'no_verdict',
  'malformed_verdict',
  'verdict_not_last',
  'no_reasoning',
  'invalid_verdict',
  'missing_score',
  'invalid_score',
  'invalid_winner',
] as const;

/** Why a reply has no usable verdict: a fixed vocabulary that never quotes the reply. */
export type ReplyParseFailure = (typeof REPLY_PARSE_FAILURES)[number];

export type ReplyParse<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly reason: ReplyParseFailure };

export interface ParsedVerdict {
  readonly verdict: PassFail;
  readonly score: number;
}

export type PairwiseChoice = 'first' | 'second' | 'tie';

export interface ParsedPairwise {
  readonly winner: PairwiseChoice;
}

/** Replies longer than this are refused unread (a judge reply is a few paragraphs). */
export const MAX_REPLY_CHARS = 100_000;
/** A verdict object is one short line; objects longer than this are not considered. */
const MAX_OBJECT_CHARS = 2_000;
/** Bounds on the search, so an adversarial reply cannot make parsing quadratic. */
const MAX_KEY_OCCURRENCES = 64;
const MAX_BRACES_PER_SIDE = 32;

const LEADING_FENCE = /```[A-Za-z0-9_-]*\s*$/;
const HAS_WORD = /[\p{L}\p{N}]/u;

interface Found {
  readonly value: Record<string, unknown>;
  readonly start: number;
  readonly end: number; // exclusive
}

function positions(text: string, ch: string, from: number, to: number, direction: 'left' | 'right'): number[] {
  const out: number[] = [];
  if (direction === 'left') {
    for (let i = to - 1; i >= from && out.length < MAX_BRACES_PER_SIDE; i--) if (text[i] === ch) out.push(i);
  } else {
    for (let i = from; i < to && out.length < MAX_BRACES_PER_SIDE; i++) if (text[i] === ch) out.push(i);
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The well-formed JSON object around the occurrence of `"key"` at `at`, having `key` as its own key. */
function objectAround(text: string, at: number, key: string): Found | null {
  const opens = positions(text, '{', Math.max(0, at - MAX_OBJECT_CHARS), at, 'left');
  const closes = positions(text, '}', at, Math.min(text.length, at + MAX_OBJECT_CHARS), 'right');
  for (const s of opens) {
    for (const e of closes) {
      if (e + 1 - s > MAX_OBJECT_CHARS) break;
      let value: unknown;
      try {
        value = JSON.parse(text.slice(s, e + 1));
      } catch {
        continue;
      }
      if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, key)) return { value, start: s, end: e + 1 };
    }
  }
  return null;
}

type Located = { readonly ok: true; readonly found: Found } | { readonly ok: false; readonly reason: ReplyParseFailure };

/** The last well-formed object with `key`, checked to be the end of the reply and to follow some reasoning. */
function locateTrailingObject(reply: unknown, key: string): Located {
  if (typeof reply !== 'string' || reply.trim() === '') return { ok: false, reason: 'empty_reply' };
  if (reply.length > MAX_REPLY_CHARS) return { ok: false, reason: 'reply_too_long' };
  const token = `"${key}"`;
  const occurrences: number[] = [];
  for (let i = reply.lastIndexOf(token); i >= 0 && occurrences.length < MAX_KEY_OCCURRENCES; i = i === 0 ? -1 : reply.lastIndexOf(token, i - 1)) {
    occurrences.push(i);
  }
  if (occurrences.length === 0) return { ok: false, reason: 'no_verdict' };
  let found: Found | null = null;
  for (const at of occurrences) {
    found = objectAround(reply, at, key);
    if (found) break;
  }
  if (!found) return { ok: false, reason: 'malformed_verdict' };

  const after = reply.slice(found.end);
  if (after.replace(/```/g, '').trim() !== '') {
    // Text follows the last well-formed verdict: either a later verdict that does not parse, or a verdict
    // given before (part of) the reasoning.
    return { ok: false, reason: after.includes(token) ? 'malformed_verdict' : 'verdict_not_last' };
  }
  const before = reply.slice(0, found.start).replace(LEADING_FENCE, '');
  if (!HAS_WORD.test(before)) return { ok: false, reason: 'no_reasoning' };
  return { ok: true, found };
}

/** J3: the verdict and score of a judge reply, or why there is none. The reasoning is discarded. */
export function parseJudgeReply(reply: unknown): ReplyParse<ParsedVerdict> {
  const located = locateTrailingObject(reply, 'verdict');
  if (!located.ok) return located;
  const { value } = located.found;
  const verdict = value['verdict'];
  if (verdict !== 'pass' && verdict !== 'fail') return { ok: false, reason: 'invalid_verdict' };
  if (!Object.prototype.hasOwnProperty.call(value, 'score')) return { ok: false, reason: 'missing_score' };
  const score = value['score'];
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return { ok: false, reason: 'invalid_score' };
  return { ok: true, verdict, score: Object.is(score, -0) ? 0 : score };
}

/** J5: the winner of a pairwise reply (`first`, `second` or `tie`), or why there is none. */
export function parsePairwiseReply(reply: unknown): ReplyParse<ParsedPairwise> {
  const located = locateTrailingObject(reply, 'winner');
  if (!located.ok) return located;
  const winner = located.found.value['winner'];
  if (winner !== 'first' && winner !== 'second' && winner !== 'tie') return { ok: false, reason: 'invalid_winner' };
  return { ok: true, winner };
}
