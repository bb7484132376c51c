import { readFileSync } from 'node:fs';

/** The non-empty lines of a file a test process appends to; none while it does not exist yet. */
export function fileLines(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter(Boolean);
}
