/** Shared fixtures for the query tests. */
import type { WhereOptions } from "../../src/query/where.ts";
import { RFC1123_DATE } from "../support/assertions.ts";
import type { ResourceSchema } from "../../src/domain/types.ts";
import { TypeTable } from "../../src/domain/field-types.ts";
import { buildSchemaModel, type SchemaModel } from "../../src/domain/schema.ts";

/** Strict RFC 1123 date parser, as the settings layer would pass. */
export function parseRfc1123(s: string): Date | null {
  if (!RFC1123_DATE.test(s)) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A schema covering every type the checker knows. */
export const SCHEMA = {
  name: { type: "string" },
  age: { type: "integer" },
  score: { type: "float" },
  active: { type: "boolean" },
  born: { type: "datetime" },
  owner: { type: "objectid" },
  tags: { type: "list", schema: { type: "string" } },
  visits: { type: "list", schema: { type: "datetime" } },
  address: { type: "dict", schema: { city: { type: "string" }, zip: { type: "integer" } } },
  rows: {
    type: "list",
    schema: { type: "dict", schema: { sku: { type: "string" }, qty: { type: "integer" } } },
  },
  extra: { type: "dict" },
};

/** The schema model of `schema`, with the default key and meta fields. */
export function modelOf(schema: ResourceSchema, idField = "_id"): SchemaModel {
  return buildSchemaModel(schema, {
    types: new TypeTable(),
    idField,
    allowUnknown: false,
    metaFields: {
      _created: "datetime",
      _updated: "datetime",
      _etag: "string",
      _deleted: "boolean",
    },
  });
}

/**
 * Where options with everything allowed and validation off, overridable; `schema` and
 * `idField` give the model.
 */
export function opts(
  over: Partial<WhereOptions> & { schema?: ResourceSchema; idField?: string } = {},
): WhereOptions {
  const { schema = SCHEMA, idField, ...rest } = over;
  return {
    model: modelOf(schema, idField),
    dateFormat: "%a, %d %b %Y %H:%M:%S GMT",
    parseDate: parseRfc1123,
    allowedFilters: ["*"],
    validateFiltering: false,
    blacklist: ["$where", "$regex"],
    ...rest,
  };
}

export const DATE = "Tue, 02 Apr 2013 10:29:13 GMT";
export const OID = "507f1f77bcf86cd799439011";
