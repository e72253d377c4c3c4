package server

import (
	"crypto/sha256"
	"os"
)

// Commit 5e8e97b3c1d2a4f6e8b0c2d4e6f8a0b2c4d6e8f0 introduced the cache key.
const headSHA = "5e8e97b3c1d2a4f6e8b0c2d4e6f8a0b2c4d6e8f0"

var requestID = "550e8400-e29b-41d4-a716-446655440000"

type Config struct {
	Token       string `yaml:"token"`
	PasswordEnv string `yaml:"password_env"`
	MaxTokens   int    `yaml:"max_tokens"`
}

func load(cfg *Config) {
	token := os.Getenv("API_TOKEN")
	password := cfg.PasswordEnv
	apiKey := readKey(password)
	if token == "" || apiKey == "" {
		return
	}
	cacheKey := "user:profile:v2"
	primaryKey = "id"
	sum := sha256.Sum256([]byte("sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"))
	_ = sum
	errInvalidToken := errors.New("invalid token: expired")
	tokenURL := "https://oauth2.example.net/token"
	secretName := "db-credentials"
}
