/**
 * The validation extension point through HTTP: custom rules (sync and async) and custom
 * types given to `createService({ extensions })`, and a TypeScript settings module whose
 * `extensions` export the command line passes on.
 */
import assert from "node:assert/strict";
import { createService, type CustomRule, type CustomType } from "../../src/mod.ts";
import { loadSettingsFile } from "../../src/settings/load.ts";
import { scenario } from "../support/harness.ts";

const rules: Record<string, CustomRule> = {
  multiple_of: {
    check: (value, arg) =>
      typeof value === "number" && value % Number(arg) !== 0
        ? `must be a multiple of ${arg}`
        : null,
  },
  /** Async, and looking at the whole document: `end` must come after the named field. */
  after: {
    check: async (value, arg, { doc }) => {
      await new Promise((r) => setTimeout(r, 1));
      const other = doc[arg as string];
      return typeof other === "number" && typeof value === "number" && value <= other
        ? `must be greater than '${arg}'`
        : null;
    },
  },
};

const types: Record<string, CustomType> = {
  even: { check: (v) => Number.isInteger(v) && (v as number) % 2 === 0 },
  hexcolor: { check: (v) => typeof v === "string" && /^#[0-9a-f]{6}$/i.test(v) },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  IF_MATCH: false,
  DOMAIN: {
    orders: {
      schema: {
        qty: { type: "integer", multiple_of: 5 },
        start: { type: "integer" },
        end: { type: "integer", after: "start" },
        pair: { type: "even" },
        color: { type: ["hexcolor", "integer"] },
        box: { type: "dict", schema: { side: { type: "even", multiple_of: 4 } } },
      },
    },
  },
};

const OPTIONS = { extensions: { rules, types } };

scenario("custom rules accept and refuse values with their message", SETTINGS, async (api) => {
  const ok = await api.post("orders", { qty: 10, start: 1, end: 2 });
  assert.equal(ok.status, 201, ok.text);
  const bad = await api.post("orders", { qty: 7, start: 5, end: 5 });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body._issues, {
    qty: "must be a multiple of 5",
    end: "must be greater than 'start'",
  });
  const patch = await api.patch(`orders/${ok.body._id}`, { qty: 3 });
  assert.equal(patch.status, 422);
  assert.deepEqual(patch.body._issues, { qty: "must be a multiple of 5" });
}, OPTIONS);

scenario("custom types, alone, in a type list and nested", SETTINGS, async (api) => {
  const ok = await api.post("orders", { pair: 4, color: "#a0b1c2", box: { side: 8 } });
  assert.equal(ok.status, 201, ok.text);
  assert.equal((await api.post("orders", { color: 3 })).status, 201);
  const bad = await api.post("orders", { pair: 3, color: "red", box: { side: 6 } });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body._issues, {
    pair: "must be of even type",
    color: "must be of hexcolor or integer type",
    box: { side: "must be a multiple of 4" },
  });
}, OPTIONS);

Deno.test("without the extensions the same schema stops start-up", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const error = await createService({ ...SETTINGS, STORE: "embedded", DATA_DIR: dir }, {
      env: false,
    }).then(() => null, (e) => e);
    assert.ok(error, "the service started");
    const text = error.problems.join("\n");
    assert.match(text, /DOMAIN\.orders\.schema\.qty\.multiple_of: unknown rule 'multiple_of'/);
    assert.match(text, /DOMAIN\.orders\.schema\.pair\.type: unknown type 'even'/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const MODULE = `
import type { CustomRule, CustomType } from "${new URL("../../src/mod.ts", import.meta.url).href}";

export const extensions: {
  rules: Record<string, CustomRule>;
  types: Record<string, CustomType>;
} = {
  rules: {
    multiple_of: {
      check: (value, arg) =>
        typeof value === "number" && value % Number(arg) !== 0 ? \`must be a multiple of \${arg}\` : null,
    },
  },
  types: { even: { check: (v) => Number.isInteger(v) && (v as number) % 2 === 0 } },
};

export default {
  STORE: "embedded",
  DATA_DIR: Deno.env.get("EXT_TEST_DATA_DIR"),
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { orders: { schema: { qty: { type: "even", multiple_of: 5 } } } },
};
`;

Deno.test({
  name: "a TypeScript settings module exports its extensions (module and command line)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir();
    const file = `${dir}/settings.ts`;
    await Deno.writeTextFile(file, MODULE);
    Deno.env.set("EXT_TEST_DATA_DIR", `${dir}/data`);
    try {
      const raw = await loadSettingsFile(file);
      const service = await createService(raw.settings, {
        env: false,
        extensions: raw.exports.extensions as never,
      });
      try {
        const post = (body: unknown) =>
          service.fetch(
            new Request("http://x/orders", {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(body),
            }),
          );
        assert.equal((await post({ qty: 10 })).status, 201);
        const bad = await post({ qty: 5 });
        assert.equal(bad.status, 422);
        assert.deepEqual((await bad.json())._issues, {
          qty: "must be of even type",
        });
        const odd = await post({ qty: 4 });
        assert.deepEqual((await odd.json())._issues, { qty: "must be a multiple of 5" });
      } finally {
        await service.close();
      }
      const check = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "src/main.ts", "--settings", file, "--check"],
        cwd: new URL("../..", import.meta.url).pathname,
        env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(check.stderr);
      assert.equal(check.code, 0, err);
      assert.match(new TextDecoder().decode(check.stdout), /settings are valid/);
    } finally {
      Deno.env.delete("EXT_TEST_DATA_DIR");
      await Deno.remove(dir, { recursive: true });
    }
  },
});
