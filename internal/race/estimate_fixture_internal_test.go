package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// estimateFixture is the set-up of the usage-estimate tests: a target with
// no tokenizer of its own, a job whose one user message is prompt, an
// attempt on gpt-4o, that model's encoding and the prompt's count by it.
func estimateFixture(t *testing.T, prompt string) (tgt *Target, sp *spec, a *store.Attempt, enc string, in int) {
	t.Helper()
	tgt = &Target{}
	sp = &spec{msgs: []providers.Message{{Role: "user", Content: prompt}}}
	a = &store.Attempt{Model: "gpt-4o"}
	enc, err := tokens.EncodingForModel("", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	in, err = tokens.CountMessages(enc, counted(sp))
	if err != nil {
		t.Fatal(err)
	}
	return tgt, sp, a, enc, in
}
