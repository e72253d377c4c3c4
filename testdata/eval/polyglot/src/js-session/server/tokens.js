const crypto = require("crypto");

const SECRET_ENV = "ADMIN_TOKEN_KEY";

function verifyToken(token) {
  const key = process.env[SECRET_ENV] || "";
  const [body, mac] = String(token).split(".");
  const want = crypto.createHmac("sha256", key).update(body || "").digest("hex");
  return mac === want;
}

module.exports = { verifyToken };
