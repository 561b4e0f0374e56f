/**
 * Response renderers: JSON (BSON-aware), XML (Eve layout), JSONP and negotiation.
 */
export { type DateFormatter, toPlain } from "./convert.ts";
export { isValidJsonpCallback, renderJson, type RenderOptions, wrapJsonp } from "./json.ts";
export { negotiate, type RendererName } from "./negotiate.ts";
export { renderXml } from "./xml.ts";
