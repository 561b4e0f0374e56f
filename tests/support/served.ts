/**
 * The service behind `serve` (src/http/server.ts), its own HTTP server or `Deno.serve`, on a free
 * loopback port: for scenarios about the server itself (limits, connection counts), which
 * the harness's plain `Deno.serve` does not exercise.
 */
import { createService, type Service } from "../../src/mod.ts";
import { serve, type Server, type ServerLimits } from "../../src/http/server.ts";
import { createLogger } from "../../src/log.ts";
import { type StoreKind, storeSettings } from "./harness.ts";
import { Client } from "./client.ts";

/** Starts the service on store `kind`, runs `body`, then stops everything. */
export async function withServedService(
  kind: StoreKind,
  settings: Record<string, unknown>,
  options: { limits: ServerLimits; front?: boolean },
  body: (served: { server: Server; service: Service; api: Client }) => Promise<void>,
): Promise<void> {
  const store = await storeSettings(kind);
  const service = await createService({ ...settings, ...store }, {
    env: false,
    logger: createLogger(() => {}),
  });
  const server = await serve(service.fetch as never, {
    hostname: "127.0.0.1",
    port: 0,
    limits: options.limits,
    front: options.front,
  });
  try {
    await body({ server, service, api: new Client(`http://127.0.0.1:${server.addr.port}/`) });
  } finally {
    await server.shutdown();
    await service.close();
    if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
  }
}
