package agent

import (
	"context"
	"strings"
	"testing"
)

func TestIsDefinition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lang, name, line string
		want             bool
	}{
		{"go", "Lookup", "func (s *Store) Lookup(id string) *Session {", true},
		{"go", "Lookup", "func Lookup[T any](id T) {", true},
		{"go", "Store", "type Store struct {", true},
		{"go", "Max", "const Max = 3", true},
		{"go", "b", "var a, b = 1, 2", true},
		{"go", "Lookup", "\tsess := s.Lookup(id)", false},
		{"go", "Look", "func Lookup() {", false},
		{"python", "load", "    async def load(self, path):", true},
		{"python", "Config", "class Config(Base):", true},
		{"python", "Config", "cfg = Config()", false},
		{"js", "render", "export default async function render(props) {", true},
		{"js", "render", "function* render() {", true},
		{"js", "Widget", "export abstract class Widget extends Base {", true},
		{"js", "API_URL", "export const API_URL = '/api'", true},
		{"js", "Props", "export interface Props {", true},
		{"js", "save", "  async save(item: Item): Promise<void> {", true},
		{"js", "onClick", "  onClick = (e) => {", true},
		{"js", "$el", "const $el = document.body", true},
		{"js", "save", "  this.save(item);", false},
		{"js", "save", "  if (save(item)) {", false},
		{"java", "UserService", "public final class UserService implements Service {", true},
		{"java", "find", "    public Optional<User> find(long id) {", true},
		{"java", "find", "    List<User> find(String name);", true},
		{"java", "UserService", "    public UserService(Repo repo) {", true},
		{"java", "find", "        return find(id);", false},
		{"java", "User", "        User u = new User(id);", false},
		{"java", "find", "        users.find(id);", false},
		{"kotlin", "find", "    suspend fun find(id: Long): User? {", true},
		{"kotlin", "find", "fun <T> Repo<T>.find(id: Long) = get(id)", true},
		{"kotlin", "User", "data class User(val id: Long)", true},
		{"kotlin", "limit", "    private val limit = 10", true},
		{"kotlin", "find", "    val u = find(1)", false},
		{"ruby", "valid?", "  def valid?", true},
		{"ruby", "valid", "  def valid?", false},
		{"ruby", "build", "  def self.build(attrs)", true},
		{"ruby", "Client", "class Api::Client < Base", true},
		{"ruby", "Client", "  client = Client.new", false},
	}
	for _, tt := range tests {
		rules := definitionRules(tt.lang, tt.name)
		if got := isDefinition(tt.lang, rules, tt.line); got != tt.want {
			t.Errorf("%s %q in %q = %v, want %v", tt.lang, tt.name, tt.line, got, tt.want)
		}
	}
}

func TestGoBlockDefs(t *testing.T) {
	t.Parallel()
	src := `package p

const (
	Alpha = iota
	Beta
)

var (
	x, Gamma = 1, 2
	table = map[string]int{
		"Beta": 1,
	}
)

type (
	Beta2 struct {
		Beta int
	}
)

func f() {
	Beta := 3
	_ = Beta
}
`
	lines := splitLines([]byte(src))
	tests := []struct {
		name string
		want []int // 1-based
	}{
		{"Alpha", []int{4}},
		{"Beta", []int{5}}, // not the struct field, map key or local variable
		{"Gamma", []int{9}},
		{"Beta2", []int{16}},
		{"f", nil},
	}
	for _, tt := range tests {
		var got []int
		for _, i := range goBlockDefs(lines, goBlockEntry(tt.name)) {
			got = append(got, i+1)
		}
		if len(got) != len(tt.want) {
			t.Errorf("goBlockDefs(%s) = %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("goBlockDefs(%s) = %v, want %v", tt.name, got, tt.want)
			}
		}
	}
}

func TestFindSymbolTool(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"api/store.go":           "package api\n\nfunc (s *Store) Save(x int) error {\n\treturn nil\n}\n",
		"web/store.ts":           "export class Store {\n  save(x: number) {\n  }\n}\n",
		"lib/store.rb":           "module Api\n  class Store\n    def save(x)\n    end\n  end\nend\n",
		"node_modules/s/Save.js": "function Save() {}\n",
		"notes/Save.txt":         "func Save() {}\n",
	})
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		want, reject []string
		err          string
	}{
		{name: "Save", want: []string{"1 definitions in 1 files", "api/store.go:3: func (s *Store) Save(x int) error {"}, reject: []string{"node_modules", "notes/"}},
		{name: "Store.save", want: []string{"web/store.ts:2:", "lib/store.rb:3:"}},
		{name: "Api::Store", want: []string{"web/store.ts:1:", "lib/store.rb:2:"}},
		{name: "Missing", want: []string{"no definitions found"}},
		{name: "a b", err: "needs an identifier"},
		{name: "", err: "needs a name"},
	}
	for _, tt := range tests {
		res, err := findSymbolTool(context.Background(), sb, nil, findSymbolArgs{Name: tt.name})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("find_symbol %q error = %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("find_symbol %q: %v", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(res.text, w) {
				t.Errorf("find_symbol %q lacks %q:\n%s", tt.name, w, res.text)
			}
		}
		for _, r := range tt.reject {
			if strings.Contains(res.text, r) {
				t.Errorf("find_symbol %q contains %q:\n%s", tt.name, r, res.text)
			}
		}
	}
}
