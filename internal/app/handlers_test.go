package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// Every task step of the table is served by the package the table names
// as its implementation.
func TestHandlersImplementTheTable(t *testing.T) {
	t.Parallel()
	handlers := (&App{}).Handlers()
	steps := pipeline.TaskSteps()
	if len(handlers) != len(steps) {
		t.Fatalf("%d handlers for %d task steps", len(handlers), len(steps))
	}
	for _, s := range steps {
		h, ok := handlers[s.Stage]
		if !ok {
			t.Errorf("no handler for %s", s.Stage)
			continue
		}
		typ := reflect.TypeOf(h)
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if !strings.HasSuffix(typ.PkgPath(), "/"+s.Impl) {
			t.Errorf("%s is handled by %s.%s, the table names %s", s.Stage, typ.PkgPath(), typ.Name(), s.Impl)
		}
	}
}
