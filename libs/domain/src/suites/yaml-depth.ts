/**
 * Nesting of a YAML suite, estimated in one linear pass over the text before it is parsed: the yaml
 * library parses and converts recursively, and a document nested tens of thousands deep exhausts the stack
 * there - as a RangeError at best, and as a fatal out-of-memory in the engine's regular-expression compiler
 * at worst. Far deeper than any suite (values nest at most MAX_VALUE_DEPTH levels), far shallower than that.
 */
export const MAX_YAML_NESTING = 128;

/**
 * True when the text nests block collections (by indentation and compact `- ` / `? ` markers) and flow
 * collections (`[` `{`) more than `limit` levels. Quoted scalars, comments and block scalars (`|`, `>`) are
 * skipped, so brackets in text do not count. An estimate that errs on the side of the parser: it only has
 * to tell documents a suite could be from pathological ones.
 */
export function yamlNestingExceeds(text: string, limit = MAX_YAML_NESTING): boolean {
  const lines = text.split(/\r\n|\n|\r/);
  const indents: number[] = [];
  let flow = 0;
  let quote: '"' | "'" | null = null;
  let blockScalarIndent = -1;
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    if (blockScalarIndent >= 0) {
      if (line.trim() === '' || indent > blockScalarIndent) continue;
      blockScalarIndent = -1;
    }
    let i = indent;
    if (quote === null && flow === 0 && line.trim() !== '' && !line.trimStart().startsWith('#')) {
      while (indents.length > 0 && indents[indents.length - 1]! >= indent) indents.pop();
      indents.push(indent);
      // Compact nested sequences / complex keys on one line: `- - - x`.
      while (i < line.length && (line[i] === '-' || line[i] === '?') && (line[i + 1] === ' ' || i + 1 === line.length)) {
        indents.push(i + 1);
        i += 2;
        while (line[i] === ' ') i++;
      }
      if (indents.length > limit) return true;
    }
    let previous = i > indent ? ' ' : '';
    for (; i < line.length; i++) {
      const c = line[i]!;
      if (quote === '"') {
        if (c === '\\') i++;
        else if (c === '"') quote = null;
        continue;
      }
      if (quote === "'") {
        if (c === "'" && line[i + 1] === "'") i++;
        else if (c === "'") quote = null;
        continue;
      }
      if (c === '#' && (previous === '' || previous === ' ' || previous === '\t')) break;
      if ((c === '"' || c === "'") && (previous === '' || /[\s:,[{?-]/.test(previous))) quote = c;
      else if (c === '[' || c === '{') {
        if (++flow + indents.length > limit) return true;
      } else if ((c === ']' || c === '}') && flow > 0) flow--;
      else if ((c === '|' || c === '>') && flow === 0 && /^[|>][+-]?\d*[+-]?\s*(#.*)?$/.test(line.slice(i)) && /(^|[\s:-])$/.test(previous)) {
        blockScalarIndent = indent;
        break;
      }
      if (c !== ' ' && c !== '\t') previous = c;
      else previous = ' ';
    }
  }
  return false;
}
