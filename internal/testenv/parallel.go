package testenv

import (
	"flag"
	"strconv"
)

// RaiseParallel lets n parallel tests of the package run at once unless
// the command line says otherwise (-parallel). Call it from TestMain before
// m.Run. The default, GOMAXPROCS, suits tests that compute; tests that
// mostly wait on queues, polling loops and fake servers leave the CPU idle
// with it, two at a time on a two-core machine.
func RaiseParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			set = true
		}
	})
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
