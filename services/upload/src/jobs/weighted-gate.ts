/**
 * Admits work in arrival order while both bounds hold: at most `slots` pieces at once, and their
 * weights (here pixels) summing to at most `capacity`. A piece heavier than `capacity` counts as
 * `capacity`, so it runs alone. The head of the line waits for room rather than be overtaken by
 * lighter work behind it (no starvation of large images).
 */
export class WeightedGate {
  private used = 0;
  private active = 0;
  private readonly line: { weight: number; start: () => void }[] = [];

  constructor(
    private readonly capacity: number,
    private readonly slots: number,
  ) {}

  async run<T>(weight: number, fn: () => Promise<T>): Promise<T> {
    const w = Math.min(Math.max(weight, 0), this.capacity);
    await new Promise<void>((start) => {
      this.line.push({ weight: w, start });
      this.admit();
    });
    try {
      return await fn();
    } finally {
      this.used -= w;
      this.active--;
      this.admit();
    }
  }

  private admit(): void {
    for (let head = this.line[0]; head; head = this.line[0]) {
      if (this.active >= this.slots || this.used + head.weight > this.capacity) return;
      this.line.shift();
      this.used += head.weight;
      this.active++;
      head.start();
    }
  }
}
