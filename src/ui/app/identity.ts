/**
 * The browser's identity (client.md 12.1): a client id (a uuid, the secret that owns edit locks,
 * 8–128 characters of [A-Za-z0-9_-]) and a two-word display name, kept in localStorage; the public id
 * others see is the first 16 hex digits of its SHA-256.
 */
const ID_KEY = "tessera-client-id";
const NAME_KEY = "tessera-client-name";
const ID_RE = /^[A-Za-z0-9_-]{8,128}$/;

const ADJECTIVES = [
  "gloomy",
  "curious",
  "patient",
  "bold",
  "quiet",
  "eager",
  "careful",
  "bright",
  "calm",
  "witty",
  "brave",
  "gentle",
];
const THINKERS = [
  "socrates",
  "hypatia",
  "darwin",
  "curie",
  "mendel",
  "franklin",
  "noether",
  "turing",
  "ramon",
  "mcclintock",
  "cajal",
  "lovelace",
];

function storage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

function uuid(): string {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** A fresh two-word name ("gloomy socrates"). */
export function twoWordName(): string {
  const r = new Uint32Array(2);
  globalThis.crypto.getRandomValues(r);
  return `${ADJECTIVES[r[0]! % ADJECTIVES.length]} ${THINKERS[r[1]! % THINKERS.length]}`;
}

/** This browser's client id (minted and stored on first use). */
export function clientId(): string {
  const s = storage();
  let id = s?.getItem(ID_KEY) ?? "";
  if (!ID_RE.test(id)) {
    id = uuid();
    s?.setItem(ID_KEY, id);
  }
  return id;
}

/** This browser's display name. */
export function clientName(): string {
  const s = storage();
  let n = s?.getItem(NAME_KEY) ?? "";
  if (!n.trim()) {
    n = twoWordName();
    s?.setItem(NAME_KEY, n);
  }
  return n;
}

/** Rename this browser (at most 64 characters). */
export function setClientName(name: string): string {
  const n = name.trim().slice(0, 64);
  if (n) storage()?.setItem(NAME_KEY, n);
  return clientName();
}

/** The public id of a client id: the first 16 hex digits of its SHA-256. */
export async function publicId(id: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(id));
  return Array.from(new Uint8Array(d).slice(0, 8), (x) => x.toString(16).padStart(2, "0")).join("");
}
