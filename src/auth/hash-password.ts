/**
 * Prints a bcrypt hash of a password, for AUTH_USERS. The password comes from the first
 * argument, else standard input when it is not a terminal, else a prompt that does not echo:
 *
 * ```sh
 * deno task hash-password 'secret'              # visible in the shell's history
 * printf %s 'secret' | deno task hash-password  # from a pipe or a file
 * deno task hash-password                       # asks, without echo
 * ```
 */
import { hashPassword } from "./secrets.ts";

/** Reads a line from the terminal without echoing it. */
async function promptHidden(question: string): Promise<string> {
  const encoder = new TextEncoder();
  await Deno.stderr.write(encoder.encode(question));
  Deno.stdin.setRaw(true);
  const bytes: number[] = [];
  const buffer = new Uint8Array(64);
  try {
    read: while (true) {
      const n = await Deno.stdin.read(buffer);
      if (n === null) break;
      for (const byte of buffer.subarray(0, n)) {
        if (byte === 13 || byte === 10) break read; // Enter
        if (byte === 3) throw new Error("interrupted"); // Ctrl-C
        if (byte === 4 && bytes.length === 0) break read; // Ctrl-D
        if (byte === 127 || byte === 8) bytes.pop(); // Backspace
        else bytes.push(byte);
      }
    }
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(encoder.encode("\n"));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** The password to hash: argument, piped standard input, or a hidden prompt. */
async function password(args: string[]): Promise<string> {
  if (args.length > 1) throw new Error("give one password (quote it if it has spaces)");
  if (args.length === 1) return args[0];
  if (Deno.stdin.isTerminal()) return await promptHidden("password: ");
  const text = new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer());
  return text.replace(/\r?\n$/, "");
}

if (import.meta.main) {
  let secret: string;
  try {
    secret = await password(Deno.args);
  } catch (error) {
    console.error(`hash-password: ${(error as Error).message}`);
    Deno.exit(2);
  }
  if (!secret) {
    console.error("hash-password: no password given (an argument, standard input or the prompt)");
    Deno.exit(1);
  }
  console.log(await hashPassword(secret, 10));
}
