/**
 * deploy/docker-compose.yml, read as Compose reads it (YAML with merge keys; no container engine
 * runs here): the services a deployment needs, each long-running one with a health check, a
 * restart policy and a raised open-file limit; start-up ordered on healthy (or completed)
 * dependencies; only the proxy publishes a port; the files it mounts exist.
 */
import assert from "node:assert/strict";
import { parseYaml as parse } from "../support/test_deps.ts";

const DEPLOY = new URL("../../deploy/", import.meta.url);

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  healthcheck?: { test: string[] };
  restart?: string;
  ulimits?: { nofile?: { soft: number; hard: number } };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
}

const compose = parse(await Deno.readTextFile(new URL("docker-compose.yml", DEPLOY)), {
  merge: true,
}) as { services: Record<string, Service> };
const services = compose.services;

Deno.test("compose: two service replicas, nginx, a three-member replica set, its init, Redis", () => {
  assert.deepEqual(Object.keys(services).sort(), [
    "api1",
    "api2",
    "mongo-init",
    "mongo1",
    "mongo2",
    "mongo3",
    "nginx",
    "redis",
  ]);
  for (const name of ["api1", "api2"]) {
    const api = services[name];
    assert.equal(api.build?.dockerfile, "Dockerfile");
    assert.equal(api.environment?.STORE, "mongo");
    assert.match(
      api.environment!.MONGO_URI,
      /mongo1:27017,mongo2:27017,mongo3:27017\/.*replicaSet=rs0/,
    );
    assert.equal(api.environment?.REDIS_URL, "redis://redis:6379");
    assert.equal(api.environment?.SETTINGS, "/deploy/settings.ts");
  }
});

Deno.test("compose: long-running services have health checks, restart policies, nofile limits", () => {
  for (const [name, service] of Object.entries(services)) {
    if (name === "mongo-init") {
      assert.equal(service.restart, "no", "the one-shot container is not restarted");
      continue;
    }
    assert.ok(service.healthcheck?.test?.length, `${name}: no health check`);
    assert.equal(service.restart, "unless-stopped", name);
    const nofile = service.ulimits?.nofile;
    assert.ok(nofile && nofile.soft >= 64000 && nofile.hard >= nofile.soft, `${name}: nofile`);
  }
});

Deno.test("compose: start-up waits for healthy dependencies and the replica set's init", () => {
  const wants = (name: string, on: string, condition: string) =>
    assert.equal(services[name].depends_on?.[on]?.condition, condition, `${name} -> ${on}`);
  for (const member of ["mongo1", "mongo2", "mongo3"]) {
    wants("mongo-init", member, "service_healthy");
  }
  for (const api of ["api1", "api2"]) {
    wants(api, "mongo-init", "service_completed_successfully");
    wants(api, "redis", "service_healthy");
    wants("nginx", api, "service_healthy");
  }
});

Deno.test("compose: only nginx publishes a port; the files mounted exist", async () => {
  for (const [name, service] of Object.entries(services)) {
    if (name !== "nginx") assert.equal(service.ports, undefined, `${name} publishes a port`);
  }
  assert.deepEqual(services.nginx.ports, ["80:8080"]);
  for (const service of Object.values(services)) {
    for (const volume of service.volumes ?? []) {
      const source = volume.split(":")[0];
      if (!source.startsWith(".")) continue; // a named volume
      const stat = await Deno.stat(new URL(source, DEPLOY));
      assert.ok(stat.isFile, `${source} is mounted but missing`);
    }
  }
});
