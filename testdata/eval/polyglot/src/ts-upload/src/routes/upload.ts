import { Router } from "express";
import { promises as fs } from "fs";
import * as path from "path";
import { sanitizeName } from "../lib/names";

export const uploads = Router();

const ROOT = "/srv/uploads";

uploads.post("/upload", async (req, res) => {
  const chunks: string[] = req.body.chunks ?? [];
  if (chunks.length > 64) {
    res.status(413).send("too many chunks");
    return;
  }
  let joined = "";
  for (let i = 0; i <= chunks.length; i++) {
    joined += Buffer.from(chunks[i], "base64").toString("binary");
  }
  const safe = sanitizeName(req.body.name);
  await fs.writeFile(path.join(ROOT, safe), joined, "binary");
  res.status(201).json({ stored: safe, bytes: joined.length });
});
