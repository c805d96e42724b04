import { median } from './stats';

/** A per-round figure: its median and the range of the rounds. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Every round's figure, in round order. */
  rounds: number[];
}

export const spread = (values: number[]): Spread => ({ median: median(values), min: Math.min(...values), max: Math.max(...values), rounds: values });

export interface LossVerdict {
  /** B lost nothing, or its loss is no larger than the rounds' own spread. */
  within: boolean;
  text: string;
}

const x = (v: number) => v.toFixed(2);
const pct = (v: number) => `${(v * 100).toFixed(1)} %`;

/**
 * Whether B's loss against A (if any) is within the spread of the rounds, from per-round ratios.
 * `higherIsBetter`: throughput (a loss is a ratio below 1); otherwise CPU per request (a loss is a
 * ratio above 1). The spread is the A-vs-A ratios (a second A in the same rounds) when measured:
 * B's median must not be worse than the worst round of A against itself; without them, the rounds
 * of B/A must span 1.0.
 */
export function lossVerdict(what: string, bOverA: Spread, aOverA: Spread | undefined, higherIsBetter: boolean): LossVerdict {
  const loss = higherIsBetter ? 1 - bOverA.median : bOverA.median - 1;
  const measured = `${what} B/A median ${x(bOverA.median)} (rounds ${x(bOverA.min)}-${x(bOverA.max)})`;
  if (loss <= 0) return { within: true, text: `${measured}: B lost nothing` };
  if (aOverA) {
    const within = higherIsBetter ? bOverA.median >= aOverA.min : bOverA.median <= aOverA.max;
    const verdict = within ? 'within' : 'beyond';
    return { within, text: `${measured}, A vs A ${x(aOverA.min)}-${x(aOverA.max)}: B's loss (${pct(loss)}) is ${verdict} the spread of the rounds` };
  }
  const within = higherIsBetter ? bOverA.max >= 1 : bOverA.min <= 1;
  return {
    within,
    text: `${measured}: B's loss (${pct(loss)}) is ${within ? 'within' : 'beyond'} the spread of the rounds (the rounds ${within ? 'span' : 'do not reach'} 1.00)`,
  };
}
