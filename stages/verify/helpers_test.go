package verify_test

import "github.com/reviewfleet/reviewfleet/store"

func stagetestFile(content string, changed []int) *store.File {
	return &store.File{Path: "a.go", Content: &content, ChangedLines: changed}
}
