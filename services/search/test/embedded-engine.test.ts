import { EmbeddedSearchEngine } from "../src/adapters/embedded/embedded-engine.ts";
import { describeEngineConformance } from "./engine-conformance.ts";

describeEngineConformance("embedded", () => new EmbeddedSearchEngine());
