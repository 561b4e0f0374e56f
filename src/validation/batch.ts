/**
 * Unique-value conflicts between the documents of one bulk request.
 */
import type { Doc } from "../store/store.ts";
import { RFC1123 } from "./dates.ts";
import { addIssue } from "./issues.ts";
import { canon, getPath } from "./normalize.ts";
import type { Issues } from "./types.ts";
import { showValue } from "./validator.ts";

/**
 * Finds documents of a batch repeating a unique value of an earlier document of the same
 * batch. Returns document index -> issues (e.g. `{ email: "value 'a@b' is not unique" }`);
 * the first occurrence of a value is not reported. Missing and null values are ignored.
 */
export function findBatchDuplicates(
  docs: Doc[],
  uniqueFields: string[],
  dateFormat: string = RFC1123,
): Map<number, Issues> {
  const out = new Map<number, Issues>();
  for (const field of uniqueFields) {
    const path = field.split(".");
    const seen = new Set<string>();
    docs.forEach((doc, i) => {
      const v = getPath(doc, path);
      if (v === undefined || v === null) return;
      const key = canon(v);
      if (!seen.has(key)) return void seen.add(key);
      const issues = out.get(i) ?? {};
      addIssue(issues, path, `value '${showValue(v, dateFormat)}' is not unique`);
      out.set(i, issues);
    });
  }
  return out;
}
