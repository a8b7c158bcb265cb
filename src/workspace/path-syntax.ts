// How a workspace-relative path is written in tool results. In multi-project mode `[id]/rest` names another
// project; a leading `./` keeps a path local whatever follows, so a directory named like `[B]` stays reachable.

/** A relative path as results report it: one that a tool call reads back as the same local file (`[B]/b.txt` -> `./[B]/b.txt`). */
export function asLocalToolPath(rel: string): string {
  return rel.startsWith('[') ? `./${rel}` : rel;
}

/**
 * A tool path normalized by its text alone (`a/./b/../c` -> `a/c`), or null when it is absolute, holds a NUL or a
 * backslash, or leads outside the root: a form that is safe to echo in an answer, never a host path.
 */
export function lexicalRel(input: string): string | null {
  if (input.startsWith('/') || input.includes('\0') || input.includes('\\')) return null;
  const out: string[] = [];
  for (const seg of input.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg !== '..') out.push(seg);
    else if (out.pop() === undefined) return null; // leads outside: nothing to name
  }
  return out.length === 0 ? '.' : out.join('/');
}
