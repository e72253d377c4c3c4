package prompts

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

//go:embed defaults
var defaultFiles embed.FS

// defaultsRoot is the directory of defaultFiles that holds the texts.
const defaultsRoot = "defaults"

// Relative names of the prompt files. Override directories use the same
// names.
const (
	fileIntentCore    = "intent_core.txt"
	fileIntentChunked = "intent_chunked.txt"
	fileVerify        = "verify.txt"
	fileExpert        = "expert.txt"
	fileEval          = "eval.txt"
)

func packFile(p Pack) string               { return "packs/" + string(p) + ".txt" }
func focusFile(r review.RiskType) string   { return "expert_focus/" + string(r) + ".txt" }
func referenceFile(name string) string     { return "references/" + name + ".txt" }
func schemaFile(stage review.Stage) string { return "schemas/" + string(stage) + ".json" }
func isSchemaFile(name string) bool        { return strings.HasPrefix(name, "schemas/") }
func stageOfSchema(name string) review.Stage {
	return review.Stage(strings.TrimSuffix(strings.TrimPrefix(name, "schemas/"), ".json"))
}

// maxOverrideDepth bounds the directory walk of an override directory,
// which follows symbolic links (Kubernetes mounts a ConfigMap through them).
const maxOverrideDepth = 8

// Set is a loaded, validated set of prompt texts and output schemas. It is
// immutable and safe for concurrent use.
type Set struct {
	files   map[string]string // relative name → text, trailing newlines trimmed
	schemas map[review.Stage]json.RawMessage
	full    string // the intent prompt with every pack, built once
}

// Load returns the embedded prompts with the files of overrideDir laid over
// them. A file in overrideDir replaces the embedded file with the same
// relative name (for example packs/robustness.txt or schemas/verify.json);
// a name that matches no embedded file is an error, so a typo cannot go
// unnoticed. Hidden entries (names starting with ".": .gitkeep, editor swap
// files, the "..data" bookkeeping of a Kubernetes ConfigMap mount) are
// skipped; symbolic links are followed. An empty overrideDir loads the
// embedded prompts alone. Every schema, overridden or not, must satisfy
// OpenAI strict mode.
func Load(overrideDir string) (*Set, error) {
	files, err := readDefaults()
	if err != nil {
		return nil, err
	}
	if overrideDir != "" {
		if err := applyOverrides(files, overrideDir); err != nil {
			return nil, err
		}
	}
	s := &Set{files: files, schemas: make(map[review.Stage]json.RawMessage)}
	for name, text := range files {
		if !isSchemaFile(name) {
			continue
		}
		if err := checkStrictSchema([]byte(text)); err != nil {
			return nil, fmt.Errorf("load prompts: schema %s: %w", name, err)
		}
		s.schemas[stageOfSchema(name)] = json.RawMessage(text)
	}
	s.full = s.IntentSystem(AllPacks)
	return s, nil
}

// Names lists the relative names of every file in the set, sorted: the
// names an override directory may use.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// File returns the text of the named file and whether it exists.
func (s *Set) File(name string) (string, bool) {
	t, ok := s.files[name]
	return t, ok
}

// readDefaults reads the embedded files.
func readDefaults() (map[string]string, error) {
	files := make(map[string]string)
	err := fs.WalkDir(defaultFiles, defaultsRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := defaultFiles.ReadFile(p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, defaultsRoot+"/")] = normalizeText(string(data))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded prompts: %w", err)
	}
	return files, nil
}

// applyOverrides replaces entries of files with the files found under dir.
func applyOverrides(files map[string]string, dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("read prompt overrides: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("read prompt overrides: %s is not a directory", dir)
	}
	found := make(map[string]string)
	if err := walkOverrides(dir, "", 0, found); err != nil {
		return fmt.Errorf("read prompt overrides in %s: %w", dir, err)
	}
	var unknown, empty []string
	for name, text := range found {
		switch _, ok := files[name]; {
		case !ok:
			unknown = append(unknown, name)
		case strings.TrimSpace(text) == "":
			empty = append(empty, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("prompt overrides in %s: unknown file(s) %s: names must match a built-in file such as %s or %s",
			dir, strings.Join(unknown, ", "), packFile(PackRobustness), schemaFile(review.StageVerify))
	}
	if len(empty) > 0 {
		slices.Sort(empty)
		return fmt.Errorf("prompt overrides in %s: empty file(s) %s", dir, strings.Join(empty, ", "))
	}
	for name, text := range found {
		files[name] = text
	}
	return nil
}

// walkOverrides collects the regular files under dir/rel into found, keyed
// by slash-separated relative name, following symbolic links.
func walkOverrides(dir, rel string, depth int, found map[string]string) error {
	if depth > maxOverrideDepth {
		return fmt.Errorf("%s: directories nested deeper than %d levels (a symlink loop?)", rel, maxOverrideDepth)
	}
	entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := path.Join(rel, e.Name())
		full := filepath.Join(dir, filepath.FromSlash(name))
		info, err := os.Stat(full) // follows symbolic links
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			if err := walkOverrides(dir, name, depth+1, found); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			data, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			found[name] = normalizeText(string(data))
		default:
			return fmt.Errorf("%s: not a regular file", name)
		}
	}
	return nil
}

// normalizeText turns CRLF line ends into LF and trims trailing blank lines,
// so that texts join with exactly one blank line between them.
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimRight(s, " \t\n")
}
