import { PGlite } from "@electric-sql/pglite";
const dir = process.argv[2];
const t = performance.now();
const db = await PGlite.create(dir);
await db.query("select count(*) from t");
const ms = performance.now() - t;
for (let i = 0; i < 200; i++) await db.query("select * from t where tags @> $1 order by created_at desc, id desc limit 50", [["b3"]]);
console.log(JSON.stringify({ startMs: Math.round(ms), rssMiB: Math.round(process.memoryUsage().rss / 2**20) }));
