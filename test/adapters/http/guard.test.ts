/**
 * The guard's decisions as pure functions: which Host names the server, which Origin may call it,
 * which requests may mutate, how a token is presented, and what a bind address implies.
 */
import { describe, expect, it } from "vitest";
import {
  bindHosts,
  classifyOrigin,
  compilePolicy,
  cookieValue,
  hostAllowed,
  isLoopbackBind,
  isLoopbackHostname,
  mintToken,
  mutationProblem,
  parseHost,
  presentedToken,
  tokenCookieName,
  tokenMatches,
} from "../../../src/adapters/http/guard.js";
import { guardFor } from "../../../src/adapters/http/server.js";
import { readConfig } from "../../../src/sdk/session/config.js";

const none = compilePolicy({ token: null, allowedHosts: [], allowedOrigins: [] });

describe("hostAllowed", () => {
  it("accepts loopback names and addresses, with or without a port", () => {
    for (const host of [
      "127.0.0.1",
      "127.0.0.1:8000",
      "127.1.2.3:1",
      "127.255.255.255",
      "localhost",
      "localhost:8000",
      "LocalHost:8000",
      "[::1]",
      "[::1]:8000",
      "[0:0:0:0:0:0:0:1]:8000",
      "[::ffff:127.0.0.1]:8000",
      "0x7f.1:8000", // the URL parser's IPv4 forms (a browser normalizes them the same way)
    ])
      expect(hostAllowed(host, none), host).toBe(true);
  });

  it("refuses every other name: rebinding names, look-alikes, other addresses, malformed values", () => {
    for (const host of [
      undefined,
      "",
      "evil.example",
      "evil.example:8000",
      "attacker.rebind.example",
      "127.0.0.1.evil.example",
      "127.0.0.1.nip.io:8000",
      "localhost.evil.example",
      "evil.localhost",
      "localhost.",
      "128.0.0.1",
      "10.0.0.1:8000",
      "0.0.0.0:8000",
      "[::2]",
      "[::]:8000",
      "127.0.0.1:8000@evil.example",
      "evil.example/127.0.0.1",
      "127.0.0.1 evil.example",
      "127.0.0.1:99999",
      "evil.127.0.0.1",
    ])
      expect(hostAllowed(host, none), String(host)).toBe(false);
  });

  it("accepts the configured names (any port), and anything with `*`", () => {
    const p = compilePolicy({
      token: null,
      allowedHosts: ["Tessera.Lab.Example", "10.1.2.3:9000", "::5"],
      allowedOrigins: [],
    });
    expect(hostAllowed("tessera.lab.example:8000", p)).toBe(true);
    expect(hostAllowed("TESSERA.lab.example", p)).toBe(true);
    expect(hostAllowed("10.1.2.3:8000", p)).toBe(true);
    expect(hostAllowed("[::5]:8000", p)).toBe(true);
    expect(hostAllowed("lab.example", p)).toBe(false);
    expect(hostAllowed("x.tessera.lab.example", p)).toBe(false);
    const any = compilePolicy({ token: "t0ken-value", allowedHosts: ["*"], allowedOrigins: [] });
    expect(hostAllowed("whatever.example", any)).toBe(true);
    expect(hostAllowed("bad host", any)).toBe(false);
  });

  it("parseHost normalizes as a browser does", () => {
    expect(parseHost("LOCALHOST:80")).toEqual({ hostname: "localhost", port: "" });
    expect(parseHost("[0::1]:8000")).toEqual({ hostname: "[::1]", port: "8000" });
    expect(parseHost("a b")).toBeNull();
    expect(isLoopbackHostname("127.0.0.1")).toBe(true);
    expect(isLoopbackHostname("127.0.0.1.evil.example")).toBe(false);
  });
});

describe("classifyOrigin", () => {
  const p = compilePolicy({
    token: null,
    allowedHosts: [],
    allowedOrigins: ["https://portal.example", "http://localhost:3000/"],
  });
  it("own origin: same scheme, host and port as the Host the request was sent to", () => {
    expect(classifyOrigin("http://127.0.0.1:8000", "127.0.0.1:8000", p)).toBe("own");
    expect(classifyOrigin("http://LOCALHOST:8000", "localhost:8000", p)).toBe("own");
    expect(classifyOrigin("http://[::1]:8000", "[::1]:8000", p)).toBe("own");
    expect(classifyOrigin("http://127.0.0.1", "127.0.0.1:80", p)).toBe("own");
  });
  it("listed origins are allowed; everything else is foreign", () => {
    expect(classifyOrigin("https://portal.example", "127.0.0.1:8000", p)).toBe("listed");
    expect(classifyOrigin("http://localhost:3000", "127.0.0.1:8000", p)).toBe("listed");
    for (const o of [
      "https://evil.example",
      "http://localhost:8000", // another origin than the Host the page used
      "https://127.0.0.1:8000", // another scheme
      "http://127.0.0.1:8001", // another port
      "http://portal.example", // listed only as https
      "https://portal.example.evil.example",
      "null",
      "file://",
      "",
      "chrome-extension://abcdef",
    ])
      expect(classifyOrigin(o, "127.0.0.1:8000", p), o).toBe("foreign");
  });
});

describe("mutationProblem", () => {
  it("lets reads through", () => {
    for (const m of ["GET", "HEAD", "OPTIONS"])
      expect(mutationProblem(m, { "content-type": "text/plain", "content-length": "5" })).toBeNull();
  });
  it("mutations need a JSON body or, body-less, a header no simple cross-site request can send", () => {
    for (const m of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(mutationProblem(m, { "content-type": "application/json", "content-length": "2" })).toBeNull();
      expect(mutationProblem(m, { "content-type": "Application/JSON; charset=utf-8" })).toBeNull();
      expect(mutationProblem(m, { "x-tessera-client": "1" })).toBeNull();
      expect(mutationProblem(m, { "x-tessera-client-id": "abcdefgh" })).toBeNull();
      expect(mutationProblem(m, { authorization: "Bearer x" })).toBeNull();
      expect(mutationProblem(m, { "mcp-session-id": "s" })).toBeNull();
      for (const type of [
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/json-seq",
        "application/jsonx",
      ]) {
        const r = mutationProblem(m, { "content-type": type, "x-tessera-client": "1" });
        expect(r?.status, `${m} ${type}`).toBe(415);
        expect(r?.detail).toMatch(/application\/json/);
      }
      expect(mutationProblem(m, { "content-length": "3" })?.status).toBe(415);
      expect(mutationProblem(m, { "transfer-encoding": "chunked" })?.status).toBe(415);
      const bare = mutationProblem(m, {});
      expect(bare?.status).toBe(403);
      expect(bare?.detail).toMatch(/X-Tessera-Client/);
      expect(mutationProblem(m, { "content-length": "0", "x-tessera-client": " " })?.status).toBe(403);
    }
  });
});

describe("tokens", () => {
  it("presented as a Bearer header, a ?token= query or the per-port cookie", () => {
    expect(presentedToken({ authorization: "Bearer abc" }, "")).toEqual({ token: "abc", via: "header" });
    expect(presentedToken({ authorization: "bearer  abc " }, "")).toEqual({ token: "abc", via: "header" });
    expect(presentedToken({}, "x=1&token=q%2Bv")).toEqual({ token: "q+v", via: "query" });
    const cookie = `other=1; ${tokenCookieName("127.0.0.1:8123")}=c%2Bv; x=y`;
    expect(presentedToken({ host: "127.0.0.1:8123", cookie }, "")).toEqual({ token: "c+v", via: "cookie" });
    expect(presentedToken({ host: "127.0.0.1:8124", cookie }, "")).toBeNull();
    expect(
      presentedToken({ host: "127.0.0.1:8123", cookie: `${tokenCookieName("127.0.0.1:8123")}=%E0%A4%A` }, ""),
    ).toEqual({ token: "%E0%A4%A", via: "cookie" });
    expect(presentedToken({ authorization: "Basic abc" }, "")).toBeNull();
    expect(cookieValue("a=1; b = 2", "b")).toBe("2");
    expect(tokenCookieName("localhost")).toBe("tessera-token-80");
  });
  it("compared in constant time; minted at random", () => {
    expect(tokenMatches("abc", "abc")).toBe(true);
    expect(tokenMatches("abc", "abd")).toBe(false);
    expect(tokenMatches("", "abc")).toBe(false);
    const t = mintToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(mintToken()).not.toBe(t);
  });
});

describe("what the bind address implies (guardFor)", () => {
  const config = readConfig({});
  it("loopback binds need no token unless one is set", () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "127.0.0.2"]) {
      expect(isLoopbackBind(host), host).toBe(true);
      expect(guardFor(host, config).token, host).toBeNull();
    }
    expect(guardFor("127.0.0.1", readConfig({ TESSERA_TOKEN: "set-by-user" })).token).toBe("set-by-user");
  });
  it("any other bind gets a token: the configured one, else a fresh random one", () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.5", "tessera.lab.example"]) {
      expect(isLoopbackBind(host), host).toBe(false);
      expect(guardFor(host, config).token, host).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    expect(guardFor("0.0.0.0", config).token).not.toBe(guardFor("0.0.0.0", config).token);
    expect(guardFor("0.0.0.0", readConfig({ TESSERA_TOKEN: "set-by-user" })).token).toBe("set-by-user");
  });
  it("the addresses listened on are accepted Hosts, with the configured names and origins", () => {
    const ifaces = {
      lo: [{ address: "127.0.0.1", family: "IPv4" }],
      eth0: [
        { address: "192.168.1.5", family: "IPv4" },
        { address: "fe80::1", family: "IPv6" },
      ],
    } as unknown as Parameters<typeof bindHosts>[1];
    expect(bindHosts("0.0.0.0", ifaces)).toEqual(["127.0.0.1", "192.168.1.5", "[fe80::1]"]);
    expect(bindHosts("192.168.1.5", ifaces)).toEqual(["192.168.1.5"]);
    const env = {
      TESSERA_ALLOWED_HOSTS: "lab.example, , x.example",
      TESSERA_ALLOWED_ORIGINS: "https://a.example",
    };
    const g = guardFor("192.168.1.5", readConfig(env));
    expect(g.allowedHosts).toEqual(["lab.example", "x.example", "192.168.1.5"]);
    expect(g.allowedOrigins).toEqual(["https://a.example"]);
    const p = compilePolicy(g);
    expect(hostAllowed("192.168.1.5:8000", p)).toBe(true);
    expect(hostAllowed("192.168.1.6:8000", p)).toBe(false);
  });
  it("malformed settings are refused at start, naming the setting", () => {
    expect(() => compilePolicy({ token: null, allowedHosts: ["a b"], allowedOrigins: [] })).toThrow(
      /TESSERA_ALLOWED_HOSTS/,
    );
    expect(() =>
      compilePolicy({ token: null, allowedHosts: [], allowedOrigins: ["portal.example"] }),
    ).toThrow(/TESSERA_ALLOWED_ORIGINS/);
    expect(() => compilePolicy({ token: "short", allowedHosts: [], allowedOrigins: [] })).toThrow(
      /TESSERA_TOKEN/,
    );
  });
});
