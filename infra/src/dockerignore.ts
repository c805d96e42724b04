/** One .dockerignore line: `!` re-includes, `**` spans directories, `*` and `?` stay within one. */
interface Pattern {
  exclusion: boolean;
  regex: RegExp;
}

export function parseDockerignore(text: string): Pattern[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const exclusion = line.startsWith('!');
      const glob = (exclusion ? line.slice(1) : line).trim().replace(/^\/+/, '').replace(/\/+$/, '');
      let source = '';
      for (let i = 0; i < glob.length; i++) {
        const c = glob[i] as string;
        if (c === '*' && glob[i + 1] === '*') {
          // `**/` is zero or more directories; a trailing `**` is anything below.
          if (glob[i + 2] === '/') {
            source += '(?:.*/)?';
            i += 2;
          } else {
            source += '.*';
            i += 1;
          }
        } else if (c === '*') source += '[^/]*';
        else if (c === '?') source += '[^/]';
        else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { exclusion, regex: new RegExp(`^${source}$`) };
    });
}

/**
 * Whether Docker leaves `path` (relative to the context root) out of the build context: the last
 * pattern that matches the path or one of its parent directories decides.
 */
export function isIgnored(path: string, patterns: Pattern[]): boolean {
  const parts = path.split('/');
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const pattern of patterns) {
    if (candidates.some((candidate) => pattern.regex.test(candidate))) ignored = !pattern.exclusion;
  }
  return ignored;
}
