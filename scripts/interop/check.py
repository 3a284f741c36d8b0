"""Open what Tessera wrote with the real scverse stack and compare it with what Tessera read.

Run by `npm run interop` (scripts/interop/interop.ts) with the scverse venv's Python; argv[1] is the manifest
the TypeScript side wrote: one case per fixture, with the checkpoint zip, its unzipped folder, plain AnnData
zarr folders, and the expected inventory and value samples. Prints one line per check and a closing
"N passed, N failed" line; exits 1 when anything failed.
"""

from __future__ import annotations

import json
import math
import sys
import traceback
import warnings
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd
import scipy.sparse as sp
import spatialdata as sd
import zarr

warnings.filterwarnings("ignore")


class Mismatch(Exception):
    pass


def same_scalar(expected, got) -> bool:
    """Tessera's JSON scalar against a numpy/pandas value (floats compared to float32 precision)."""
    if expected is None:
        return got is None or got is pd.NA or (isinstance(got, float) and math.isnan(got))
    if expected in ("NaN", "Infinity", "-Infinity") and isinstance(got, (float, np.floating)):
        return str(float(got)).lower().replace("inf", "infinity") == expected.lower() or (
            expected == "NaN" and math.isnan(got)
        )
    if isinstance(expected, bool):
        return bool(got) == expected
    if isinstance(expected, (int, float)):
        try:
            g = float(got)
        except (TypeError, ValueError):
            return False
        return math.isclose(g, float(expected), rel_tol=1e-6, abs_tol=1e-6)
    return str(got) == str(expected)


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Mismatch(what)


def dense_block(x, r: int, c: int) -> np.ndarray:
    block = x[:r, :c]
    if sp.issparse(block):
        block = block.toarray()
    return np.asarray(block, dtype=np.float64).reshape(r, c)


def compare_frame(label: str, df: pd.DataFrame, sample: dict) -> None:
    check([str(v) for v in df.index[: len(sample["index"])]] == sample["index"], f"{label} index {list(df.index[:5])} != {sample['index']}")
    for col, values in sample["columns"].items():
        check(col in df.columns, f"{label} lacks column {col!r}")
        got = df[col].iloc[: len(values)].tolist()
        for i, (e, g) in enumerate(zip(values, got)):
            check(same_scalar(e, g), f"{label}[{col!r}][{i}] = {g!r}, Tessera read {e!r}")


def compare_table(label: str, a: ad.AnnData, inv: dict, sample: dict | None) -> None:
    check(a.n_obs == inv["n_obs"] and a.n_vars == inv["n_vars"], f"{label} shape {a.shape} != ({inv['n_obs']}, {inv['n_vars']})")
    check(list(a.obs.columns) == [c["name"] for c in inv["obs"]], f"{label} obs columns {list(a.obs.columns)}")
    check(list(a.var.columns) == [c["name"] for c in inv["var"]], f"{label} var columns {list(a.var.columns)}")
    obsm = {k: (v.shape[1] if v.ndim > 1 else 1) for k, v in a.obsm.items()}
    check(obsm == {o["name"]: o["n_components"] for o in inv["obsm"]}, f"{label} obsm {obsm}")
    check(sorted(a.obsp.keys()) == sorted(inv["obsp"]), f"{label} obsp {sorted(a.obsp.keys())}")
    check(sorted(a.layers.keys()) == sorted(inv["layers"]), f"{label} layers {sorted(a.layers.keys())}")
    missing_uns = set(inv["uns"]) - set(a.uns.keys())
    check(not missing_uns, f"{label} uns lacks {sorted(missing_uns)}")
    check((a.X is not None) == inv["has_x"], f"{label} X presence")
    if sample is None:
        return
    if sample["X"] is not None:
        r, c = sample["X"]["shape"]
        got = dense_block(a.X, r, c).ravel()
        for i, (e, g) in enumerate(zip(sample["X"]["values"], got)):
            check(same_scalar(e, g), f"{label} X[{i // c}, {i % c}] = {g}, Tessera read {e}")
    compare_frame(f"{label}.obs", a.obs, sample["obs"])
    compare_frame(f"{label}.var", a.var, sample["var"])
    for key, s in sample["obsm"].items():
        v = a.obsm[key]
        if isinstance(v, pd.DataFrame):
            compare_frame(f"{label}.obsm[{key!r}]", v, s)
            continue
        r, c = s["shape"]
        got = dense_block(v if v.ndim > 1 else v.reshape(-1, 1), r, c).ravel()
        for i, (e, g) in enumerate(zip(s["values"], got)):
            check(same_scalar(e, g), f"{label}.obsm[{key!r}][{i // c}, {i % c}] = {g}, Tessera read {e}")


def raster_levels(el) -> list:
    """The DataArray of every level, finest first (a DataArray is one level)."""
    if hasattr(el, "children") and len(el.children):
        names = sorted(el.children, key=lambda n: int(n.replace("scale", "")))
        return [next(iter(el[n].ds.data_vars.values())) for n in names]
    return [el]


def compare_raster(label: str, el, inv: dict, sample: dict) -> None:
    levels = raster_levels(el)
    got = [(int(l.sizes["x"]), int(l.sizes["y"])) for l in levels]
    want = [(l["width"], l["height"]) for l in inv["levels"]]
    check(got == want, f"{label} levels {got} != {want}")
    check(str(levels[0].dtype) == inv["dtype"], f"{label} dtype {levels[0].dtype} != {inv['dtype']}")
    if inv.get("channels"):
        chans = [str(c) for c in levels[0].coords["c"].values]
        check(chans == inv["channels"], f"{label} channels {chans} != {inv['channels']}")
    sel = tuple(slice(a, b) for a, b in sample["selection"])
    values = np.asarray(levels[0].data[sel]).ravel()
    for i, (e, g) in enumerate(zip(sample["values"], values)):
        check(same_scalar(e, g), f"{label} pixel {i} = {g}, Tessera read {e}")


def check_spatialdata(case: dict) -> str:
    s = sd.read_zarr(case["folder"])
    inv, samples = case["expected"]["inventory"], case["expected"]["samples"]
    for fam in ("images", "labels", "points", "shapes", "tables"):
        got = sorted(getattr(s, fam).keys())
        want = sorted(e["name"] for e in inv[fam])
        check(got == want, f"{fam} {got} != {want}")
    for e in inv["tables"]:
        compare_table(f"tables[{e['name']!r}]", s.tables[e["name"]], e, samples["tables"][e["name"]])
    for fam in ("images", "labels"):
        for e in inv[fam]:
            compare_raster(f"{fam}[{e['name']!r}]", getattr(s, fam)[e["name"]], e, samples[fam][e["name"]])
    for e in inv["points"]:
        df = s.points[e["name"]].compute()
        check(len(df) == e["n"], f"points[{e['name']!r}] has {len(df)} rows != {e['n']}")
        check(set(e["columns"]) <= set(df.columns), f"points[{e['name']!r}] columns {list(df.columns)}")
        compare_frame(f"points[{e['name']!r}]", df.reset_index(drop=True).rename(index=str), {**samples["points"][e["name"]], "index": []})
    for e in inv["shapes"]:
        gdf = s.shapes[e["name"]]
        check(len(gdf) == e["n"], f"shapes[{e['name']!r}] has {len(gdf)} rows != {e['n']}")
    for row in case.get("annotations") or []:
        # The shape annotations element: every style column, with the values Tessera stored.
        gdf = s.shapes["annotations"]
        got = gdf.loc[row["id"]]
        for k, want in row.items():
            if k == "id":
                continue
            check(k in gdf.columns, f"annotations has no column {k!r} ({list(gdf.columns)})")
            check(same_scalar(want, got[k]), f"annotations[{row['id']!r}].{k} = {got[k]!r}, Tessera stored {want!r}")
    cs = sorted(s.coordinate_systems)
    check(cs == sorted(inv["coordinate_systems"]), f"coordinate systems {cs} != {inv['coordinate_systems']}")
    fams = {f: len(inv[f]) for f in ("images", "labels", "points", "shapes", "tables") if inv[f]}
    return ", ".join(f"{n} {f}" for f, n in fams.items()) or "empty"


def check_table_folders(case: dict) -> str:
    """anndata.read_zarr on each table group of the unzipped checkpoint."""
    n = 0
    for e in case["expected"]["inventory"]["tables"]:
        a = ad.read_zarr(Path(case["folder"]) / "tables" / e["name"])
        compare_table(f"tables/{e['name']}", a, e, case["expected"]["samples"]["tables"][e["name"]])
        n += 1
    return f"{n} tables"


def check_zip_store(case: dict) -> str:
    """zarr-python's own ZipStore over the checkpoint file: the consolidated tree, and each table by read_elem."""
    store = zarr.storage.ZipStore(case["zip"], mode="r")
    try:
        root = zarr.open_group(store, mode="r")
        n = 0
        for e in case["expected"]["inventory"]["tables"]:
            a = ad.io.read_elem(root["tables"][e["name"]])
            compare_table(f"zip:tables/{e['name']}", a, e, None)
            n += 1
        members = sum(1 for _ in root.members(max_depth=None))
        return f"{members} nodes, {n} tables"
    finally:
        store.close()


def check_plain_anndata(case: dict) -> str:
    n = 0
    for name, folder in case["anndata"].items():
        e = next(t for t in case["expected"]["inventory"]["tables"] if t["name"] == name)
        compare_table(f"anndata[{name!r}]", ad.read_zarr(folder), e, case["expected"]["samples"]["tables"][name])
        n += 1
    return f"{n} tables"


def main() -> int:
    cases = json.loads(Path(sys.argv[1]).read_text())
    print(f"spatialdata {sd.__version__} | anndata {ad.__version__} | zarr {zarr.__version__}")
    passed = failed = 0
    checks = [
        ("spatialdata.read_zarr", check_spatialdata),
        ("anndata.read_zarr(tables/*)", check_table_folders),
        ("zarr ZipStore", check_zip_store),
        ("anndata.read_zarr(plain)", check_plain_anndata),
    ]
    for case in cases:
        for label, fn in checks:
            if label.endswith("(plain)") and not case["anndata"]:
                continue
            try:
                summary = fn(case)
                print(f"ok   {case['name']} · {label}: {summary}")
                passed += 1
            except Exception as err:  # noqa: BLE001 - every failure is reported, then counted
                failed += 1
                kind = "mismatch" if isinstance(err, Mismatch) else type(err).__name__
                print(f"FAIL {case['name']} · {label}: {kind}: {err}")
                if not isinstance(err, Mismatch):
                    print("     " + "     ".join(traceback.format_exception(err)[-3:]))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
