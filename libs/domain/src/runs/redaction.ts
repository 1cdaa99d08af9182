/**
 * D2: the per-case label shown in the UI is redacted by the handler before storage (the store is never
 * trusted to do it) and clamped to 120 characters. Scorer labels come from a fixed vocabulary, so this is
 * the second line of defence, for labels that one day carry more (a judge's short reason, say).
 */
export const MAX_LABEL_CHARS = 120;

const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // e-mail addresses
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, '[email]'],
  // bearer tokens and well-known key shapes (OpenAI/Anthropic sk-, GitHub ghp_/gho_, AWS AKIA, Slack xox?-)
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}\b/g, '[key]'],
  [/\bgh[pousr]_[A-Za-z0-9]{16,}\b/g, '[key]'],
  [/\bAKIA[0-9A-Z]{16}\b/g, '[key]'],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, '[key]'],
  [/\bBearer\s+[A-Za-z0-9._~+/-]+=*/gi, 'Bearer [token]'],
  // JWTs
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\b/g, '[token]'],
  // card numbers: 13-19 digits, optionally grouped by spaces or dashes
  [/\b(?:\d[ -]?){12,18}\d\b/g, '[card]'],
  // phone numbers: optional +country, 7-15 digits with common separators
  [/(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}[ .-]\d{2,4}[ .-]?\d{2,6}\b/g, '[phone]'],
  // long opaque tokens: 24+ characters of base64/hex-like text with at least one digit
  [/\b(?=[A-Za-z0-9_\-+/]*\d)[A-Za-z0-9_\-+/]{24,}={0,2}/g, '[token]'],
];

export function redactLabel(label: string): string {
  let out = label;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  // Control characters would let a label forge log lines or break a table cell.
  out = out.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return clampChars(out, MAX_LABEL_CHARS);
}

/** Clamps by code points, never splitting a surrogate pair. */
export function clampChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
