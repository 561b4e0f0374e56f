# The service: the official Deno image (denoland/deno, from a container registry) plus sources.
# This project's own machines reach only npm, so they get Deno from npm instead; no container
# engine runs there, so this image has never been built by the project: CI only lints this file.
# Only what the service needs is installed: deno.json's import map holds the service's packages
# alone (the test-only ones are imported by tests/support/test_deps.ts), and deno.runtime.lock
# locks just those (`deno task lock:runtime` writes it from deno.lock), so the emulator, the
# OpenAPI validator and the browser driver stay out (tests/container_test.ts runs the same
# install steps outside a container).
FROM denoland/deno:debian-2.9.6

ENV DENO_NO_UPDATE_CHECK=1 \
    HOST=0.0.0.0 \
    PORT=5000 \
    DATA_DIR=/data \
    SETTINGS=/config/settings.json

WORKDIR /app
# Everything below is installed and cached by the user that runs the service, so its caches
# (DENO_DIR, node_modules) are its own; the sources and settings stay read-only to it.
RUN mkdir -p /data \
  && chown deno:deno /data /app
USER deno
# Dependencies first, so they stay cached while sources change.
COPY --chown=deno:deno deno.json deno.runtime.lock ./
RUN deno install --lock=deno.runtime.lock --frozen
COPY src ./src
COPY config /config
RUN deno cache --lock=deno.runtime.lock --frozen src/main.ts

VOLUME ["/data", "/config"]
EXPOSE 5000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch('http://127.0.0.1:' + (Deno.env.get('PORT') ?? '5000') + '/health'); Deno.exit(r.ok ? 0 : 1)"]
CMD ["deno", "run", "--lock=deno.runtime.lock", "--frozen", "--v8-flags=--expose-gc,--heap-growing-percent=100,--no-memory-reducer", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "src/main.ts"]
