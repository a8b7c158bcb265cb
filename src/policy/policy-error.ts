// What a start needs of the policy file's module without the module: its error (serve.ts names it at exit) and
// the glob options the evaluator shares. policy-file.ts, which parses YAML, is then imported only when
// TOOLGATE_POLICY is set (docs/policy.md).

/** A problem in the policy file, with where it is (1-based line and column; 0 when the file is unreadable). */
export class PolicyError extends Error {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly problem: string;
  constructor(file: string, line: number, column: number, problem: string) {
    super(line > 0 ? `${file}:${line}:${column}: ${problem}` : `${file}: ${problem}`);
    this.name = 'PolicyError';
    this.file = file;
    this.line = line;
    this.column = column;
    this.problem = problem;
  }
}

/** Options picomatch gets everywhere: dotfiles are files like others, unbalanced brackets are errors. */
export const GLOB_OPTIONS = { dot: true, strictBrackets: true } as const;
