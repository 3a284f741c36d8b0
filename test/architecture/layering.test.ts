/**
 * The floors of the house (docs/decisions.md, "Layering rules"): a static reading of every import and
 * every HTTP route handler, so a change that lets logic leak upward or outward fails here instead of
 * being found by the next adapter that has to decide the same thing again.
 *
 * 1. `src/sdk/{data,io,math}` never import the session layer (`src/sdk/session/`) or the facade.
 * 2. Nothing under `src/sdk/` imports `src/adapters/` or `src/plugins/`.
 * 3. An HTTP route module imports no value from `src/sdk/{data,io,math}` (types are fine): what a
 *    route serves comes from a session, service or SDK entry point that every face shares.
 * 4. Every HTTP route handler is at most HANDLER_MAX_LINES lines, the ones listed in LONG_HANDLERS
 *    excepted (transport code with no SDK decision in it).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");

/** Longest route handler body, in lines (ARCHITECTURE.md: "longer than about 20 lines is a sign"). */
const HANDLER_MAX_LINES = 20;

/**
 * Handlers allowed to be longer, with the reason. Each must exist (a stale entry fails the test).
 * The event stream writes SSE frames to a hijacked socket: framing, keepalive and back-pressure are
 * the HTTP adapter's own business; the SDK part is one `bus.subscribe` call.
 */
const LONG_HANDLERS: Readonly<Record<string, string>> = {
  "GET /api/events": "SSE framing on the raw socket",
};

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(p));
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

interface ImportRef {
  /** Absolute path of the imported module (relative specifiers only; `.js` mapped to `.ts`). */
  readonly target: string;
  /** Whether only types are imported (erased at run time). */
  readonly typeOnly: boolean;
  readonly line: number;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
}

/** Every relative import and re-export of a file, static or dynamic. */
function importsOf(file: string): ImportRef[] {
  const sf = parse(file);
  const out: ImportRef[] = [];
  const add = (spec: string, typeOnly: boolean, node: ts.Node) => {
    if (!spec.startsWith(".")) return;
    const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
    out.push({ target, typeOnly, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings : null;
      const typeOnly =
        !!c &&
        (c.isTypeOnly ||
          (!c.name && !!named && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly, node);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.isTypeOnly, node);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false, node);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const within = (path: string, dir: string) => path === dir || path.startsWith(dir + sep);
const rel = (p: string) => relative(ROOT, p);

/** `file:line → target` for every import of `files` that `bad` refuses. */
function violations(files: string[], bad: (ref: ImportRef) => boolean): string[] {
  return files.flatMap((f) =>
    importsOf(f)
      .filter(bad)
      .map((r) => `${rel(f)}:${r.line} → ${rel(r.target)}`),
  );
}

describe("layering: the SDK's floors", () => {
  const lower = ["data", "io", "math"].flatMap((d) => tsFiles(join(SRC, "sdk", d)));
  const sdk = tsFiles(join(SRC, "sdk"));

  it("reads a real tree (the scan is not vacuous)", () => {
    expect(lower.length).toBeGreaterThan(50);
    // The scanner sees relative imports: session.ts imports the data layer.
    const seen = importsOf(join(SRC, "sdk/session/session.ts")).map((r) => rel(r.target));
    expect(seen).toContain(join("src", "sdk", "data", "change.ts"));
  });

  it("sdk/{data,io,math} import neither the session layer nor the facade", () => {
    const session = join(SRC, "sdk", "session");
    const facade = [join(SRC, "sdk", "tessera.ts"), join(SRC, "sdk", "index.ts")];
    expect(violations(lower, (r) => within(r.target, session) || facade.includes(r.target))).toEqual([]);
  });

  it("the SDK imports no adapter and no plugin", () => {
    const outside = [join(SRC, "adapters"), join(SRC, "plugins")];
    expect(violations(sdk, (r) => outside.some((d) => within(r.target, d)))).toEqual([]);
  });
});

/** A registered route: method and url, the handler function, where it is. */
interface Handler {
  readonly route: string;
  readonly file: string;
  readonly lines: number;
}

const ROUTE_METHODS = new Set(["get", "post", "put", "patch", "delete", "head", "route"]);

function literalText(e: ts.Expression | undefined): string {
  if (!e) return "?";
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
  if (ts.isTemplateExpression(e)) return e.getText().slice(1, -1);
  if (ts.isArrayLiteralExpression(e)) return e.elements.map(literalText).join(",");
  return e.getText();
}

function isFunction(e: ts.Node | undefined): e is ts.ArrowFunction | ts.FunctionExpression {
  return !!e && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));
}

/** Every `app.<method>(url, [opts], handler)` and `app.route({method, url, handler})` of a route file. */
function handlersOf(file: string): Handler[] {
  const sf = parse(file);
  const out: Handler[] = [];
  const lines = (fn: ts.Node) =>
    sf.getLineAndCharacterOfPosition(fn.getEnd()).line -
    sf.getLineAndCharacterOfPosition(fn.getStart()).line +
    1;
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ROUTE_METHODS.has(node.expression.name.text)
    ) {
      const method = node.expression.name.text;
      if (method === "route" && node.arguments[0] && ts.isObjectLiteralExpression(node.arguments[0])) {
        const props = new Map(
          node.arguments[0].properties
            .filter(ts.isPropertyAssignment)
            .map((p) => [p.name.getText(), p.initializer] as const),
        );
        const fn = props.get("handler");
        if (isFunction(fn))
          out.push({
            route: `${literalText(props.get("method"))} ${literalText(props.get("url"))}`,
            file: rel(file),
            lines: lines(fn),
          });
      } else {
        const fn = node.arguments[node.arguments.length - 1];
        if (isFunction(fn) && node.arguments.length >= 2)
          out.push({
            route: `${method.toUpperCase()} ${literalText(node.arguments[0])}`,
            file: rel(file),
            lines: lines(fn),
          });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe("layering: HTTP routes only adapt", () => {
  const routeFiles = tsFiles(join(SRC, "adapters", "http", "routes"));
  const handlers = routeFiles.flatMap(handlersOf);

  it("finds the route handlers (the scan is not vacuous)", () => {
    expect(handlers.length).toBeGreaterThan(40);
    expect(handlers.map((h) => h.route)).toContain("POST /api/sessions");
  });

  it("route modules import no value from sdk/{data,io,math}", () => {
    const lower = ["data", "io", "math"].map((d) => join(SRC, "sdk", d));
    expect(violations(routeFiles, (r) => !r.typeOnly && lower.some((d) => within(r.target, d)))).toEqual([]);
  });

  it(`every handler is at most ${HANDLER_MAX_LINES} lines (listed transport handlers excepted)`, () => {
    const long = handlers
      .filter((h) => h.lines > HANDLER_MAX_LINES && !Object.hasOwn(LONG_HANDLERS, h.route))
      .map((h) => `${h.route} (${h.file}): ${h.lines} lines`);
    expect(long).toEqual([]);
  });

  it("every listed exception still exists and is still long", () => {
    for (const route of Object.keys(LONG_HANDLERS)) {
      const h = handlers.find((x) => x.route === route);
      expect(h, route).toBeDefined();
      expect(h!.lines, route).toBeGreaterThan(HANDLER_MAX_LINES);
    }
  });
});
