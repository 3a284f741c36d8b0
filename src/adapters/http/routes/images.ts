/**
 * Routes: images and rasters. Image info, composited WebP thumbnails and tiles, and the raw served
 * raster store (`GET, HEAD /raster/{element}/{key}`, with Range) that the browser's image layers
 * read chunk by chunk. All behaviour is the SDK's (`Session.imageInfo`, `renderTile`, `thumbnail`,
 * `rasterKey`); see docs/api/images.md.
 */
import type { FastifyReply } from "fastify";
import { BadRequestError, NotFoundError } from "../../../sdk/errors.js";
import type { RenderedImage } from "../../../sdk/raster/hub.js";
import type { RouteModule } from "../deps.js";
import { sendRange } from "../range.js";

interface RenderQuery {
  channels?: string;
  display?: string;
  lossless?: string;
  max_px?: string;
}

/** A non-negative integer path or query value (400 otherwise). */
function intParam(name: string, text: string | undefined): number {
  const t = String(text ?? "");
  if (!/^\d{1,9}$/.test(t))
    throw new BadRequestError(`${name} must be a non-negative integer (got "${t.slice(0, 40)}")`);
  return Number(t);
}

function renderOptions(q: RenderQuery) {
  const lossless = q.lossless === undefined ? false : /^(1|true)$/i.test(String(q.lossless));
  return {
    ...(q.channels !== undefined ? { channels: String(q.channels) } : {}),
    ...(q.display !== undefined ? { display: String(q.display) } : {}),
    lossless,
  };
}

function sendWebp(reply: FastifyReply, img: RenderedImage): FastifyReply {
  return reply
    .type("image/webp")
    .header("cache-control", "no-cache")
    .header("x-image-width", String(img.width))
    .header("x-image-height", String(img.height))
    .send(Buffer.from(img.webp.buffer, img.webp.byteOffset, img.webp.byteLength));
}

/** Registers the image routes. */
export const imagesRoutes: RouteModule = (app, { service }) => {
  app.get<{ Params: { id: string; element: string } }>("/api/sessions/:id/image/:element/info", async (req) =>
    service.readySession(req.params.id, "its images").imageInfo(req.params.element),
  );

  app.route<{ Params: { id: string; element: string }; Querystring: RenderQuery }>({
    method: "GET",
    url: "/api/sessions/:id/image/:element/thumbnail",
    compress: false,
    handler: async (req, reply) => {
      const s = service.readySession(req.params.id, "its images");
      service.resources.admit("rendering an image");
      const maxPx = req.query.max_px === undefined ? undefined : intParam("max_px", req.query.max_px);
      return sendWebp(reply, await s.thumbnail(req.params.element, maxPx, renderOptions(req.query)));
    },
  });

  app.route<{
    Params: { id: string; element: string; level: string; col: string; row: string };
    Querystring: RenderQuery;
  }>({
    method: "GET",
    url: "/api/sessions/:id/image/:element/tile/:level/:col/:row",
    compress: false,
    handler: async (req, reply) => {
      const { id, element, level, col, row } = req.params;
      const s = service.readySession(id, "its images");
      service.resources.admit("rendering an image tile");
      const img = await s.renderTile(
        element,
        intParam("level", level),
        intParam("col", col),
        intParam("row", row),
        renderOptions(req.query),
      );
      return sendWebp(reply, img);
    },
  });

  app.route<{ Params: { id: string; element: string; "*": string } }>({
    method: ["GET", "HEAD"],
    url: "/api/sessions/:id/raster/:element/*",
    compress: false,
    handler: async (req, reply) => {
      const { id, element } = req.params;
      const key = req.params["*"];
      const got = await service.readySession(id, "its images").rasterKey(element, key);
      if (!got) throw new NotFoundError(`the raster store of "${element}" has no key "${key.slice(0, 200)}"`);
      const bytes = got.bytes;
      return sendRange(req, reply, {
        size: bytes.byteLength,
        contentType: got.contentType,
        body: ({ start, end }) => bytes.subarray(start, end + 1),
      });
    },
  });
};
