/**
 * How deeply a JSON text nests, read from the text itself before anything parses or walks it:
 * a 10,000-level array is 20 KB, parses fine, and then makes every recursive consumer
 * (JSON.stringify on the way to an upstream, schema validators) throw a stack overflow.
 * One pass over the characters, no allocation; brackets inside strings do not count.
 */
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** true when `text` nests objects and arrays more than `maxDepth` levels deep. */
export function exceedsDepth(text: string, maxDepth: number): boolean {
  // Nesting never exceeds the count of opening brackets (those in strings included): a message
  // with few of them is let through after a few indexOf jumps instead of a walk of every character.
  if (!hasMoreOpenings(text, maxDepth)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Whether `text` holds more than `limit` of `{` and `[` together. */
function hasMoreOpenings(text: string, limit: number): boolean {
  let count = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++count > limit) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++count > limit) return true;
  return false;
}
