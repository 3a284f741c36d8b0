/** Resources: memory and CPU sampling, admission against the memory limit. */
export { CpuMeter, folderMb, rssMb } from "./measure.js";
export { type MonitorConfig, type MonitorOptions, ResourceMonitor, type ResourceSample } from "./monitor.js";
