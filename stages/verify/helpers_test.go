package verify_test

import "github.com/reviewfleet/reviewfleet/internal/review"

func stagetestFile(content string, changed []int) *review.File {
	return &review.File{Path: "a.go", Content: &content, ChangedLines: changed}
}
