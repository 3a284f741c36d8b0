/**
 * Smooth random scalar fields: a sum of plane waves with random directions, wavelengths and phases.
 * They drive everything in the demo that should vary smoothly across the tissue (warped domain
 * boundaries, fibre orientation, the hypoxia gradient), at the cost of a few cosines per evaluation.
 */
import type { Rng } from "../math/rng.js";

/** A smooth field with zero mean and unit variance over the plane. */
export type SmoothField = (x: number, y: number) => number;

/** A field of `waves` plane waves with wavelengths between `minWavelength` and `maxWavelength`. */
export function smoothField(rng: Rng, minWavelength: number, maxWavelength: number, waves = 8): SmoothField {
  const kx = new Float64Array(waves);
  const ky = new Float64Array(waves);
  const phase = new Float64Array(waves);
  const amp = new Float64Array(waves);
  let power = 0;
  for (let i = 0; i < waves; i++) {
    const angle = rng.next() * Math.PI;
    const wavelength = minWavelength * (maxWavelength / minWavelength) ** rng.next();
    const k = (2 * Math.PI) / wavelength;
    kx[i] = k * Math.cos(angle);
    ky[i] = k * Math.sin(angle);
    phase[i] = rng.next() * 2 * Math.PI;
    amp[i] = 0.5 + rng.next();
    power += (amp[i]! * amp[i]!) / 2;
  }
  const norm = 1 / Math.sqrt(power);
  return (x: number, y: number) => {
    let v = 0;
    for (let i = 0; i < waves; i++) v += amp[i]! * Math.cos(kx[i]! * x + ky[i]! * y + phase[i]!);
    return v * norm;
  };
}
