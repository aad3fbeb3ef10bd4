/** Docs per joined block: each URL string dies young instead of living through the build. */
const BLOCK = 1024;

/**
 * The docs' normalised repository URLs joined by "\n" in doc order (doc d spans
 * [repoStart[d], repoStart[d+1]-1)), from URLs added in visit order.
 */
export class RepositoryText {
  private readonly blocks: string[] = [];
  private block: string[] = [];
  /** Per visit position, where its URL starts in the visit-order text. */
  private readonly startAt: Int32Array;
  private len = 0;
  private added = 0;

  constructor(packs: number) {
    this.startAt = new Int32Array(packs + 1);
  }

  /** The URL of the next pack visited. */
  add(url: string): void {
    this.block.push(url);
    this.startAt[this.added++] = this.len;
    this.len += url.length + 1;
    if (this.block.length === BLOCK) this.flush();
  }

  private flush(): void {
    if (this.block.length > 0) this.blocks.push(this.block.join("\n") + "\n");
    this.block = [];
  }

  /** `visitOf[d]`: the visit position of doc d. */
  finish(visitOf: Int32Array): { repoText: string; repoStart: Int32Array } {
    this.flush();
    this.startAt[this.added] = this.len;
    const visited = this.blocks.join("");
    const n = visitOf.length;
    const repoStart = new Int32Array(n + 1);
    const blocks: string[] = [];
    let len = 0;
    for (let d0 = 0; d0 < n; d0 += BLOCK) {
      const urls: string[] = [];
      for (let d = d0; d < Math.min(n, d0 + BLOCK); d++) {
        const at = visitOf[d]!;
        repoStart[d] = len;
        len += this.startAt[at + 1]! - this.startAt[at]!;
        urls.push(visited.slice(this.startAt[at], this.startAt[at + 1]! - 1));
      }
      blocks.push(urls.join("\n") + "\n");
    }
    repoStart[n] = len;
    return { repoText: blocks.length === 0 ? "\n" : blocks.join(""), repoStart };
  }
}
