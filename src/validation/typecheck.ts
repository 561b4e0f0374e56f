/**
 * Type checks by type name for the compiled validator, over the service's one table of
 * field types (`domain/field-types.ts`).
 */
import type { TypeTable } from "../domain/field-types.ts";

export { isDbRefShape } from "../domain/field-types.ts";

/** Checks values against type names; built once per compiled schema. */
export class TypeChecker {
  constructor(private readonly table: TypeTable) {}

  /** Whether `name` is a known type. */
  knows(name: string): boolean {
    return this.table.get(name) !== undefined;
  }

  /** Whether `v` is of any of the types `names`. */
  isAny(v: unknown, names: string[]): boolean {
    return names.some((name) => this.table.get(name)?.is(v) ?? false);
  }

  /** Why `v` is not of the single GeoJSON type `name`, for a precise message. */
  geoProblem(v: unknown, name: string): string | null {
    const type = this.table.get(name);
    return type ? this.table.geoProblem(v, type) : null;
  }
}
