/** Human-readable rendering of an inventory for the terminal. */
import type { AxisArrayEntry, Inventory } from "../../sdk/data/inventory.js";

/** `name (kind, width)`: how it is stored matters (a sparse or data-frame entry is not a plain embedding). */
function axisEntry(e: AxisArrayEntry): string {
  return `${e.name} (${e.kind}, ${e.n_components})`;
}

/** Render an inventory as indented text. */
export function formatInventory(path: string, inv: Inventory): string {
  const out: string[] = [path];
  const section = (title: string, lines: string[]) => {
    if (lines.length) out.push(`${title}:`, ...lines.map((l) => `  ${l}`));
  };
  section(
    "tables",
    inv.tables.flatMap((t) => [
      `${t.name}: ${t.n_obs} obs × ${t.n_vars} vars${t.has_x ? "" : " (no X)"}${t.region.length ? `, annotates ${t.region.join(", ")}` : ""}`,
      `  obs: ${t.obs.map((c) => `${c.name} (${c.kind})`).join(", ") || "-"}`,
      `  var: ${t.var.map((c) => `${c.name} (${c.kind})`).join(", ") || "-"}`,
      `  obsm: ${t.obsm.map(axisEntry).join(", ") || "-"}`,
      `  varm: ${t.varm.map(axisEntry).join(", ") || "-"}`,
      `  layers: ${t.layer_entries.map((l) => `${l.name} (${l.kind}, ${t.n_vars})`).join(", ") || "-"}`,
      `  obsp: ${t.obsp.join(", ") || "-"}   uns: ${t.uns.join(", ") || "-"}`,
    ]),
  );
  const raster = (r: Inventory["images"][number]) =>
    `${r.name}: ${r.dtype}, ${r.levels.map((l) => `${l.width}×${l.height}`).join(" → ")}${r.channels.length ? `, channels ${r.channels.join(", ")}` : ""}`;
  section("images", inv.images.map(raster));
  section("labels", inv.labels.map(raster));
  section(
    "shapes",
    inv.shapes.map((s) => `${s.name}: ${s.n} ${s.geometry}`),
  );
  section(
    "points",
    inv.points.map((p) => `${p.name}: ${p.n} points, columns ${p.columns.join(", ")}`),
  );
  out.push(`coordinate systems: ${inv.coordinate_systems.join(", ") || "-"}`);
  return `${out.join("\n")}\n`;
}
