/**
 * Routes: jobs, pending steps, history and plots (spec "Jobs, pending steps, history, plots").
 * Every mutating route goes through the edit-lock gate (`mutableSession`); the job and log reads
 * and figure downloads are never gated.
 */
import type { FastifyRequest } from "fastify";
import { NotFoundError, StateError } from "../../../sdk/errors.js";
import type { RouteModule } from "../deps.js";
import { mutableSession, readSession } from "../request.js";

/** A Descriptor body: exactly namespace, function and (optional, default `{}`) params. */
const DESCRIPTOR_BODY = {
  type: "object",
  required: ["namespace", "function"],
  additionalProperties: false,
  properties: {
    namespace: { type: "string", minLength: 1 },
    function: { type: "string", minLength: 1 },
    params: { type: "object" },
  },
} as const;

interface Descriptor {
  namespace: string;
  function: string;
  params?: Record<string, unknown>;
}

/** The body as the SDK's descriptor (params default `{}`); the session refuses an unknown function (400). */
function descriptorOf(req: FastifyRequest): Required<Descriptor> {
  const d = req.body as Descriptor;
  return { namespace: d.namespace, function: d.function, params: d.params ?? {} };
}

const FIGURE_TYPES = { svg: "image/svg+xml", pdf: "application/pdf", png: "image/png" } as const;

type P = { id: string; jobId: string; stepId: string; entryId: string; plotId: string };

/** Registers the jobs routes. */
export const jobsRoutes: RouteModule = (app, { service }) => {
  const base = "/api/sessions/:id";

  // A queued job answers {job_id, status}; an extract runs at once and answers with its value too.
  app.post(`${base}/jobs`, { schema: { body: DESCRIPTOR_BODY } }, async (req) =>
    mutableSession(service, req, (req.params as P).id).dispatch(descriptorOf(req)),
  );

  app.post(`${base}/jobs/stage`, { schema: { body: DESCRIPTOR_BODY } }, async (req) => {
    const session = mutableSession(service, req, (req.params as P).id);
    return { step_id: await session.stage(descriptorOf(req)), status: "pending" };
  });

  app.get(`${base}/jobs/:jobId`, async (req) => {
    const { id, jobId } = req.params as P;
    const j = service.job(id, jobId);
    return { job_id: j.job_id, status: j.status, kind: j.kind, error: j.error, result: j.result };
  });

  app.get(`${base}/jobs/:jobId/log`, async (req) => {
    const { id, jobId } = req.params as P;
    const j = service.job(id, jobId);
    return { log: j.log, status: j.status };
  });

  app.delete(`${base}/jobs/:jobId`, async (req) => {
    const { id, jobId } = req.params as P;
    const session = mutableSession(service, req, id);
    if (!session.cancel(jobId)) {
      // "queued" here means the worker has just taken it (it is marked running a moment later).
      const status = session.job(jobId).status;
      throw new StateError(
        `job "${jobId}" is ${status === "queued" ? "starting" : status}; only queued jobs can be cancelled`,
      );
    }
    return { ok: true };
  });

  app.post(`${base}/pending/run-all`, async (req) => {
    const session = mutableSession(service, req, (req.params as P).id);
    return { queued: (await session.runAllPending()).length };
  });

  app.post(`${base}/pending/:stepId/run`, async (req) => {
    const { id, stepId } = req.params as P;
    const ticket = await mutableSession(service, req, id).runPending(stepId);
    return { ok: true, job_id: ticket.job_id };
  });

  app.put(
    `${base}/pending/:stepId`,
    {
      schema: {
        body: {
          type: "object",
          required: ["params"],
          additionalProperties: false,
          properties: { params: { type: "object" } },
        },
      },
    },
    async (req) => {
      const { id, stepId } = req.params as P;
      const { params } = req.body as { params: Record<string, unknown> };
      await mutableSession(service, req, id).updatePending(stepId, params);
      return { ok: true };
    },
  );

  app.delete(`${base}/history/:entryId`, async (req) => {
    const { id, entryId } = req.params as P;
    mutableSession(service, req, id).deleteEntry(entryId);
    return { ok: true };
  });

  app.post(`${base}/plots/:plotId/redraw`, async (req) => {
    const { id, plotId } = req.params as P;
    const ticket = await mutableSession(service, req, id).redraw(plotId);
    return { ok: true, job_id: ticket.job_id };
  });

  app.get(
    `${base}/plots/:plotId/figure`,
    {
      schema: {
        querystring: {
          // Other query params (cache busters) are ignored.
          type: "object",
          properties: { fmt: { type: "string", enum: ["svg", "pdf", "png"], default: "svg" } },
        },
      },
    },
    async (req, reply) => {
      const { id, plotId } = req.params as P;
      const fmt = (req.query as { fmt: keyof typeof FIGURE_TYPES }).fmt;
      const bytes = await readSession(service, id).figure(plotId, fmt);
      if (!bytes)
        throw new NotFoundError(`plot "${plotId}" has no ${fmt} figure (not drawn, or not drawn as ${fmt})`);
      return reply
        .type(FIGURE_TYPES[fmt])
        .header("cache-control", "no-cache")
        .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    },
  );
};
