package e2e

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

type openaiRequest = openai.ChatCompletionRequest

func contains(s, sub string) bool { return strings.Contains(s, sub) }
