import { z } from "zod";

/** `schema` documented as a parameter: `description` is the parameter's, not its schema's (zod-to-openapi reads `param` from zod's metadata). */
export function param<T extends z.ZodType>(schema: T, description?: string): T {
  return description ? schema.meta({ param: { description } }) : schema;
}

/** A query schema whose named fields carry a parameter description. */
export function describedQuery(schema: z.ZodObject, descriptions: Record<string, string>): z.ZodObject {
  return schema.extend(
    Object.fromEntries(
      Object.entries(descriptions).map(([name, description]) => [name, param(schema.shape[name] as z.ZodType, description)]),
    ),
  );
}

export const nodeId = (description = "The node's id; in other capitals the answer is a 302 to the canonical id.") =>
  param(z.string(), description);
export const version = (description: string) => param(z.string(), description);
