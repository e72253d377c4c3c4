package redact

import (
	"strings"
	"sync"
	"testing"
)

// TestRules gives every rule of the table at least one case in each format
// it is meant for; a new rule without a case fails TestRulesCovered.
func TestRules(t *testing.T) {
	for _, c := range ruleCases {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			out := String(c.in)
			if strings.Contains(out, c.value) {
				t.Errorf("value %q survived: %s", c.value, out)
			}
			if want := "[REDACTED:" + c.kind + ":1]"; !strings.Contains(out, want) {
				t.Errorf("want %s in %s", want, out)
			}
		})
	}
}

func TestRulesCovered(t *testing.T) {
	have := map[string]bool{}
	for _, c := range ruleCases {
		have[c.kind] = true
	}
	for _, r := range Rules {
		if !have[r.Kind] {
			t.Errorf("rule %s has no case in ruleCases", r.Kind)
		}
	}
}

var ruleCases = []struct{ kind, name, in, value string }{
	{"auth-header", "okta", `headers: { 'Authorization' => 'SSWS 00Vq8xT2mL5pR9sK3wN7yB1cF4hJ6dG0aZ2eQ8uI' }`, "00Vq8xT2mL5pR9sK3wN7yB1cF4hJ6dG0aZ2eQ8uI"},
	{"doppler-token", "shell", `doppler run --token dp.st.prd.Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8uIoP -- make`, "dp.st.prd.Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8uIoP"},
	{"age-secret-key", "text", `AGE-SECRET-KEY-1QX7V2ML9PR4ST8WN1YB5CF3HJ6DG0AZ2EQ8UIOPKLMNBVCXZ7ASDFGHJKL`, "AGE-SECRET-KEY-1QX7V2ML9PR4ST8WN1YB5CF3HJ6DG0AZ2EQ8UIOPKLMNBVCXZ7ASDFGHJKL"},
	{"password", "smtplib", `s.login('alerts@acme.io', 'Wq7mZt3LpX9rKv2N')`, "Wq7mZt3LpX9rKv2N"},
	{"password", "jdbc", `DriverManager.getConnection("jdbc:postgresql://db/shop", "shop", "Jd4kR8vP2xQ7mN5")`, "Jd4kR8vP2xQ7mN5"},
	{"password", "plainauth", `smtp.PlainAuth("", "bot@acme.io", "Pa5sW0rdX7qL2mZ9", "mail.acme.io")`, "Pa5sW0rdX7qL2mZ9"},
	{"telegram-bot-token", "go", `tgbotapi.NewBotAPI("7351937240:AAHq2vR8xLmN0pK4sT6uW9yZ1bC3dE5fG7h")`, "7351937240:AAHq2vR8xLmN0pK4sT6uW9yZ1bC3dE5fG7h"},
	{"mailgun-key", "go", `mailgun.NewMailgun("mg.x.io", "key-4f1c9a0b7e2d3c6b5a8f9e0d1c2b3a4f")`, "key-4f1c9a0b7e2d3c6b5a8f9e0d1c2b3a4f"},
	{"dockerhub-token", "shell", `echo dckr_pat_Qm3vX9tL2pR8sK1wN4yB7cF0hJ6 | docker login`, "dckr_pat_Qm3vX9tL2pR8sK1wN4yB7cF0hJ6"},
	{"discord-token", "python", `client.run("MTA4NzY1NDMyMTA5ODc2NTQz.Gx7kPq.Vb2nM8rT4wY6zA1cE3gJ5lN7pR9tV0xZ2bD4fH")`, "MTA4NzY1NDMyMTA5ODc2NTQz.Gx7kPq.Vb2nM8rT4wY6zA1cE3gJ5lN7pR9tV0xZ2bD4fH"},
	{"twilio-auth-token", "js", `twilio("AC0123", "9c1e5a7b3d2f4e6a8b0c1d3e5f7a9b2c")`, "9c1e5a7b3d2f4e6a8b0c1d3e5f7a9b2c"},
	{"password-hash", "htpasswd", `admin:$apr1$Xk3pQ9zL$Vt7mR2nW8bY4cF1hJ6sD0.`, "$apr1$Xk3pQ9zL$Vt7mR2nW8bY4cF1hJ6sD0."},
	{"password-hash", "bcrypt", `ops:$2y$10$Lq8vN3xT7pR1mK5wB9cY2eOa4dF6hJ8lN0pR2tV4xZ6bD8fH0jL2`, "$2y$10$Lq8vN3xT7pR1mK5wB9cY2eOa4dF6hJ8lN0pR2tV4xZ6bD8fH0jL2"},
	{"private-key", "json-escaped", `"key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n"`, "MIIEvQIBADANBgkqhkiG9w0B"},
	{"private-key", "pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nBG5vbmUAAAAEbm9uZQAAAAAA\n-----END OPENSSH PRIVATE KEY-----\n", "b3BlbnNzaC1rZXktdjEAAAAA"},
	{"gcp-private-key", "json", `"private_key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"`, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
	{"gcp-private-key-id", "json", `"private_key_id": "e8a5b29685c3074052c4d8f2d48344f80b39307f",`, "e8a5b29685c3074052c4d8f2d48344f80b39307f"},
	{"aws-access-key-id", "go", `id := "AKIA5XRILAV5FVCYK43K"`, "AKIA5XRILAV5FVCYK43K"},
	{"aws-access-key-id", "temporary", `ASIAKPDHIEYGSNO2FRNZ`, "ASIAKPDHIEYGSNO2FRNZ"},
	{"aws-access-key-id", "documentation example", `key := "AKIAIOSFODNN7EXAMPLE"`, "AKIAIOSFODNN7EXAMPLE"},
	{"aws-access-key-id", "not base32", `const id = "AKIAZ7QWERTY12345678"`, "AKIAZ7QWERTY12345678"},
	{"secret", "env value with EXAMPLE inside", `SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws-secret", "documentation example", `aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws-secret", "ini", `aws_secret_access_key = JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep`, "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"},
	{"aws-secret", "env", `AWS_SECRET_ACCESS_KEY=JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep`, "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"},
	{"aws-secret", "yaml", `  aws_secret_key: "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"`, "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"},
	{"azure-storage-key", "conn", `AccountName=a;AccountKey=9f9lI0lqe78u1tmqop0Yg/Z/hUJAX5zF89lYiQP/Mr0P==;`, "9f9lI0lqe78u1tmqop0Yg/Z/hUJAX5zF89lYiQP/Mr0P=="},
	{"azure-storage-key", "servicebus", `Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=9f9lI0lqe78u1tmqop0Yg/Z/hUJAX5zF89lY=`, "9f9lI0lqe78u1tmqop0Yg/Z/hUJAX5zF89lY="},
	{"azure-sas", "url", `https://a.blob.core.windows.net/c?sv=2022&sig=6kJRbiVnfdnbq14TCwwJXT6egTATB8ldpKjGK2AxSQm%3D`, "6kJRbiVnfdnbq14TCwwJXT6egTATB8ldpKjGK2AxSQm%3D"},
	{"azure-sas", "conn", `SharedAccessSignature=sv=2022&sig=6kJRbiVnfdnbq14TCwwJXT6egTATB8ld`, "6kJRbiVnfdnbq14TCwwJXT6egTATB8ld"},
	{"azure-client-secret", "literal", `secret := "5Ow8Q~-0euOJ6LK32nhTC0HU5Vi0-xipP2~cN3kX"`, "5Ow8Q~-0euOJ6LK32nhTC0HU5Vi0-xipP2~cN3kX"},
	{"azure-client-secret", "env", `AZURE_CLIENT_SECRET=abc.def-ghi_jkl`, "abc.def-ghi_jkl"},
	{"github-token", "ghp", `token = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby"`, "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby"},
	{"github-token", "url", `https://x-access-token:ghs_ysNa9ZwsjEJri9fVJsSheACjTJWYyL4ZkQTr@github.com/o/r.git`, "ghs_ysNa9ZwsjEJri9fVJsSheACjTJWYyL4ZkQTr"},
	{"github-token", "fine-grained", `github_pat_8qIe8PbLL4BItHHIP6Ye4P_KI9teUoUiggSFDdF4OUdRMbxp4`, "github_pat_8qIe8PbLL4BItHHIP6Ye4P_KI9teUoUiggSFDdF4OUdRMbxp4"},
	{"gitlab-token", "glpat", `PRIVATE-TOKEN: glpat-EJIEbTXevfYuaD9CLjyE`, "glpat-EJIEbTXevfYuaD9CLjyE"},
	{"slack-token", "bot", `"xoxb-21537233110-111510783513-aqWHRmaCq8Nb9gHZAd5qE2uM"`, "xoxb-21537233110-111510783513-aqWHRmaCq8Nb9gHZAd5qE2uM"},
	{"slack-token", "user", `xoxp-21537233110-aqWHRmaCq8Nb`, "xoxp-21537233110-aqWHRmaCq8Nb"},
	{"slack-webhook", "url", `https://hooks.slack.com/services/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`, "T0000AAAA/B0000BBBB/aqWHRmaCq8Nb9gHZAd5qE2uM"},
	{"stripe-key", "secret", `Stripe.api_key = 'sk_live_3oOdRritcZlwY5z7a46t92gb'`, "sk_live_3oOdRritcZlwY5z7a46t92gb"},
	{"stripe-key", "restricted", `rk_live_uCpAMuFKw415zBnfrtDDN7KD`, "rk_live_uCpAMuFKw415zBnfrtDDN7KD"},
	{"openai-key", "legacy", `client = OpenAI(api_key="sk-CylvzdufkuIbmnTxQ5i8OfvC9MMW84QUynSIXvebQJAEo3Uu")`, "sk-CylvzdufkuIbmnTxQ5i8OfvC9MMW84QUynSIXvebQJAEo3Uu"},
	{"openai-key", "project", `Authorization: Bearer sk-proj-m7aKAjCbOfltQumZYXrTTIzPXxwvbNcJ92lIKs59DwQs`, "sk-proj-m7aKAjCbOfltQumZYXrTTIzPXxwvbNcJ92lIKs59DwQs"},
	{"jwt", "header", `Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U`, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
	{"url-password", "postgres", `DATABASE_URL=postgres://app:3JVkHQ2w81rmkRvQ@db:5432/app`, "3JVkHQ2w81rmkRvQ"},
	{"url-password", "amqp", `amqp://guest:s3cr3t-Pa55@rabbit/`, "s3cr3t-Pa55"},
	{"url-token", "query", `GET https://api.example.net/v1/items?page=2&access_token=bVp2fmaWzTaUEb23TRdV HTTP/1.1`, "bVp2fmaWzTaUEb23TRdV"},
	{"bearer-token", "header", `req.Header.Set("Authorization", "Bearer 7f3a9c2e41b8d6f0a5e3c1b9d7f2a4e6")`, "7f3a9c2e41b8d6f0a5e3c1b9d7f2a4e6"},
	{"basic-auth", "header", `Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l`, "YWxhZGRpbjpvcGVuc2VzYW1l"},
	{"password", "ado", `Server=db;Database=app;User Id=sa;Password=3JVkHQ2w81rmkRvQ;`, "3JVkHQ2w81rmkRvQ"},
	{"password", "env", `DB_PASSWORD=hunter2`, "hunter2"},
	{"password", "yaml", `  password: "Zq8#rT4!mW2p"`, "Zq8#rT4!mW2p"},
	{"password", "go-const", `const adminPassword = "Zq8#rT4!mW2p"`, "Zq8#rT4!mW2p"},
	{"secret", "env-export", `export API_TOKEN='bVp2fmaWzTaUEb23'`, "bVp2fmaWzTaUEb23"},
	{"secret", "json", `{"api_key": "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ"}`, "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ"},
	{"secret", "go", `var signingKey = []byte("bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ")`, "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ"},
	{"secret", "toml", `client_secret = "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ"`, "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ"},
	{"secret", "diff-added", `+WEBHOOK_SECRET=bVp2fmaWzTaUEb23`, "bVp2fmaWzTaUEb23"},
	{"secret", "numbered-diff", `   2 + API_TOKEN=bVp2fmaWzTaUEb23`, "bVp2fmaWzTaUEb23"},
	{"secret", "numbered-source", `   12 | API_TOKEN=bVp2fmaWzTaUEb23`, "bVp2fmaWzTaUEb23"},
	{"password", "read-file", `3: DB_PASSWORD=hunter2`, "hunter2"},
	{"secret", "diff-removed", `-  "authToken": "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ",`, "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ"},
	{"aws-secret", "credentials csv", `ci,x,AKIAQX7ZP2MLK4RT8VNB,Hq3v/Zt8Lp+Xm2Rk9Wn4Bc7Yf1Dg6Js0Ae5Ui8Ko`, "Hq3v/Zt8Lp+Xm2Rk9Wn4Bc7Yf1Dg6Js0Ae5Ui8Ko"},
	{"aws-secret", "id and secret quoted", `creds("ASIAKPDHIEYGSNO2FRNZ", "Hq3v/Zt8Lp+Xm2Rk9Wn4Bc7Yf1Dg6Js0Ae5Ui8Ko")`, "Hq3v/Zt8Lp+Xm2Rk9Wn4Bc7Yf1Dg6Js0Ae5Ui8Ko"},
	{"split-token", "concatenated", `tok := "ghp_R8kQ2vLm" + "sT9yW4nB7cF1hJ6dG0aZ2eQ8uIo"`, "sT9yW4nB7cF1hJ6dG0aZ2eQ8uIo"},
	{"split-token", "three parts", `key = 'sk_live_' + 'Vq8xT2mL5p' + 'R9sK3wN7yB1c'`, "R9sK3wN7yB1c"},
	{"password", "flag", `mysqladmin --user=root --password Zq8rT4mW2pLx status`, "Zq8rT4mW2pLx"},
	{"password", "prefixed flag", `helm upgrade app ./chart --set x=1 --db-password=Zq8rT4mW2pLx`, "Zq8rT4mW2pLx"},
	{"secret", "token flag", `vault login --token=hvs4Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2e`, "hvs4Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2e"},
	{"secret", "token flag in a backquoted command", "run(`tool login --token Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u`, 1)", "Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u"},
	{"secret", "api-key flag", `cli deploy --api-key Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u`, "Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u"},
	{"password", "cmd set", `set DB_PASSWORD Zq8rT4mW2pLx`, "Zq8rT4mW2pLx"},
	{"secret", "fish set -x", `set -x API_TOKEN 'Kq7vX2mL9pR4sT8wN1yB5cF3h'`, "Kq7vX2mL9pR4sT8wN1yB5cF3h"},
	{"secret", "header map", `headers['X-Api-Key'] = 'Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u'`, "Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u"},
	{"password", "environ", `os.environ["DB_PASSWORD"] = "Zq8rT4mW2pLx"`, "Zq8rT4mW2pLx"},
	{"secret", "dotnet add key", `<add key="ApiKey" value="Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u" />`, "Kq7vX2mL9pR4sT8wN1yB5cF3hJ6dG0aZ2eQ8u"},
	{"password", "dotnet add name", `<add name="DbPassword" value="Zq8rT4mW2pLx"/>`, "Zq8rT4mW2pLx"},
	{"secret", "dotnet setting", `<setting name="ClientSecret" serializeAs="String"><value>Kq7vX2mL9pR4sT8wN1yB5cF3h</value></setting>`, "Kq7vX2mL9pR4sT8wN1yB5cF3h"},
	{"secret", "dotnet setting two lines", "<setting name=\"ClientSecret\" serializeAs=\"String\">\n  <value>Kq7vX2mL9pR4sT8wN1yB5cF3h</value>\n</setting>", "Kq7vX2mL9pR4sT8wN1yB5cF3h"},
	{"password", "container env json", `{"name": "DB_PASS", "value": "Zq8rT4mW2pLx"}`, "Zq8rT4mW2pLx"},
	{"password", "kubernetes env", "env:\n  - name: DB_PASS\n    value: Zq8rT4mW2pLx\n", "Zq8rT4mW2pLx"},
	{"secret", "helm env quoted", "- name: API_TOKEN\n  value: \"Kq7vX2mL9pR4sT8wN1yB5cF3h\"\n", "Kq7vX2mL9pR4sT8wN1yB5cF3h"},
	{"password", "yaml next line", "db:\n  password:\n    Zq8rT4mW2pLx\n  user: app\n", "Zq8rT4mW2pLx"},
	{"secret", "yaml list item", "oauth:\n  client_secret:\n    - Kq7vX2mL9pR4sT8wN1yB5cF3h\n", "Kq7vX2mL9pR4sT8wN1yB5cF3h"},
	{"aws-secret", "implicit concatenation", "aws_secret = \"Hq3v/Zt8Lp+Xm2Rk9Wn4\"\n    \"Bc7Yf1Dg6Js0Ae5U\"\n", "Bc7Yf1Dg6Js0Ae5U"},
}

// TestNotSecrets lists lines that must come out unchanged.
func TestNotSecrets(t *testing.T) {
	for _, in := range []string{
		`commit 5e8e97b3c1d2a4f6e8b0c2d4e6f8a0b2c4d6e8f0`,
		`id := uuid.MustParse("550e8400-e29b-41d4-a716-446655440000")`,
		`token := r.Header.Get("Authorization")`,
		`password := cfg.Password`,
		`if token == "" {`,
		`apiKey: ${API_KEY}`,
		`API_KEY=<your-key>`,
		`API_KEY=changeme`,
		`API_KEY=xxx`,
		`API_KEY=example-key`,
		`url: postgres://user:password@localhost/db`,
		`fmt.Sprintf("postgres://%s:%s@%s/%s", u, p, h, d)`,
		`tokenizer := newTokenizer()`,
		`max_tokens: 4096`,
		`TOKEN_URL=https://example.net/token`,
		`log.Printf("invalid token: %v", err)`,
		`PRIMARY_KEY=id`,
		`sk-learn-style-classifier-name`,
		`"integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQuwi5n9y7ulqCdNUE5ewtpOGoK+uG2Q8rw/xrVfVXtZ8qfSkQ=="`,
		`sum := "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`,
		`API_KEY=[REDACTED:secret:1]`,
		`url := "https://example.net/search?q=golang&token=${TOKEN}"`,
		`// Send the Bearer token in the Authorization header.`,
		`header := "Bearer " + token`,
		"- name: DB_PASS\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password\n",
		"- name: DB_PASS\n  value: \"$(DB_PASS_FILE)\"\n",
		"- name: API_TOKEN\n  value: \"{{ .Values.apiToken }}\"\n",
		"- name: TOKEN_TTL\n  value: \"3600\"\n",
		"password:\n  secretKeyRef:\n    name: db\n",
		"secrets:\n  - db_password\n  - api-token\n",
		"api_key:\n  ${API_KEY}\n",
		`<add key="TokenLifetime" value="3600" />`,
		`<add key="ApiKeyHeader" value="X-Api-Key" />`,
		`<add key="ApiKey" value="" />`,
		`echo "$PW" | docker login --password-stdin -u ci`,
		`gh auth login --with-token < token.txt`,
		`deploy --token "$GITHUB_TOKEN" --password "${DB_PASSWORD}"`,
		`tool --api-key <your-key> --password <password>`,
		`set PASSWORD $argv[1]`,
		`headers['Authorization'] = 'Bearer ' + token`,
		`cfg['api_key'] = os.environ['API_KEY']`,
		`env["GITHUB_TOKEN"] = "secret-token"`,
		`prefix = "ghp_" + name`,
	} {
		if out := String(in); out != in {
			t.Errorf("changed:\n in: %s\nout: %s", in, out)
		}
	}
}

// TestStableMarkers checks that one value gets one marker across texts,
// diffs and kinds, and that redacting twice changes nothing.
func TestStableMarkers(t *testing.T) {
	r := New()
	a := r.Text("GITHUB_TOKEN=ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby\nDB_PASSWORD=hunter22\n")
	b := r.Diff("@@ -1 +1 @@\n-x\n+token := \"ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby\"\n")
	if !strings.Contains(a, "[REDACTED:github-token:1]") || !strings.Contains(b, "[REDACTED:github-token:1]") {
		t.Errorf("markers differ:\n%s\n%s", a, b)
	}
	if again := r.Text(a); again != a {
		t.Errorf("second redaction changed the text:\n%s\n%s", a, again)
	}
	if r.Found() != 3 {
		t.Errorf("Found = %d, want 3", r.Found())
	}
}

// TestDiffKeepsPrefixes checks a private key added in a diff: each line
// keeps its '+', the line count is unchanged.
func TestDiffKeepsPrefixes(t *testing.T) {
	in := "@@ -0,0 +1,4 @@\n+-----BEGIN RSA PRIVATE KEY-----\n+MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n+/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2y\n+-----END RSA PRIVATE KEY-----\n"
	out := New().Diff(in)
	want := "@@ -0,0 +1,4 @@\n+-----BEGIN RSA PRIVATE KEY-----\n+[REDACTED:private-key:1]\n+[REDACTED:private-key:1]\n+-----END RSA PRIVATE KEY-----\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.Text("API_TOKEN=bVp2fmaWzTaUEb23\n")
		}()
	}
	wg.Wait()
	for _, o := range outs {
		if o != outs[0] {
			t.Fatalf("markers differ between goroutines: %q %q", o, outs[0])
		}
	}
}

func TestReserveAvoidsTakenNumbers(t *testing.T) {
	r := New()
	r.Reserve("already [REDACTED:github-token:3] here")
	if got := r.Text("ghp_ZMvaBhnoCru0ftOsgHYdbyXJZBFwTXpKVeBP"); got != "[REDACTED:github-token:4]" {
		t.Errorf("got %s, want number 4", got)
	}
}

// TestDiffContinuedLiteral checks a secret assignment whose literal goes
// on over the next added line: both parts are one value with one marker.
func TestDiffContinuedLiteral(t *testing.T) {
	in := "@@ -1,0 +1,3 @@\n+aws_secret = \"Tq5mW8xL2pR7sK4vN1yB\"\n+    \"c9F3hJ6dG0aZ2eQ8\"\n+region = \"eu-west-1\"\n"
	out := New().Diff(in)
	want := "@@ -1,0 +1,3 @@\n+aws_secret = \"[REDACTED:aws-secret:1]\"\n+    \"[REDACTED:aws-secret:1]\"\n+region = \"eu-west-1\"\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestFlagValueEnds checks that a flag's value stops at the quote or
// backtick around the command: the code after it is kept.
func TestFlagValueEnds(t *testing.T) {
	in := "run(`tool login --password Zq8rT4mW2pLx`, 1)"
	if got, want := String(in), "run(`tool login --password [REDACTED:password:1]`, 1)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestZeroWidthInsideToken checks that invisible characters inside a
// token or before a name do not hide it, and that the text around the
// value, other multi-byte characters included, is kept.
func TestZeroWidthInsideToken(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tok := \"ghp_\u200bQm3vX9tL2pR8sK1wN4yB7cF0hJ6dG2aZ5eQ8u\" // \ufffd é", "tok := \"[REDACTED:github-token:1]\" // \ufffd é"},
		{"key = \"sk_live_4Fh\u200d8qT2mL5pR9sK3wN7y\u2060B1c\"", "key = \"[REDACTED:stripe-key:1]\""},
		{"\ufeffAPI_TOKEN=Kq7vX2mL9pR4sT8wN1yB5cF3h", "\ufeffAPI_TOKEN=[REDACTED:secret:1]"},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
