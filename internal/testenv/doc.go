// Package testenv gives tests real Postgres and Redis servers, each test
// isolated from the others so that t.Parallel() is safe. It is imported only
// by _test.go files.
//
// Servers are found through TEST_DATABASE_URL and TEST_REDIS_URL. Postgres
// has a localhost default; each test gets a database of its own there,
// copied from a template migrated once per server and set of migrations,
// and emptied before the next test is given it.
// When nothing answers, a fresh machine still works with one ephemeral
// local cluster per test process (started from the machine's PostgreSQL
// binaries through localenv). Redis has no default address on purpose,
// since tests empty the databases they use: without TEST_REDIS_URL the
// tests start a redis-server of their own on a free port (when the binary
// is installed), else use an in-process miniredis per test. A package that
// uses Postgres should stop that cluster from its TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		testenv.Shutdown()
//		os.Exit(code)
//	}
package testenv
