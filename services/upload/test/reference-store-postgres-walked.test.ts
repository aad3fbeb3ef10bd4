import { describePostgresConformance, PAGINGS } from "./reference-store-cases.ts";

// The ReferenceStore conformance suite on PostgreSQL with every filtered page walked through the sort index (WALK_FROM_MATCHES 1).
describePostgresConformance(PAGINGS[1]);
