import type { IncomingMessage, ServerResponse } from "node:http";
import type { Router } from "express";
import type { DirectRoute } from "@app/platform";

/**
 * How the gateway reaches a service: mounted in this process (embedded mode, no network hop)
 * or proxied to its own deployment (SEARCH_URL / UPLOAD_URL).
 */
export type ServiceMount =
  | {
      kind: "embedded";
      router: Router;
      /** Routes answered ahead of Express (see `DirectRoute`); the router serves them too. */
      direct?: DirectRoute[];
      isReady: () => boolean | Promise<boolean>;
      /** What the service adds to the gateway's /readyz body (search: the catalog's state). */
      readyDetails?: () => Record<string, unknown>;
    }
  | { kind: "proxy"; url: string };

export interface GatewayService {
  name: "search" | "upload";
  /** Path prefixes this service answers (matched at a segment boundary): the service's own `routePrefixes`. */
  paths: readonly string[];
  mount: ServiceMount;
  /** The body a client gets when the service cannot be reached, in that service's error shape. */
  unavailableBody: (message: string) => Record<string, string>;
  /**
   * The service's CORS (search: the registry's), applied by the gateway before proxying, so a
   * browser can also read the gateway's own 502 when the service is down; true when it has
   * answered the request (a preflight). Mounted services apply their own.
   */
  cors?: (req: IncomingMessage, res: ServerResponse) => boolean;
}
