/**
 * Chooses and opens the store the settings ask for: MongoDB when one is configured
 * (MONGO_URI, DB_HOST/MONGO_HOST, or STORE "mongo"), otherwise the embedded store.
 */
import type { Settings } from "../settings/check.ts";
import type { Store } from "./store.ts";

/** True when the settings point at a MongoDB server. */
export function wantsMongo(settings: Settings, hostGiven: boolean): boolean {
  if (settings.STORE === "mongo") return true;
  if (settings.STORE === "embedded") return false;
  return !!settings.MONGO_URI || hostGiven;
}

/**
 * Opens the store. `writeConcerns`: the resources' `mongo_write_concern` by collection (the
 * embedded store writes durably before it answers, and refuses the writes of a collection
 * whose concern one node cannot acknowledge, see write_concern.ts).
 */
export async function openStore(
  settings: Settings,
  hostGiven: boolean,
  writeConcerns: Record<string, Record<string, unknown>> = {},
): Promise<Store> {
  if (wantsMongo(settings, hostGiven)) {
    const { openMongoStore } = await import("./mongo/mod.ts");
    return openMongoStore({
      uri: settings.MONGO_URI ?? undefined,
      host: settings.DB_HOST,
      port: settings.DB_PORT,
      username: settings.DB_USERNAME ?? undefined,
      password: settings.DB_PASSWORD ?? undefined,
      authSource: settings.DB_AUTH_SOURCE ?? undefined,
      // A database named in MONGO_URI wins, as in Eve.
      dbName: settings.MONGO_URI ? undefined : settings.DB_DBNAME,
      options: {
        writeConcern: settings.MONGO_WRITE_CONCERN,
        ...(settings.MONGO_AUTH_MECHANISM ? { authMechanism: settings.MONGO_AUTH_MECHANISM } : {}),
        ...(settings.MONGO_AUTH_MECHANISM_PROPERTIES
          ? { authMechanismProperties: settings.MONGO_AUTH_MECHANISM_PROPERTIES }
          : {}),
        ...settings.MONGO_OPTIONS,
      },
      queryTimeoutMs: settings.QUERY_TIMEOUT_MS,
      writeConcerns,
    });
  }
  const { openEmbeddedStore } = await import("./embedded/mod.ts");
  return openEmbeddedStore(settings.DATA_DIR, {
    queryTimeoutMs: settings.QUERY_TIMEOUT_MS,
    writeConcerns,
  });
}
