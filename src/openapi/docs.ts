/**
 * The docs page: Swagger UI (the `swagger-ui-dist` package) rendering the API description.
 * Its files are served by the service itself from the installed package (no CDN), read on
 * first use and kept in memory; the page has no inline script, so it runs under a strict
 * Content-Security-Policy.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import swaggerUiDir from "swagger-ui-dist/absolute-path.js";

/** A static file of the docs page. */
export interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  /** Strong ETag (quoted). */
  etag: string;
}

/** The package files the page uses (nothing else of the package is served). */
const PACKAGED: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui.css.map": "application/json",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-bundle.js.map": "application/json",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
};

/**
 * Our own script: starts Swagger UI on the document named by the page's `data-url`. Every
 * request it makes says `X-Requested-With: XMLHttpRequest`, so a 401 carries no Basic
 * challenge and the browser shows no login dialog of its own. When the description needs
 * credentials, the page asks for them in a form of its own (a username and password, or a
 * token), keeps them in memory only, sends them with the description's request and
 * pre-authorises "Try it out" with them.
 */
const INIT_JS = `"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  var url = new URL(root.getAttribute("data-url"), location.href).href;
  var authorization = null;
  var login = { user: "", password: "" };

  function headers() {
    var h = { "X-Requested-With": "XMLHttpRequest", Accept: "application/json" };
    if (authorization) h.Authorization = authorization;
    return h;
  }

  function start() {
    window.ui = SwaggerUIBundle({
      url: url,
      domNode: root,
      deepLinking: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
      requestInterceptor: function (req) {
        req.headers["X-Requested-With"] = "XMLHttpRequest";
        if (authorization && req.url === url) req.headers.Authorization = authorization;
        return req;
      },
      onComplete: function () {
        if (!authorization) return;
        var schemes = (window.ui.specSelectors.specJson().toJS().components || {})
          .securitySchemes || {};
        if (login.password && schemes.basic) {
          window.ui.preauthorizeBasic("basic", login.user, login.password);
        } else if (!login.password && schemes.token) {
          window.ui.preauthorizeApiKey("token", login.user);
        }
      },
    });
  }

  function field(form, label, type, name) {
    var wrap = document.createElement("label");
    wrap.textContent = label + " ";
    var input = document.createElement("input");
    input.type = type;
    input.name = name;
    input.autocomplete = type === "password" ? "current-password" : "username";
    wrap.appendChild(input);
    form.appendChild(wrap);
    form.appendChild(document.createTextNode(" "));
    return input;
  }

  function askCredentials(problem) {
    var form = document.createElement("form");
    form.id = "docs-login";
    form.className = "wrapper";
    var title = document.createElement("h2");
    title.textContent = "This API description needs credentials";
    form.appendChild(title);
    var note = document.createElement("p");
    note.textContent = "A username and password, or a token alone (password left empty).";
    form.appendChild(note);
    var user = field(form, "Username or token", "text", "username");
    var password = field(form, "Password", "password", "password");
    var button = document.createElement("button");
    button.type = "submit";
    button.className = "btn authorize";
    button.textContent = "Show the API";
    form.appendChild(button);
    var message = document.createElement("p");
    message.id = "docs-login-message";
    message.setAttribute("role", "alert");
    message.textContent = problem || "";
    form.appendChild(message);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      login = { user: user.value, password: password.value };
      authorization = login.password
        ? "Basic " + btoa(String.fromCharCode.apply(null,
          new TextEncoder().encode(login.user + ":" + login.password)))
        : "Bearer " + login.user;
      form.remove();
      load();
    });
    root.parentNode.insertBefore(form, root);
    user.focus();
  }

  function load() {
    fetch(url, { headers: headers(), credentials: "same-origin" }).then(function (res) {
      if (res.status === 401) {
        askCredentials(authorization ? "Those credentials were not accepted." : "");
        authorization = null;
      } else start();
    }, function () {
      start();
    });
  }

  load();
})();
`;

const OWN: Record<string, () => Asset> = {
  "init.js": once(() => asset(new TextEncoder().encode(INIT_JS), "text/javascript; charset=utf-8")),
};

/** Strong ETag of some bytes. */
export function etagOf(bytes: Uint8Array): string {
  return `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;
}

function asset(body: Uint8Array<ArrayBuffer>, type: string): Asset {
  return { body, type, etag: etagOf(body) };
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => value ??= make();
}

/** Package files read so far, shared by every service of the process (they never change). */
const loaded = new Map<string, Promise<Asset>>();

/** Whether `name` is one of the docs page's files ({@link docsAsset} serves it). */
export function isDocsAsset(name: string): boolean {
  return Object.hasOwn(OWN, name) || Object.hasOwn(PACKAGED, name);
}

/** The asset called `name`, or null when the page has none of that name. */
export function docsAsset(name: string): Promise<Asset> | null {
  if (Object.hasOwn(OWN, name)) return Promise.resolve(OWN[name]());
  if (!Object.hasOwn(PACKAGED, name)) return null;
  let found = loaded.get(name);
  if (!found) {
    found = Deno.readFile(join(swaggerUiDir(), name)).then((bytes) => asset(bytes, PACKAGED[name]));
    // A failed read is tried again next time.
    found.catch(() => loaded.delete(name));
    loaded.set(name, found);
  }
  return found;
}

const escapeAttr = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/**
 * The page. `assets` is the URL of the folder of its files, `document` the URL of the
 * OpenAPI document (both path-absolute or absolute).
 */
export function docsPage(urls: { assets: string; document: string }): Asset {
  const a = escapeAttr(urls.assets);
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API docs</title>
<link rel="stylesheet" href="${a}/swagger-ui.css">
<link rel="icon" type="image/png" href="${a}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${a}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<noscript>This page needs JavaScript. The API description itself is at
<a href="${escapeAttr(urls.document)}">${escapeAttr(urls.document)}</a>.</noscript>
<div id="swagger-ui" data-url="${escapeAttr(urls.document)}"></div>
<script src="${a}/swagger-ui-bundle.js"></script>
<script src="${a}/init.js"></script>
</body>
</html>
`;
  return asset(new TextEncoder().encode(html), "text/html; charset=utf-8");
}

/**
 * The page's Content-Security-Policy: its own files only; `connect` adds the origin of
 * PUBLIC_BASE_URL, where "Try it out" sends requests.
 */
export function docsPolicy(connect: string | null): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${connect ? ` ${connect}` : ""}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}
