/** Group 1 of the inner loop's test files (see files.ts). */
import { loadGroup } from "./files.ts";

await loadGroup(1);
