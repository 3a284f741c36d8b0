/**
 * Build time only: find a plugin's operations by reflection over its modules' exports with the
 * TypeScript compiler API. An operation is an exported function `(sd: SpatialData, params: XParams,
 * ctx: OpContext)`, recognised by the contract's types themselves (the data model's
 * `kind: "spatialdata"`, a `Change`'s slots, a `PlotResult`'s `kind: "plot"`), not by their names.
 * Its namespace comes from its module (or a `@namespace` tag), its effect class from a `@effect` tag,
 * the namespace (`pl` plots, `read`/`io` read) or its return type, its summary from the first
 * sentence of its TSDoc. Loaded only by the manifest build (`npm run manifests`, `tessera plugin build`).
 */
import ts from "typescript";
import type { EffectClass } from "../../sdk/jobs/operation.js";
import { compilePeakMemory } from "../../sdk/resources/peak-memory.js";

import { firstSentence } from "../ui-rules.js";

/** A module of a plugin as the build sees it. */
export interface ModuleSource {
  /** Absolute path of the `.ts` source. */
  file: string;
  /** Path recorded in the manifest, relative to the plugin folder (`./custom.js`). */
  manifestPath: string;
  /** Namespace of its functions unless tagged otherwise. */
  namespace: string;
  /** The namespaces its functions may use (the built-in ones and those the plugin declares). */
  allowed: ReadonlySet<string>;
}

/** An operation found in a module. */
export interface FoundOperation {
  namespace: string;
  function: string;
  effect_class: EffectClass;
  summary: string;
  module: string;
  export: string;
  /** Name of the exported params type (`LeidenParams`), fed to the schema generator. */
  paramsType: string;
  /** Params that cannot be expressed in JSON (callbacks, class instances, maps …). */
  unsupported: string[];
  /** Where it is declared, for error messages. */
  where: string;
  /** Its `@peakMemory` expression (see sdk/resources/peak-memory.ts), when it states one. */
  peak_memory?: string;
}

const EFFECTS: readonly EffectClass[] = ["compute", "plot", "extract", "read"];
/** Built-in types that do not survive JSON. */
const NON_JSON = new Set([
  "Function",
  "Map",
  "Set",
  "WeakMap",
  "WeakSet",
  "Date",
  "RegExp",
  "Promise",
  "ArrayBuffer",
  "SharedArrayBuffer",
  "DataView",
  "AbortSignal",
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
]);

/** The value of the first `@name` tag of a symbol, or undefined. */
function tagValue(sym: ts.Symbol, checker: ts.TypeChecker, name: string): string | undefined {
  const tag = sym.getJsDocTags(checker).find((t) => t.name === name);
  if (!tag) return undefined;
  return ts.displayPartsToString(tag.text).trim();
}

/** Replace `{@link x}` / `{@link x | text}` by its text. */
export function stripLinks(text: string): string {
  return text.replace(
    /\{@link(?:code|plain)?\s+([^}|]+?)(?:\s*\|\s*([^}]+))?\}/g,
    (_m, target: string, label?: string) => (label ?? target).trim(),
  );
}

/** Whether a type cannot be expressed in JSON. */
function isNonJson(t: ts.Type, checker: ts.TypeChecker, depth = 0): boolean {
  if (depth > 4) return false;
  if (t.isUnion()) return t.types.some((u) => isNonJson(u, checker, depth + 1));
  if (t.getCallSignatures().length > 0 || t.getConstructSignatures().length > 0) return true;
  if (checker.isArrayType(t) || checker.isTupleType(t)) {
    return checker.getTypeArguments(t as ts.TypeReference).some((a) => isNonJson(a, checker, depth + 1));
  }
  const sym = t.aliasSymbol ?? t.getSymbol();
  if (!sym) return false;
  if (NON_JSON.has(sym.getName())) return true;
  // A class instance (a user class such as Rng): its prototype does not survive JSON.
  return (sym.getDeclarations() ?? []).some((d) => ts.isClassDeclaration(d));
}

function nameOfType(t: ts.Type): string | undefined {
  return (t.aliasSymbol ?? t.getSymbol())?.getName();
}

/** The string literal type of property `name` of `t`, or undefined. */
function literalProp(t: ts.Type, name: string, checker: ts.TypeChecker): string | undefined {
  const prop = t.getProperty(name);
  if (!prop) return undefined;
  const pt = checker.getTypeOfSymbol(prop);
  return pt.isStringLiteral() ? pt.value : undefined;
}

/** The slots a `Change` may name: an object with some of these and nothing else is a change. */
const CHANGE_KEYS = new Set(["tables", "replaceTables", "images", "labels", "points", "shapes"]);

/**
 * Whether `t` is the data model's SpatialData, recognised by what it is (its `kind: "spatialdata"`
 * discriminant and its `tables`), not by the name a plugin's import gives it.
 */
function isSpatialData(t: ts.Type, checker: ts.TypeChecker): boolean {
  return literalProp(t, "kind", checker) === "spatialdata" && t.getProperty("tables") !== undefined;
}

/** Whether `t` is a `Change` (an object of change slots only), whatever it is called. */
function isChange(t: ts.Type, checker: ts.TypeChecker): boolean {
  if (nameOfType(t) === "Change") return true;
  if (!(t.flags & ts.TypeFlags.Object) || t.getCallSignatures().length) return false;
  const props = checker.getPropertiesOfType(t);
  return props.length > 0 && props.every((p) => CHANGE_KEYS.has(p.getName()));
}

/** The effect class a return type implies, or null when it says nothing (any JSON value → extract). */
function effectOfReturn(t: ts.Type, checker: ts.TypeChecker): EffectClass | null {
  const awaited = checker.getAwaitedType(t) ?? t;
  if (isSpatialData(awaited, checker)) return "read";
  if (literalProp(awaited, "kind", checker) === "plot" && awaited.getProperty("svg")) return "plot";
  if (isChange(awaited, checker)) return "compute";
  return null;
}

/** The function-like declaration an exported symbol stands for, or undefined. */
function functionOf(sym: ts.Symbol): ts.SignatureDeclaration | undefined {
  const d = sym.valueDeclaration;
  if (!d) return undefined;
  if (ts.isFunctionDeclaration(d)) return d;
  if (
    ts.isVariableDeclaration(d) &&
    d.initializer &&
    (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
  ) {
    return d.initializer;
  }
  return undefined;
}

/**
 * Find the operations exported by `mod` in `program`. Throws, naming the function and its file, when
 * a function looks like an operation but breaks the convention (no TSDoc, params not a named type,
 * an unknown namespace or effect tag, a required param that JSON cannot express).
 */
export function findOperations(program: ts.Program, mod: ModuleSource): FoundOperation[] {
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(mod.file);
  if (!sf) throw new Error(`${mod.file}: not part of the plugin's program (does the file exist?)`);
  const moduleSym = checker.getSymbolAtLocation(sf);
  if (!moduleSym) return [];
  const found: (FoundOperation & { pos: number })[] = [];
  for (const exported of checker.getExportsOfModule(moduleSym)) {
    const sym = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const fn = functionOf(sym);
    if (!fn) continue;
    const exportName = exported.getName();
    const where = `${mod.file}: ${exportName}`;
    const sig = checker.getSignatureFromDeclaration(fn);
    if (!sig) continue;
    const params = fn.parameters;
    if (params.length < 2) continue;
    const first = checker.getTypeAtLocation(params[0]!);
    if (!isSpatialData(first, checker)) {
      // Named like the data model but not it: an import that did not resolve (a missing peer
      // dependency) would otherwise drop every operation silently.
      if (nameOfType(first) === "SpatialData" || params[0]!.type?.getText(sf) === "SpatialData")
        throw new Error(
          `${where}: its first parameter is typed SpatialData but the type does not resolve to Tessera's data model (is tessera-omics installed, and imported from "tessera-omics/plugin"?)`,
        );
      continue;
    }
    if (sym.getJsDocTags(checker).some((t) => t.name === "internal" || t.name === "ignore")) continue;

    const typeNode = params[1]!.type;
    if (!typeNode || !ts.isTypeReferenceNode(typeNode) || typeNode.typeArguments?.length) {
      throw new Error(
        `${where}: the params argument must be typed with an exported, named interface or type (e.g. ${exportName}Params)`,
      );
    }
    const paramsType = typeNode.typeName.getText(sf);
    const doc = stripLinks(ts.displayPartsToString(sym.getDocumentationComment(checker)));
    const summary = firstSentence(doc);
    if (!summary)
      throw new Error(`${where}: an operation needs a TSDoc comment (its first sentence is the summary)`);

    const namespace = tagValue(sym, checker, "namespace") ?? mod.namespace;
    if (!mod.allowed.has(namespace))
      throw new Error(
        `${where}: namespace "${namespace}" is neither built in nor declared by the plugin (add it to \`namespaces\` in plugin.ts); allowed: ${[...mod.allowed].join(", ")}`,
      );
    const effectTag = tagValue(sym, checker, "effect");
    if (effectTag !== undefined && !(EFFECTS as readonly string[]).includes(effectTag)) {
      throw new Error(`${where}: @effect ${effectTag} is not one of ${EFFECTS.join(", ")}`);
    }
    const fromReturn = effectOfReturn(sig.getReturnType(), checker);
    const effect: EffectClass =
      (effectTag as EffectClass | undefined) ??
      (namespace === "pl"
        ? "plot"
        : namespace === "read" || namespace === "io"
          ? "read"
          : namespace === "sc.get"
            ? "extract"
            : (fromReturn ?? "extract"));
    if ((effect === "compute" || effect === "plot" || effect === "read") && fromReturn !== effect) {
      const want = { compute: "Change", plot: "PlotResult", read: "SpatialData" }[effect];
      throw new Error(`${where}: a ${effect} operation must return Promise<${want}>`);
    }

    const unsupported: string[] = [];
    const pType = checker.getTypeAtLocation(typeNode);
    for (const prop of checker.getPropertiesOfType(pType)) {
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      const t = decl ? checker.getTypeOfSymbolAtLocation(prop, decl) : checker.getTypeOfSymbol(prop);
      if (!isNonJson(checker.getNonNullableType(t), checker)) continue;
      if (!(prop.flags & ts.SymbolFlags.Optional)) {
        throw new Error(
          `${where}: param "${prop.getName()}" cannot be expressed in JSON, so it must be optional (it is locked to its default)`,
        );
      }
      unsupported.push(prop.getName());
    }
    const peak = tagValue(sym, checker, "peakMemory");
    if (peak !== undefined) {
      // Checked here, so a typo in a name fails the build instead of counting as 0 at run time.
      const names = checker.getPropertiesOfType(pType).map((p) => p.getName());
      try {
        compilePeakMemory(peak, names);
      } catch (err) {
        throw new Error(`${where}: ${(err as Error).message}`);
      }
    }
    found.push({
      namespace,
      function: exportName,
      effect_class: effect,
      summary,
      module: mod.manifestPath,
      export: exportName,
      paramsType,
      unsupported,
      where,
      ...(peak !== undefined ? { peak_memory: peak } : {}),
      pos: fn.getStart(sf),
    });
  }
  return found.sort((a, b) => a.pos - b.pos).map(({ pos: _pos, ...op }) => op);
}
