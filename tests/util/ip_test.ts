/** IP addresses and CIDR ranges (src/util/ip.ts), as TRUSTED_PROXIES reads them. */
import assert from "node:assert/strict";
import { addressSet, parseAddress } from "../../src/util/ip.ts";

Deno.test("ip: addresses parse as IPv4 or IPv6; anything else is refused", () => {
  assert.deepEqual(parseAddress("10.0.0.1"), { v6: false, value: 0x0a000001n });
  assert.deepEqual(parseAddress("::1"), { v6: true, value: 1n });
  assert.deepEqual(parseAddress("::ffff:10.0.0.1"), { v6: false, value: 0x0a000001n });
  assert.deepEqual(parseAddress("2001:db8::8:800:200c:417a")?.v6, true);
  for (
    const bad of ["10.0.0", "10.0.0.256", "010.0.0.1", "1::2::3", "1:2:3:4:5:6:7:8:9", "x", ""]
  ) {
    assert.equal(parseAddress(bad), null, bad);
  }
});

Deno.test("ip: a set holds exact addresses and CIDR ranges of both families", () => {
  const { set, invalid } = addressSet([
    "10.0.0.0/8",
    "192.168.1.7",
    "fd00::/8",
    "::1",
    "0.0.0.0/0",
  ]);
  assert.deepEqual(invalid, []);
  assert.ok(set.has("10.255.0.1"));
  assert.ok(set.has("::ffff:10.1.1.1"), "IPv4-mapped IPv6 is its IPv4 address");
  assert.ok(set.has("192.168.1.7") && set.has("fd12:3456::1") && set.has("::1"));
  assert.ok(set.has("8.8.8.8"), "0.0.0.0/0 holds every IPv4 address");
  assert.ok(!set.has("fe80::1") && !set.has("::2") && !set.has("not-an-address"));
  const narrow = addressSet(["192.168.1.0/24"]).set;
  assert.ok(narrow.has("192.168.1.255") && !narrow.has("192.168.2.0"));
});

Deno.test("ip: entries that are not addresses or ranges are reported", () => {
  const { invalid } = addressSet([
    "10.0.0.0/33",
    "::/129",
    "proxy.local",
    "10.0.0.1/8/8",
    "1.2.3.4",
  ]);
  assert.deepEqual(invalid, ["10.0.0.0/33", "::/129", "proxy.local", "10.0.0.1/8/8"]);
});
