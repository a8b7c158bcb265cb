// A strict tokenizer for the shell tools' `command` string. No shell ever runs: the string is split into
// words the way sh would split it, and anything sh would interpret (separators, pipes, redirections,
// substitutions, globs, expansions, escapes) is refused with INVALID_PARAM naming the character, so what
// the caller reads in the command is exactly the argv that runs.
import { ToolError } from '../../envelope.js';
import { E } from '../../errors.js';

/** Characters sh gives a meaning outside quotes, with the name used in the refusal. */
const UNQUOTED: Record<string, string> = {
  ';': 'command separator',
  '&': 'background or && operator',
  '|': 'pipe or || operator',
  '<': 'redirection',
  '>': 'redirection',
  '`': 'backtick command substitution',
  $: 'variable or command substitution',
  '(': 'subshell',
  ')': 'subshell',
  '*': 'glob',
  '?': 'glob',
  '[': 'glob',
  ']': 'glob',
  '{': 'brace expansion',
  '}': 'brace expansion',
  '~': 'tilde expansion',
  '\\': 'backslash escape',
  '#': 'comment',
  '!': 'history expansion',
  '^': 'pipe (old Bourne shell)',
};

/** Inside double quotes sh still expands these; single quotes are fully literal. */
const IN_DOUBLE_QUOTES: Record<string, string> = {
  $: 'variable or command substitution',
  '`': 'backtick command substitution',
  '\\': 'backslash escape',
  '!': 'history expansion',
};

// Control characters (newline too: a second command) and invisible separators (a no-break space looks
// like a space but would not split words).
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}]/u;

function refuse(what: string, ch: string, index: number): ToolError {
  const shown = ch === '\n' ? '\\n' : ch === '\t' ? '\\t' : INVISIBLE.test(ch) ? `U+${ch.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}` : ch;
  return E.shellSyntax(what, shown, index);
}

/** Splits `command` into words (sh quoting: '…' literal, "…" literal without $ ` \ !), refusing all shell syntax. */
export function tokenize(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  let quoteStart = 0;
  let i = 0;
  for (const ch of command) {
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch !== ' ' && INVISIBLE.test(ch)) throw refuse('control or invisible character', ch, i);
      else if (quote === '"' && IN_DOUBLE_QUOTES[ch]) throw refuse(`${IN_DOUBLE_QUOTES[ch]} inside double quotes`, ch, i);
      else word += ch;
    } else if (ch === ' ' || ch === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      quoteStart = i;
      inWord = true;
    } else if (UNQUOTED[ch]) {
      throw refuse(UNQUOTED[ch], ch, i);
    } else if (INVISIBLE.test(ch)) {
      throw refuse('control or invisible character', ch, i);
    } else {
      word += ch;
      inWord = true;
    }
    i += ch.length;
  }
  if (quote) throw E.shellQuoteUnterminated(quote, quoteStart);
  if (inWord) words.push(word);
  return words;
}
