/**
 * The web app at `/`: the static files of the built client (`index.html`, `app.js`, its chunks,
 * `tessera-canvas.js`), served with @fastify/static, pre-compressed `.gz` files when the browser
 * accepts gzip. The folder is `TESSERA_STATIC_DIR` when it holds an `index.html`, else the package's
 * own build (`dist/app`, made by `npm install` / `npm run build`). Unknown paths fall through to the
 * API's 404 answer. The guard runs first, as on every route.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { RouteModule } from "../deps.js";

/** The repository (package) root: the nearest folder above this module with Tessera's package.json. */
function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const pj = join(dir, "package.json");
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, "utf8")) as { name?: string }).name === "tessera") return dir;
      } catch {
        /* keep looking */
      }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

/** The folder of the built web app (`TESSERA_STATIC_DIR` when it has an index.html, else `dist/app`), or null. */
export function webAppDir(staticDir?: string | null): string | null {
  if (staticDir && existsSync(join(staticDir, "index.html"))) return staticDir;
  const root = packageRoot();
  const built = root ? join(root, "dist", "app") : null;
  return built && existsSync(join(built, "index.html")) ? built : null;
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Tessera</title>
<body style="font:15px system-ui;margin:3em">
<h1>Tessera</h1><p>The web app is not built. Run <code>npm run build</code> (or <code>npm install</code>) and restart.
The API is at <a href="/api/sessions">/api</a>.</p></body>`;

/** Registers the static app. */
export const appStaticRoutes: RouteModule = (app, { service }) => {
  const root = webAppDir(service.config.staticDir);
  if (!root) {
    app.get("/", async (_req, reply) => reply.type("text/html; charset=utf-8").send(NOT_BUILT));
    return;
  }
  void app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root,
      prefix: "/",
      wildcard: true,
      index: "index.html",
      preCompressed: true,
      // The page and the entry files change with every build; hashed chunks never change.
      cacheControl: false,
      setHeaders: (res, path) => {
        res.setHeader(
          "cache-control",
          /[\\/]chunks[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
      allowedPath: (pathName) => !pathName.startsWith("/api/"),
    });
    // `/` itself: the page (the wildcard route does not map the bare prefix to the index).
    scope.get("/", (_req, reply) => reply.header("cache-control", "no-cache").sendFile("index.html"));
  });
};
