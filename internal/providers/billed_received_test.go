package providers

import "testing"

// A billed failure is a complete answer: it counts as received, so a job
// deadline passing as it comes cannot turn the attempt unknown (blocking the
// job until someone resolves it) when its outcome is known.
func TestBilledFailureIsReceived(t *testing.T) {
	e := NewError("p", KindContentPolicy, "filtered").billed(Usage{PromptTokens: 1, TotalTokens: 1}, "id", "m")
	if !e.Received {
		t.Fatal("a billed failure is not marked received")
	}
	if e = NewError("p", KindEmptyResponse, "no choices").billed(Usage{}, "", ""); !e.Received {
		t.Fatal("a complete answer without usage is not marked received")
	}
}
