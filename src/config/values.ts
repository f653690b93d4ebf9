// Value types the configuration's sections share (the config file, the agents, a webhook's
// answer): each says in its error what it expects, so a bad value is named and explained.
import { z } from "zod";

export const port = z.coerce
  .number({ error: "expected a port number 0-65535" })
  .int({ error: "expected a whole port number 0-65535" })
  .min(0, { error: "expected a port number 0-65535" })
  .max(65535, { error: "expected a port number 0-65535" });
export const url = z.url({ error: "expected an absolute URL such as https://host/path" });
/** A server the service calls over HTTP (a bare `host:port` would parse as a URL of scheme `host`). */
export const httpUrl = z.url({
  protocol: /^https?$/,
  error: "expected an http(s) URL such as http://127.0.0.1:8000",
});

/** A yes/no value; from a config file a boolean, from the environment or a flag also true/false, yes/no, on/off, 1/0. */
export const flag = z.preprocess(
  (v) => {
    if (typeof v !== "string") return v;
    if (/^(true|yes|on|1)$/i.test(v)) return true;
    if (/^(false|no|off|0)$/i.test(v)) return false;
    return v;
  },
  z.boolean({ error: "expected true or false" }),
);

/** A list given as an array or as one comma-separated string (the environment's way). */
export const wordList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean));
