/**
 * Tessera from a script: open the demo, run operations, read a field, save a checkpoint.
 *
 *   npx tsx examples/basic.ts [DATA_DIR]
 *
 * DATA_DIR (default `TESSERA_DATA_DIR`, else `./.tessera-data`) gets the demo dataset when it holds
 * no dataset yet; the saved checkpoint is written there too.
 */
import { ensureDemoDataset, Tessera } from "../src/sdk/index.js";

const dataDir = process.argv[2] ?? process.env.TESSERA_DATA_DIR ?? "./.tessera-data";
const demo = await ensureDemoDataset(dataDir);

const t = await Tessera.start({ dataDir });
try {
  const s = await t.open(demo.path);
  console.log(`opened ${s.name}: ${s.session.state().fields.obs.length} obs columns`);

  // A compute: committed when the promise resolves; the result says what changed.
  const renamed = await s.run("custom.rename_obs_column", { old_name: "cell_type", new_name: "label" });
  console.log("changed:", JSON.stringify(renamed.result));

  // An extract: runs at once and returns a value.
  const counts = await s.extract<{ values: { value: string; count: number }[] }>("custom.obs_values", { column: "label" });
  for (const v of counts.values) console.log(`  ${String(v.value).padEnd(14)} ${v.count}`);

  // A field of the committed object.
  const labels = await s.values("obs:label");
  console.log(`first cell: ${labels[0]}`);

  // A recipe shipped in recipes/: rename to compartments and colour them.
  const outcomes = await s.runRecipe(t.recipe("annotate_demo"), { source_column: "label" });
  console.log(`recipe: ${outcomes.map((o) => o.status).join(", ")}`);

  // The whole session (data, history, plots, displays) as a checkpoint.
  const path = await s.save({ prefix: "demo-annotated" });
  console.log(`saved ${path}`);
  console.log(`history: ${s.appState.compute_history.map((e) => `${e.function} (${e.status})`).join(" → ")}`);
} finally {
  await t.close();
}
