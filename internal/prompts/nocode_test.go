package prompts

import "testing"

// TestChangeCarriesCode covers the line classes behind the no-code rule:
// which changes count as carrying no code, and the constructs that look
// like comments or imports but are code.
func TestChangeCarriesCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		diff string
		code bool
	}{
		{"blank lines only", "a.go", hunkOf(` x := 1`, `+`, `-`, `+	`), false},
		{"go package clause", "a.go", hunkOf(`-package util`, `+package utils`), false},
		{"go single import", "a.go", hunkOf(`+import "sync"`, `+import str "strings"`), false},
		{"go import spec reordered deep in a block", "a_test.go", hunkOf(
			`	"github.com/example/a"`, `-	"github.com/example/b"`, `	"github.com/example/c"`, `+	"github.com/example/b"`, ` )`), false},
		{"go block comment opened in the hunk", "doc.go", hunkOf(
			` /*`, ` Package x does things.`, `+It retries with the token.`, `+`, ` */`), false},
		{"go block comment opened before the hunk", "doc.go", hunkOf(
			` Package x does things.`, `-If locked, wait.`, `+If locked, await the token.`, ` */`, ` package x`), false},
		{"go doc comment and blank", "a.go", hunkOf(`+// Run starts the worker.`, `+//`, ` func Run() {`), false},
		{"go string continuation is code", "a.go", hunkOf(
			` 	msg := "hello " +`, `-		"world"`, `+		"there"`), true},
		{"go code after an inline block comment", "a.go", hunkOf(`+	/* fast path */ x := 1`), true},
		{"go code after a block comment closes", "a.go", hunkOf(
			` /*`, `+ note`, `+*/ var x = 1`), true},
		{"go code in a hunk that starts inside a block comment", "a.go", hunkOf(
			` note`, `+var y = 2`, ` */`), false},
		{"python docstring after def", "a.py", hunkOf(
			` def run():`, `-    """Run once."""`, `+    """Run until stopped.`, `+`, `+    Retries on failure.`, `+    """`, `     loop()`), false},
		{"python module docstring", "a.py", "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n-\"\"\"Tools.\"\"\"\n+\"\"\"Tools for the\n+worker.\"\"\"\n import os\n", false},
		{"python from-import list", "a.py", hunkOf(
			` from app.models import (`, `+    Order,`, `+    User as Member,`, ` )`), false},
		{"python triple-quoted sql argument is code", "a.py", hunkOf(
			` cursor.execute(`, `     """`, `-    SELECT id FROM users`, `+    SELECT id, name FROM users`, `     """`, ` )`), true},
		{"python docstring whose opening lies before the hunk is code", "a.py", hunkOf(
			`     Retries on failure.`, `+    Stops on cancel.`, `     """`), true},
		{"js imports and require", "a.ts", hunkOf(
			`+import { a, b } from "./ab";`, `+import type { C } from './c'`, `+import "./side-effect";`,
			`+const fs = require("fs");`, `+export * from "./all";`), false},
		{"js multi-line import", "a.js", hunkOf(`+import {`, `+  useState,`, `+  useEffect as effect,`, `+} from "react";`), false},
		{"js dynamic import is code", "a.js", hunkOf(`+const m = await import("./m.js");`), true},
		{"java imports", "A.java", hunkOf(`+package com.example;`, `+import java.util.List;`, `+import static org.x.Y.z;`), false},
		{"c include", "a.c", hunkOf(`+#include <stdio.h>`, `+#include "util.h"`), false},
		{"c define is code", "a.c", hunkOf(`+#define MAX 10`), true},
		{"rust use list", "a.rs", hunkOf(`+use std::sync::{`, `+    Arc,`, `+    Mutex,`, `+};`, `+use std::fmt;`), false},
		{"ruby require", "a.rb", hunkOf(`+require "json"`, `+require_relative "lib/x"`, `+# note`), false},
		{"php namespace import", "a.php", hunkOf(`+use App\Models\User;`), false},
		{"php trait in a class is code", "a.php", hunkOf(`+    use SoftDeletes;`), true},
		{"csharp using directive", "A.cs", hunkOf(`+using System.IO;`), false},
		{"csharp using declaration is code", "A.cs", hunkOf(`+using var f = File.OpenRead(p);`), true},
		{"css universal selector is code", "a.css", hunkOf(`+* { margin: 0; }`), true},
		{"css comment", "a.css", hunkOf(`+/* spacing */`), false},
		{"dockerfile", "Dockerfile", hunkOf(`+RUN go build ./...`), false},
		{"makefile", "Makefile", hunkOf(`+test:`, `+	go test ./...`), false},
		{"json manifest", "package.json", hunkOf(`+  "lodash": "^4.17.21",`), false},
		{"license", "LICENSE", hunkOf(`+Copyright 2025`), false},
		{"unknown file kind is read as source", "deploy/run.sh", hunkOf(`+exec ./server`), true},
		{"shell line starting with a glob is code", "x.sh", hunkOf(`+/*/bin/run`, `+rm -rf tmp`), true},
		{"fragment with a comment only", "a.go", "+// note\n", false},
		{"fragment with code", "a.go", "+x := 1\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, code := detect(tt.path, tt.diff); code != tt.code {
				t.Errorf("carries code = %v, want %v", code, tt.code)
			}
			packs := DetectPacks(tt.path, tt.diff)
			if !tt.code && len(packs) != 0 {
				t.Errorf("a change without code selects %v", packs)
			}
			if tt.code && len(packs) == 0 {
				t.Error("a change with code selects no pack")
			}
		})
	}
}
