import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AssetSort, SortOrder } from "@app/contracts";
import { MAX_FILTER_TAGS, MAX_TAGS_PER_ASSET } from "@app/contracts";
import { TooManyTagsError, type ReferenceFilter, type ReferenceStore } from "../src/adapters/references/reference-store.ts";
import { sortValue, type AssetReference, type NewReference } from "../src/domain/asset-reference.ts";
import { metadataConditions } from "../src/domain/metadata-index.ts";

export interface ReferenceStoreUnderTest {
  store: ReferenceStore;
  cleanup(): Promise<void>;
}

const hex = (): string => randomBytes(32).toString("hex");

/** The owner most cases write as; OTHER is a second key's principal. */
export const OWNER = "studio";
const OTHER = "partner";
/** A filter of OWNER's records with no condition. */
export const NO_FILTER: ReferenceFilter = { owner: OWNER, tagsAll: [], tagsAny: [], tagsNone: [], metadata: [] };
const page = { sort: "name" as const, order: "asc" as const, limit: 50, offset: 0 };

/** Records naming `hash`, of the owners the cases write as (the port has no count by hash: nothing but these cases asks). */
async function recordsNaming(store: ReferenceStore, hash: string): Promise<number> {
  let n = 0;
  for (const owner of [OWNER, OTHER]) n += (await store.list({ ...NO_FILTER, owner, ...page })).items.filter((r) => r.hash === hash).length;
  return n;
}

function ref(overrides: Partial<NewReference> = {}): NewReference {
  return { owner: OWNER, hash: hex(), name: "cat.png", size: 100, mimeType: "image/png", tags: ["input"], ...overrides };
}

/** Byte-wise (as both databases compare names), then by id: the order the store must answer. */
function expectedOrder(refs: AssetReference[], sort: AssetSort, order: SortOrder): string[] {
  const sorted = [...refs].sort((a, b) => {
    const va = sortValue(a, sort);
    const vb = sortValue(b, sort);
    const c = typeof va === "number" && typeof vb === "number" ? va - vb : Buffer.compare(Buffer.from(String(va)), Buffer.from(String(vb)));
    return c !== 0 ? c : Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
  });
  if (order === "desc") sorted.reverse();
  return sorted.map((r) => r.id);
}

async function walk(
  store: ReferenceStore,
  sort: AssetSort,
  order: SortOrder,
  limit: number,
  between?: (page: number) => Promise<void>,
  filter: Partial<ReferenceFilter> = {},
): Promise<string[]> {
  const seen: string[] = [];
  let after: { value: string | number; id: string } | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await store.list({
      ...NO_FILTER,
      tagsAll: [],
      tagsNone: [],
      ...filter,
      sort,
      order,
      limit,
      offset: 0,
      ...(after && { after }),
    });
    seen.push(...result.items.map((r) => r.id));
    if (!result.hasMore) return seen;
    const last = result.items.at(-1)!;
    after = { value: sortValue(last, sort), id: last.id };
    await between?.(page);
  }
  throw new Error("paging did not end");
}

export function describeReferenceStoreConformance(name: string, make: () => Promise<ReferenceStoreUnderTest>): void {
  describe(`ReferenceStore conformance: ${name}`, () => {
    let subject: ReferenceStoreUnderTest;
    let store: ReferenceStore;

    beforeEach(async () => {
      subject = await make();
      store = subject.store;
      await store.init();
      await store.init(); // idempotent
    });

    afterEach(async () => {
      await subject.cleanup();
    });

    it("creates a record and reads it back whole", async () => {
      const input = ref({
        tags: ["input", "clipspace", "input"],
        userMetadata: { a: 1, nested: { b: ["x"] } },
        systemMetadata: { is_mask: true },
      });
      const { reference, created } = await store.create(input);
      expect(created).toBe(true);
      expect(reference).toMatchObject({
        hash: input.hash,
        name: "cat.png",
        size: 100,
        mimeType: "image/png",
        tags: ["input", "clipspace"],
      });
      expect(reference.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(reference.createdAt).toBe(reference.updatedAt);
      expect(await store.get(reference.id, OWNER)).toEqual(reference);
      expect(reference.userMetadata).toEqual({ a: 1, nested: { b: ["x"] } });
      expect(reference.systemMetadata).toEqual({ is_mask: true });
      expect(await store.get("00000000-0000-4000-8000-000000000000", OWNER)).toBeNull();
      expect(await store.ping()).toBe(true);
    });

    it("keeps one record per (hash, origin) and any number without an origin", async () => {
      const hash = hex();
      const a = await store.create(ref({ hash, origin: "upload:input:" }));
      const again = await store.create(ref({ hash, origin: "upload:input:", name: "other.png", tags: ["x"] }));
      expect(again.created).toBe(false);
      expect(again.reference).toEqual(a.reference);
      expect((await store.create(ref({ hash, origin: "upload:output:" }))).created).toBe(true);
      expect((await store.create(ref({ hash }))).created).toBe(true);
      expect((await store.create(ref({ hash }))).created).toBe(true);
      expect(await recordsNaming(store, hash)).toBe(4);
      const racing = await Promise.all(Array.from({ length: 6 }, () => store.create(ref({ hash, origin: "upload:temp:x" }))));
      expect(new Set(racing.map((r) => r.reference.id)).size).toBe(1);
      expect(racing.filter((r) => r.created)).toHaveLength(1);
    });

    it("updates name, tags and metadata, and moves updated_at", async () => {
      const { reference } = await store.create(ref({ tags: ["input", "a"] }));
      const renamed = await store.update(reference.id, OWNER, { name: "Renamed Cat.PNG" });
      expect(renamed).toMatchObject({ name: "Renamed Cat.PNG", tags: ["input", "a"] });
      expect(renamed!.updatedAt > reference.updatedAt).toBe(true);
      expect(renamed!.createdAt).toBe(reference.createdAt);
      const retagged = await store.update(reference.id, OWNER, { tags: ["b", "c"], userMetadata: { k: "v" } });
      expect(retagged).toMatchObject({ name: "Renamed Cat.PNG", tags: ["b", "c"], userMetadata: { k: "v" } });
      const list = await store.list({
        ...NO_FILTER,
        tagsAll: ["b"],
        tagsNone: [],
        sort: "created_at",
        order: "desc",
        limit: 10,
        offset: 0,
      });
      expect(list.items.map((r) => r.id)).toEqual([reference.id]);
      expect(
        (await store.list({ ...NO_FILTER, tagsAll: ["a"], tagsNone: [], sort: "created_at", order: "desc", limit: 10, offset: 0 })).total,
      ).toBe(0);
      expect(await store.update("00000000-0000-4000-8000-000000000000", OWNER, { name: "x" })).toBeNull();
    });

    it("adds and removes tags, telling which were there", async () => {
      const { reference } = await store.create(ref({ tags: ["input", "a"] }));
      const added = await store.addTags(reference.id, OWNER, ["a", "b", "c", "b"]);
      expect(added).toMatchObject({ added: ["b", "c"], alreadyPresent: ["a"] });
      expect(added!.reference.tags).toEqual(["input", "a", "b", "c"]);
      const removed = await store.removeTags(reference.id, OWNER, ["a", "zzz"]);
      expect(removed).toMatchObject({ removed: ["a"], notPresent: ["zzz"] });
      expect(removed!.reference.tags).toEqual(["input", "b", "c"]);
      expect((await store.tagCounts({ owner: OWNER, includeZero: false, order: "name_asc", limit: 10, offset: 0 })).tags).toEqual([
        { name: "b", count: 1 },
        { name: "c", count: 1 },
        { name: "input", count: 1 },
      ]);
      expect(await store.addTags("00000000-0000-4000-8000-000000000000", OWNER, ["a"])).toBeNull();
      expect(await store.removeTags("00000000-0000-4000-8000-000000000000", OWNER, ["a"])).toBeNull();
    });

    it("deletes a record (the tag's count goes to zero, the tag name stays for include_zero)", async () => {
      const hash = hex();
      const a = await store.create(ref({ hash, tags: ["t"] }));
      const b = await store.create(ref({ hash, tags: ["t"], userMetadata: { k: 1 } }));
      expect(await store.delete(a.reference.id, OWNER)).toBe(true);
      expect(await store.get(a.reference.id, OWNER)).toBeNull();
      expect(await store.delete(a.reference.id, OWNER)).toBe(false);
      expect(await recordsNaming(store, hash)).toBe(1);
      expect(await store.delete(b.reference.id, OWNER)).toBe(true);
      expect(await store.tagCounts({ owner: OWNER, includeZero: false, order: "count_desc", limit: 10, offset: 0 })).toEqual({
        tags: [],
        total: 0,
      });
      expect(await store.tagCounts({ owner: OWNER, includeZero: true, order: "count_desc", limit: 10, offset: 0 })).toEqual({
        tags: [{ name: "t", count: 0 }],
        total: 1,
      });
      expect((await store.list({ ...NO_FILTER, ...page, metadata: metadataConditions({ k: 1 }) })).total).toBe(0);
    });

    it("filters by tags (all of include, none of exclude) and by a case-insensitive name substring, with totals", async () => {
      const a = await store.create(ref({ name: "Sunset Beach.png", tags: ["input", "photos"] }));
      const b = await store.create(ref({ name: "sunrise.jpg", tags: ["input", "photos", "mask"] }));
      await store.create(ref({ name: "portrait.png", tags: ["output"] }));
      const q = { sort: "name" as const, order: "asc" as const, limit: 10, offset: 0 };
      const photos = await store.list({ ...q, ...NO_FILTER, tagsAll: ["input", "photos"], tagsNone: [] });
      expect(photos.items.map((r) => r.id)).toEqual([a.reference.id, b.reference.id]);
      expect(photos.total).toBe(2);
      const noMask = await store.list({ ...q, ...NO_FILTER, tagsAll: ["input"], tagsNone: ["mask", "nothing"] });
      expect(noMask.items.map((r) => r.id)).toEqual([a.reference.id]);
      const sun = await store.list({ ...q, ...NO_FILTER, tagsAll: [], tagsNone: [], nameContains: "sun" });
      expect(sun.items.map((r) => r.id)).toEqual([a.reference.id, b.reference.id]);
      expect((await store.list({ ...q, ...NO_FILTER, tagsAll: [], tagsNone: [], nameContains: "SET BEA" })).items.map((r) => r.id)).toEqual(
        [a.reference.id],
      );
      expect((await store.list({ ...q, ...NO_FILTER, tagsAll: [], tagsNone: [], nameContains: "%" })).total).toBe(0);
      expect((await store.list({ ...q, ...NO_FILTER, tagsAll: ["nope"], tagsNone: [] })).items).toEqual([]);
      const offset = await store.list({ ...q, ...NO_FILTER, tagsAll: [], tagsNone: [], limit: 1, offset: 1 });
      expect(offset).toMatchObject({ total: 3, hasMore: true });
      expect(offset.items.map((r) => r.name)).toEqual(["portrait.png"]); // byte-wise: "S" < "p" < "s"
    });

    it("sorts by each field in both orders, ties broken by id, and pages by key to the same order", async () => {
      const names = ["b", "a", "B", "é", "a", "z z", "A"];
      const made: AssetReference[] = [];
      for (const [i, name] of names.entries())
        made.push((await store.create(ref({ name, size: [5, 1, 5, 3, 1, 9, 2][i]!, tags: ["x"] }))).reference);
      for (const sort of ["created_at", "updated_at", "name", "size", "last_access_time"] as const) {
        for (const order of ["asc", "desc"] as const) {
          const all = await store.list({ ...NO_FILTER, tagsAll: [], tagsNone: [], sort, order, limit: 500, offset: 0 });
          expect(
            all.items.map((r) => r.id),
            `${sort} ${order}`,
          ).toEqual(expectedOrder(made, sort, order));
          expect(await walk(store, sort, order, 2), `${sort} ${order} by key`).toEqual(expectedOrder(made, sort, order));
        }
      }
    });

    it("a filtered list sorts, pages by key and by offset as the unfiltered one, its total kept past the last page", async () => {
      const names = ["b", "a", "B", "é", "a", "z z", "A", "c"];
      const matching: AssetReference[] = [];
      for (const [i, name] of names.entries()) {
        const made = await store.create(
          ref({
            name,
            size: [5, 1, 5, 3, 1, 9, 2, 4][i]!,
            tags: i % 4 !== 3 ? ["x", "keep"] : ["x"],
            userMetadata: { k: i % 3 === 0 ? "no" : "yes" },
          }),
        );
        if (i % 4 !== 3 && i % 3 !== 0) matching.push(made.reference);
      }
      const filter = { tagsAll: ["keep"], metadata: metadataConditions({ k: "yes" }) };
      for (const sort of ["created_at", "updated_at", "name", "size", "last_access_time"] as const) {
        for (const order of ["asc", "desc"] as const) {
          const expected = expectedOrder(matching, sort, order);
          const all = await store.list({ ...NO_FILTER, ...filter, sort, order, limit: 500, offset: 0 });
          expect([all.items.map((r) => r.id), all.total, all.hasMore], `${sort} ${order}`).toEqual([expected, matching.length, false]);
          expect(await walk(store, sort, order, 1, undefined, filter), `${sort} ${order} by key`).toEqual(expected);
          const second = await store.list({ ...NO_FILTER, ...filter, sort, order, limit: 1, offset: 1 });
          expect([second.items.map((r) => r.id), second.total, second.hasMore], `${sort} ${order} offset 1`).toEqual([
            [expected[1]],
            matching.length,
            true,
          ]);
          const past = await store.list({ ...NO_FILTER, ...filter, sort, order, limit: 5, offset: 10 });
          expect([past.items, past.total, past.hasMore], `${sort} ${order} past the end`).toEqual([[], matching.length, false]);
        }
      }
    });

    it("keyset paging sees every earlier record exactly once while records are added between pages", async () => {
      const before: string[] = [];
      for (let i = 0; i < 9; i++) before.push((await store.create(ref({ name: `n${i}`, tags: ["x"] }))).reference.id);
      for (const order of ["desc", "asc"] as const) {
        const seen = await walk(store, "created_at", order, 2, async () => {
          await store.create(ref({ name: "late", tags: ["x"] }));
        });
        expect(new Set(seen).size).toBe(seen.length);
        for (const id of before) expect(seen.filter((s) => s === id)).toHaveLength(1);
      }
    });

    it("counts tags, with a prefix, in both orders and pages", async () => {
      await store.create(ref({ tags: ["input", "photos"] }));
      await store.create(ref({ tags: ["input", "pets"] }));
      await store.create(ref({ tags: ["input", "photos", "output"] }));
      expect(await store.tagCounts({ owner: OWNER, includeZero: false, order: "count_desc", limit: 10, offset: 0 })).toEqual({
        tags: [
          { name: "input", count: 3 },
          { name: "photos", count: 2 },
          { name: "output", count: 1 },
          { name: "pets", count: 1 },
        ],
        total: 4,
      });
      expect(await store.tagCounts({ owner: OWNER, includeZero: false, prefix: "p", order: "name_asc", limit: 1, offset: 1 })).toEqual({
        tags: [{ name: "photos", count: 2 }],
        total: 2,
      });
    });

    it("keeps unusual text intact (quotes, placeholders, unicode)", async () => {
      const odd = ["it's", 'say "hi"', "a?b", "$1", "%_", "ünï ☃ 𝄞", "back\\slash", "x".repeat(1024)];
      const { reference } = await store.create(ref({ name: odd.join(" "), tags: odd, userMetadata: { "?": "$2", quote: "'" } }));
      expect(await store.get(reference.id, OWNER)).toMatchObject({
        name: odd.join(" "),
        tags: odd,
        userMetadata: { "?": "$2", quote: "'" },
      });
      for (const tag of odd) {
        expect(
          (await store.list({ ...NO_FILTER, tagsAll: [tag], tagsNone: [], sort: "name", order: "asc", limit: 5, offset: 0 })).total,
          tag,
        ).toBe(1);
      }
      expect(
        (
          await store.list({
            ...NO_FILTER,
            tagsAll: [],
            tagsNone: [],
            nameContains: "?b $1",
            sort: "name",
            order: "asc",
            limit: 5,
            offset: 0,
          })
        ).total,
      ).toBe(1);
    });

    it("keeps each owner's records to that owner; the same bytes are shared", async () => {
      const hash = hex();
      const mine = await store.create(ref({ hash, tags: ["shared-tag"], origin: "upload:input:" }));
      const theirs = await store.create(ref({ hash, owner: OTHER, tags: ["shared-tag", "theirs"], origin: "upload:input:" }));
      expect(theirs.created).toBe(true); // one record per (owner, hash, origin): each owner gets their own
      expect(theirs.reference.id).not.toBe(mine.reference.id);
      expect(await recordsNaming(store, hash)).toBe(2);
      const id = theirs.reference.id;
      expect(await store.get(id, OWNER)).toBeNull();
      expect(await store.update(id, OWNER, { name: "stolen" })).toBeNull();
      expect(await store.addTags(id, OWNER, ["x"])).toBeNull();
      expect(await store.removeTags(id, OWNER, ["theirs"])).toBeNull();
      expect(await store.delete(id, OWNER)).toBe(false);
      expect(await store.touch(id, OWNER)).toBeNull();
      expect(await store.get(id, OTHER)).toEqual(theirs.reference);
      expect((await store.list({ ...NO_FILTER, ...page })).items.map((r) => r.id)).toEqual([mine.reference.id]);
      expect((await store.tagCounts({ owner: OWNER, includeZero: true, order: "name_asc", limit: 10, offset: 0 })).tags).toEqual([
        { name: "shared-tag", count: 1 },
      ]);
      expect(await store.tagHistogram({ ...NO_FILTER, owner: OTHER }, 10)).toEqual([
        { name: "shared-tag", count: 1 },
        { name: "theirs", count: 1 },
      ]);
    });

    it("tags_any, tags_none (winning over any) and tags_all, case-sensitive, up to the filter limit", async () => {
      const a = await store.create(ref({ name: "a", tags: ["scope", "Alpha"] }));
      const b = await store.create(ref({ name: "b", tags: ["scope", "beta"] }));
      const c = await store.create(ref({ name: "c", tags: ["scope", "Alpha", "beta"] }));
      await store.create(ref({ name: "d", tags: ["other", "Alpha"] }));
      const ids = async (f: Partial<ReferenceFilter>) => (await store.list({ ...NO_FILTER, ...page, ...f })).items.map((r) => r.name);
      expect(await ids({ tagsAny: ["Alpha", "beta"], tagsAll: ["scope"] })).toEqual(["a", "b", "c"]);
      expect(await ids({ tagsAny: ["Alpha"], tagsNone: ["beta"] })).toEqual(["a", "d"]);
      // c matches both tags of tags_any: still one record, counted once, in the total as on the page.
      const either = await store.list({ ...NO_FILTER, ...page, tagsAny: ["Alpha", "beta"] });
      expect([either.items.map((r) => r.name).sort(), either.total]).toEqual([["a", "b", "c", "d"], 4]);
      expect((await store.list({ ...NO_FILTER, ...page, tagsAny: ["Alpha", "beta"], tagsAll: ["scope", "Alpha"] })).total).toBe(2);
      expect(await ids({ tagsAll: ["alpha"] })).toEqual([]);
      expect(await ids({ tagsAll: ["scope", "Alpha", "beta"] })).toEqual(["c"]);
      const many = Array.from({ length: MAX_FILTER_TAGS }, (_, i) => `t${i}`);
      expect(await ids({ tagsAll: many, tagsAny: many, tagsNone: many })).toEqual([]);
      expect(await ids({ tagsAll: ["scope"], tagsNone: many })).toEqual(["a", "b", "c"]);
      expect(await store.tagHistogram({ ...NO_FILTER, tagsAll: ["scope"], tagsNone: ["beta"] }, 10)).toEqual([
        { name: "Alpha", count: 1 },
        { name: "scope", count: 1 },
      ]);
      expect([a, b, c].every((r) => r.created)).toBe(true);
    });

    it("filters by user_metadata as ComfyUI does: type-strict, lists any-of, null as missing, objects by content", async () => {
      const make = (name: string, userMetadata: Record<string, unknown>) => store.create(ref({ name, userMetadata }));
      await make("mix", { purpose: "mix", epoch: 1, active: true, score: 1.23, flags: ["red", "green"], cfg: { b: 1, a: [1, 2] } });
      await make("null", { maybe: null, epoch: "1" });
      await make("value", { maybe: "x", transforms: [{ type: "crop" }, { type: "flip", p: 0.5 }], mixed: ["1", 1, true, null] });
      const names = async (filter: Record<string, unknown>) =>
        (await store.list({ ...NO_FILTER, ...page, metadata: metadataConditions(filter) })).items.map((r) => r.name);
      expect(await names({ purpose: "mix", epoch: 1, active: true, score: 1.23 })).toEqual(["mix"]);
      expect(await names({ epoch: 1 })).toEqual(["mix"]);
      expect(await names({ epoch: "1" })).toEqual(["null"]);
      expect(await names({ active: "true" })).toEqual([]);
      expect(await names({ flags: ["blue", "green"] })).toEqual(["mix"]);
      expect(await names({ flags: "green" })).toEqual(["mix"]);
      expect(await names({ flags: ["blue", "yellow"] })).toEqual([]);
      expect(await names({ maybe: null })).toEqual(["mix", "null"]);
      expect(await names({ maybe: [null, "x"] })).toEqual(["mix", "null", "value"]);
      expect(await names({ cfg: { a: [1, 2], b: 1 } })).toEqual(["mix"]);
      expect(await names({ cfg: { a: [2, 1], b: 1 } })).toEqual([]);
      expect(await names({ transforms: { p: 0.5, type: "flip" } })).toEqual(["value"]);
      expect(await names({ mixed: [2, 1] })).toEqual(["value"]);
      expect(await names({ mixed: false })).toEqual([]);
      expect(await names({ unknown: "x" })).toEqual([]);
    });

    it("keeps a __proto__ key of user_metadata as data, and filters on it", async () => {
      const metadata = JSON.parse('{"__proto__": {"polluted": 1}, "ok": 2}') as Record<string, unknown>;
      const { reference } = await store.create(ref({ name: "proto", userMetadata: metadata }));
      const read = (await store.get(reference.id, OWNER))!;
      expect(Object.keys(read.userMetadata)).toEqual(["__proto__", "ok"]);
      expect(JSON.stringify(read.userMetadata)).toBe('{"__proto__":{"polluted":1},"ok":2}');
      const filter = JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
      expect((await store.list({ ...NO_FILTER, ...page, metadata: metadataConditions(filter) })).total).toBe(1);
    });

    it("holds one tag limit on every path that sets tags, changing nothing when refused", async () => {
      const full = Array.from({ length: MAX_TAGS_PER_ASSET }, (_, i) => `t${i}`);
      await expect(store.create(ref({ tags: [...full, "one-more"] }))).rejects.toBeInstanceOf(TooManyTagsError);
      const { reference } = await store.create(ref({ tags: full.slice(0, 60) }));
      await expect(store.addTags(reference.id, OWNER, ["a", "b", "c", "d", "e"])).rejects.toBeInstanceOf(TooManyTagsError);
      await expect(store.update(reference.id, OWNER, { tags: [...full, "x"] })).rejects.toBeInstanceOf(TooManyTagsError);
      expect((await store.get(reference.id, OWNER))!.tags).toHaveLength(60);
      expect((await store.addTags(reference.id, OWNER, ["a", "b", "c", "d", "t0"]))!.reference.tags).toHaveLength(MAX_TAGS_PER_ASSET);
    });

    it("sorts by last access, which a touch moves; keeps and clears a preview id", async () => {
      const a = await store.create(ref({ name: "a" }));
      const b = await store.create(ref({ name: "b", previewId: a.reference.id }));
      expect(b.reference.previewId).toBe(a.reference.id);
      expect(a.reference.lastAccessTime).toBe(a.reference.createdAt);
      await new Promise((r) => setTimeout(r, 5));
      const touched = await store.touch(a.reference.id, OWNER);
      expect({ ...touched, lastAccessTime: a.reference.lastAccessTime }).toEqual(a.reference); // the record as it now is
      expect(touched!.lastAccessTime > a.reference.lastAccessTime).toBe(true);
      expect(await store.get(a.reference.id, OWNER)).toEqual(touched);
      const byAccess = await store.list({ ...NO_FILTER, sort: "last_access_time", order: "desc", limit: 10, offset: 0 });
      expect(byAccess.items.map((r) => r.name)).toEqual(["a", "b"]);
      expect(await walk(store, "last_access_time", "desc", 1)).toEqual(byAccess.items.map((r) => r.id));
      expect((await store.update(b.reference.id, OWNER, { previewId: null }))!.previewId).toBeNull();
    });

    it("hands records from before owners to an owner", async () => {
      const { reference } = await store.create(ref({ owner: "", tags: ["old"], userMetadata: { k: "v" } }));
      expect(await store.get(reference.id, OWNER)).toBeNull();
      expect(await store.adoptUnowned(OWNER)).toBe(1);
      expect((await store.get(reference.id, OWNER))!.owner).toBe(OWNER);
      expect((await store.list({ ...NO_FILTER, ...page, tagsAll: ["old"], metadata: metadataConditions({ k: "v" }) })).total).toBe(1);
      expect((await store.tagCounts({ owner: OWNER, includeZero: false, order: "name_asc", limit: 10, offset: 0 })).tags).toEqual([
        { name: "old", count: 1 },
      ]);
      expect(await store.adoptUnowned(OWNER)).toBe(0);
    });

    it("the hash lock excludes holders of the same hash only", async () => {
      const hash = hex();
      const events: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const first = store.withHashLock(hash, async () => {
        events.push("first in");
        await gate;
        events.push("first out");
      });
      await new Promise((r) => setTimeout(r, 20));
      const second = store.withHashLock(hash, async () => {
        events.push("second in");
      });
      await store.withHashLock(hex(), async () => {
        events.push("other hash");
      });
      release();
      await Promise.all([first, second]);
      expect(events).toEqual(["first in", "other hash", "first out", "second in"]);
      await expect(store.withHashLock(hash, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      // Many holders of distinct hashes each running queries while they hold their lock: none starves the others of connections.
      const many = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          store.withHashLock(hex(), async () => (await store.create(ref({ tags: [`held${i}`] }))).reference.id),
        ),
      );
      expect(new Set(many).size).toBe(40);
      expect(await store.withHashLock(hash, async () => 42)).toBe(42);
    });
  });
}
