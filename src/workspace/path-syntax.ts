// How a workspace-relative path is written in tool results. In multi-project mode `[id]/rest` names another
// project; a leading `./` keeps a path local whatever follows, so a directory named like `[B]` stays reachable.

/** A relative path as results report it: one that a tool call reads back as the same local file (`[B]/b.txt` -> `./[B]/b.txt`). */
export function asLocalToolPath(rel: string): string {
  return rel.startsWith('[') ? `./${rel}` : rel;
}
