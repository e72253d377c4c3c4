package main

import (
	"context"
	"os"
)

// environment is what a command reads from the process environment. It
// travels in the context so that tests can run commands side by side,
// each with variables of its own, where setting the process environment
// would force them to run one at a time.
type environment struct {
	lookup  func(string) (string, bool)
	environ func() []string
}

type envKey struct{}

// withEnv returns ctx whose commands read env instead of the process
// environment.
func withEnv(ctx context.Context, env environment) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// envOf returns the environment commands run under ctx read.
func envOf(ctx context.Context) environment {
	if env, ok := ctx.Value(envKey{}).(environment); ok {
		return env
	}
	return environment{lookup: os.LookupEnv, environ: os.Environ}
}

// getenv is os.Getenv for the environment of ctx.
func getenv(ctx context.Context, key string) string {
	v, _ := envOf(ctx).lookup(key)
	return v
}
