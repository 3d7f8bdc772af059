/**
 * Globs for transcript paths (`sessions/*.jsonl`, `~/.claude/projects/my-app/**\/*.jsonl`): `*` and
 * `?` within one path segment, `[abc]` classes, `{a,b}` alternatives, `**` for any depth. As in a
 * shell, `*` does not match a leading dot unless the pattern segment starts with one. Pure: the
 * walking is in src/io/git-hooks.ts (Node 20 has no fs.glob).
 */

export function hasGlob(pattern: string): boolean {
  return /[*?[{]/.test(pattern);
}

/** One path segment's pattern as a regular expression (`**` is handled by the walker). */
export function segmentRegExp(segment: string): RegExp {
  let out = '';
  let inClass = false;
  let braces = 0;
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (inClass) {
      if (c === ']') inClass = false;
      out += c === '\\' ? '\\\\' : c;
      continue;
    }
    switch (c) {
      case '*':
        out += '[^/]*';
        break;
      case '?':
        out += '[^/]';
        break;
      case '[':
        if (segment.indexOf(']', i + 2) === -1) {
          out += '\\[';
        } else {
          inClass = true;
          out += segment[i + 1] === '!' ? '[^' : '[';
          if (segment[i + 1] === '!') i++;
        }
        break;
      case '{':
        braces++;
        out += '(?:';
        break;
      case '}':
        if (braces > 0) {
          braces--;
          out += ')';
        } else {
          out += '\\}';
        }
        break;
      case ',':
        out += braces > 0 ? '|' : ',';
        break;
      default:
        out += c.replace(/[.+^$()|\\]/g, '\\$&');
    }
  }
  while (braces-- > 0) out += ')';
  const dotOk = segment.startsWith('.');
  return new RegExp(`^${dotOk ? '' : '(?!\\.)'}${out}$`);
}

/** Splits a glob into the folder to start walking from (no glob in it) and the segments to match. */
export function splitGlob(pattern: string): { base: string; segments: string[] } {
  const parts = pattern.split('/');
  const firstGlob = parts.findIndex(hasGlob);
  if (firstGlob === -1) return { base: pattern, segments: [] };
  const base = parts.slice(0, firstGlob).join('/');
  return { base: base === '' && pattern.startsWith('/') ? '/' : base, segments: parts.slice(firstGlob).filter((p) => p !== '') };
}
