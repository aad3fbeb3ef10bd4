/**
 * Keeps only the newest of a series of requests: starting one aborts the one before, and
 * `current()` is false for any answer that still arrives after a newer request began (an
 * abort can lose the race with a response that is already being read).
 */
export class LatestRequest {
  private seq = 0;
  private controller: AbortController | null = null;

  begin(): { signal: AbortSignal; current: () => boolean } {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const mine = ++this.seq;
    return { signal: controller.signal, current: () => mine === this.seq };
  }

  /** No request is wanted any more (the page went away). */
  cancel(): void {
    this.controller?.abort();
    this.controller = null;
    this.seq++;
  }
}
