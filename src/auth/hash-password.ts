/**
 * Prints a bcrypt hash of a password, for AUTH_USERS:
 * `deno task hash-password` (asks) or `echo -n secret | deno task hash-password`.
 */
import { hashPassword } from "./secrets.ts";

if (import.meta.main) {
  const input = Deno.stdin.isTerminal()
    ? prompt("password:") ?? ""
    : new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer());
  const password = input.replace(/\r?\n$/, "");
  if (!password) {
    console.error("no password given");
    Deno.exit(1);
  }
  console.log(await hashPassword(password, 10));
}
