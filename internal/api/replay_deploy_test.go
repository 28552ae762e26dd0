package api_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
)

// deployed is a second API (another replica, or this one after a deploy) on
// the same database, with the triage prompt changed by edit.
func deployed(t *testing.T, b *bundle, edit func(dir string)) *httptest.Server {
	t.Helper()
	_, hs := deployedAPI(t, b, edit)
	return hs
}

// deployedAPI is deployed, with the API itself (for api.SetStarted).
func deployedAPI(t *testing.T, b *bundle, edit func(dir string)) (*api.Server, *httptest.Server) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "triage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prompt.yaml", "input.schema.json", "output.schema.json"} {
		raw, err := os.ReadFile(filepath.Join("../../prompts/triage", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(dir)
	ps, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{LeaseOwner: "replica-2"}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: ps, Routes: map[string]bool{"default": true},
		Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}},
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A client whose answer was lost retries with the same key after a deploy
// that changed the prompt (or reaches a replica already updated): it gets its
// job, not a 422 that reads as "not done" and invites a new key and a second
// job (SPEC §5). Another request under the key is still a 409; a new key
// gets 503 prompt-unavailable while the updated replica may be part of a
// rolling update (it started just now: TestCreatePinnedVersionDuringRollingUpdate).
func TestReplayAfterPromptDeploy(t *testing.T) {
	b := setup(t, options{})
	pinned := `{"prompt":"triage","prompt_version":"3","input":{"subject":"s","body":"b"}}`
	unpinned := `{"prompt":"triage","input":{"subject":"s","body":"b"}}`
	first := b.create(t, acmeKey, "pinned", pinned, "Prefer", "wait=30")
	second := b.create(t, acmeKey, "unpinned", unpinned, "Prefer", "wait=30")
	if first.status != http.StatusCreated || second.status != http.StatusCreated {
		t.Fatalf("before the deploy: %d %s / %d %s", first.status, first.raw, second.status, second.raw)
	}
	v4 := deployed(t, b, func(dir string) {
		edit(t, filepath.Join(dir, "prompt.yaml"), `version: "3"`, `version: "4"`)
		edit(t, filepath.Join(dir, "input.schema.json"), `"required": ["subject", "body"]`, `"required": ["subject", "body", "customer_tier"]`)
	})
	post := func(key, body string) reply {
		t.Helper()
		got, err := send(v4.URL+"/v1/jobs", "POST", acmeKey, body, "Idempotency-Key", key)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct{ key, body, id, why string }{
		{"pinned", pinned, first.job(), "a version no longer loaded"},
		{"unpinned", unpinned, second.job(), "an input the new input schema refuses"},
	} {
		got := post(c.key, c.body)
		if got.status != http.StatusOK || got.job() != c.id || got.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry after the deploy (%s): %d %s, want 200 replaying job %s", c.why, got.status, got.raw, c.id)
		}
	}
	other := post("pinned", `{"prompt":"triage","prompt_version":"3","input":{"subject":"other","body":"b"}}`)
	if other.status != http.StatusConflict || !strings.Contains(string(other.raw), "idempotency-key-reused") {
		t.Errorf("another request under a held key after the deploy: %d %s, want 409", other.status, other.raw)
	}
	fresh := post("fresh", pinned)
	if fresh.status != http.StatusServiceUnavailable || !strings.Contains(string(fresh.raw), "prompt-unavailable") {
		t.Errorf("a new key for the old version on a replica started just now: %d %s, want 503 prompt-unavailable", fresh.status, fresh.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 2 {
		t.Errorf("jobs = %d after the retries, want 2", n)
	}
}
