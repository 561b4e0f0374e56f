/** Group 2 of the inner loop's test files (see files.ts). */
import { loadGroup } from "./files.ts";

await loadGroup(2);
