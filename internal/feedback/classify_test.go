package feedback

import (
	"testing"

	"github.com/reviewfleet/reviewfleet/store"
)

func TestClassifyReply(t *testing.T) {
	for body, want := range map[string]string{
		"false positive": ClassFalsePositive,
		"This is a False-Positive: the map is guarded": ClassFalsePositive,
		"Not a bug, the caller checks it.":             ClassFalsePositive,
		"won't fix, this path is dead":                 ClassWontFix,
		"Won’t fix":                                    ClassWontFix,
		"Fixed in 3f2a1c":                              ClassFixed,
		"done":                                         ClassFixed,
		"Good catch, thanks":                           ClassAgreed,
		"why would this be nil here?":                  ClassQuestion,
		"not a false positive, it does leak":           ClassOther,
		"> false positive?\nagreed, will fix":          ClassAgreed,
		"it is not fixed yet":                          ClassOther,
		"":                                             ClassOther,
	} {
		if got := ClassifyReply(body); got != want {
			t.Errorf("ClassifyReply(%q) = %s, want %s", body, got, want)
		}
	}
}

func TestSignals(t *testing.T) {
	if ReactionSignal("-1") != store.SignalDismiss || ReactionSignal("+1") != store.SignalAcknowledge || ReactionSignal("eyes") != store.SignalNeutral {
		t.Error("reaction signals")
	}
	if ReplySignal(ClassWontFix) != store.SignalDismiss || ReplySignal(ClassFixed) != store.SignalFixed {
		t.Error("reply signals")
	}
}
