/**
 * Which keys were offered before, approximately and in constant memory: a Bloom filter (two
 * hashes over 2^20 bits, 128 KiB) forgotten whole after 65,536 keys. A memo asks it before
 * remembering anything, so a key is remembered from its second request on: the long tail of
 * query strings asked once (every keystroke of a search box) then costs no memory and no
 * garbage collection, while anything repeated within the last ~65k new keys is remembered.
 * A false "seen" (about 1.5% when full) only remembers one key early.
 */
export class SeenBefore {
  private readonly bits: Int32Array;
  private readonly mask: number;
  private added = 0;

  constructor(
    log2Bits = 20,
    private readonly capacity = 65_536,
  ) {
    this.bits = new Int32Array(1 << (log2Bits - 5));
    this.mask = (1 << log2Bits) - 1;
  }

  /** True when `key` was (probably) offered since the last reset; remembers it either way. */
  offer(key: string): boolean {
    // FNV-1a, then a second hash mixed from the first (double hashing).
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    const a = h & this.mask;
    const b = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) & this.mask;
    const seen = (this.bits[a >>> 5]! & (1 << (a & 31))) !== 0 && (this.bits[b >>> 5]! & (1 << (b & 31))) !== 0;
    if (!seen) {
      if (this.added === this.capacity) {
        this.bits.fill(0);
        this.added = 0;
      }
      this.bits[a >>> 5]! |= 1 << (a & 31);
      this.bits[b >>> 5]! |= 1 << (b & 31);
      this.added++;
    }
    return seen;
  }
}
