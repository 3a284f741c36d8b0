/**
 * An operation's peak memory as a function of its input's shape and its params: the `@peakMemory` tag of its
 * TSDoc (copied into the manifest by the build), an arithmetic expression such as
 * `dense_bytes * 2` or `n_obs * n_comps * 12 + n_vars * n_vars * 8`, evaluated at submission so a job that
 * cannot fit is refused before it takes anything (see `ResourceMonitor.admitNeed`).
 *
 * The language is small on purpose: numbers, `+ - * /`, parentheses, `min(a, b, …)`, `max(a, b, …)` and
 * names. Names are the shape variables below or the operation's numeric params (after defaults are filled; a
 * param that is null or not a number counts as 0). Browser-safe, no `eval`.
 * @module
 */

/** The shape variables an expression may use, in bytes or counts. */
export interface ShapeVariables {
  /** Cells of the active table. */
  readonly n_obs: number;
  /** Genes (variables) of the active table. */
  readonly n_vars: number;
  /** Stored values of X (n_obs × n_vars when dense). */
  readonly nnz: number;
  /** Bytes X occupies as stored (values, plus indices and pointers when sparse). */
  readonly x_bytes: number;
  /** Bytes of a dense float32 copy of X (n_obs × n_vars × 4). */
  readonly dense_bytes: number;
}

type Node =
  | { k: "num"; v: number }
  | { k: "var"; name: string }
  | { k: "neg"; a: Node }
  | { k: "bin"; op: "+" | "-" | "*" | "/"; a: Node; b: Node }
  | { k: "call"; fn: "min" | "max"; args: Node[] };

/** A compiled estimate: bytes for a shape and params. */
export type PeakEstimate = (shape: ShapeVariables, params: Readonly<Record<string, unknown>>) => number;

const TOKEN = /\s*(?:(\d+(?:\.\d+)?(?:e[+-]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/(),]))/y;

/** Parse `expr`, throwing an Error that quotes it and says what is wrong. */
function parse(expr: string): Node {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let at = 0;
  while (at < expr.length) {
    if (/^\s*$/.test(expr.slice(at))) break;
    TOKEN.lastIndex = at;
    const m = TOKEN.exec(expr);
    if (!m) throw new Error(`@peakMemory "${expr}": unexpected "${expr.slice(at).trim()[0]}" at ${at}`);
    tokens.push(m[1] ?? m[2] ?? m[3]!);
    at = TOKEN.lastIndex;
  }
  let i = 0;
  const peek = () => tokens[i];
  const fail = (what: string): never => {
    throw new Error(`@peakMemory "${expr}": ${what}`);
  };
  const expect = (t: string) => (tokens[i] === t ? i++ : fail(`expected "${t}"`));
  const primary = (): Node => {
    const t = tokens[i++];
    if (t === undefined) return fail("unexpected end");
    if (t === "(") {
      const e = sum();
      expect(")");
      return e;
    }
    if (t === "-") return { k: "neg", a: primary() };
    if (/^\d/.test(t)) return { k: "num", v: Number(t) };
    if (/^[A-Za-z_]/.test(t)) {
      if (peek() === "(") {
        if (t !== "min" && t !== "max") return fail(`unknown function ${t}()`);
        i++;
        const args = [sum()];
        while (peek() === ",") {
          i++;
          args.push(sum());
        }
        expect(")");
        return { k: "call", fn: t, args };
      }
      return { k: "var", name: t };
    }
    return fail(`unexpected "${t}"`);
  };
  const product = (): Node => {
    let a = primary();
    while (peek() === "*" || peek() === "/") a = { k: "bin", op: tokens[i++] as "*" | "/", a, b: primary() };
    return a;
  };
  const sum = (): Node => {
    let a = product();
    while (peek() === "+" || peek() === "-") a = { k: "bin", op: tokens[i++] as "+" | "-", a, b: product() };
    return a;
  };
  const tree = sum();
  if (i !== tokens.length) fail(`unexpected "${tokens[i]}"`);
  return tree;
}

const SHAPE_NAMES = new Set(["n_obs", "n_vars", "nnz", "x_bytes", "dense_bytes"]);

/**
 * Compile a `@peakMemory` expression. `paramNames` are the operation's params: any other name is an error at
 * build time, so a typo cannot silently count as 0.
 */
export function compilePeakMemory(expr: string, paramNames?: readonly string[]): PeakEstimate {
  const tree = parse(expr);
  const check = (n: Node): void => {
    if (n.k === "var" && !SHAPE_NAMES.has(n.name) && paramNames && !paramNames.includes(n.name))
      throw new Error(
        `@peakMemory "${expr}": unknown name ${n.name} (shape: ${[...SHAPE_NAMES].join(", ")}; or a param)`,
      );
    if (n.k === "neg") check(n.a);
    if (n.k === "bin") {
      check(n.a);
      check(n.b);
    }
    if (n.k === "call") n.args.forEach(check);
  };
  check(tree);
  const evaluate = (n: Node, shape: ShapeVariables, params: Readonly<Record<string, unknown>>): number => {
    switch (n.k) {
      case "num":
        return n.v;
      case "var": {
        if (SHAPE_NAMES.has(n.name)) return shape[n.name as keyof ShapeVariables];
        const v = Object.hasOwn(params, n.name) ? params[n.name] : undefined;
        return typeof v === "number" && Number.isFinite(v) ? v : 0;
      }
      case "neg":
        return -evaluate(n.a, shape, params);
      case "bin": {
        const a = evaluate(n.a, shape, params);
        const b = evaluate(n.b, shape, params);
        return n.op === "+" ? a + b : n.op === "-" ? a - b : n.op === "*" ? a * b : b === 0 ? 0 : a / b;
      }
      case "call": {
        const vs = n.args.map((x) => evaluate(x, shape, params));
        return n.fn === "min" ? Math.min(...vs) : Math.max(...vs);
      }
    }
  };
  return (shape, params) => Math.max(0, evaluate(tree, shape, params));
}

/**
 * The estimate of an operation without a `@peakMemory` tag: a computation writes about one new X (most
 * replace or add a matrix of X's size), a plot or an extract little, a reader what it reads (its own load).
 */
export function defaultPeakMemory(effect: string): PeakEstimate {
  return effect === "compute" ? (s) => s.x_bytes : () => 0;
}
