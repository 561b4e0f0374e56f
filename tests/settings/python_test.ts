/**
 * Eve settings.py files read as data (src/settings/python.ts): the settings shapes of Eve's
 * quickstart and test suite, and everything outside the literal subset refused with its line
 * and column.
 */
import assert from "node:assert/strict";
import { PythonSettingsError, readPythonSettings } from "../../src/settings/python.ts";
import { loadSettingsFile } from "../../src/settings/load.ts";
import { prepare } from "../../src/mod.ts";

const env = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });

/** Eve's quickstart settings.py, as its tutorial builds it up. */
const QUICKSTART = `# -*- coding: utf-8 -*-
"""The quickstart API."""
import os

# Let's just use the local mongod instance. Edit as needed.
MONGO_HOST = os.environ.get('MONGO_HOST', 'localhost')
MONGO_PORT = 27017
MONGO_DBNAME = 'apitest'

RESOURCE_METHODS = ['GET', 'POST', 'DELETE']
ITEM_METHODS = ['GET', 'PATCH', 'PUT', 'DELETE']

schema = {
    # Schema definition, based on Cerberus grammar.
    'firstname': {
        'type': 'string',
        'minlength': 1,
        'maxlength': 10,
    },
    'lastname': {
        'type': 'string',
        'minlength': 1,
        'maxlength': 15,
        'required': True,
        'unique': True,
    },
    'role': {
        'type': 'list',
        'allowed': ["author", "contributor", "copy"],
    },
    'location': {
        'type': 'dict',
        'schema': {
            'address': {'type': 'string'},
            'city': {'type': 'string'}
        },
    },
    'born': {
        'type': 'datetime',
    },
}

people = {
    'item_title': 'person',
    'additional_lookup': {
        'url': 'regex("[\\w]+")',
        'field': 'lastname'
    },
    'cache_control': 'max-age=10,must-revalidate',
    'cache_expires': 10,
    'resource_methods': ['GET', 'POST'],
    'schema': schema
}

DOMAIN = {
    'people': people,
}
`;

Deno.test("settings.py: Eve's quickstart reads as its JSON settings", () => {
  const settings = readPythonSettings(QUICKSTART, { env: env({}) });
  assert.deepEqual(Object.keys(settings).sort(), [
    "DOMAIN",
    "ITEM_METHODS",
    "MONGO_DBNAME",
    "MONGO_HOST",
    "MONGO_PORT",
    "RESOURCE_METHODS",
  ]);
  assert.equal(settings.MONGO_HOST, "localhost");
  assert.equal(settings.MONGO_PORT, 27017);
  const people = (settings.DOMAIN as Record<string, Record<string, unknown>>).people;
  assert.equal(people.item_title, "person");
  // `\w` is an unknown escape: Python keeps the backslash.
  assert.deepEqual(people.additional_lookup, { url: 'regex("[\\w]+")', field: "lastname" });
  assert.deepEqual((people.schema as Record<string, unknown>).lastname, {
    type: "string",
    minlength: 1,
    maxlength: 15,
    required: true,
    unique: true,
  });
  // The environment wins over the default.
  const fromEnv = readPythonSettings(QUICKSTART, { env: env({ MONGO_HOST: "db.example" }) });
  assert.equal(fromEnv.MONGO_HOST, "db.example");
});

Deno.test("settings.py: the quickstart starts the service (--check)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/settings.py`;
    await Deno.writeTextFile(path, QUICKSTART);
    const raw = await loadSettingsFile(path);
    const { warnings } = prepare({ ...raw.settings, STORE: "embedded", DATA_DIR: dir });
    assert.ok(Array.isArray(warnings));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("settings.py: the shapes of Eve's test settings", () => {
  const text = `
MONGO_USERNAME = MONGO1_USERNAME = "test_user"
MONGO_DBNAME, MONGO1_DBNAME = "eve_test", "eve_test1"
ID_FIELD = "_id"
ITEM_LOOKUP_FIELD = ID_FIELD
ITEM_CACHE_CONTROL = ""
DATE_FORMAT = ("%a, %d %b %Y "
               "%H:%M:%S GMT")
X_DOMAINS = None
PAGINATION_LIMIT = 1_000
RATE = -1.5e2
contacts = {
    "url": "arbitraryurl",
    "additional_lookup": {
        "url": r'regex("[\\w]+")',  # to be unique field
        "field": "ref",
    },
    "schema": {"ref": {"type": "string", "minlength": 25}, "tid": {"type": "objectid"}},
}
TUPLES = (1, 2), ("a",), ()
DOMAIN = {"contacts": contacts, "payments": {"resource_methods": ["GET"]}}
`;
  const s = readPythonSettings(text);
  assert.equal(s.MONGO_USERNAME, "test_user");
  assert.equal(s.MONGO1_USERNAME, "test_user");
  assert.equal(s.MONGO_DBNAME, "eve_test");
  assert.equal(s.MONGO1_DBNAME, "eve_test1");
  assert.equal(s.ITEM_LOOKUP_FIELD, "_id");
  assert.equal(s.DATE_FORMAT, "%a, %d %b %Y %H:%M:%S GMT");
  assert.equal(s.X_DOMAINS, null);
  assert.equal(s.PAGINATION_LIMIT, 1000);
  assert.equal(s.RATE, -150);
  assert.deepEqual(s.TUPLES, [[1, 2], ["a"], []]);
  const domain = s.DOMAIN as Record<string, Record<string, Record<string, unknown>>>;
  assert.equal(domain.contacts.additional_lookup.url, 'regex("[\\w]+")');
  assert.deepEqual(domain.payments, { resource_methods: ["GET"] });
  // Lower-case names compose settings but are none (Flask reads upper-case names only).
  assert.equal("contacts" in s, false);
});

Deno.test("settings.py: strings as Python reads them", () => {
  const s = readPythonSettings(
    [
      `A = 'it\\'s' "\\u00e9\\x41\\n"`,
      `B = """two`,
      `lines"""`,
      `C = u"x" r"\\d+"`,
      `D = "a" \\`,
      `    "b"`,
    ].join("\n"),
  );
  assert.equal(s.A, "it's\u00e9A\n");
  assert.equal(s.B, "two\nlines");
  assert.equal(s.C, "x\\d+");
  assert.equal(s.D, "ab");
});

/** Asserts `text` is refused at `line`:`column` with a message matching `message`. */
function refused(text: string, line: number, column: number, message: RegExp) {
  assert.throws(
    () => readPythonSettings(text, { maxLength: 10_000 }),
    (error: unknown) => {
      assert.ok(error instanceof PythonSettingsError, String(error));
      assert.equal(`${error.line}:${error.column}`, `${line}:${column}`, error.message);
      assert.match(error.message, message);
      assert.match(error.message, new RegExp(`^line ${line}, column ${column}: `));
      return true;
    },
    text,
  );
}

Deno.test("settings.py: anything beyond literals is refused with its line and column", () => {
  refused("import copy\n", 1, 8, /only `import os`/);
  refused("from os import environ\n", 1, 1, /import os/);
  refused("A = 1\nB = copy.deepcopy(A)\n", 2, 5, /attribute access|not assigned/);
  refused("A = {'a': 1}\nA['b'] = 2\n", 2, 2, /assignment/);
  refused("A = open('/etc/passwd').read()\n", 1, 5, /calls are not accepted/);
  refused("A = 1 + 2\n", 1, 7, /end of the statement/);
  refused("A = B\n", 1, 5, /name 'B' is not assigned/);
  refused("A = os.environ.get('X')\n", 1, 5, /without `import os`/);
  refused("import os\nA = os.system('x')\n", 2, 8, /os.environ.get/);
  refused("A = [x for x in y]\n", 1, 6, /name 'x' is not assigned/);
  refused("A = lambda: 1\n", 1, 5, /expected a literal value/);
  refused("A = f'{B}'\n", 1, 5, /f-strings/);
  refused("A = b'x'\n", 1, 5, /bytes/);
  refused("if True:\n    A = 1\n", 2, 5, /indentation/);
  refused("if True: A = 1\n", 1, 1, /expected a name/);
  refused("A = 1\n  B = 2\n", 2, 3, /indentation/);
  refused("A = {'__proto__': {'x': 1}}\n", 1, 6, /__proto__/);
  refused("A = {**B}\n", 1, 6, /unpacking/);
  refused("A, B = 1, 2, 3\n", 1, 1, /2 names are assigned 3/);
  refused("A = 'open\n", 1, 5, /unterminated string/);
  refused("A = 010\n", 1, 5, /leading zeros/);
  refused("A = $\n", 1, 5, /unexpected character/);
});

Deno.test("settings.py: Python's int and float read as the built-in coercers' names", () => {
  const text = "DOMAIN = {'items': {'schema': {\n" +
    "    'qty': {'type': 'integer', 'coerce': int},\n" +
    "    'price': {'type': 'float', 'coerce': [float]},\n" +
    "}}}\n";
  assert.deepEqual(readPythonSettings(text).DOMAIN, {
    items: {
      schema: {
        qty: { type: "integer", coerce: "int" },
        price: { type: "float", coerce: ["float"] },
      },
    },
  });
  // Other names of Python's are still refused.
  refused("A = {'coerce': str}\n", 1, 16, /name 'str' is not assigned/);
});

Deno.test("settings.py: input size and nesting are bounded", () => {
  assert.throws(
    () => readPythonSettings(`A = "${"x".repeat(200)}"`, { maxLength: 100 }),
    /longer than 100 characters/,
  );
  const deep = "A = " + "[".repeat(100) + "]".repeat(100);
  assert.throws(() => readPythonSettings(deep), /nesting deeper than 64 levels/);
  const ok = "A = " + "[".repeat(60) + "]".repeat(60);
  assert.ok(readPythonSettings(ok).A);
});

Deno.test("settings.py: the file loader refuses with the file, line and column", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/settings.py`;
    await Deno.writeTextFile(path, "DOMAIN = {}\nimport copy\n");
    await assert.rejects(() => loadSettingsFile(path), /settings\.py, line 2, column 8/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
