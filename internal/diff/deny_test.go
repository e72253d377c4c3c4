package diff

import "testing"

func TestDeniedDefault(t *testing.T) {
	denied := []string{
		".env", ".ENV", ".env.production", "config/production.env", "app/.Env.local", ".envrc",
		".npmrc", "web/.NPMRC", ".pgpass", "ops/.pgpass", "deploy/kubeconfig", "deploy/KubeConfig",
		"x/prod.kubeconfig", ".kube/config", "SERVER.KEY", "tls/server.pem", "keys/id_rsa", "keys/ID_ED25519.pub",
		"sub/.Git/config", ".git/config", "a/.git", "credentials", ".aws/credentials", "gcp/credentials.json",
		".docker/config.json", "nginx/.htpasswd", ".netrc", ".pypirc", "keys/server.ppk", "infra/terraform.tfstate",
	}
	for _, p := range denied {
		if !Denied(nil, p) {
			t.Errorf("%s is not denied", p)
		}
	}
	allowed := []string{
		"main.go", "internal/credentials.go", "env.go", "docs/environment.md", "src/keys.ts", "config/app.yaml",
		"kube/deployment.yaml", "npmrc.md", "pgpass.go", "keyboard.key.go", ".github/workflows/ci.yml",
	}
	for _, p := range allowed {
		if Denied(nil, p) {
			t.Errorf("%s is denied", p)
		}
	}
	if !Denied([]string{"Secrets/"}, "secrets/a.txt") || Denied([]string{"secrets/"}, ".env") {
		t.Error("a configured list replaces the default one and ignores case")
	}
	if !Denied([]string{"secrets/"}, "x/.git/config") {
		t.Error(".git is denied whatever the configuration")
	}
}

func TestClassifyDenied(t *testing.T) {
	files, err := Parse([]byte("diff --git a/.env.production b/.env.production\n--- a/.env.production\n+++ b/.env.production\n@@ -1 +1 @@\n-A=1\n+A=2\n" +
		"diff --git a/.ENV b/notes.txt\nsimilarity index 90%\nrename from .ENV\nrename to notes.txt\n--- a/.ENV\n+++ b/notes.txt\n@@ -1 +1 @@\n-B=1\n+B=2\n" +
		"diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-x\n+y\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ReasonDenied, ReasonDenied, ""}
	for i, f := range files {
		_, reason := Classify(f, ClassifyOptions{})
		if reason != want[i] {
			t.Errorf("%s: reason %q, want %q", f.Path(), reason, want[i])
		}
	}
}
