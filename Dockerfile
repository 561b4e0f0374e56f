# The service: the official Deno image (denoland/deno, from a container registry) plus sources.
# This project's own machines reach only npm, so they get Deno from npm instead; no container
# engine runs there, so this image has never been built by the project: CI only lints this file.
# Only what the service needs is installed: tools/runtime-deps.ts removes the test-only packages
# (the jongodb MongoDB emulator, the OpenAPI validator, playwright-core) from the image's copy of
# deno.json first, and Deno drops them from the lock (tests/container_test.ts runs the same
# install steps outside a container).
FROM denoland/deno:debian-2.9.6

ENV DENO_NO_UPDATE_CHECK=1 \
    HOST=0.0.0.0 \
    PORT=5000 \
    DATA_DIR=/data \
    SETTINGS=/config/settings.json

WORKDIR /app
RUN mkdir -p /data \
  && chown deno:deno /app /data
# Everything below is installed and cached as the user the service runs as (its cache is
# the image's DENO_DIR, owned by that user).
USER deno
# Dependencies first, so they stay cached while sources change.
COPY --chown=deno:deno deno.json deno.lock ./
COPY --chown=deno:deno tools/runtime-deps.ts ./tools/
RUN deno run --allow-read=deno.json --allow-write=deno.json tools/runtime-deps.ts \
  && deno install \
  && deno install --frozen
COPY --chown=deno:deno src ./src
COPY config /config
RUN deno cache src/main.ts

VOLUME ["/data", "/config"]
EXPOSE 5000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch('http://127.0.0.1:' + (Deno.env.get('PORT') ?? '5000') + '/health'); Deno.exit(r.ok ? 0 : 1)"]
CMD ["deno", "run", "--v8-flags=--expose-gc", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-run", "--allow-sys", "src/main.ts"]
