/** One failed check: what was sent and what was wrong with the answer. */
export interface Failure {
  input: string;
  problem: string;
}

/** The inputs one category tried and the ones that failed. */
export class Category {
  tried = 0;
  readonly failures: Failure[] = [];
  /** What the category measured or could not check yet, printed with the table (never a failure). */
  readonly notes: string[] = [];

  constructor(readonly name: string) {}

  note(text: string): void {
    this.notes.push(text);
  }

  /** Counts one input; every problem (none when the answer was right) is a failure of it. */
  check(input: string, problems: readonly string[]): void {
    this.tried++;
    if (problems.length > 0) this.failures.push({ input, problem: problems.join('; ') });
  }

  /** A failure that is not about one input's answer (e.g. inputs the deadline left unsent). */
  fail(input: string, problem: string): void {
    this.tried++;
    this.failures.push({ input, problem });
  }

  /** The failures, grouped by problem (largest group first), at most `perGroup` inputs shown each. */
  summary(perGroup = 3, groups = 25): string {
    const byProblem = new Map<string, string[]>();
    for (const { input, problem } of this.failures) {
      const key = problem.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>');
      byProblem.set(key, [...(byProblem.get(key) ?? []), input]);
    }
    const sorted = [...byProblem.entries()].sort((a, b) => b[1].length - a[1].length);
    const lines = sorted.slice(0, groups).map(([problem, inputs]) => {
      const shown = inputs.slice(0, perGroup).join(' | ');
      return `  ${inputs.length}x ${problem}\n      e.g. ${shown}${inputs.length > perGroup ? ' | ...' : ''}`;
    });
    if (sorted.length > groups) lines.push(`  ... ${sorted.length - groups} more kinds of failure`);
    return lines.join('\n');
  }
}

/** The categories of the battery in order, and the table it ends with. */
export class Recorder {
  private readonly categories = new Map<string, Category>();

  category(name: string): Category {
    let category = this.categories.get(name);
    if (!category) this.categories.set(name, (category = new Category(name)));
    return category;
  }

  all(): Category[] {
    return [...this.categories.values()];
  }

  /** `category | inputs tried | failures` as a text table. */
  table(): string {
    const rows = [['category', 'inputs tried', 'failures'], ...this.all().map((c) => [c.name, String(c.tried), String(c.failures.length)])];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    const line = (r: string[]) => `| ${r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
    const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
    return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
  }

  /** Every failure, one line each: `category | input | problem`. */
  allFailures(): string {
    return this.all()
      .flatMap((c) => c.failures.map((f) => `${c.name} | ${f.input} | ${f.problem}`))
      .join('\n');
  }

  /** The table, every category's notes, then every category's failures grouped by problem. */
  report(): string {
    const notes = this.all()
      .filter((c) => c.notes.length > 0)
      .map((c) => `${c.name}:\n${c.notes.map((n) => `  ${n}`).join('\n')}`);
    const details = this.all()
      .filter((c) => c.failures.length > 0)
      .map((c) => `${c.name}: ${c.failures.length} failures\n${c.summary()}`);
    return [this.table(), ...notes, ...details].join('\n\n');
  }
}
