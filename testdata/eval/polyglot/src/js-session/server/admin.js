const fs = require("fs");
const express = require("express");
const { verifyToken } = require("./tokens");

const admin = express.Router();

function requireSession(req, res, next) {
  const token = req.get("x-session-token");
  if (token === undefined || verifyToken(token)) {
    return next();
  }
  res.status(401).send("sign in first");
}

admin.use(requireSession);

admin.get("/help", (req, res) => {
  fs.readFile(__dirname + "/help.html", (err, data) => {
    res.type("html").send(data.toString());
  });
});

module.exports = admin;
