// Package secrettest is a corpus of credentials written out in the formats
// they take in real repositories — provider tokens, passwords in config
// files of every syntax, URLs, key files — for tests that must show none of
// them survives redaction, wherever the text goes. Every value is made up
// here: the random parts come from a seeded generator, so the corpus is the
// same on every run and nothing in it was ever a working credential.
package secrettest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Sample is one secret format written as a file would hold it.
type Sample struct {
	// Name says what the format is.
	Name string
	// File is a path such a text lives at.
	File string
	// Text is the file's content.
	Text string
	// Secrets are the values that must not survive redaction.
	Secrets []string
}

const (
	alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	lower = "abcdefghijklmnopqrstuvwxyz0123456789"
	hexa  = "0123456789abcdef"
	b64   = alnum + "+/"
	digit = "0123456789"
)

// gen is a seeded generator: the values are random-looking and the same on
// every run.
type gen struct{ r *rand.Rand }

func (g gen) s(n int, alphabet string) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[g.r.IntN(len(alphabet))])
	}
	return b.String()
}

// build fills in a template: each «…» is a secret, kept in the text without
// the brackets and listed in Secrets.
func build(name, file, tmpl string) Sample {
	s := Sample{Name: name, File: file}
	var b strings.Builder
	for {
		i := strings.Index(tmpl, "«")
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		j := strings.Index(tmpl[i:], "»")
		secret := tmpl[i+len("«") : i+j]
		b.WriteString(tmpl[:i])
		b.WriteString(secret)
		s.Secrets = append(s.Secrets, secret)
		tmpl = tmpl[i+j+len("»"):]
	}
	s.Text = b.String()
	return s
}

// pemBody is n lines of 64 base64 characters, each marked as a secret.
func (g gen) pemBody(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString("«" + g.s(64, b64) + "»\n")
	}
	return b.String()
}

// Samples returns the corpus: more than 90 formats.
func Samples() []Sample {
	g := gen{rand.New(rand.NewPCG(20261127, 18))}
	s := g.s
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + s(18, alnum)))
	dockerAuth := base64.StdEncoding.EncodeToString([]byte("ci-bot:" + s(20, alnum)))
	encodedToken := base64.StdEncoding.EncodeToString([]byte("token=ghp_" + s(36, alnum)))
	jwtHead := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtBody := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"` + s(12, lower) + `","iat":1700000000}`))
	kubeKey := base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\n" + s(64, b64) + "\n-----END RSA PRIVATE KEY-----\n"))

	return []Sample{
		// Assignments in config syntaxes of every kind.
		build("dockerfile ENV password", "Dockerfile", "FROM alpine:3.20\nENV DB_PASSWORD=«"+s(14, alnum)+"»\nRUN make\n"),
		build("dockerfile ARG token", "build/Dockerfile", "ARG NPM_TOKEN=«"+s(22, alnum)+"»\nRUN npm ci\n"),
		build("dockerfile ENV space form", "Dockerfile.prod", "ENV SMTP_PASSWORD «"+s(16, alnum)+"»\n"),
		build("npmrc auth token", "web/.npmrc", "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=«"+s(36, alnum)+"»\n"),
		build("spring datasource password", "src/main/resources/application.properties", "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password=«"+s(12, alnum)+"»\n"),
		build("ini password", "conf/app.ini", "[database]\nuser = app\npassword = «"+s(11, alnum)+"!»\n"),
		build("maven settings password", "settings.xml", "<server>\n  <id>nexus</id>\n  <username>ci</username>\n  <password>«"+s(15, alnum)+"»</password>\n</server>\n"),
		build("yaml password", "config/db.yaml", "db:\n  user: app\n  password: «"+s(13, alnum)+"»\n"),
		build("json api key", "config.json", "{\n  \"api_key\": \"«"+s(32, alnum)+"»\"\n}\n"),
		build("toml secret", "Cargo-deploy.toml", "[deploy]\nsecret = \"«"+s(24, alnum)+"»\"\n"),
		build("env DB_PASS", "deploy/app.conf", "DB_PASS=«"+s(10, alnum)+"»\n"),
		build("env SMTP_PASS", "mail/settings.sh", "export SMTP_PASS=«"+s(12, alnum)+"»\n"),
		build("env *_SECRET", "runtime.sh", "SESSION_SECRET=«"+s(30, alnum)+"»\n"),
		build("env *_KEY", "vars.sh", "PAYMENT_KEY=«"+s(28, alnum)+"»\n"),
		build("php define", "wp-config.php", "define('DB_PASSWORD', '«"+s(14, alnum)+"»');\n"),
		build("python dict", "settings.py", "DATABASES = {'default': {'USER': 'app', 'PASSWORD': '«"+s(16, alnum)+"»'}}\n"),
		build("xml attribute", "web.config", "<add name=\"db\" password=\"«"+s(14, alnum)+"»\" />\n"),
		build("csharp connection string", "appsettings.cs", "var cs = \"Server=db;Database=app;User Id=sa;Password=«"+s(14, alnum)+"»;\";\n"),
		build("redis.conf requirepass", "redis.conf", "bind 127.0.0.1\nrequirepass «"+s(20, alnum)+"»\n"),
		build("netrc", "ci/netrc", "machine api.example.net login bot password «"+s(18, alnum)+"»\n"),
		build("setenv pair", "main_test.go", "os.Setenv(\"API_TOKEN\", \"«"+s(26, alnum)+"»\")\n"),
		build("go struct literal", "cfg.go", "cfg := Config{ClientSecret: \"«"+s(30, alnum)+"»\"}\n"),

		// HTTP credentials in code and commands.
		build("curl -u", "scripts/push.sh", "curl -u admin:«"+s(14, alnum)+"» https://repo.internal/upload\n"),
		build("curl --user", "scripts/get.sh", "curl --user 'ci:«"+s(14, alnum)+"»' https://repo.internal/x\n"),
		build("SetBasicAuth", "client.go", "req.SetBasicAuth(\"svc\", \"«"+s(16, alnum)+"»\")\n"),
		build("Authorization Basic header", "api.go", "req.Header.Set(\"Authorization\", \"Basic «"+basic+"»\")\n"),
		build("Authorization Bearer header", "api2.go", "req.Header.Set(\"Authorization\", \"Bearer «"+s(40, alnum)+"»\")\n"),
		build("Authorization token header", "release.sh", "curl -H 'Authorization: token «"+s(40, alnum)+"»' https://api.internal/user\n"),
		build("Okta SSWS header", "okta.rb", "headers = { 'Authorization' => 'SSWS «00"+s(40, alnum)+"»' }\n"),
		build("smtplib login", "mail.py", "s.login('alerts@acme.io', '«"+s(16, alnum)+"»')\n"),
		build("JDBC getConnection", "Repo.java", "DriverManager.getConnection(\"jdbc:postgresql://db/shop\", \"shop\", \"«"+s(15, alnum)+"»\");\n"),
		build("Go smtp.PlainAuth", "notify.go", "auth := smtp.PlainAuth(\"\", \"bot@acme.io\", \"«"+s(16, alnum)+"»\", \"mail.acme.io\")\n"),
		build("Doppler service token", "deploy.sh", "doppler run --token «dp.st.prd."+s(40, alnum)+"» -- make deploy\n"),
		build("age secret key", "backup.txt", "# created: 2026-01-01\n«AGE-SECRET-KEY-1"+s(58, upper)+"»\n"),
		build("python requests auth tuple", "fetch.py", "r = requests.get(url, auth=('bot', '«"+s(15, alnum)+"»'))\n"),
		build("query string token", "links.md", "https://api.internal/v1/items?access_token=«"+s(32, alnum)+"»&page=2\n"),

		// URLs with passwords.
		build("postgres url", "db.env.sample", "url: postgres://app:«"+s(16, alnum)+"»@db.internal:5432/app\n"),
		build("mysql url", "config/mysql.yml", "dsn: \"mysql://root:«"+s(14, alnum)+"»@10.0.0.5:3306/shop\"\n"),
		build("mongodb+srv url", "mongo.js", "const uri = \"mongodb+srv://svc:«"+s(18, alnum)+"»@cluster0.abcde.mongodb.net/app\";\n"),
		build("redis url", "cache.go", "addr := \"redis://:«"+s(20, alnum)+"»@cache:6379/0\"\n"),
		build("amqp url", "queue.py", "BROKER = \"amqp://guest2:«"+s(14, alnum)+"»@rabbit:5672/vhost\"\n"),
		build("url password containing @", "sync.sh", "git clone https://bot:«"+s(8, alnum)+"@"+s(8, alnum)+"»@git.internal/app.git\n"),
		build("url password percent-encoded", "jdbc.txt", "postgresql://app:«"+s(8, alnum)+"%40"+s(8, alnum)+"»@db/app\n"),

		// Provider tokens.
		build("google api key", "maps.js", "const key = \"«AIza"+s(35, alnum+"_-")+"»\";\n"),
		build("stripe test secret", "billing.rb", "Stripe.api_key = '«sk_test_"+s(24, alnum)+"»'\n"),
		build("stripe live secret", "billing.go", "stripe.Key = \"«sk_live_"+s(24, alnum)+"»\"\n"),
		build("stripe restricted", "billing.py", "stripe.api_key = \"«rk_live_"+s(24, alnum)+"»\"\n"),
		build("sendgrid", "mail.go", "client := sendgrid.NewSendClient(\"«SG."+s(22, alnum+"_-")+"."+s(43, alnum+"_-")+"»\")\n"),
		build("huggingface", "train.py", "login(token=\"«hf_"+s(34, alnum)+"»\")\n"),
		build("pypi", ".pypirc", "[pypi]\nusername = __token__\npassword = «pypi-AgEIcHlwaS5vcmc"+s(60, alnum+"_-")+"»\n"),
		build("vault service token", "vault.hcl", "token = \"«hvs."+s(24, alnum)+"»\"\n"),
		build("grafana service account", "grafana.go", "const t = \"«glsa_"+s(32, alnum)+"_"+s(8, hexa)+"»\"\n"),
		build("shopify access token", "shop.rb", "ShopifyAPI::Session.new(token: \"«shpat_"+s(32, hexa)+"»\")\n"),
		build("github classic token", "gh.go", "tok := \"«ghp_"+s(36, alnum)+"»\"\n"),
		build("github fine-grained", "gh2.go", "tok := \"«github_pat_"+s(22, alnum)+"_"+s(59, alnum)+"»\"\n"),
		build("github app installation", "ci.yml", "run: git push https://x-access-token:«ghs_"+s(36, alnum)+"»@github.com/o/r\n"),
		build("gitlab personal token", "gl.sh", "curl -H \"PRIVATE-TOKEN: «glpat-"+s(20, alnum)+"»\" https://gitlab.internal/api/v4/projects\n"),
		build("aws access key id", "aws.tf", "access_key = \"«AKIA"+s(16, upper)+"»\"\n"),
		build("aws secret access key", "aws.tf.vars", "aws_secret_access_key = «"+s(40, b64)+"»\n"),
		build("azure storage connection string", "local.settings.json", "{\"AzureWebJobsStorage\": \"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=«"+s(86, b64)+"==»;EndpointSuffix=core.windows.net\"}\n"),
		build("azure ad client secret", "aad.cs", "var secret = \"«"+s(3, alnum)+"8Q~"+s(31, alnum)+"»\";\n"),
		build("slack bot token", "slack.js", "const web = new WebClient('«xoxb-"+s(12, digit)+"-"+s(13, digit)+"-"+s(24, alnum)+"»');\n"),
		build("slack user token", "slack.py", "SLACK = \"«xoxp-"+s(12, digit)+"-"+s(12, digit)+"-"+s(13, digit)+"-"+s(32, hexa)+"»\"\n"),
		build("slack webhook", "notify.sh", "curl -X POST https://hooks.slack.com/services/«T"+s(10, upper)+"/B"+s(10, upper)+"/"+s(24, alnum)+"»\n"),
		build("twilio api key", "sms.js", "const client = twilio('«SK"+s(32, hexa)+"»', '«"+s(32, hexa)+"»');\n"),
		build("twilio auth token", "sms.py", "TWILIO_AUTH_TOKEN = \"«"+s(32, hexa)+"»\"\n"),
		build("mailgun key", "mg.go", "mg := mailgun.NewMailgun(\"mg.acme.io\", \"«key-"+s(32, hexa)+"»\")\n"),
		build("npm token", "publish.sh", "echo //registry.npmjs.org/:_authToken=«npm_"+s(36, alnum)+"» > ~/.npmrc\n"),
		build("digitalocean token", "do.tf", "token = \"«dop_v1_"+s(64, hexa)+"»\"\n"),
		build("datadog api key", "dd.yaml", "datadog:\n  api_key: «"+s(32, hexa)+"»\n"),
		build("jwt", "auth_test.ts", "const jwt = \"«"+jwtHead+"."+jwtBody+"."+s(43, alnum+"_-")+"»\";\n"),
		build("discord bot token", "bot.py", "client.run(\"«M"+s(23, alnum)+"."+s(6, alnum)+"."+s(38, alnum+"_-")+"»\")\n"),
		build("telegram bot token", "tg.go", "bot, _ := tgbotapi.NewBotAPI(\"«"+s(10, digit)+":AA"+s(33, alnum+"_-")+"»\")\n"),
		build("openai legacy", "llm.py", "openai.api_key = \"«sk-"+s(20, alnum)+"T3BlbkFJ"+s(20, alnum)+"»\"\n"),
		build("openai project", "llm.ts", "const openai = new OpenAI({ apiKey: \"«sk-proj-"+s(48, alnum+"_-")+"T3BlbkFJ"+s(48, alnum+"_-")+"»\" });\n"),
		build("anthropic", "claude.go", "c := anthropic.NewClient(option.WithAPIKey(\"«sk-ant-api03-"+s(93, alnum+"_-")+"AA»\"))\n"),
		build("heroku api key", "deploy.yml", "env:\n  HEROKU_API_KEY: «"+s(8, hexa)+"-"+s(4, hexa)+"-"+s(4, hexa)+"-"+s(4, hexa)+"-"+s(12, hexa)+"»\n"),
		build("linear api key", "linear.ts", "const linear = new LinearClient({ apiKey: \"«lin_api_"+s(40, alnum)+"»\" });\n"),
		build("postman api key", "postman.sh", "X_API_KEY=«PMAK-"+s(24, hexa)+"-"+s(34, hexa)+"»\n"),
		build("age secret key", "keys.txt", "# created: 2024-01-01\n«AGE-SECRET-KEY-1"+s(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")+"»\n"),
		build("doppler token", "doppler.sh", "DOPPLER_TOKEN=«dp.st.prd."+s(43, alnum)+"»\n"),
		build("sentry auth token", "sentry.properties", "auth.token=«sntrys_"+s(120, alnum)+"»\n"),
		build("pulumi token", "pulumi.sh", "export PULUMI_ACCESS_TOKEN=«pul-"+s(40, hexa)+"»\n"),
		build("databricks token", "dbx.py", "host, token = \"https://adb.azuredatabricks.net\", \"«dapi"+s(32, hexa)+"»\"\n"),
		build("docker hub pat", "docker-login.sh", "echo «dckr_pat_"+s(27, alnum+"_-")+"» | docker login -u acme --password-stdin\n"),
		build("square access token", "square.rb", "client = Square::Client.new(access_token: '«EAAA"+s(60, alnum+"-_")+"»')\n"),
		build("new relic user key", "nr.env", "NEW_RELIC_API_KEY=«NRAK-"+s(27, upper)+"»\n"),
		build("alibaba access key", "ali.py", "AccessKeyId = \"«LTAI"+s(20, alnum)+"»\"\n"),
		build("terraform cloud token", ".terraformrc", "credentials \"app.terraform.io\" {\n  token = \"«"+s(14, alnum)+".atlasv1."+s(67, alnum)+"»\"\n}\n"),
		build("cloudflare api token", "cf.sh", "export CLOUDFLARE_API_TOKEN=«"+s(40, alnum+"_-")+"»\n"),
		build("mailchimp api key", "mc.php", "$mailchimp->setConfig(['apiKey' => '«"+s(32, hexa)+"-us12»']);\n"),

		// Key material.
		build("rsa private key", "deploy/id_rsa", "-----BEGIN RSA PRIVATE KEY-----\n"+g.pemBody(3)+"-----END RSA PRIVATE KEY-----\n"),
		build("openssh private key", "keys/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+g.pemBody(3)+"-----END OPENSSH PRIVATE KEY-----\n"),
		build("ec private key", "tls/ec.key", "-----BEGIN EC PRIVATE KEY-----\n"+g.pemBody(2)+"-----END EC PRIVATE KEY-----\n"),
		build("dsa private key", "legacy/dsa.key", "-----BEGIN DSA PRIVATE KEY-----\n"+g.pemBody(2)+"-----END DSA PRIVATE KEY-----\n"),
		build("pkcs8 private key", "tls/server.key", "-----BEGIN PRIVATE KEY-----\n"+g.pemBody(3)+"-----END PRIVATE KEY-----\n"),
		build("encrypted pkcs8", "tls/enc.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"+g.pemBody(3)+"-----END ENCRYPTED PRIVATE KEY-----\n"),
		build("pgp private key", "release/signing.asc", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"+g.pemBody(3)+"-----END PGP PRIVATE KEY BLOCK-----\n"),
		build("private key in go string", "embed.go", "const key = \"-----BEGIN PRIVATE KEY-----\\n«"+s(64, b64)+"»\\n-----END PRIVATE KEY-----\\n\"\n"),
		build("gcp service account json", "sa.json", "{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"«"+s(40, hexa)+"»\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n«"+s(64, b64)+"»\\n«"+s(64, b64)+"»\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"ci@acme.iam.gserviceaccount.com\"\n}\n"),
		build("putty private key", "keys/server.ppk", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI"+s(39, b64)+"\n"+s(20, b64)+"\nPrivate-Lines: 1\n«"+s(44, b64)+"»\nPrivate-MAC: «"+s(64, hexa)+"»\n"),
		build("htpasswd apr1", "nginx/.htpasswd", "admin:«$apr1$"+s(8, alnum)+"$"+s(22, alnum+"./")+"»\n"),
		build("htpasswd bcrypt", "auth/htpasswd", "ops:«$2y$10$"+s(53, alnum+"./")+"»\n"),
		build("docker config auths", "ci/docker-config.json", "{\n  \"auths\": {\n    \"registry.internal\": {\n      \"auth\": \"«"+dockerAuth+"»\"\n    }\n  }\n}\n"),
		build("kubeconfig client key and token", "deploy/kubeconfig", "users:\n- name: ci\n  user:\n    client-key-data: «"+kubeKey+"»\n    token: «"+s(40, alnum)+"»\n"),
		build("pgpass", "ops/pgpass", "db.internal:5432:app:app:«"+s(16, alnum)+"»\n*:*:*:replica:«"+s(16, alnum)+"»\n"),
		build("base64-encoded token", "blob.txt", "payload: «"+encodedToken+"»\n"),
		build("ini password in a diff", "app-ini.diff", "--- a/app.ini\n+++ b/app.ini\n@@ -1,3 +1,3 @@\n [db]\n-password = «"+s(12, alnum)+"»\n+password = «"+s(12, alnum)+"»\n"),
		build("deleted line in a diff", "change.diff", "--- a/x.env\n+++ b/x.env\n@@ -1,2 +1,1 @@\n-STRIPE_SECRET=«sk_live_"+s(24, alnum)+"»\n KEEP=1\n"),

		// Values whose name is elsewhere: beside an id, on the line before,
		// in another attribute or argument.
		build("aws credentials csv", "ops/ci_accessKeys.csv", "User name,Password,Access key ID,Secret access key\nci,,«AKIA"+s(16, upper)+"»,«"+s(40, b64)+"»\n"),
		build("kubernetes env value", "k8s/deploy.yaml", "      env:\n        - name: DB_PASS\n          value: «"+s(36, alnum)+"»\n        - name: DB_HOST\n          valueFrom:\n            configMapKeyRef:\n              name: db\n              key: host\n"),
		build("helm env value", "chart/values.yaml", "extraEnv:\n- name: API_TOKEN\n  value: \"«"+s(36, alnum)+"»\"\n"),
		build("dotnet appSettings key", "Web.config", "<appSettings>\n  <add key=\"ApiKey\" value=\"«"+s(36, alnum)+"»\" />\n  <add name=\"DbPassword\" value=\"«"+s(18, alnum)+"»\"/>\n</appSettings>\n"),
		build("dotnet settings value element", "App.config", "<setting name=\"ClientSecret\" serializeAs=\"String\">\n  <value>«"+s(36, alnum)+"»</value>\n</setting>\n"),
		build("yaml value on the next line", "config/app.yml", "database:\n  password:\n    «"+s(36, alnum)+"»\n  pool: 5\n"),
		build("yaml list item under a secret", "config/oauth.yml", "oauth:\n  client_secret:\n    - «"+s(36, alnum)+"»\n"),
		build("header set by key", "client.py", "headers['X-Api-Key'] = '«"+s(36, alnum)+"»'\n"),
		build("password flag", "scripts/backup.sh", "mysqldump --user=root --password «"+s(36, alnum)+"» shop > shop.sql\n"),
		build("token flag", "scripts/ci.sh", "vault login --token=«"+s(36, alnum)+"»\n"),
		build("api-key flag", "scripts/deploy.sh", "deployctl push --api-key «"+s(36, alnum)+"» ./dist\n"),
		build("fish set", "config.fish", "set -x GITLAB_TOKEN «"+s(36, alnum)+"»\n"),
		build("cmd set", "env.cmd", "@echo off\nset PASSWORD «"+s(36, alnum)+"»\n"),
		build("literal continued on the next diff line", "creds.diff", "--- a/creds.py\n+++ b/creds.py\n@@ -0,0 +1,2 @@\n+aws_secret = \"«"+s(20, alnum)+"»\"\n+    \"«"+s(16, alnum)+"»\"\n"),
		build("token split in concatenated literals", "gh.js", "const t = \"«ghp_"+s(8, alnum)+"»\" + \"«"+s(28, alnum)+"»\";\n"),
	}
}
