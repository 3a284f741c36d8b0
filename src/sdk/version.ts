/** Tessera's version, written into files it saves (`spatialdata_software_version`, the sidecar's writer). */
export const TESSERA_VERSION = "0.1.0";
