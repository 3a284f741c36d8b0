/**
 * The demo's biology: eight cell types with their marker genes and looks, and a panel of real gene
 * symbols (markers, housekeeping, mitochondrial, hypoxia-responsive, and a broad set of the genes that
 * commercial spatial panels carry), so the demo reads like a real experiment.
 */

/** How one cell type looks and what it expresses. */
export interface CellTypeSpec {
  readonly name: string;
  /** Display colour (hex), stored as `uns/cell_type_colors` the way scanpy keeps palettes. */
  readonly color: string;
  /** Genes strongly and specifically expressed by this type. */
  readonly markers: readonly string[];
  /** Genes this type expresses moderately although they mark another type or a lineage. */
  readonly shared: readonly string[];
  /** Cell size relative to the average spacing of cells. */
  readonly size: number;
  /** Axis ratio of the cell body (1 = round; fibroblasts and smooth muscle are spindle-shaped). */
  readonly elongation: number;
  /** PanCK stain level (0–1) of the cytoplasm in the morphology image. */
  readonly panck: number;
  /** CD45 stain level (0–1) in the morphology image. */
  readonly cd45: number;
}

/** The eight demo cell types, in category order. */
export const CELL_TYPES: readonly CellTypeSpec[] = [
  {
    name: "Epithelial",
    color: "#1f77b4",
    markers: ["EPCAM", "KRT8", "KRT18", "KRT19", "CDH1", "CLDN4"],
    shared: ["ELF3", "KRT7", "TACSTD2", "S100A14"],
    size: 1.0,
    elongation: 1.15,
    panck: 0.8,
    cd45: 0.02,
  },
  {
    name: "Tumor",
    color: "#d62728",
    markers: ["MKI67", "TOP2A", "ERBB2", "CEACAM6", "CCND1", "FOXA1"],
    shared: ["KRT8", "KRT18", "EPCAM", "CDH1", "FASN", "SCD", "CENPF", "PCLAF"],
    size: 1.1,
    elongation: 1.1,
    panck: 1.0,
    cd45: 0.02,
  },
  {
    name: "Fibroblast",
    color: "#ff7f0e",
    markers: ["COL1A1", "COL1A2", "COL3A1", "DCN", "LUM", "PDGFRA"],
    shared: ["PDGFRB", "POSTN", "SFRP4", "FBLN1", "MMP2", "PCOLCE"],
    size: 0.95,
    elongation: 2.0,
    panck: 0.03,
    cd45: 0.02,
  },
  {
    name: "Endothelial",
    color: "#9467bd",
    markers: ["PECAM1", "VWF", "CDH5", "KDR", "CLDN5", "EMCN"],
    shared: ["RAMP2", "EGFL7", "AQP1", "CD93", "CLEC14A"],
    size: 0.85,
    elongation: 1.6,
    panck: 0.02,
    cd45: 0.03,
  },
  {
    name: "T cell",
    color: "#2ca02c",
    markers: ["CD3E", "CD3D", "CD2", "CD8A", "IL7R", "TRAC"],
    shared: ["PTPRC", "CCL5", "GZMK", "CD247", "LTB"],
    size: 0.75,
    elongation: 1.05,
    panck: 0.02,
    cd45: 0.9,
  },
  {
    name: "B cell",
    color: "#17becf",
    markers: ["MS4A1", "CD79A", "CD19", "CD79B", "BANK1", "PAX5"],
    shared: ["PTPRC", "CD74", "LTB", "CXCR4"],
    size: 0.75,
    elongation: 1.05,
    panck: 0.02,
    cd45: 0.85,
  },
  {
    name: "Macrophage",
    color: "#8c564b",
    markers: ["CD68", "CD163", "LYZ", "C1QA", "C1QB", "CD14"],
    shared: ["PTPRC", "AIF1", "TYROBP", "FCER1G", "APOC1", "CD74"],
    size: 0.95,
    elongation: 1.25,
    panck: 0.04,
    cd45: 0.7,
  },
  {
    name: "Smooth muscle",
    color: "#e377c2",
    markers: ["ACTA2", "MYH11", "DES", "TAGLN", "CNN1", "MYLK"],
    shared: ["PDGFRB", "ACTG2", "CAV1"],
    size: 0.9,
    elongation: 2.2,
    panck: 0.02,
    cd45: 0.02,
  },
];

/** Mitochondrial genes (the `MT-` prefix is how QC finds them). */
export const MT_GENES: readonly string[] = [
  "MT-CO1",
  "MT-ND1",
  "MT-CYB",
  "MT-ATP6",
  "MT-CO2",
  "MT-ND4",
  "MT-CO3",
  "MT-ND2",
];

/** Genes every cell expresses at a steady level. */
export const HOUSEKEEPING_GENES: readonly string[] = [
  "ACTB",
  "GAPDH",
  "B2M",
  "MALAT1",
  "EEF1A1",
  "RPLP0",
  "TPT1",
  "FTL",
  "FTH1",
  "TMSB4X",
  "RPS27A",
  "UBC",
  "HSP90AB1",
  "PPIA",
  "TBP",
  "HPRT1",
  "PGK1",
  "YWHAZ",
];

/** Hypoxia-responsive genes: the demo makes them follow a smooth spatial gradient (spatially variable genes). */
export const HYPOXIA_GENES: readonly string[] = [
  "VEGFA",
  "HIF1A",
  "SLC2A1",
  "CA9",
  "LDHA",
  "ENO1",
  "BNIP3",
  "NDRG1",
];

/** More real symbols, as found on commercial spatial panels, to fill out the gene list. */
const PANEL_GENES =
  `ABCC11 ACTG2 ADAM9 ADGRE5 ADH1B ADIPOQ AGR3 AHSP AIF1 AKR1C1 AKR1C3 ALDH1A3 ANGPT2 ANKRD28
ANKRD29 ANKRD30A APOBEC3A APOBEC3B APOC1 AQP1 AQP3 AR AVPR1A BACE2 BASP1 BMP4 BTNL9 C15orf48 C5orf46 C6orf132
CAV1 CAVIN2 CCDC6 CCDC80 CCL20 CCL5 CCL8 CCPG1 CCR7 CD1C CD247 CD274 CD4 CD74 CD80 CD83 CD86 CD93 CDC42EP1 CDH3
CEACAM8 CENPF CLCA2 CLEC14A CLEC9A CLECL1 CLIC6 CPA3 CRHBP CRISPLD2 CSF3 CTH CTLA4 CTSG CX3CR1 CXCL12 CXCL16
CXCL5 CXCR4 CYP1A1 CYTIP DAPK3 DMKN DNAAF1 DNTTIP1 DPT DSC2 DSP DST DUSP2 DUSP5 EDN1 EDNRB EGFL7 EGFR EIF4EBP1
ELF3 ELF5 ENAH ERN1 ESM1 ESR1 FAM107B FASN FBLIM1 FBLN1 FCER1A FCER1G FCGR3A FGL2 FLNB FOXC2 FOXP3 FSTL3 GATA3
GJB2 GLIPR1 GNLY GPR183 GZMA GZMB GZMK HAVCR2 HDC HMGA1 HOOK2 HOXD8 HOXD9 IGF1 IL2RA IL2RG IL3RA ITGAM ITGAX
ITM2C JUP KIT KLF5 KLRB1 KLRC1 KLRD1 KLRF1 KRT14 KRT15 KRT16 KRT23 KRT5 KRT6B KRT7 LAG3 LARS1 LDHB LEP LGALSL
LIF LILRA4 LPL LPXN LRRC15 LTB LY86 LYPD3 MAP3K8 MDM2 MEDAG MLPH MMP1 MMP12 MMP2 MNDA MPO MRC1 MUC6 MYBPC1 MYO5B
MZB1 NARS1 NCAM1 NDUFA4L2 NKG7 NOSTRIN NPM3 OCIAD2 OPRPN OXTR PCLAF PCOLCE PDCD1 PDCD1LG2 PDE4A PDGFRB PDK4
PELI1 PGR PIGR PIM1 PLD4 POSTN PPARG PRDM1 PRF1 PTGDS PTN PTPRC QARS1 RAB30 RAMP2 RAPGEF3 RHOH RORC RTKN2
RUNX1 S100A14 S100A4 S100A8 SCD SCGB2A1 SDC4 SEC11C SEC24A SELL SERHL2 SERPINA3 SERPINB9 SFRP1 SFRP4 SH3YL1
SLAMF1 SLAMF7 SLC25A37 SLC4A1 SLC5A6 SMAP2 SMS SNAI1 SOX17 SOX18 SPDEF SQLE SRPK1 SSTR2 STC1 SVIL TACSTD2
TCEAL7 TCF15 TCF4 TCF7 TCIM TENT5C TFAP2A THAP2 TIFA TIGIT TIMP4 TMEM147 TNFRSF17 TOMM7 TPD52 TPSAB1 TRAF4
TRAPPC3 TRIB1 TUBA4A TUBB2B TYROBP UCP1 USP53 VOPP1 WARS1 ZEB1 ZEB2 ZNF562`
    .split(/\s+/)
    .filter(Boolean);

/** Smallest panel the demo accepts: the first three markers of every type plus five MT genes. */
export const MIN_GENES = CELL_TYPES.length * 3 + 5;

/**
 * The first `n` genes of the demo's priority order (core markers, MT genes, the other markers, shared
 * genes, housekeeping, hypoxia, panel genes), then `LOC…` placeholders when more are asked for than
 * there are curated symbols. Returned in alphabetical order, as panels list them.
 */
export function panelGenes(n: number): string[] {
  if (!Number.isInteger(n) || n < MIN_GENES)
    throw new Error(`demo: nGenes must be an integer ≥ ${MIN_GENES}, got ${n}`);
  const order: string[] = [];
  const seen = new Set<string>();
  const add = (g: string) => {
    if (!seen.has(g)) {
      seen.add(g);
      order.push(g);
    }
  };
  for (let k = 0; k < 3; k++) for (const t of CELL_TYPES) add(t.markers[k]!);
  for (const g of MT_GENES.slice(0, 5)) add(g);
  for (const t of CELL_TYPES) for (const g of t.markers) add(g);
  for (const g of HOUSEKEEPING_GENES.slice(0, 6)) add(g);
  for (const g of HYPOXIA_GENES.slice(0, 4)) add(g);
  for (const t of CELL_TYPES) for (const g of t.shared) add(g);
  for (const g of MT_GENES) add(g);
  for (const g of HOUSEKEEPING_GENES) add(g);
  for (const g of HYPOXIA_GENES) add(g);
  for (const g of PANEL_GENES) add(g);
  for (let i = 0; order.length < n; i++) add(`LOC${101927000 + i * 7}`);
  return order.slice(0, n).sort();
}

/** Ensembl-style ids (`ENSG…`, synthetic but stable per symbol and unique within the list). */
export function geneIds(symbols: readonly string[]): string[] {
  const used = new Set<number>();
  return symbols.map((s) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    let n = (h >>> 0) % 900000;
    while (used.has(n)) n = (n + 1) % 900000;
    used.add(n);
    return `ENSG00000${String(100000 + n).padStart(6, "0")}`;
  });
}
