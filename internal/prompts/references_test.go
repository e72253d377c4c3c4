package prompts

import (
	"slices"
	"testing"
)

func TestDetectReferences(t *testing.T) {
	t.Parallel()
	orm, nullable := []string{RefORMQueries}, []string{RefOptionalNullable}
	both := []string{RefOptionalNullable, RefORMQueries}
	tests := []struct {
		name string
		diff string
		want []string
	}{
		{"django get", hunkOf(`+    order = Order.objects.get(pk=order_id)`), orm},
		{"django filter first in context line", hunkOf(` qs = Invoice.objects.filter(owner=u)`, `+total = 0`), orm},
		{"go QueryRow", hunkOf(`+	err := db.QueryRow(ctx, q, id).Scan(&name)`), orm},
		{"prisma findUnique", hunkOf(`+  const user = await prisma.user.findUnique({ where: { id } });`), orm},
		{"rails find_by", hunkOf(`+    user = User.find_by(email: params[:email])`), orm},
		{"jpa entity", hunkOf(`+@Entity`, `+public class Invoice {`), orm},
		{"ts optional chaining", hunkOf(`+const name = user?.profile.name;`), nullable},
		{"java optional", hunkOf(`+    return repo.lookup(id).orElse(null);`), nullable},
		{"python is None", hunkOf(`+    if row is None:`), nullable},
		{"go comma ok", hunkOf(`+	v, ok := cache[key]`), nullable},
		{"go non-error nil check", hunkOf(`+	if user != nil {`), nullable},
		{"go error check alone", hunkOf(`+	if err != nil {`, `+		return err`, `+	}`), nil},
		{"spring data findById", hunkOf(`+    Invoice inv = repo.findById(id).get();`), both},
		{"plain arithmetic", hunkOf(`+	total += price * qty`), nil},
		{"no hunk headers", "+    user = User.find_by(email: e)\n", orm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := DetectReferences(tt.diff); !slices.Equal(got, tt.want) {
				t.Errorf("DetectReferences = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReferencesAreSortedAndKnown(t *testing.T) {
	t.Parallel()
	if !slices.IsSorted(References) {
		t.Errorf("References %v not sorted", References)
	}
	for _, s := range referenceSignals {
		if !slices.Contains(References, s.ref) {
			t.Errorf("signal for unknown reference %q", s.ref)
		}
	}
}
