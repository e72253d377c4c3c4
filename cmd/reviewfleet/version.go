package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); when
// empty, the module version or VCS revision the binary was built from is
// used.
var version = ""

// versionString returns the version this binary reports.
func versionString() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "dev"
	}
	return "dev-" + rev + dirty
}

func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "reviewfleet %s\n", versionString())
	return err
}

// wantsHelp reports whether args ask for help, for the commands that take
// no flags of their own.
func wantsHelp(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" })
}
