// Package testenv gives tests real Postgres and Redis servers, each test
// isolated from the others so that t.Parallel() is safe. It is imported only
// by _test.go files.
//
// Servers are found through TEST_DATABASE_URL and TEST_REDIS_URL, with
// localhost defaults. When the variable is unset and nothing answers at the
// default address, a fresh machine still works: Postgres falls back to one
// ephemeral local cluster per test process (started from the machine's
// PostgreSQL binaries through localenv) and Redis to an in-process miniredis
// per test. A package that uses PostgresDSN should stop that cluster from
// its TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		testenv.Shutdown()
//		os.Exit(code)
//	}
package testenv
